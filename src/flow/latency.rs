//! A model's answer times against its latency condition, pure: one record per model in shared
//! data (every worker's answers, merged), two half-window bucket sets, and how long the P95 has
//! been above the threshold.

use crate::config::switch::LatencyRule;

/// Upper bounds of the answer-time buckets: ms for answer heads, and for times per output
/// token µs (see [`Kind`]); the last is open.
pub const BUCKETS_MS: [u64; 16] = [
    50,
    100,
    200,
    300,
    400,
    500,
    750,
    1_000,
    1_500,
    2_000,
    3_000,
    5_000,
    8_000,
    15_000,
    30_000,
    u64::MAX,
];
const N: usize = BUCKETS_MS.len();
const BYTES: usize = 8 + 8 + 4 * N * 2;

/// Bounds (µs) for times per output token.
pub const BUCKETS_US_PER_TOKEN: [u64; 16] = [
    2_000,
    5_000,
    10_000,
    15_000,
    20_000,
    30_000,
    40_000,
    50_000,
    75_000,
    100_000,
    150_000,
    200_000,
    300_000,
    500_000,
    1_000_000,
    u64::MAX,
];

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Time to the answer's head (ms): a stream's first event, or a whole JSON answer.
    Head,
    /// A JSON answer's time per output token (µs).
    PerToken,
}

impl Kind {
    fn bounds(self) -> &'static [u64; 16] {
        match self {
            Kind::Head => &BUCKETS_MS,
            Kind::PerToken => &BUCKETS_US_PER_TOKEN,
        }
    }
}

/// The shared-data key of a model's record.
pub fn key(model: &str, kind: Kind) -> String {
    match kind {
        Kind::Head => format!("{}.latency.{model}", crate::stats::PREFIX),
        Kind::PerToken => format!("{}.latency_per_token.{model}", crate::stats::PREFIX),
    }
}

/// One model's answer times (all workers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyRecord {
    /// Index of the current half window (`now / (window / 2)`).
    generation: u64,
    /// Since when the P95 has been above the threshold (0: it is not).
    above_since_ms: u64,
    current: [u32; N],
    previous: [u32; N],
}

impl Default for LatencyRecord {
    fn default() -> Self {
        Self {
            generation: 0,
            above_since_ms: 0,
            current: [0; N],
            previous: [0; N],
        }
    }
}

/// What one answer time says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Not enough answers, or the P95 is within the threshold (or not above it for long).
    Quiet,
    /// The P95 has been above the threshold for `for_ms`: open the circuit.
    Slow { p95_ms: u64 },
}

impl LatencyRecord {
    pub fn decode(bytes: Option<&[u8]>) -> Self {
        let Some(b) = bytes.filter(|b| b.len() == BYTES) else {
            return Self::default();
        };
        let u64_at = |at: usize| crate::health::le_u64(b, at);
        let u32_at = |at: usize| {
            b.get(at..at + 4)
                .and_then(|x| <[u8; 4]>::try_from(x).ok())
                .map_or(0, u32::from_le_bytes)
        };
        let mut r = Self {
            generation: u64_at(0),
            above_since_ms: u64_at(8),
            ..Self::default()
        };
        for i in 0..N {
            if let (Some(c), Some(p)) = (r.current.get_mut(i), r.previous.get_mut(i)) {
                *c = u32_at(16 + 4 * i);
                *p = u32_at(16 + 4 * (N + i));
            }
        }
        r
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(BYTES);
        b.extend_from_slice(&self.generation.to_le_bytes());
        b.extend_from_slice(&self.above_since_ms.to_le_bytes());
        for v in self.current.iter().chain(&self.previous) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn roll(&mut self, rule: &LatencyRule, now_ms: u64) {
        let generation = now_ms / (rule.window_ms / 2).max(1);
        if generation == self.generation {
            return;
        }
        if generation == self.generation + 1 {
            self.previous = self.current;
        } else {
            // A whole window without answers: nothing is known of the model's time any more.
            self.previous = [0; N];
            self.above_since_ms = 0;
        }
        self.current = [0; N];
        self.generation = generation;
    }

    /// The bound of the bucket holding the 95th percentile of the window, with enough answers.
    pub fn p95_ms(&self, rule: &LatencyRule) -> Option<u64> {
        self.p95(rule, Kind::Head)
    }

    /// [`Self::p95_ms`] for a record of `kind`.
    pub fn p95(&self, rule: &LatencyRule, kind: Kind) -> Option<u64> {
        let counts: Vec<u64> = self
            .current
            .iter()
            .zip(&self.previous)
            .map(|(c, p)| u64::from(*c) + u64::from(*p))
            .collect();
        let total: u64 = counts.iter().sum();
        if total < u64::from(rule.min_samples) || total == 0 {
            return None;
        }
        let rank = (total * 95).div_ceil(100);
        let mut seen = 0;
        kind.bounds().iter().zip(counts).find_map(|(bound, n)| {
            seen += n;
            (seen >= rank).then_some(*bound)
        })
    }

    /// Counts one answer time and reads the condition. A slow reading starts the window over,
    /// so that a model let back in is judged on its new answers only.
    pub fn record(&mut self, rule: &LatencyRule, now_ms: u64, time_ms: u64) -> Reading {
        self.record_kind(rule, Kind::Head, now_ms, time_ms)
    }

    /// [`Self::record`] for a record of `kind` (`value` in its unit; `rule` with the baseline in
    /// that unit, see [`LatencyRule::per_token`]).
    pub fn record_kind(
        &mut self,
        rule: &LatencyRule,
        kind: Kind,
        now_ms: u64,
        value: u64,
    ) -> Reading {
        self.roll(rule, now_ms);
        let i = kind
            .bounds()
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(N - 1);
        if let Some(n) = self.current.get_mut(i) {
            *n = n.saturating_add(1);
        }
        match self.p95(rule, kind) {
            Some(p95) if p95 > rule.threshold_ms() => {
                if self.above_since_ms == 0 {
                    self.above_since_ms = now_ms.max(1);
                }
                if now_ms.saturating_sub(self.above_since_ms) >= rule.for_ms {
                    *self = Self {
                        generation: self.generation,
                        ..Self::default()
                    };
                    return Reading::Slow { p95_ms: p95 };
                }
                Reading::Quiet
            }
            Some(_) => {
                self.above_since_ms = 0;
                Reading::Quiet
            }
            // Too few answers in the window to say: neither slow nor recovered. (Treating it as
            // recovered let a slow model with sparse traffic start its clock over at every
            // half-window roll and never open.)
            None => Reading::Quiet,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn rule() -> LatencyRule {
        LatencyRule {
            baseline_ms: 200,
            over: 2.0,
            for_ms: 1_000,
            window_ms: 4_000,
            min_samples: 4,
            release: 1.5,
            per_token_baseline_us: Some(20_000),
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn json_answers_judged_per_token_do_not_look_slow_for_being_long() {
        let r = rule().per_token().unwrap();
        assert_eq!(r.threshold_ms(), 40_000, "40 ms per token, in µs");
        let mut rec = LatencyRecord::default();
        // 1 000 tokens in 1.5 s: 1.5 ms per token, however long the whole answer took.
        for t in 0..40 {
            let reading = rec.record_kind(&r, Kind::PerToken, 10_000 + t * 100, 1_500);
            assert_eq!(reading, Reading::Quiet);
        }
        // 10 tokens in 1.5 s: 150 ms per token, slow.
        let mut opened = false;
        for t in 0..40 {
            opened |=
                rec.record_kind(&r, Kind::PerToken, 14_000 + t * 100, 150_000) != Reading::Quiet;
        }
        assert!(opened);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn slow_for_long_enough_opens_and_a_blip_does_not() {
        let r = rule();
        let mut rec = LatencyRecord::default();
        for t in 0..10 {
            assert_eq!(rec.record(&r, 10_000 + t * 10, 60), Reading::Quiet);
        }
        // Slow answers: the P95 crosses 400 ms at once, but it must stay there for 1 s.
        let mut t = 10_200;
        let mut opened = None;
        while opened.is_none() && t < 13_000 {
            if let Reading::Slow { p95_ms } = rec.record(&r, t, 700) {
                opened = Some((t, p95_ms));
            }
            t += 100;
        }
        let (at, p95) = opened.expect("opened");
        assert!((11_200..11_500).contains(&at), "{at}");
        assert_eq!(p95, 750);
        // Started over: the old slow answers do not count again.
        assert_eq!(rec.p95_ms(&r), None);
        // A few slow answers among many fast ones are above the P95: never opens.
        let mut rec = LatencyRecord::default();
        for t in 0..200 {
            let time = if t % 50 == 0 { 900 } else { 40 };
            assert_eq!(rec.record(&r, 20_000 + t * 10, time), Reading::Quiet);
        }
        // P95 above the threshold, but not for `for_ms`: back under it in time, nothing opens.
        let mut rec = LatencyRecord::default();
        for t in 0..4 {
            assert_eq!(rec.record(&r, 30_000 + t * 100, 900), Reading::Quiet);
        }
        for t in 0..100 {
            assert_eq!(rec.record(&r, 30_400 + t * 5, 40), Reading::Quiet);
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn sparse_slow_answers_open_whatever_the_phase_of_the_window() {
        // One answer per 705 ms leaves 1 to 3 answers in a half window: after a roll the window
        // can hold fewer than `min_samples`, which must not count as recovered.
        let r = LatencyRule {
            for_ms: 1_500,
            ..rule()
        };
        for phase in (0..4_000).step_by(7) {
            let mut rec = LatencyRecord::default();
            let mut t = 1_000_000_000 + phase;
            for _ in 0..8 {
                t += 35;
                assert_eq!(rec.record(&r, t, 30), Reading::Quiet);
            }
            let opened_at = (0..8).find(|_| {
                t += 705;
                rec.record(&r, t, 700) != Reading::Quiet
            });
            assert!(
                opened_at.is_some_and(|k| (2..=4).contains(&k)),
                "phase {phase}: {opened_at:?}"
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_whole_window_without_answers_forgets_that_the_model_was_slow() {
        let r = rule();
        let mut rec = LatencyRecord::default();
        for t in 0..5 {
            rec.record(&r, 10_000 + t * 100, 900);
        }
        assert_ne!(rec.above_since_ms, 0);
        // Ten seconds of silence, then slow again: the clock starts at the new answers.
        for t in 0..3 {
            assert_eq!(rec.record(&r, 20_000 + t * 100, 900), Reading::Quiet);
        }
        assert_eq!(rec.above_since_ms, 0, "too few answers to say");
        for t in 3..8 {
            assert_eq!(rec.record(&r, 20_000 + t * 100, 900), Reading::Quiet);
        }
        assert!(rec.record(&r, 21_300, 900) != Reading::Quiet, "1 s above");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn records_round_trip_and_old_windows_drop_out() {
        let r = rule();
        let mut rec = LatencyRecord::default();
        rec.record(&r, 5_000, 120);
        let back = LatencyRecord::decode(Some(&rec.encode()));
        assert_eq!(back, rec);
        assert_eq!(
            LatencyRecord::decode(Some(b"junk")),
            LatencyRecord::default()
        );
        // Three half windows later nothing of it is left.
        let mut later = back;
        later.roll(&r, 5_000 + 3 * 2_000);
        assert_eq!(
            later.p95_ms(&LatencyRule {
                min_samples: 1,
                ..r
            }),
            None
        );
    }
}
