//! A model's health, shared by every worker: cooldowns, consecutive failures, probes.
//!
//! The record lives in one shared-data key per model and is updated with compare-and-swap.
//! Cooldown deadlines only ever move later: a later signal can extend a cooldown, never shorten
//! it. When a cooldown ends the circuit is half-open: exactly one request takes the probe lease
//! (a CAS write); its success closes the circuit, its failure re-opens it with a doubled
//! cooldown.

use crate::classify::ErrorClass;
use crate::config::switch::SwitchRule;
use crate::config::FallbackConfig;

/// The little-endian u64 at `at` (0 when out of range); shared-data records are fixed layouts.
pub(crate) fn le_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes)
}

/// How long a probe lease lasts before another request may probe (a probe that never reports).
pub const PROBE_LEASE_MS: u64 = 30_000;

/// One model's health record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    /// Until when the model is cooling down (0: never opened, or closed again).
    pub cooldown_until_ms: u64,
    /// Until when a probe holds the half-open circuit.
    pub probe_until_ms: u64,
    /// Overload/timeout failures in a row.
    pub consecutive_failures: u32,
    /// Times the circuit opened in a row (the cooldown doubles each time).
    pub opens: u32,
    /// The class that opened the circuit last.
    pub reason: Option<ErrorClass>,
}

/// Whether a request may use the model now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Healthy,
    /// The cooldown has ended and nobody is probing: whoever takes the lease probes.
    Probe,
    /// Cooling down (or being probed by another request) until then.
    Cooling {
        until_ms: u64,
    },
}

const ENCODED_LEN: usize = 25;

impl Health {
    pub fn encode(&self) -> [u8; ENCODED_LEN] {
        let mut out = [0u8; ENCODED_LEN];
        let reason = self.reason.map_or(0u8, |c| {
            1 + ErrorClass::ALL.iter().position(|x| *x == c).unwrap_or(0) as u8
        });
        let parts: [&[u8]; 5] = [
            &self.cooldown_until_ms.to_le_bytes(),
            &self.probe_until_ms.to_le_bytes(),
            &self.consecutive_failures.to_le_bytes(),
            &self.opens.to_le_bytes(),
            &[reason],
        ];
        let mut at = 0;
        for part in parts {
            if let Some(slot) = out.get_mut(at..at + part.len()) {
                slot.copy_from_slice(part);
            }
            at += part.len();
        }
        out
    }

    /// Decodes a record; anything malformed reads as a healthy model.
    pub fn decode(bytes: &[u8]) -> Self {
        let u64_at = |at: usize| le_u64(bytes, at);
        let u32_at = |at: usize| {
            bytes
                .get(at..at + 4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(0, u32::from_le_bytes)
        };
        if bytes.len() != ENCODED_LEN {
            return Self::default();
        }
        let reason = bytes
            .get(24)
            .and_then(|r| r.checked_sub(1))
            .and_then(|i| ErrorClass::ALL.get(usize::from(i)).copied());
        Self {
            cooldown_until_ms: u64_at(0),
            probe_until_ms: u64_at(8),
            consecutive_failures: u32_at(16),
            opens: u32_at(20),
            reason,
        }
    }

    pub fn is_clean(&self) -> bool {
        *self == Self::default()
    }

    pub fn admission(&self, now_ms: u64) -> Admission {
        if now_ms < self.cooldown_until_ms {
            Admission::Cooling {
                until_ms: self.cooldown_until_ms,
            }
        } else if self.cooldown_until_ms == 0 {
            Admission::Healthy
        } else if now_ms < self.probe_until_ms {
            Admission::Cooling {
                until_ms: self.probe_until_ms,
            }
        } else {
            Admission::Probe
        }
    }

    /// Takes the probe lease (the caller writes the record with CAS; losing the race means
    /// someone else probes).
    pub fn take_probe(&mut self, now_ms: u64) {
        self.probe_until_ms = now_ms.saturating_add(PROBE_LEASE_MS);
    }

    /// A success closes the circuit and forgets past failures.
    pub fn on_success(&mut self) {
        *self = Self::default();
    }

    /// Records a failure of `class` (with the upstream's wait hint). Returns the new cooldown
    /// deadline when this failure opened or extended the circuit. `jitter` is a random number;
    /// up to a quarter of the cooldown is added from it, so that workers do not probe together.
    /// `rule`: the model's switch conditions (consecutive failures, the longest wait waited
    /// out); `config`: the cooldowns.
    pub fn on_failure(
        &mut self,
        class: ErrorClass,
        wait_ms: Option<u64>,
        now_ms: u64,
        config: &FallbackConfig,
        rule: &SwitchRule,
        jitter: u64,
    ) -> Option<u64> {
        let half_open = self.cooldown_until_ms != 0 && now_ms >= self.cooldown_until_ms;
        let until = match class {
            ErrorClass::QuotaExhausted => {
                now_ms.saturating_add(wait_ms.unwrap_or(config.quota_cooldown_ms))
            }
            ErrorClass::RateLimited => match wait_ms {
                Some(wait) if wait > rule.wait_over_ms => now_ms.saturating_add(wait),
                _ if half_open => self.circuit_deadline(now_ms, config, jitter),
                _ => return None,
            },
            ErrorClass::ModelUnavailable => now_ms.saturating_add(config.unavailable_cooldown_ms),
            ErrorClass::Overloaded | ErrorClass::Timeout => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                if !half_open && self.consecutive_failures < rule.consecutive_failures {
                    return None;
                }
                self.circuit_deadline(now_ms, config, jitter)
            }
            _ => return None,
        };
        Some(self.open_until(until, class))
    }

    /// Opens the circuit because of a high error rate.
    pub fn open_for_error_rate(
        &mut self,
        now_ms: u64,
        config: &FallbackConfig,
        jitter: u64,
    ) -> u64 {
        let until = self.circuit_deadline(now_ms, config, jitter);
        self.open_until(until, ErrorClass::Overloaded)
    }

    /// Exponential, jittered cooldown: base × 2^opens (capped), plus up to 25 % jitter.
    /// Opens the circuit until `until_ms` for a reason outside the answer classes' own rules
    /// (a halted canary). Returns the deadline.
    pub fn hold_out(&mut self, until_ms: u64, class: ErrorClass) -> u64 {
        self.open_until(until_ms, class)
    }

    fn circuit_deadline(&self, now_ms: u64, config: &FallbackConfig, jitter: u64) -> u64 {
        let factor = 1u64 << self.opens.min(20);
        let cooldown = config
            .base_cooldown_ms
            .saturating_mul(factor)
            .min(config.max_cooldown_ms);
        let spread = cooldown / 4;
        let jitter = if spread == 0 { 0 } else { jitter % spread };
        now_ms.saturating_add(cooldown).saturating_add(jitter)
    }

    fn open_until(&mut self, until: u64, class: ErrorClass) -> u64 {
        // Deadlines only move later.
        self.cooldown_until_ms = self.cooldown_until_ms.max(until);
        self.probe_until_ms = 0;
        self.opens = self.opens.saturating_add(1);
        self.consecutive_failures = 0;
        self.reason = Some(class);
        self.cooldown_until_ms
    }
}

/// A worker-local error-rate window for one model: overload and timeout answers against all
/// answers. Kept per worker (VM) so that successes never write shared data; the circuit it
/// opens is shared.
/// Which switch condition opened a circuit (the reason a model was switched away from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// `consecutive_failures` overloads or timeouts in a row.
    ConsecutiveFailures,
    /// The error rate over its window, with its volume.
    ErrorRate,
    /// A rate limit asking for more than `wait_over_ms`.
    LongWait,
    QuotaExhausted,
    ModelUnavailable,
    /// The probe of a half-open circuit failed.
    ProbeFailed,
    /// The P95 answer time above its threshold for its time (or a probe still too slow).
    Latency,
}

impl Condition {
    pub const ALL: [Condition; 7] = [
        Condition::ConsecutiveFailures,
        Condition::ErrorRate,
        Condition::LongWait,
        Condition::QuotaExhausted,
        Condition::ModelUnavailable,
        Condition::ProbeFailed,
        Condition::Latency,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Condition::ConsecutiveFailures => "consecutive_failures",
            Condition::ErrorRate => "error_rate",
            Condition::LongWait => "long_wait",
            Condition::QuotaExhausted => "quota_exhausted",
            Condition::ModelUnavailable => "model_unavailable",
            Condition::ProbeFailed => "probe_failed",
            Condition::Latency => "latency",
        }
    }

    /// The condition behind a failure of `class` that opened the circuit of a model whose
    /// health was `before` (a failure while half-open is a failed probe, whatever its class).
    pub fn of_failure(before: &Health, class: ErrorClass, now_ms: u64) -> Self {
        let half_open = before.cooldown_until_ms != 0 && now_ms >= before.cooldown_until_ms;
        match class {
            ErrorClass::QuotaExhausted => Condition::QuotaExhausted,
            ErrorClass::ModelUnavailable => Condition::ModelUnavailable,
            _ if half_open => Condition::ProbeFailed,
            ErrorClass::RateLimited => Condition::LongWait,
            _ => Condition::ConsecutiveFailures,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorWindow {
    start_ms: u64,
    total: u32,
    errors: u32,
}

impl ErrorWindow {
    /// Records an answer; returns true when the error rate crossed the threshold (the window
    /// then starts afresh).
    pub fn record(&mut self, now_ms: u64, is_error: bool, rule: &SwitchRule) -> bool {
        if now_ms.saturating_sub(self.start_ms) >= rule.window_ms {
            *self = Self {
                start_ms: now_ms,
                ..Self::default()
            };
        }
        self.total = self.total.saturating_add(1);
        if is_error {
            self.errors = self.errors.saturating_add(1);
        }
        let rate = f64::from(self.errors) / f64::from(self.total.max(1));
        if self.total >= rule.min_requests && rate > rule.error_rate {
            *self = Self {
                start_ms: now_ms,
                ..Self::default()
            };
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn config() -> FallbackConfig {
        FallbackConfig {
            base_cooldown_ms: 1000,
            max_cooldown_ms: 8000,
            ..FallbackConfig::default()
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn encodes_and_decodes() {
        let h = Health {
            cooldown_until_ms: 123,
            probe_until_ms: 456,
            consecutive_failures: 2,
            opens: 3,
            reason: Some(ErrorClass::QuotaExhausted),
        };
        assert_eq!(Health::decode(&h.encode()), h);
        assert_eq!(Health::decode(b"garbage"), Health::default());
        assert_eq!(
            Health::decode(&Health::default().encode()),
            Health::default()
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn overload_opens_after_the_threshold_then_probe_then_doubles() {
        let c = config();
        let mut h = Health::default();
        assert_eq!(
            h.on_failure(
                ErrorClass::Overloaded,
                None,
                0,
                &c,
                &SwitchRule::defaults(&c),
                0
            ),
            None
        );
        assert_eq!(h.admission(0), Admission::Healthy);
        assert_eq!(
            h.on_failure(
                ErrorClass::Overloaded,
                None,
                10,
                &c,
                &SwitchRule::defaults(&c),
                0
            ),
            Some(1010)
        );
        assert_eq!(h.admission(500), Admission::Cooling { until_ms: 1010 });
        assert_eq!(h.admission(1010), Admission::Probe);
        h.take_probe(1010);
        assert!(matches!(h.admission(1011), Admission::Cooling { .. }));
        // The probe fails: re-opened at once with a doubled cooldown.
        assert_eq!(
            h.on_failure(
                ErrorClass::Overloaded,
                None,
                1020,
                &c,
                &SwitchRule::defaults(&c),
                0
            ),
            Some(3020)
        );
        assert_eq!(h.admission(3020), Admission::Probe);
        h.on_success();
        assert_eq!(h.admission(3020), Admission::Healthy);
        assert!(h.is_clean());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn cooldowns_never_shorten_and_are_capped_and_jittered() {
        let c = config();
        let mut h = Health::default();
        h.on_failure(
            ErrorClass::QuotaExhausted,
            Some(60_000),
            0,
            &c,
            &SwitchRule::defaults(&c),
            0,
        );
        h.on_failure(
            ErrorClass::ModelUnavailable,
            None,
            0,
            &c,
            &SwitchRule::defaults(&c),
            0,
        );
        assert_eq!(h.cooldown_until_ms, c.unavailable_cooldown_ms.max(60_000));
        let mut h = Health {
            opens: 10,
            ..Health::default()
        };
        let until = h.open_for_error_rate(0, &c, 999_999);
        assert!((8000..10_000).contains(&until), "{until}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn error_rate_opens_only_with_enough_answers_in_the_window() {
        let c = FallbackConfig {
            min_requests: 20,
            error_rate_threshold: 0.05,
            window_ms: 1000,
            ..FallbackConfig::default()
        };
        let c = SwitchRule::defaults(&c);
        let mut w = ErrorWindow::default();
        // One error in 20 is exactly 5 %: not above the threshold.
        assert!(!w.record(0, true, &c));
        for t in 1..20 {
            assert!(!w.record(t, false, &c));
        }
        // A second error makes it 2 / 21.
        assert!(w.record(30, true, &c));
        // A new window forgets the old answers.
        let mut w = ErrorWindow::default();
        for t in 0..19 {
            w.record(t, true, &c);
        }
        assert!(!w.record(5000, true, &c));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rate_limits_cool_down_only_for_long_waits() {
        let c = config();
        let mut h = Health::default();
        assert_eq!(
            h.on_failure(
                ErrorClass::RateLimited,
                Some(1000),
                0,
                &c,
                &SwitchRule::defaults(&c),
                0
            ),
            None
        );
        assert_eq!(
            h.on_failure(
                ErrorClass::RateLimited,
                Some(120_000),
                0,
                &c,
                &SwitchRule::defaults(&c),
                0
            ),
            Some(120_000)
        );
        let mut h = Health::default();
        assert_eq!(
            h.on_failure(ErrorClass::Auth, None, 0, &c, &SwitchRule::defaults(&c), 0),
            None
        );
        assert!(h.is_clean());
    }
}

#[cfg(test)]
mod switch_tests {
    use super::*;
    use crate::config::Config;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn config() -> Config {
        Config::from_value(serde_json::json!({
            "models": [{"name": "big", "tier": "flagship"}, {"name": "small", "tier": "light"},
                       {"name": "odd", "tier": "light"}],
            "fallback": {"max_wait_ms": 5000, "switch_on": {
                "flagship": {"consecutive_failures": 2, "wait_over_ms": 30000},
                "light": {"consecutive_failures": 50,
                          "error_rate": {"over": 0.05, "window_ms": 60000, "min_requests": 20}},
                "odd": {"error_rate": {"over": 0.5}}}}
        }))
        .unwrap()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn each_tier_and_model_gets_its_own_conditions_over_the_defaults() {
        let c = config();
        let big = c.switch_rule("big");
        assert_eq!((big.consecutive_failures, big.wait_over_ms), (2, 30_000));
        assert_eq!(big.error_rate, 0.05, "the default");
        let small = c.switch_rule("small");
        assert_eq!((small.consecutive_failures, small.wait_over_ms), (50, 5000));
        // A model's own entry over its tier's: only what it says changes.
        let odd = c.switch_rule("odd");
        assert_eq!((odd.consecutive_failures, odd.error_rate), (50, 0.5));
        assert_eq!((odd.window_ms, odd.min_requests), (60_000, 20));
        assert_eq!(c.switch_rule("unknown"), SwitchRule::defaults(&c.fallback));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_flagship_waits_out_a_20s_retry_after_but_not_a_40s_one_and_a_light_model_never_counts_in_a_row(
    ) {
        let c = config();
        let big = c.switch_rule("big");
        let mut h = Health::default();
        assert_eq!(
            h.on_failure(
                ErrorClass::RateLimited,
                Some(20_000),
                0,
                &c.fallback,
                &big,
                0
            ),
            None
        );
        assert!(h
            .on_failure(
                ErrorClass::RateLimited,
                Some(40_000),
                0,
                &c.fallback,
                &big,
                0
            )
            .is_some());
        let small = c.switch_rule("small");
        let mut h = Health::default();
        for t in 0..49 {
            assert_eq!(
                h.on_failure(ErrorClass::Overloaded, None, t, &c.fallback, &small, 0),
                None
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn an_error_rate_counts_the_classes_it_names() {
        let c = Config::from_value(serde_json::json!({
            "models": [{"name": "m", "tier": "light"}],
            "fallback": {"switch_on": {"light": {"error_rate": {"over": 0.1,
                "classes": ["overloaded", "rate_limited"]}}}}
        }))
        .unwrap();
        let rule = c.switch_rule("m");
        assert!(rule.rate_classes.counts(ErrorClass::RateLimited));
        assert!(rule.rate_classes.counts(ErrorClass::Overloaded));
        assert!(!rule.rate_classes.counts(ErrorClass::Timeout));
        let default = SwitchRule::defaults(&c.fallback).rate_classes;
        assert!(default.counts(ErrorClass::Timeout) && !default.counts(ErrorClass::RateLimited));
        let bad = Config::from_value(serde_json::json!({
            "models": [{"name": "m", "tier": "light"}],
            "fallback": {"switch_on": {"light": {"error_rate": {"over": 0.1, "classes": ["auth"]}}}}
        }));
        assert!(bad.unwrap_err().to_string().contains("`auth` cannot count"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_condition_that_opened_a_circuit_is_named() {
        let clean = Health::default();
        let half_open = Health {
            cooldown_until_ms: 100,
            ..Health::default()
        };
        let of = Condition::of_failure;
        assert_eq!(
            of(&clean, ErrorClass::Overloaded, 0),
            Condition::ConsecutiveFailures
        );
        assert_eq!(of(&clean, ErrorClass::RateLimited, 0), Condition::LongWait);
        assert_eq!(
            of(&half_open, ErrorClass::Timeout, 200),
            Condition::ProbeFailed
        );
        assert_eq!(
            of(&half_open, ErrorClass::QuotaExhausted, 200),
            Condition::QuotaExhausted
        );
        assert_eq!(
            of(&clean, ErrorClass::ModelUnavailable, 0),
            Condition::ModelUnavailable
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bad_switch_conditions_are_refused_with_their_field() {
        let bad = |switch_on: serde_json::Value| {
            Config::from_value(serde_json::json!({
                "models": [{"name": "m", "tier": "light"}],
                "fallback": {"switch_on": switch_on}
            }))
            .unwrap_err()
            .to_string()
        };
        assert!(bad(serde_json::json!({"nope": {}})).contains("fallback.switch_on.nope"));
        assert!(
            bad(serde_json::json!({"light": {"consecutive_failures": 0}}))
                .contains("consecutive_failures")
        );
        assert!(bad(serde_json::json!({"m": {"error_rate": {"over": 1.5}}}))
            .contains("error_rate.over"));
    }
}
