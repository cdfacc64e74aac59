//! Traffic shaping: priority classes with concurrency pools and queues, a pool for long tasks,
//! a load trigger, and off-peak deferral (`shaping:` in the plugin configuration; off when
//! absent, and then it costs nothing).

use super::ConfigError;
use crate::plan::Priority;
use serde::Deserialize;

/// Most classes (the shared ledger keeps a fixed slot per class).
pub const MAX_CLASSES: usize = 8;
/// Envoy's default `stream_idle_timeout` (HTTP connection manager): a held request counts
/// against it.
pub const ENVOY_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Margin kept between the longest queue wait and the stream idle timeout.
pub const IDLE_MARGIN_MS: u64 = 5_000;

/// What happens to a request its class cannot admit (queue full, or its queue time is up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtLimit {
    /// 429 with `Retry-After` and a `queue_full` / `queue_timeout` error body.
    #[default]
    Reject,
    /// Routed at once to the first model of a lower tier in its chain (no slot taken: the slots
    /// stand for the requested tier's capacity). Never for a class that falls back as
    /// `critical`. A chain with no lower tier rejects instead.
    Downgrade,
    /// 429 with `Retry-After` at the next off-peak window (or after the queue time) and
    /// `x-llm-deferred`: for batch work the caller re-submits later.
    Defer,
}

impl AtLimit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reject => "reject",
            Self::Downgrade => "downgrade",
            Self::Defer => "defer",
        }
    }
}

/// When a class's limits are in force.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitWhen {
    /// Always.
    #[default]
    Always,
    /// Only while the load trigger is engaged (the class stops competing for the primary).
    UnderLoad,
}

/// How a class's requests fall back (the model chain), as `x-llm-priority` did before classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackAs {
    /// Never served by a weaker tier.
    Critical,
    #[default]
    Normal,
    /// Never falls back; fails fast with `Retry-After`.
    Batch,
}

impl FallbackAs {
    pub fn priority(self) -> Priority {
        match self {
            Self::Critical => Priority::Critical,
            Self::Normal => Priority::Normal,
            Self::Batch => Priority::Batch,
        }
    }
}

/// One priority class.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    pub name: String,
    #[serde(default)]
    pub fallback: FallbackAs,
    /// Concurrent upstream requests at most, across all workers (absent: unlimited).
    #[serde(default)]
    pub max_concurrency: Option<u32>,
    /// Requests waiting at most, across all workers (0: never queue).
    #[serde(default)]
    pub max_queue: u32,
    /// Longest wait in the queue.
    #[serde(default = "default_max_queue_ms")]
    pub max_queue_ms: u64,
    #[serde(default)]
    pub at_limit: AtLimit,
    #[serde(default)]
    pub limit_when: LimitWhen,
}

/// Requests estimated long take slots from this pool instead of their class's.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongTasksConfig {
    pub max_concurrency: u32,
    #[serde(default)]
    pub max_queue: u32,
    #[serde(default = "default_max_queue_ms")]
    pub max_queue_ms: u64,
    /// Long when the prompt is estimated above this many tokens (body bytes / 4).
    #[serde(default = "default_long_prompt")]
    pub prompt_tokens: u64,
    /// Long when `max_tokens` (any spelling) asks for more.
    #[serde(default = "default_long_output")]
    pub max_tokens: u64,
    /// Long when the request carries tools (agent loops).
    #[serde(default)]
    pub tools: bool,
}

/// The load trigger: the primary model's 429 rate, its P95 answer time, or the queue length
/// above a threshold engages it; all of them below their release thresholds for `hold_ms`
/// release it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// The primary model watched.
    pub model: String,
    #[serde(default = "default_load_window_ms")]
    pub window_ms: u64,
    /// Answers at least in the window before a rate counts.
    #[serde(default = "default_min_answers")]
    pub min_answers: u32,
    #[serde(default, deserialize_with = "super::f64_or_text_opt")]
    pub engage_429_rate: Option<f64>,
    #[serde(default, deserialize_with = "super::f64_or_text_opt")]
    pub release_429_rate: Option<f64>,
    #[serde(default)]
    pub engage_p95_ms: Option<u64>,
    #[serde(default)]
    pub release_p95_ms: Option<u64>,
    #[serde(default)]
    pub engage_queue: Option<u32>,
    #[serde(default)]
    pub release_queue: Option<u32>,
    /// Engaged at least this long before it may release (hysteresis in time).
    #[serde(default = "default_hold_ms")]
    pub hold_ms: u64,
}

/// Off-peak deferral of batch classes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffPeakConfig {
    /// The classes deferred (default `batch`).
    #[serde(default = "default_off_peak_classes")]
    pub classes: Vec<String>,
    /// Windows in the operator's time, `HH:MM-HH:MM` or `HH:MM:SS-HH:MM:SS`; a window may
    /// cross midnight (`22:00-06:00`).
    pub windows: Vec<String>,
    /// The operator's offset from UTC, `+08:00` (a fixed offset: daylight saving time is not
    /// followed).
    #[serde(default = "default_utc_offset")]
    pub utc_offset: String,
    /// Up to this much is added to `Retry-After`, so that deferred clients do not return
    /// together.
    #[serde(default = "default_jitter_ms")]
    pub jitter_ms: u64,
    /// While the load trigger is engaged, defer inside the window too (by `load.hold_ms`).
    #[serde(default = "super::yes")]
    pub under_load: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyClass {
    /// Hex SHA-256 of the credential header's value as the client sends it
    /// (`printf %s "Bearer sk-..." | sha256sum`).
    pub sha256: String,
    pub class: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapingConfig {
    /// Highest first.
    #[serde(default = "default_classes")]
    pub classes: Vec<ClassConfig>,
    /// The class of requests that name none (default: the first class that falls back as
    /// `normal`).
    #[serde(default)]
    pub default_class: Option<String>,
    /// Classes by API key: the operator's mapping (the header is one of
    /// `fallback.providers.credential_headers`, the first present).
    #[serde(default)]
    pub keys: Vec<KeyClass>,
    #[serde(default)]
    pub long_tasks: Option<LongTasksConfig>,
    #[serde(default)]
    pub load: Option<LoadConfig>,
    #[serde(default)]
    pub off_peak: Option<OffPeakConfig>,
    /// The HTTP connection manager's `stream_idle_timeout` (Envoy's default 5 min): a queued
    /// request counts against it, so every queue time must stay below it.
    #[serde(default = "default_idle_timeout")]
    pub stream_idle_timeout_ms: u64,
}

fn default_max_queue_ms() -> u64 {
    10_000
}
fn default_long_prompt() -> u64 {
    32_000
}
fn default_long_output() -> u64 {
    16_000
}
fn default_load_window_ms() -> u64 {
    60_000
}
fn default_min_answers() -> u32 {
    20
}
fn default_hold_ms() -> u64 {
    30_000
}
fn default_off_peak_classes() -> Vec<String> {
    vec!["batch".into()]
}
fn default_utc_offset() -> String {
    "+00:00".into()
}
fn default_jitter_ms() -> u64 {
    60_000
}
fn default_idle_timeout() -> u64 {
    ENVOY_STREAM_IDLE_TIMEOUT_MS
}

fn default_classes() -> Vec<ClassConfig> {
    let class = |name: &str, fallback, at_limit| ClassConfig {
        name: name.into(),
        fallback,
        max_concurrency: None,
        max_queue: 0,
        max_queue_ms: default_max_queue_ms(),
        at_limit,
        limit_when: LimitWhen::Always,
    };
    vec![
        class("critical", FallbackAs::Critical, AtLimit::Reject),
        class("internal", FallbackAs::Normal, AtLimit::Downgrade),
        class("batch", FallbackAs::Batch, AtLimit::Defer),
    ]
}

impl ShapingConfig {
    /// The index of the class named `name`.
    pub fn class_index(&self, name: &str) -> Option<usize> {
        self.classes
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name.trim()))
    }

    /// The default class's index.
    pub fn default_index(&self) -> usize {
        self.default_class
            .as_deref()
            .and_then(|n| self.class_index(n))
            .or_else(|| {
                self.classes
                    .iter()
                    .position(|c| c.fallback == FallbackAs::Normal)
            })
            .unwrap_or(self.classes.len().saturating_sub(1))
    }

    /// The class a policy value names: a class name, or one of the priority words
    /// (`critical`, `normal`, `batch`) for the first class that falls back that way.
    pub fn class_of(&self, value: &str) -> Option<usize> {
        self.class_index(value).or_else(|| {
            let v = value.trim();
            let fallback = if v.eq_ignore_ascii_case("critical") {
                FallbackAs::Critical
            } else if v.eq_ignore_ascii_case("normal") {
                FallbackAs::Normal
            } else if v.eq_ignore_ascii_case("batch") {
                FallbackAs::Batch
            } else {
                return None;
            };
            self.classes.iter().position(|c| c.fallback == fallback)
        })
    }

    /// The longest a request may wait in any queue.
    pub fn longest_queue_ms(&self) -> u64 {
        self.classes
            .iter()
            .filter(|c| c.max_queue > 0)
            .map(|c| c.max_queue_ms)
            .chain(
                self.long_tasks
                    .iter()
                    .filter(|l| l.max_queue > 0)
                    .map(|l| l.max_queue_ms),
            )
            .max()
            .unwrap_or(0)
    }

    pub(super) fn validate(&self, models: &[super::ModelConfig]) -> Result<(), ConfigError> {
        let n = self.classes.len();
        if n == 0 || n > MAX_CLASSES {
            return Err(ConfigError::new(
                "shaping.classes",
                format!("{n} classes; 1..={MAX_CLASSES} are supported"),
            ));
        }
        for (i, class) in self.classes.iter().enumerate() {
            let field = |f: &str| format!("shaping.classes[{i}].{f}");
            super::validate_label(&class.name).map_err(|m| ConfigError::new(field("name"), m))?;
            if self.classes.iter().take(i).any(|c| c.name == class.name) {
                return Err(ConfigError::new(
                    field("name"),
                    format!("`{}` is listed twice", class.name),
                ));
            }
            if class.at_limit == AtLimit::Downgrade && class.fallback == FallbackAs::Critical {
                return Err(ConfigError::new(
                    field("at_limit"),
                    "a class that falls back as `critical` is never downgraded",
                ));
            }
            if class.max_queue > 0 && class.max_concurrency.is_none() {
                return Err(ConfigError::new(
                    field("max_queue"),
                    "a queue needs `max_concurrency` (an unlimited class never waits)",
                ));
            }
        }
        if let Some(name) = &self.default_class {
            if self.class_index(name).is_none() {
                return Err(ConfigError::new(
                    "shaping.default_class",
                    format!("`{name}` is not one of shaping.classes"),
                ));
            }
        }
        for (i, key) in self.keys.iter().enumerate() {
            let hex = key.sha256.len() == 64 && key.sha256.bytes().all(|b| b.is_ascii_hexdigit());
            if !hex {
                return Err(ConfigError::new(
                    format!("shaping.keys[{i}].sha256"),
                    "must be 64 hex digits (the SHA-256 of the header value)",
                ));
            }
            if self.class_index(&key.class).is_none() {
                return Err(ConfigError::new(
                    format!("shaping.keys[{i}].class"),
                    format!("`{}` is not one of shaping.classes", key.class),
                ));
            }
        }
        let longest = self.longest_queue_ms();
        if longest + IDLE_MARGIN_MS > self.stream_idle_timeout_ms {
            return Err(ConfigError::new(
                "shaping",
                format!(
                    "a queue time of {longest} ms does not stay {IDLE_MARGIN_MS} ms below \
                     stream_idle_timeout_ms ({} ms, the HTTP connection manager's \
                     `stream_idle_timeout`): Envoy would answer 504 to requests still queued",
                    self.stream_idle_timeout_ms
                ),
            ));
        }
        if let Some(load) = &self.load {
            if !models.iter().any(|m| m.name == load.model) {
                return Err(ConfigError::new(
                    "shaping.load.model",
                    format!("`{}` is not in `models`", load.model),
                ));
            }
            if load.window_ms < 1_000 {
                return Err(ConfigError::new(
                    "shaping.load.window_ms",
                    "must be at least 1000",
                ));
            }
            for (field, engage, release) in [
                ("429_rate", load.engage_429_rate, load.release_429_rate),
                (
                    "p95_ms",
                    load.engage_p95_ms.map(|v| v as f64),
                    load.release_p95_ms.map(|v| v as f64),
                ),
                (
                    "queue",
                    load.engage_queue.map(f64::from),
                    load.release_queue.map(f64::from),
                ),
            ] {
                if let (Some(e), Some(r)) = (engage, release) {
                    if r > e {
                        return Err(ConfigError::new(
                            format!("shaping.load.release_{field}"),
                            format!("{r} is above engage_{field} ({e}): no hysteresis"),
                        ));
                    }
                }
                if release.is_some() && engage.is_none() {
                    return Err(ConfigError::new(
                        format!("shaping.load.release_{field}"),
                        format!("needs engage_{field}"),
                    ));
                }
            }
            if load.engage_429_rate.is_none()
                && load.engage_p95_ms.is_none()
                && load.engage_queue.is_none()
            {
                return Err(ConfigError::new(
                    "shaping.load",
                    "needs at least one of engage_429_rate, engage_p95_ms, engage_queue",
                ));
            }
        }
        if let Some(off) = &self.off_peak {
            for (i, class) in off.classes.iter().enumerate() {
                if self.class_index(class).is_none() {
                    return Err(ConfigError::new(
                        format!("shaping.off_peak.classes[{i}]"),
                        format!("`{class}` is not one of shaping.classes"),
                    ));
                }
            }
            if off.windows.is_empty() {
                return Err(ConfigError::new(
                    "shaping.off_peak.windows",
                    "must list at least one window",
                ));
            }
            for (i, w) in off.windows.iter().enumerate() {
                crate::shaping::offpeak::Window::parse(w)
                    .map_err(|m| ConfigError::new(format!("shaping.off_peak.windows[{i}]"), m))?;
            }
            crate::shaping::offpeak::parse_offset(&off.utc_offset)
                .map_err(|m| ConfigError::new("shaping.off_peak.utc_offset", m))?;
        }
        Ok(())
    }
}
