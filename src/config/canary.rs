//! Canaries (`fallback.canaries`): a model that takes a share of another model's requests,
//! sticky per conversation, halted when it answers worse than the model it stands in for.

use super::{f64_or_text, ConfigError, FallbackConfig};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CanaryConfig {
    /// The new model.
    pub model: String,
    /// The model whose requests it takes a share of (requests that name it).
    pub of: String,
    /// The share of `of`'s requests (0..1], by conversation.
    #[serde(deserialize_with = "f64_or_text")]
    pub share: f64,
    /// The request header naming the conversation (a session or conversation id); without it,
    /// or when a request lacks it, the conversation is its first message.
    #[serde(default)]
    pub sticky_header: Option<String>,
    #[serde(default)]
    pub halt: HaltConfig,
}

/// When a canary is halted: its error rate (overload, timeout) above the base model's by
/// `error_rate_margin`, or its P95 answer time above `latency_margin` x the base's, over
/// `window_ms`, once it answered `min_requests` times there (and, for latency, the base too). A
/// halted canary takes nothing for `cooldown_ms`, then one request probes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HaltConfig {
    #[serde(default = "default_margin", deserialize_with = "f64_or_text")]
    pub error_rate_margin: f64,
    /// A multiple of the base's P95 answer time (time to the answer's head); `null` turns the
    /// latency comparison off (and the timing of the canary's and the base's attempts with it).
    #[serde(default = "default_latency_margin")]
    pub latency_margin: Option<f64>,
    #[serde(default = "default_min_requests")]
    pub min_requests: u32,
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
    #[serde(default = "default_cooldown_ms")]
    pub cooldown_ms: u64,
}

impl Default for HaltConfig {
    fn default() -> Self {
        Self {
            error_rate_margin: default_margin(),
            latency_margin: default_latency_margin(),
            min_requests: default_min_requests(),
            window_ms: default_window_ms(),
            cooldown_ms: default_cooldown_ms(),
        }
    }
}

fn default_margin() -> f64 {
    0.05
}
fn default_latency_margin() -> Option<f64> {
    Some(2.0)
}
fn default_min_requests() -> u32 {
    20
}
fn default_window_ms() -> u64 {
    300_000
}
fn default_cooldown_ms() -> u64 {
    600_000
}

pub(super) fn validate(
    f: &FallbackConfig,
    is_model: &dyn Fn(&str) -> bool,
) -> Result<(), ConfigError> {
    for (i, c) in f.canaries.iter().enumerate() {
        let field = |sub: &str| format!("fallback.canaries[{i}].{sub}");
        for (name, value) in [("model", &c.model), ("of", &c.of)] {
            if !is_model(value) {
                return Err(ConfigError::new(
                    field(name),
                    format!("`{value}` is not in `models`"),
                ));
            }
        }
        if c.model == c.of {
            return Err(ConfigError::new(
                field("model"),
                "a model cannot be its own canary",
            ));
        }
        if f.canaries.iter().take(i).any(|o| o.of == c.of) {
            return Err(ConfigError::new(
                field("of"),
                format!("`{}` has a canary already", c.of),
            ));
        }
        if f.canaries.iter().any(|o| o.of == c.model) {
            return Err(ConfigError::new(
                field("model"),
                "a canary cannot have a canary",
            ));
        }
        if !(c.share > 0.0 && c.share <= 1.0) {
            return Err(ConfigError::new(
                field("share"),
                format!("{} is outside (0, 1]", c.share),
            ));
        }
        if let Some(h) = &c.sticky_header {
            let ok = !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !ok {
                return Err(ConfigError::new(
                    field("sticky_header"),
                    "a lowercase header name (letters, digits, `-`)",
                ));
            }
        }
        let halt = &c.halt;
        if !(halt.error_rate_margin >= 0.0 && halt.error_rate_margin < 1.0)
            || halt
                .latency_margin
                .is_some_and(|m| !(1.0..=100.0).contains(&m))
            || halt.min_requests == 0
            || halt.window_ms == 0
        {
            return Err(ConfigError::new(
                field("halt"),
                "error_rate_margin in [0, 1), latency_margin in [1, 100], min_requests and \
                 window_ms above 0",
            ));
        }
    }
    Ok(())
}
