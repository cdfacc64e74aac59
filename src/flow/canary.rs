//! Canaries, pure: which conversations a canary takes, and when it is halted.
//!
//! A canary takes `share` of the conversations of the model it stands in for, by a stable hash
//! of the conversation (a configured header, else the first message), so that one conversation
//! stays on one model. Each worker tallies the canary's and its base model's answers over a
//! window; when the canary's error rate is worse than the base's by the configured margin, its
//! circuit is opened for the halt's cooldown, through the same health record every worker
//! reads, and one request probes it afterwards.

use crate::config::canary::{CanaryConfig, HaltConfig};
use memchr::memmem;

/// Resolution of a share (basis points).
const BUCKETS: u64 = 10_000;
/// Bytes of a first message that name its conversation.
const KEY_BYTES: usize = 256;

/// The bucket (0..10000) of a conversation key.
pub fn bucket(key: &[u8]) -> u64 {
    crate::fnv::hash(key) % BUCKETS
}

/// A stable 64-bit hash (FNV-1a) of a key.
pub fn hash(key: &[u8]) -> u64 {
    crate::fnv::hash(key)
}

/// A request's conversation without a sticky header: the bytes after its first `"content"`
/// key (its first message), else the start of the body.
pub fn conversation(body: &[u8]) -> &[u8] {
    let from = memmem::find(body, b"\"content\"").unwrap_or(0);
    let rest = body.get(from..).unwrap_or_default();
    rest.get(..KEY_BYTES.min(rest.len())).unwrap_or_default()
}

/// Whether a conversation in `bucket` goes to the canary.
pub fn takes(canary: &CanaryConfig, bucket: u64) -> bool {
    (bucket as f64) < canary.share * BUCKETS as f64
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    total: u32,
    errors: u32,
}

impl Tally {
    fn add(&mut self, is_error: bool) {
        self.total = self.total.saturating_add(1);
        self.errors = self.errors.saturating_add(u32::from(is_error));
    }

    fn rate(self) -> f64 {
        f64::from(self.errors) / f64::from(self.total.max(1))
    }
}

/// Answer times in the buckets of [`super::latency::BUCKETS_MS`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Times([u32; 16]);

impl Times {
    fn add(&mut self, ms: u64) {
        let bounds = super::latency::BUCKETS_MS;
        let i = bounds
            .iter()
            .position(|b| ms <= *b)
            .unwrap_or(bounds.len() - 1);
        if let Some(n) = self.0.get_mut(i) {
            *n = n.saturating_add(1);
        }
    }

    fn count(&self) -> u64 {
        self.0.iter().map(|n| u64::from(*n)).sum()
    }

    /// The bound of the bucket holding the 95th percentile.
    fn p95_ms(&self) -> Option<u64> {
        let total = self.count();
        let rank = (total * 95).div_ceil(100).max(1);
        let mut seen = 0;
        let bounds = super::latency::BUCKETS_MS;
        (total > 0)
            .then(|| {
                bounds.iter().zip(self.0).find_map(|(bound, n)| {
                    seen += u64::from(n);
                    (seen >= rank).then_some(*bound)
                })
            })
            .flatten()
    }
}

/// One worker's answers of a canary and of its base model in the current window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CanaryWindow {
    start_ms: u64,
    canary: Tally,
    base: Tally,
    canary_times: Times,
    base_times: Times,
}

/// What halted a canary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Halt {
    ErrorRate {
        canary_rate: f64,
        base_rate: f64,
    },
    Latency {
        canary_p95_ms: u64,
        base_p95_ms: u64,
    },
}

impl CanaryWindow {
    /// Counts an answer of the canary (`of_canary`) or of its base; `Some` when the canary is
    /// to be halted (the window then starts over).
    pub fn record(
        &mut self,
        halt: &HaltConfig,
        now_ms: u64,
        of_canary: bool,
        is_error: bool,
    ) -> Option<Halt> {
        self.roll(halt, now_ms);
        if of_canary {
            self.canary.add(is_error);
        } else {
            self.base.add(is_error);
        }
        let (canary_rate, base_rate) = (self.canary.rate(), self.base.rate());
        if self.canary.total >= halt.min_requests
            && canary_rate > base_rate + halt.error_rate_margin
        {
            *self = Self {
                start_ms: now_ms,
                ..Self::default()
            };
            return Some(Halt::ErrorRate {
                canary_rate,
                base_rate,
            });
        }
        None
    }

    fn roll(&mut self, halt: &HaltConfig, now_ms: u64) {
        if now_ms.saturating_sub(self.start_ms) >= halt.window_ms {
            *self = Self {
                start_ms: now_ms,
                ..Self::default()
            };
        }
    }

    /// Counts an answer time (to the answer's head) of the canary or of its base; `Some` when
    /// the canary's P95 is above `latency_margin` x the base's, both with `min_requests` times.
    pub fn record_time(
        &mut self,
        halt: &HaltConfig,
        now_ms: u64,
        of_canary: bool,
        time_ms: u64,
    ) -> Option<Halt> {
        let margin = halt.latency_margin?;
        self.roll(halt, now_ms);
        if of_canary {
            self.canary_times.add(time_ms);
        } else {
            self.base_times.add(time_ms);
        }
        let min = u64::from(halt.min_requests);
        if self.canary_times.count() < min || self.base_times.count() < min {
            return None;
        }
        let (canary, base) = (self.canary_times.p95_ms()?, self.base_times.p95_ms()?);
        if canary as f64 > base as f64 * margin {
            *self = Self {
                start_ms: now_ms,
                ..Self::default()
            };
            return Some(Halt::Latency {
                canary_p95_ms: canary,
                base_p95_ms: base,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn canary(share: f64) -> CanaryConfig {
        CanaryConfig {
            model: "new".into(),
            of: "old".into(),
            share,
            sticky_header: None,
            halt: HaltConfig {
                min_requests: 10,
                ..HaltConfig::default()
            },
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_share_of_conversations_goes_to_the_canary_and_stays_there() {
        let c = canary(0.1);
        let taken = (0..10_000)
            .filter(|i| takes(&c, bucket(format!("conversation-{i}").as_bytes())))
            .count();
        assert!((900..1100).contains(&taken), "{taken}");
        let key = b"conversation-42";
        assert!((0..5).all(|_| takes(&c, bucket(key)) == takes(&c, bucket(key))));
        assert!(takes(&canary(1.0), bucket(key)));
        // The first message names the conversation, whatever follows it.
        let a = br#"{"model":"old","messages":[{"role":"user","content":"plan my trip"}],"n":1}"#;
        let b = br#"{"model":"old","messages":[{"role":"user","content":"plan my trip"}],"n":2}"#;
        assert_eq!(conversation(a).get(..30), conversation(b).get(..30));
        assert!(conversation(a).starts_with(b"\"content\""));
        assert_eq!(conversation(b"{}"), b"{}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_canary_worse_than_its_base_by_the_margin_is_halted() {
        let c = canary(0.1);
        let mut w = CanaryWindow::default();
        // The base fails 10 % of the time.
        for i in 0..100 {
            assert_eq!(w.record(&c.halt, i, false, i % 10 == 0), None);
        }
        // The canary at 10 % too: no halt; then it degrades.
        for i in 0..10 {
            assert_eq!(w.record(&c.halt, 100 + i, true, i == 0), None);
        }
        let mut halted = None;
        for i in 0..10 {
            halted = halted.or(w.record(&c.halt, 200 + i, true, true));
        }
        let Some(Halt::ErrorRate {
            canary_rate,
            base_rate,
        }) = halted
        else {
            panic!("halted on its error rate")
        };
        assert!(canary_rate > base_rate + 0.05);
        // Slower than twice the base: halted on latency, once both have their volume.
        let mut w = CanaryWindow::default();
        for i in 0..10 {
            assert_eq!(w.record_time(&c.halt, i, false, 180), None);
        }
        for i in 0..9 {
            assert_eq!(w.record_time(&c.halt, 10 + i, true, 900), None);
        }
        assert_eq!(
            w.record_time(&c.halt, 20, true, 900),
            Some(Halt::Latency {
                canary_p95_ms: 1000,
                base_p95_ms: 200
            })
        );
        let mut w = CanaryWindow::default();
        for i in 0..20 {
            assert_eq!(w.record_time(&c.halt, i, i % 2 == 0, 300), None, "as fast");
        }
        // Below its volume, a canary is never halted.
        let mut w = CanaryWindow::default();
        for i in 0..9 {
            assert_eq!(w.record(&c.halt, i, true, true), None);
        }
    }
}
