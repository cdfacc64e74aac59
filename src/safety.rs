//! Is a request safe to send twice? And is this `Idempotency-Key` a duplicate?
//!
//! A request that may act (create an object, send a message, run a paid tool) is re-sent only
//! when the upstream's answer proves it did not act. [`judge`] decides from the method, path,
//! headers and, where the path alone cannot tell (the Responses API), the body.
//! [`Dedup`] tracks `Idempotency-Key`s in a fixed number of slots.

use crate::body_facts::BodyFacts;
use serde::Deserialize;

/// Generation endpoints: re-sending them costs tokens, never side effects.
const SAFE_PATHS: &[&str] = &[
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/messages",
    "/v1/messages/count_tokens",
    "/v1/moderations",
    "*:generateContent",
    "*:streamGenerateContent",
    "*:countTokens",
    "*:embedContent",
    "*:batchEmbedContents",
];

/// Endpoints that create or change state.
const UNSAFE_PATHS: &[&str] = &[
    "/v1/assistants*",
    "/v1/threads*",
    "/v1/batches*",
    "/v1/files*",
    "/v1/fine_tuning*",
    "/v1/fine-tunes*",
    "/v1/vector_stores*",
    "/v1/uploads*",
    "/v1/messages/batches*",
    "/v1/images/*",
    "/v1/audio/speech",
    "/v1/realtime*",
    "/v1/containers*",
    "/v1/conversations*",
];

/// Whether a request may be sent again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub safe: bool,
    /// Why, for logs and the `x-llm-retry-blocked` header (`non-idempotent:<reason>`).
    pub reason: String,
}

impl Judgement {
    fn safe(reason: impl Into<String>) -> Self {
        Self {
            safe: true,
            reason: reason.into(),
        }
    }

    fn unsafe_(reason: impl Into<String>) -> Self {
        Self {
            safe: false,
            reason: reason.into(),
        }
    }
}

/// What to assume for a `POST` to a path no rule names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unknown {
    #[default]
    Unsafe,
    Safe,
}

/// Duplicate `Idempotency-Key` detection.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuplicateConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Shared-data slots (fixed memory: about 40 bytes each). More slots, fewer collisions.
    #[serde(default = "default_slots")]
    pub slots: u32,
    /// A finished key is refused again for this long.
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
    /// An in-flight entry older than this is considered abandoned.
    #[serde(default = "default_in_flight_ms")]
    pub in_flight_timeout_ms: u64,
    /// Let a repeat of a finished key through (only in-flight duplicates are refused).
    #[serde(default)]
    pub allow_repeat_after_finish: bool,
}

fn yes() -> bool {
    true
}
fn default_slots() -> u32 {
    4096
}
fn default_window_ms() -> u64 {
    600_000
}
fn default_in_flight_ms() -> u64 {
    600_000
}

impl Default for DuplicateConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            slots: default_slots(),
            window_ms: default_window_ms(),
            in_flight_timeout_ms: default_in_flight_ms(),
            allow_repeat_after_finish: false,
        }
    }
}

/// The `retry_safety` configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyConfig {
    /// A request header by which a client or a route declares a request `safe` or `unsafe`.
    #[serde(default = "default_header")]
    pub header: String,
    /// Extra path patterns (`*` matches anything) that are safe / unsafe; checked before the
    /// built-in lists.
    #[serde(default)]
    pub safe_paths: Vec<String>,
    #[serde(default)]
    pub unsafe_paths: Vec<String>,
    /// What a `POST` to any other path is.
    #[serde(default)]
    pub unknown: Unknown,
    /// Responses API tool types that act on the world.
    #[serde(default = "default_acting_tools")]
    pub acting_tools: Vec<String>,
    #[serde(default)]
    pub duplicates: DuplicateConfig,
    /// Where the provider itself deduplicates by `Idempotency-Key` (an acting request carrying
    /// a key may then be re-sent): these clusters, or these path patterns. Empty by default: a
    /// key alone proves nothing about the provider.
    #[serde(default)]
    pub key_deduplicated_by: KeyDedup,
}

/// Where providers deduplicate by `Idempotency-Key`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyDedup {
    #[serde(default)]
    pub clusters: Vec<String>,
    #[serde(default)]
    pub paths: Vec<String>,
}

impl KeyDedup {
    /// Whether a request to `path` on `cluster` is deduplicated by its key upstream.
    pub fn covers(&self, cluster: &str, path: &str) -> bool {
        let path = path.split('?').next().unwrap_or(path);
        self.clusters.iter().any(|c| c == cluster) || self.paths.iter().any(|p| glob(p, path))
    }
}

fn default_header() -> String {
    "x-llm-retry-safe".into()
}

fn default_acting_tools() -> Vec<String> {
    [
        "mcp",
        "code_interpreter",
        "computer_use_preview",
        "computer_use",
        "local_shell",
        "shell",
        "apply_patch",
    ]
    .map(String::from)
    .to_vec()
}

impl Default for SafetyConfig {
    fn default() -> Self {
        Self {
            header: default_header(),
            safe_paths: Vec::new(),
            unsafe_paths: Vec::new(),
            unknown: Unknown::Unsafe,
            acting_tools: default_acting_tools(),
            duplicates: DuplicateConfig::default(),
            key_deduplicated_by: KeyDedup::default(),
        }
    }
}

/// `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let Some((first, after)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    // The last part must end the text; each one between must appear, leftmost first.
    let (middle, last) = after.rsplit_once('*').unwrap_or(("", after));
    for part in middle.split('*').filter(|p| !p.is_empty()) {
        match rest.find(part) {
            Some(at) => rest = rest.get(at + part.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Needs the body to decide?
pub fn needs_body(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    path == "/v1/responses"
}

/// Judges a request from its method, path and headers; `body` is used where the path alone
/// cannot tell (pass `None` when it is not available). `idempotency_key` says the request
/// carries a key **and** the provider deduplicates by it ([`KeyDedup::covers`]).
pub fn judge(
    config: &SafetyConfig,
    method: &str,
    path: &str,
    declared: Option<&str>,
    idempotency_key: bool,
    body: Option<&[u8]>,
) -> Judgement {
    let path = path.split('?').next().unwrap_or(path);
    match declared.map(str::trim) {
        Some(v) if v.eq_ignore_ascii_case("unsafe") || v.eq_ignore_ascii_case("false") => {
            return Judgement::unsafe_("declared");
        }
        Some(v) if v.eq_ignore_ascii_case("safe") || v.eq_ignore_ascii_case("true") => {
            return Judgement::safe("declared");
        }
        _ => {}
    }
    if idempotency_key {
        return Judgement::safe("idempotency-key");
    }
    if matches!(method, "GET" | "HEAD" | "OPTIONS") {
        return Judgement::safe("read");
    }
    if config.unsafe_paths.iter().any(|p| glob(p, path)) {
        return Judgement::unsafe_(format!("path {path}"));
    }
    if config.safe_paths.iter().any(|p| glob(p, path)) {
        return Judgement::safe("configured path");
    }
    if method == "DELETE" || method == "PUT" {
        // Idempotent by HTTP semantics.
        return Judgement::safe("idempotent method");
    }
    if UNSAFE_PATHS.iter().any(|p| glob(p, path)) {
        return Judgement::unsafe_(format!("path {path}"));
    }
    if SAFE_PATHS.iter().any(|p| glob(p, path)) {
        return Judgement::safe("generation");
    }
    if needs_body(path) {
        return responses_api(config, body);
    }
    match config.unknown {
        Unknown::Safe => Judgement::safe("unknown path"),
        Unknown::Unsafe => Judgement::unsafe_(format!("unknown path {path}")),
    }
}

/// The Responses API acts when it stores the response (`store` defaults to true), runs in the
/// background, or calls server-side tools that act.
fn responses_api(config: &SafetyConfig, body: Option<&[u8]>) -> Judgement {
    let Some(facts) = body.and_then(BodyFacts::read) else {
        return Judgement::unsafe_("responses api, body unreadable");
    };
    if facts.store != Some(false) {
        return Judgement::unsafe_("responses api with store");
    }
    if facts.background == Some(true) {
        return Judgement::unsafe_("responses api in background");
    }
    let acting = facts
        .tool_types
        .iter()
        .find(|t| config.acting_tools.iter().any(|a| a == *t));
    if let Some(tool) = acting {
        return Judgement::unsafe_(format!("responses api with tool {tool}"));
    }
    Judgement::safe("responses api without side effects")
}

/// A 64-bit FNV-1a hash, to store keys in fixed-size slots.
pub fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}

/// One slot of the duplicate table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slot {
    /// Hash of (credential, key); 0 for an empty slot.
    pub key_hash: u64,
    pub in_flight: bool,
    /// When the request started (in flight) or finished.
    pub at_ms: u64,
}

/// What to do with a request carrying an `Idempotency-Key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dedup {
    /// Not a duplicate: write this slot (CAS) and go on.
    Claim(Slot),
    /// A duplicate: refuse it.
    InFlight,
    Finished,
}

impl Slot {
    pub fn encode(&self) -> [u8; 17] {
        let mut out = [0u8; 17];
        for (dst, src) in out.iter_mut().zip(
            self.key_hash
                .to_le_bytes()
                .into_iter()
                .chain(self.at_ms.to_le_bytes())
                .chain([u8::from(self.in_flight)]),
        ) {
            *dst = src;
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Self {
        let u64_at = |at: usize| crate::health::le_u64(bytes, at);
        if bytes.len() != 17 {
            return Self::default();
        }
        Self {
            key_hash: u64_at(0),
            at_ms: u64_at(8),
            in_flight: bytes.get(16) == Some(&1),
        }
    }

    /// Decides for a request with key hash `key_hash` arriving at `now_ms`. A slot held by
    /// another key is taken over: that key's history is lost (the documented trade-off of a
    /// fixed-size table).
    pub fn check(&self, key_hash: u64, now_ms: u64, config: &DuplicateConfig) -> Dedup {
        if self.key_hash == key_hash {
            let age = now_ms.saturating_sub(self.at_ms);
            if self.in_flight && age < config.in_flight_timeout_ms {
                return Dedup::InFlight;
            }
            if !self.in_flight && !config.allow_repeat_after_finish && age < config.window_ms {
                return Dedup::Finished;
            }
        }
        Dedup::Claim(Slot {
            key_hash,
            in_flight: true,
            at_ms: now_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn j(method: &str, path: &str, body: Option<&str>) -> bool {
        judge(
            &SafetyConfig::default(),
            method,
            path,
            None,
            false,
            body.map(str::as_bytes),
        )
        .safe
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn defaults_tell_generation_from_actions() {
        assert!(j("POST", "/v1/chat/completions", None));
        assert!(j("POST", "/v1/messages?beta=true", None));
        assert!(j(
            "POST",
            "/v1beta/models/gemini-2.5-pro:generateContent",
            None
        ));
        assert!(j("POST", "/v1/embeddings", None));
        assert!(!j("POST", "/v1/threads/thread_1/runs", None));
        assert!(!j("POST", "/v1/batches", None));
        assert!(!j("POST", "/v1/files", None));
        assert!(!j("POST", "/v1/vector_stores/vs_1/files", None));
        assert!(!j("POST", "/v1/messages/batches", None));
        assert!(!j("POST", "/v1/something/new", None));
        assert!(j("GET", "/v1/threads/thread_1", None));
        assert!(j("DELETE", "/v1/files/file_1", None));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_responses_api_is_judged_by_its_body() {
        assert!(!j(
            "POST",
            "/v1/responses",
            Some(r#"{"model":"m","input":"hi"}"#)
        ));
        assert!(j(
            "POST",
            "/v1/responses",
            Some(r#"{"model":"m","input":"hi","store":false}"#)
        ));
        assert!(!j(
            "POST",
            "/v1/responses",
            Some(r#"{"store":false,"background":true}"#)
        ));
        assert!(!j(
            "POST",
            "/v1/responses",
            Some(r#"{"store":false,"tools":[{"type":"mcp"}]}"#)
        ));
        assert!(j(
            "POST",
            "/v1/responses",
            Some(r#"{"store":false,"tools":[{"type":"web_search"}]}"#)
        ));
        assert!(!j("POST", "/v1/responses", Some("not json")));
        assert!(!j("POST", "/v1/responses", None));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn declarations_keys_and_configuration_come_first() {
        let c = SafetyConfig {
            safe_paths: vec!["/v1/audio/*".into()],
            unsafe_paths: vec!["/v1/chat/completions".into()],
            ..SafetyConfig::default()
        };
        assert!(!judge(&c, "POST", "/v1/chat/completions", None, false, None).safe);
        assert!(judge(&c, "POST", "/v1/audio/transcriptions", None, false, None).safe);
        assert!(judge(&c, "POST", "/v1/threads", None, true, None).safe);
        assert!(judge(&c, "POST", "/v1/threads", Some("safe"), false, None).safe);
        assert!(!judge(&c, "POST", "/v1/embeddings", Some("unsafe"), true, None).safe);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn glob_matches_like_a_shell() {
        assert!(glob("/v1/threads*", "/v1/threads/t/runs"));
        assert!(glob(
            "*:generateContent",
            "/v1beta/models/x:generateContent"
        ));
        assert!(!glob(
            "*:generateContent",
            "/v1beta/models/x:streamGenerateContentX"
        ));
        assert!(glob("/a/*/c", "/a/b/c"));
        assert!(!glob("/a/*/c", "/a/b/d"));
        assert!(glob("/exact", "/exact") && !glob("/exact", "/exact/more"));
        assert!(glob("/v1/*/runs/*", "/v1/threads/t/runs/r") && glob("/a*b*c", "/aXbYc"));
        assert!(!glob("/a*b*c", "/aXcYb") && glob("/a**c", "/ac") && glob("*", ""));
        assert!(!glob("/ab*ba", "/aba"), "the parts may not overlap");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn duplicate_slots() {
        let c = DuplicateConfig {
            window_ms: 1000,
            in_flight_timeout_ms: 5000,
            ..DuplicateConfig::default()
        };
        let empty = Slot::default();
        let Dedup::Claim(mine) = empty.check(7, 100, &c) else {
            panic!()
        };
        assert_eq!(Slot::decode(&mine.encode()), mine);
        assert_eq!(mine.check(7, 200, &c), Dedup::InFlight);
        assert!(
            matches!(mine.check(7, 6000, &c), Dedup::Claim(_)),
            "abandoned"
        );
        assert!(
            matches!(mine.check(8, 200, &c), Dedup::Claim(_)),
            "another key takes over"
        );
        let done = Slot {
            in_flight: false,
            at_ms: 300,
            ..mine
        };
        assert_eq!(done.check(7, 900, &c), Dedup::Finished);
        assert!(
            matches!(done.check(7, 1400, &c), Dedup::Claim(_)),
            "window over"
        );
        let pass = DuplicateConfig {
            allow_repeat_after_finish: true,
            ..c
        };
        assert!(matches!(done.check(7, 900, &pass), Dedup::Claim(_)));
        assert_ne!(hash(&[b"a", b"bc"]), hash(&[b"ab", b"c"]));
    }
}
