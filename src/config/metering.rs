//! Usage accounting (`metering:` in the plugin configuration): labels for known API keys, the
//! price table, budgets, and the latency histograms' switch.

use super::{f64_or_text, f64_or_text_opt, validate_label, ConfigError, ModelConfig};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Most labelled keys (each one is a label value of the key-dimension series).
pub const MAX_KEYS: usize = 64;
/// Most budgets (each one is a shared-data key and a few series).
pub const MAX_BUDGETS: usize = 32;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeteringConfig {
    /// Known API keys, by the hex SHA-256 of the credential header as the client sends it
    /// (`authorization`, else `x-api-key`), and the label their usage is shown under. Every
    /// other key is `other`; a request without one is `none`.
    #[serde(default)]
    pub keys: Vec<KeyLabel>,
    /// USD per million tokens, by model name (the model an attempt asked).
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    #[serde(default)]
    pub budgets: Vec<BudgetConfig>,
    /// Latency histograms (duration, time to first token, time per output token): two or three
    /// clock reads per request.
    #[serde(default = "super::yes")]
    pub latency: bool,
    /// The output a budget reserves for a request that states no `max_tokens` (when its model
    /// states no `max_output_tokens`).
    #[serde(default = "default_output_tokens")]
    pub default_output_tokens: u64,
}

impl Default for MeteringConfig {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            prices: BTreeMap::new(),
            budgets: Vec::new(),
            latency: true,
            default_output_tokens: default_output_tokens(),
        }
    }
}

fn default_output_tokens() -> u64 {
    1024
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyLabel {
    pub sha256: String,
    pub label: String,
}

/// A model's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    #[serde(deserialize_with = "f64_or_text")]
    pub input: f64,
    #[serde(deserialize_with = "f64_or_text")]
    pub output: f64,
    /// Input tokens read from the provider's prompt cache (default: the input price).
    #[serde(default, deserialize_with = "f64_or_text_opt")]
    pub cached_input: Option<f64>,
}

/// The calendar window a budget's cap applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetWindow {
    Hour,
    Day,
    Month,
}

impl BudgetWindow {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Month => "month",
        }
    }
}

/// A cap on cost or tokens over a window, for the requests of one key, task or model (or all).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Its label in stats, answers and the status document.
    pub name: String,
    /// Requests of this key label (`metering.keys`, or `other`).
    #[serde(default)]
    pub key: Option<String>,
    /// Requests of this task (`fallback.tasks`).
    #[serde(default)]
    pub task: Option<String>,
    /// Requests asking this model (the model the client named).
    #[serde(default)]
    pub model: Option<String>,
    /// Cap in USD (needs `prices`), or ...
    #[serde(default, deserialize_with = "f64_or_text_opt")]
    pub usd: Option<f64>,
    /// ... in tokens (input + output).
    #[serde(default, deserialize_with = "u64_or_text_opt")]
    pub tokens: Option<u64>,
    pub window: BudgetWindow,
    /// The window's calendar is in this fixed offset (`+08:00`; default UTC).
    #[serde(default = "default_offset")]
    pub utc_offset: String,
    /// A temporary budget (a launch day): not applied from this RFC 3339 time on.
    #[serde(default)]
    pub until: Option<String>,
    /// Count what it would refuse, refuse nothing.
    #[serde(default)]
    pub shadow: bool,
}

/// A count, also as text: Envoy's YAML loader hands integers past 2^32 to the plugin's
/// `Struct` as strings (seen on Envoy 1.40 with `tokens: 5000000000`).
fn u64_or_text_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = f64_or_text(d)?;
    if value >= 0.0 && value.fract() == 0.0 && value < 1.8e19 {
        Ok(Some(value as u64))
    } else {
        Err(serde::de::Error::custom(format!(
            "`{value}` is not a whole number of tokens"
        )))
    }
}

fn default_offset() -> String {
    "+00:00".into()
}

impl MeteringConfig {
    pub(super) fn validate(
        &self,
        models: &[ModelConfig],
        tasks: &[&String],
    ) -> Result<(), ConfigError> {
        if self.keys.len() > MAX_KEYS {
            return Err(ConfigError::new(
                "metering.keys",
                format!("at most {MAX_KEYS} keys"),
            ));
        }
        for (i, key) in self.keys.iter().enumerate() {
            let ok = key.sha256.len() == 64 && key.sha256.bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                return Err(ConfigError::new(
                    format!("metering.keys[{i}].sha256"),
                    "must be 64 hex digits (printf %s \"Bearer sk-...\" | sha256sum)",
                ));
            }
            validate_label(&key.label)
                .map_err(|m| ConfigError::new(format!("metering.keys[{i}].label"), m))?;
            if ["other", "none"].contains(&key.label.as_str()) {
                return Err(ConfigError::new(
                    format!("metering.keys[{i}].label"),
                    "`other` and `none` are reserved",
                ));
            }
        }
        for (model, price) in &self.prices {
            let field = format!("metering.prices.{model}");
            if !models.iter().any(|m| &m.name == model) {
                return Err(ConfigError::new(field, "not in `models`"));
            }
            let prices = [Some(price.input), Some(price.output), price.cached_input];
            if prices
                .into_iter()
                .flatten()
                .any(|p| !(0.0..=1e6).contains(&p))
            {
                return Err(ConfigError::new(field, "prices must be 0..=1000000 USD"));
            }
        }
        if self.budgets.len() > MAX_BUDGETS {
            return Err(ConfigError::new(
                "metering.budgets",
                format!("at most {MAX_BUDGETS} budgets"),
            ));
        }
        for (i, b) in self.budgets.iter().enumerate() {
            let field = |f: &str| format!("metering.budgets[{i}].{f}");
            validate_label(&b.name).map_err(|m| ConfigError::new(field("name"), m))?;
            if self.budgets.iter().take(i).any(|o| o.name == b.name) {
                return Err(ConfigError::new(field("name"), "listed twice"));
            }
            if let Some(key) = &b.key {
                if key != "other" && !self.keys.iter().any(|k| &k.label == key) {
                    return Err(ConfigError::new(
                        field("key"),
                        format!("`{key}` is not a label of metering.keys (or `other`)"),
                    ));
                }
            }
            if let Some(task) = &b.task {
                if !tasks.contains(&task) {
                    return Err(ConfigError::new(
                        field("task"),
                        format!("`{task}` is not in fallback.tasks"),
                    ));
                }
            }
            if let Some(model) = &b.model {
                if !models.iter().any(|m| &m.name == model) {
                    return Err(ConfigError::new(field("model"), "not in `models`"));
                }
            }
            match (b.usd, b.tokens) {
                (Some(usd), None) => {
                    if !(usd > 0.0 && usd <= 1e9) {
                        return Err(ConfigError::new(field("usd"), "must be in (0, 1e9]"));
                    }
                    if self.prices.is_empty() {
                        return Err(ConfigError::new(
                            field("usd"),
                            "a cost budget needs metering.prices",
                        ));
                    }
                }
                (None, Some(tokens)) if tokens > 0 => {}
                (None, Some(_)) => {
                    return Err(ConfigError::new(field("tokens"), "must be greater than 0"))
                }
                _ => {
                    return Err(ConfigError::new(
                        field("usd"),
                        "set exactly one of `usd` and `tokens`",
                    ))
                }
            }
            crate::shaping::offpeak::parse_offset(&b.utc_offset)
                .map_err(|m| ConfigError::new(field("utc_offset"), m))?;
            if let Some(until) = &b.until {
                if crate::classify::wait::rfc3339_unix_ms(until).is_none() {
                    return Err(ConfigError::new(
                        field("until"),
                        format!("`{until}` is not an RFC 3339 time like 2026-12-02T00:00:00Z"),
                    ));
                }
            }
        }
        Ok(())
    }
}
