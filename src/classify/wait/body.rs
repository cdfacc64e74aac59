//! Waits stated in JSON error bodies (`RetryInfo.retryDelay`, `retry_after`, `resets_at`, ...), walked with bounds.

use super::*;

/// Wait hints stated as JSON fields anywhere (depth ≤ 6) in an error body. Priority:
/// Google `RetryInfo.retryDelay` (string duration or `{seconds, nanos}`), `retry_after_ms`,
/// `retry_after` / `retry_after_seconds` / `retryAfter` (seconds), `resets_in_seconds`,
/// `resets_at` (unix seconds, or RFC 3339 string). Numeric strings are accepted as numbers;
/// `null` counts as not stated. `None` when no such field is present; `Some(Nonsense)` when
/// every one present is nonsense.
pub fn body_fields(value: &Value, now_unix_ms: u64) -> Option<Stated> {
    let mut walk = Walk {
        now: now_unix_ms,
        best: None,
        nonsense: false,
        budget: MAX_NODES,
    };
    walk.visit(value, 0);
    match walk.best {
        Some((_, ms)) => Some(Stated::Wait(ms)),
        None => walk.nonsense.then_some(Stated::Nonsense),
    }
}

/// The state of one [`body_fields`] walk.
pub(super) struct Walk {
    now: u64,
    /// The best plausible hint so far: (priority, ms), 0 is best.
    best: Option<(u8, u64)>,
    /// Whether a wait field held nonsense.
    nonsense: bool,
    /// Containers still allowed to be inspected.
    budget: usize,
}

impl Walk {
    fn visit(&mut self, v: &Value, depth: usize) {
        if depth > MAX_DEPTH || self.budget == 0 || matches!(self.best, Some((0, _))) {
            return;
        }
        match v {
            Value::Object(map) => {
                self.budget -= 1;
                self.object(map);
                for child in map.values() {
                    self.visit(child, depth + 1);
                }
            }
            Value::Array(items) => {
                self.budget -= 1;
                for child in items {
                    self.visit(child, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Records the hints stated directly in one object, best priority first.
    fn object(&mut self, map: &Map<String, Value>) {
        for (prio, stated) in object_hints(map, self.now) {
            match stated {
                Stated::Wait(ms) => {
                    if !matches!(self.best, Some((p, _)) if p <= prio) {
                        self.best = Some((prio, ms));
                    }
                    return;
                }
                Stated::Nonsense => self.nonsense = true,
            }
        }
    }
}

/// A field that is present and not `null`.
pub(super) fn stated<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// The hints stated directly in one object, in priority order (0 is best).
pub(super) fn object_hints(map: &Map<String, Value>, now: u64) -> Vec<(u8, Stated)> {
    let mut hints = Vec::new();
    let is_retry_info = map
        .get("@type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
    if is_retry_info {
        if let Some(delay) = stated(map, "retryDelay").or_else(|| stated(map, "retry_delay")) {
            hints.push((0, retry_delay(delay)));
        }
    }
    if let Some(v) = stated(map, "retry_after_ms") {
        hints.push((1, json_relative(v, NS_PER_MS)));
    }
    for key in ["retry_after", "retry_after_seconds", "retryAfter"] {
        if let Some(v) = stated(map, key) {
            let hint = match v {
                Value::String(s) => {
                    let s = s.trim();
                    seconds(s)
                        .or_else(|| duration(s))
                        .or_else(|| http_date(s, now))
                        .unwrap_or(Stated::Nonsense)
                }
                _ => json_relative(v, NS_PER_S),
            };
            hints.push((2, hint));
        }
    }
    // `resets_in_seconds` (OpenAI Codex plans), `reset_seconds` (CLIProxyAPI's cooldowns),
    // `clears_in` (ChatGPT's `model_cap_exceeded`).
    for key in ["resets_in_seconds", "reset_seconds", "clears_in"] {
        if let Some(v) = stated(map, key) {
            hints.push((3, json_relative(v, NS_PER_S)));
        }
    }
    if let Some(v) = stated(map, "resets_at") {
        let hint = match v {
            Value::Number(n) => number_ns(n, NS_PER_S)
                .map_or(Stated::Nonsense, |ns| absolute(unix_number_ms(ns), now)),
            Value::String(s) => reset_time(s, now).unwrap_or(Stated::Nonsense),
            _ => Stated::Nonsense,
        };
        hints.push((4, hint));
    }
    hints
}

/// A relative wait given as a JSON number (or numeric string, or duration string) of `unit_ns`.
pub(super) fn json_relative(v: &Value, unit_ns: u128) -> Stated {
    match v {
        Value::Number(n) => number_ns(n, unit_ns).map_or(Stated::Nonsense, relative),
        Value::String(s) => decimal_ns(s.trim(), unit_ns)
            .map(relative)
            .or_else(|| duration(s))
            .unwrap_or(Stated::Nonsense),
        _ => Stated::Nonsense,
    }
}

/// `RetryInfo.retryDelay`: a duration string (`"23s"`) or `{"seconds": 23, "nanos": 5e8}`.
pub(super) fn retry_delay(v: &Value) -> Stated {
    match v {
        Value::String(s) => duration(s).unwrap_or(Stated::Nonsense),
        Value::Object(obj) => {
            let part = |key: &str, unit_ns: u128| match stated(obj, key) {
                None => Some(None),
                Some(Value::Number(n)) => number_ns(n, unit_ns).map(Some),
                Some(Value::String(s)) => decimal_ns(s.trim(), unit_ns).map(Some),
                Some(_) => None,
            };
            let (Some(secs), Some(nanos)) = (part("seconds", NS_PER_S), part("nanos", 1)) else {
                return Stated::Nonsense;
            };
            if secs.is_none() && nanos.is_none() {
                return Stated::Nonsense;
            }
            relative(secs.unwrap_or(0).saturating_add(nanos.unwrap_or(0)))
        }
        _ => Stated::Nonsense,
    }
}
