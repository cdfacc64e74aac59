//! When a model's circuit opens: switch conditions per tier and per model
//! (`fallback.switch_on`), over the global defaults (`failure_threshold`, `max_wait_ms`,
//! `error_rate_threshold`, `window_ms`, `min_requests`), so that a flagship can switch on two
//! 5xx in a row while a light model switches only on its error rate.

use super::{f64_or_text, ConfigError, FallbackConfig};
use crate::classify::ErrorClass;
use serde::Deserialize;

/// One tier's or one model's conditions; what it leaves out comes from the tier, then from the
/// global defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchOn {
    /// Overload or timeout failures in a row that open the circuit.
    #[serde(default)]
    pub consecutive_failures: Option<u32>,
    /// A rate limit asking for a longer wait than this switches; a shorter one is waited out on
    /// the same model.
    #[serde(default)]
    pub wait_over_ms: Option<u64>,
    /// The share of overload and timeout answers over a window that opens the circuit.
    #[serde(default)]
    pub error_rate: Option<ErrorRateOn>,
    /// Answer time against a baseline.
    #[serde(default)]
    pub latency: Option<LatencyOn>,
}

/// "P95 above `over` x `baseline_ms` for `for_ms`": the answer time is the time to the answer's
/// head, about the time to first token of a stream and the whole time of a JSON answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyOn {
    /// The model's usual P95 answer time.
    pub baseline_ms: u64,
    #[serde(default = "default_over", deserialize_with = "f64_or_text")]
    pub over: f64,
    #[serde(default = "default_for_ms")]
    pub for_ms: u64,
    /// The window the P95 is taken over (all workers' answers, in shared data).
    #[serde(default = "default_latency_window_ms")]
    pub window_ms: u64,
    #[serde(default = "default_min_samples")]
    pub min_samples: u32,
    /// A probe after the cooldown closes the circuit only when its own answer time is below
    /// `release` x `baseline_ms` (hysteresis: a model still slow stays out).
    #[serde(default = "default_release", deserialize_with = "f64_or_text")]
    pub release: f64,
    /// The usual P95 time per output token of a JSON answer (its whole time over its output
    /// tokens, from `usage`): JSON answers are then judged per token, so that long answers do
    /// not look slow. Without it they are judged by their whole time against `baseline_ms`.
    #[serde(default, deserialize_with = "super::f64_or_text_opt")]
    pub per_token_baseline_ms: Option<f64>,
}

fn default_over() -> f64 {
    2.0
}
fn default_for_ms() -> u64 {
    300_000
}
fn default_latency_window_ms() -> u64 {
    60_000
}
fn default_min_samples() -> u32 {
    20
}
fn default_release() -> f64 {
    1.5
}

/// A latency condition in force.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyRule {
    pub baseline_ms: u64,
    pub over: f64,
    pub for_ms: u64,
    pub window_ms: u64,
    pub min_samples: u32,
    pub release: f64,
    /// JSON answers judged per output token, against this (µs).
    pub per_token_baseline_us: Option<u64>,
}

impl LatencyRule {
    /// The P95 above which the model is slow.
    pub fn threshold_ms(&self) -> u64 {
        (self.baseline_ms as f64 * self.over).round() as u64
    }

    /// The answer time under which a probe counts as recovered.
    pub fn release_ms(&self) -> u64 {
        (self.baseline_ms as f64 * self.release).round() as u64
    }

    /// The same rule for JSON answers per output token (in µs, `baseline_ms` standing for the
    /// per-token baseline), when one is configured.
    pub fn per_token(&self) -> Option<LatencyRule> {
        self.per_token_baseline_us.map(|us| LatencyRule {
            baseline_ms: us,
            per_token_baseline_us: None,
            ..*self
        })
    }
}

impl From<&LatencyOn> for LatencyRule {
    fn from(on: &LatencyOn) -> Self {
        Self {
            baseline_ms: on.baseline_ms,
            over: on.over,
            for_ms: on.for_ms,
            window_ms: on.window_ms,
            min_samples: on.min_samples,
            release: on.release,
            per_token_baseline_us: on
                .per_token_baseline_ms
                .map(|ms| (ms * 1000.0).round() as u64),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorRateOn {
    /// Opens when the rate is above this (0..1].
    #[serde(deserialize_with = "f64_or_text")]
    pub over: f64,
    #[serde(default)]
    pub window_ms: Option<u64>,
    /// Answers the window needs before its rate counts.
    #[serde(default)]
    pub min_requests: Option<u32>,
    /// The classes that count as errors (`overloaded`, `timeout`, `rate_limited`); default the
    /// first two. Counting `rate_limited` makes a model whose short 429s pile up switch.
    #[serde(default)]
    pub classes: Option<Vec<ErrorClass>>,
}

/// Classes an error rate may count.
const RATE_CLASSES: [ErrorClass; 3] = [
    ErrorClass::Overloaded,
    ErrorClass::Timeout,
    ErrorClass::RateLimited,
];

/// A set of [`RATE_CLASSES`], as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateClasses(u8);

impl RateClasses {
    const DEFAULT: RateClasses = RateClasses(0b011);

    fn of(classes: &[ErrorClass]) -> Self {
        Self(
            RATE_CLASSES
                .iter()
                .enumerate()
                .filter(|(_, c)| classes.contains(c))
                .fold(0, |bits, (i, _)| bits | 1 << i),
        )
    }

    /// The classes counted, by name.
    pub fn names(self) -> Vec<&'static str> {
        RATE_CLASSES
            .iter()
            .filter(|c| self.counts(**c))
            .map(|c| c.as_str())
            .collect()
    }

    pub fn counts(self, class: ErrorClass) -> bool {
        RATE_CLASSES
            .iter()
            .position(|c| *c == class)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }
}

/// The conditions in force for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchRule {
    pub consecutive_failures: u32,
    pub wait_over_ms: u64,
    pub error_rate: f64,
    pub window_ms: u64,
    pub min_requests: u32,
    /// What counts as an error in the rate.
    pub rate_classes: RateClasses,
    pub latency: Option<LatencyRule>,
}

impl SwitchRule {
    /// The global defaults.
    pub fn defaults(f: &FallbackConfig) -> Self {
        Self {
            consecutive_failures: f.failure_threshold,
            wait_over_ms: f.max_wait_ms,
            error_rate: f.error_rate_threshold,
            window_ms: f.window_ms,
            min_requests: f.min_requests,
            rate_classes: RateClasses::DEFAULT,
            latency: None,
        }
    }

    /// These conditions with `on`'s over them.
    pub fn with(self, on: &SwitchOn) -> Self {
        let rate = on.error_rate.as_ref();
        Self {
            consecutive_failures: on.consecutive_failures.unwrap_or(self.consecutive_failures),
            wait_over_ms: on.wait_over_ms.unwrap_or(self.wait_over_ms),
            error_rate: rate.map_or(self.error_rate, |r| r.over),
            window_ms: rate.and_then(|r| r.window_ms).unwrap_or(self.window_ms),
            min_requests: rate
                .and_then(|r| r.min_requests)
                .unwrap_or(self.min_requests),
            rate_classes: rate
                .and_then(|r| r.classes.as_deref())
                .map_or(self.rate_classes, RateClasses::of),
            latency: on.latency.as_ref().map(LatencyRule::from).or(self.latency),
        }
    }
}

pub(super) fn validate(
    f: &FallbackConfig,
    is_model: &dyn Fn(&str) -> bool,
) -> Result<(), ConfigError> {
    for (name, on) in &f.switch_on {
        let field = |sub: &str| format!("fallback.switch_on.{name}{sub}");
        let tier = f.tiers.contains(name);
        match (tier, is_model(name)) {
            (false, false) => {
                return Err(ConfigError::new(
                    field(""),
                    format!("`{name}` is neither a tier of fallback.tiers nor a model"),
                ))
            }
            (true, true) => {
                return Err(ConfigError::new(
                    field(""),
                    format!("`{name}` names both a tier and a model"),
                ))
            }
            _ => {}
        }
        if on.consecutive_failures == Some(0) {
            return Err(ConfigError::new(
                field(".consecutive_failures"),
                "must be at least 1",
            ));
        }
        if on.wait_over_ms.is_some_and(|w| w > f.max_stated_wait_ms) {
            return Err(ConfigError::new(
                field(".wait_over_ms"),
                "is above fallback.max_stated_wait_ms",
            ));
        }
        if let Some(l) = &on.latency {
            let ok = l.baseline_ms > 0
                && l.per_token_baseline_ms
                    .is_none_or(|t| t > 0.0 && t <= 60_000.0)
                && l.over > 1.0
                && l.release >= 1.0
                && l.release <= l.over
                && l.window_ms >= 2
                && l.min_samples > 0;
            if !ok {
                return Err(ConfigError::new(
                    field(".latency"),
                    "baseline_ms > 0, over > 1, 1 <= release <= over, window_ms >= 2, \
                     min_samples > 0",
                ));
            }
        }
        if let Some(rate) = &on.error_rate {
            if !(rate.over > 0.0 && rate.over <= 1.0) {
                return Err(ConfigError::new(
                    field(".error_rate.over"),
                    format!("{} is outside (0, 1]", rate.over),
                ));
            }
            if let Some(bad) = rate
                .classes
                .iter()
                .flatten()
                .find(|c| !RATE_CLASSES.contains(c))
            {
                return Err(ConfigError::new(
                    field(".error_rate.classes"),
                    format!(
                        "`{}` cannot count in an error rate (overloaded, timeout, rate_limited)",
                        bad.as_str()
                    ),
                ));
            }
            if rate.window_ms == Some(0) || rate.min_requests == Some(0) {
                return Err(ConfigError::new(
                    field(".error_rate"),
                    "window_ms and min_requests must be greater than 0",
                ));
            }
        }
    }
    Ok(())
}
