//! The load trigger: the primary model's 429 rate and P95 answer time over a sliding window,
//! and the queue length, against engage and release thresholds (hysteresis in value and in
//! time).
//!
//! Each worker counts its own answers of the primary model in VM memory, in two half-window
//! buckets aligned on the wall clock (so every worker's buckets line up), and writes them into
//! its entry of a shared record once per timer period; any worker sums the live entries.

use crate::config::shaping::LoadConfig;

/// Upper bounds (ms) of the answer-time buckets; the last is open.
pub const BUCKETS_MS: [u64; 12] = [
    100,
    250,
    500,
    1_000,
    2_000,
    4_000,
    8_000,
    16_000,
    32_000,
    64_000,
    128_000,
    u64::MAX,
];
pub const KEY: &str = "llm_fallback.shaping.load";

/// Answers in one bucket of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    pub answers: u32,
    pub rate_limited: u32,
    pub times: [u32; BUCKETS_MS.len()],
}

impl Sample {
    fn add(&mut self, other: &Sample) {
        self.answers = self.answers.saturating_add(other.answers);
        self.rate_limited = self.rate_limited.saturating_add(other.rate_limited);
        for (a, b) in self.times.iter_mut().zip(other.times) {
            *a = a.saturating_add(b);
        }
    }
}

/// One worker's two half-window buckets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// Index of the current half window (`now / half`).
    pub generation: u64,
    pub current: Sample,
    pub previous: Sample,
}

fn half(config: &LoadConfig) -> u64 {
    (config.window_ms / 2).max(1)
}

impl Window {
    /// Moves to the half window of `now`.
    pub fn roll(&mut self, config: &LoadConfig, now_ms: u64) {
        let generation = now_ms / half(config);
        if generation == self.generation {
            return;
        }
        self.previous = if generation == self.generation + 1 {
            self.current
        } else {
            Sample::default()
        };
        self.current = Sample::default();
        self.generation = generation;
    }

    /// Counts one answer of the primary model (an upstream attempt's status).
    pub fn record(&mut self, config: &LoadConfig, now_ms: u64, status: u16) {
        self.roll(config, now_ms);
        let s = &mut self.current;
        s.answers = s.answers.saturating_add(1);
        if status == 429 {
            s.rate_limited = s.rate_limited.saturating_add(1);
        }
    }

    /// Counts one answer time of the primary model.
    pub fn record_time(&mut self, config: &LoadConfig, now_ms: u64, time_ms: u64) {
        self.roll(config, now_ms);
        let i = BUCKETS_MS
            .iter()
            .position(|b| time_ms <= *b)
            .unwrap_or(BUCKETS_MS.len() - 1);
        if let Some(t) = self.current.times.get_mut(i) {
            *t = t.saturating_add(1);
        }
    }

    /// Both halves, as of `generation` (nothing when this window is older than the one before).
    fn as_of(&self, generation: u64) -> Sample {
        let mut total = Sample::default();
        if self.generation == generation {
            total.add(&self.current);
            total.add(&self.previous);
        } else if self.generation + 1 == generation {
            total.add(&self.current);
        }
        total
    }
}

/// Every worker's window, by VM nonce, with heartbeats (entries older than the window go).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub entries: Vec<(u32, Window)>,
}

const SAMPLE: usize = 8 + 4 * BUCKETS_MS.len();
const ENTRY: usize = 4 + 8 + 2 * SAMPLE;

fn put_sample(b: &mut Vec<u8>, s: &Sample) {
    b.extend_from_slice(&s.answers.to_le_bytes());
    b.extend_from_slice(&s.rate_limited.to_le_bytes());
    for t in s.times {
        b.extend_from_slice(&t.to_le_bytes());
    }
}

fn get_sample(b: &[u8]) -> Option<Sample> {
    let u = |i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let mut s = Sample {
        answers: u(0)?,
        rate_limited: u(4)?,
        ..Sample::default()
    };
    for (i, t) in s.times.iter_mut().enumerate() {
        *t = u(8 + 4 * i)?;
    }
    Some(s)
}

impl Record {
    pub fn read(bytes: Option<&[u8]>) -> Self {
        let Some(b) = bytes.filter(|b| b.len() % ENTRY == 0) else {
            return Self::default();
        };
        let entries = b
            .chunks_exact(ENTRY)
            .filter_map(|e| {
                let nonce = u32::from_le_bytes(e.get(0..4)?.try_into().ok()?);
                let generation = u64::from_le_bytes(e.get(4..12)?.try_into().ok()?);
                let current = get_sample(e.get(12..12 + SAMPLE)?)?;
                let previous = get_sample(e.get(12 + SAMPLE..)?)?;
                Some((
                    nonce,
                    Window {
                        generation,
                        current,
                        previous,
                    },
                ))
            })
            .collect();
        Self { entries }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.entries.len() * ENTRY);
        for (nonce, w) in &self.entries {
            b.extend_from_slice(&nonce.to_le_bytes());
            b.extend_from_slice(&w.generation.to_le_bytes());
            put_sample(&mut b, &w.current);
            put_sample(&mut b, &w.previous);
        }
        b
    }

    /// Writes `me`'s window and drops windows too old to count (dead or idle workers).
    pub fn put(&mut self, config: &LoadConfig, now_ms: u64, me: u32, window: Window) {
        let generation = now_ms / half(config);
        self.entries
            .retain(|(n, w)| *n != me && w.generation + 1 >= generation);
        self.entries.push((me, window));
        self.entries.truncate(super::ledger::MAX_ENTRIES);
    }

    /// Everyone's answers in the window ending now.
    pub fn total(&self, config: &LoadConfig, now_ms: u64) -> Sample {
        let generation = now_ms / half(config);
        let mut total = Sample::default();
        for (_, w) in &self.entries {
            total.add(&w.as_of(generation));
        }
        total
    }
}

/// What the trigger reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    pub answers: u32,
    pub rate_429: f64,
    /// Upper bound of the bucket holding the 95th percentile.
    pub p95_ms: Option<u64>,
    pub queue: u32,
}

impl Signals {
    pub fn of(sample: &Sample, queue: u32) -> Self {
        let rate_429 = if sample.answers == 0 {
            0.0
        } else {
            f64::from(sample.rate_limited) / f64::from(sample.answers)
        };
        let timed: u64 = sample.times.iter().map(|t| u64::from(*t)).sum();
        let p95_ms = (timed > 0).then(|| {
            let rank = (timed * 95).div_ceil(100);
            let mut seen = 0u64;
            for (bound, t) in BUCKETS_MS.iter().zip(sample.times) {
                seen += u64::from(t);
                if seen >= rank {
                    return *bound;
                }
            }
            u64::MAX
        });
        Self {
            answers: sample.answers,
            rate_429,
            p95_ms,
            queue,
        }
    }
}

/// The trigger's next state: `Some(engaged)` when it changes, with the signal that decided.
pub fn next(
    config: &LoadConfig,
    engaged: bool,
    changed_ms: u64,
    s: &Signals,
    now_ms: u64,
) -> Option<(bool, &'static str)> {
    let enough = s.answers >= config.min_answers;
    let over_rate = |t: f64| enough && s.rate_429 > t;
    let over_p95 = |t: u64| enough && s.p95_ms.is_some_and(|p| p > t);
    if !engaged {
        if config.engage_429_rate.is_some_and(over_rate) {
            return Some((true, "429_rate"));
        }
        if config.engage_p95_ms.is_some_and(over_p95) {
            return Some((true, "p95"));
        }
        if config.engage_queue.is_some_and(|q| s.queue > q) {
            return Some((true, "queue"));
        }
        return None;
    }
    if now_ms.saturating_sub(changed_ms) < config.hold_ms {
        return None;
    }
    let rate = config.release_429_rate.or(config.engage_429_rate);
    let p95 = config.release_p95_ms.or(config.engage_p95_ms);
    let queue = config.release_queue.or(config.engage_queue);
    let still = rate.is_some_and(over_rate)
        || p95.is_some_and(over_p95)
        || queue.is_some_and(|q| s.queue > q);
    (!still).then_some((false, "released"))
}
