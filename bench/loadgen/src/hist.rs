//! Log-bucketed latency histogram (HDR-style), values in nanoseconds.
//!
//! Values below 128 are stored exactly. Above, each power of two `[2^k, 2^(k+1))`
//! is split into 128 linear sub-buckets of width `2^(k-7)`, so a bucket is at
//! most 1/128 of its lower bound wide. Percentiles report the bucket midpoint,
//! clamped to the exact minimum and maximum: the relative error is below 0.4 %.
//! Values of 2^40 ns (about 18 minutes) or more share the top bucket; `max`
//! stays exact. Memory is fixed (4352 counters), whatever the sample count.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const MAX_BITS: u32 = 40;
const TOP: u64 = (1 << MAX_BITS) - 1;
const BUCKETS: usize = (SUB + (MAX_BITS - SUB_BITS) as u64 * SUB) as usize;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn index(value: u64) -> usize {
    let v = value.min(TOP);
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) - SUB;
    (SUB + u64::from(shift) * SUB + sub) as usize
}

/// Lower bound and width of bucket `i`.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let shift = (i - SUB) / SUB;
    let sub = (i - SUB) % SUB;
    ((SUB + sub) << shift, 1 << shift)
}

impl Histogram {
    pub fn new() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, value: u64) {
        if let Some(c) = self.counts.get_mut(index(value)) {
            *c += 1;
        }
        self.count += 1;
        self.sum += u128::from(value);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Exact arithmetic mean.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at percentile `p` (0..=100): the smallest recorded value
    /// such that at least `p` % of the samples are at or below it, within
    /// the bucket resolution.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil();
        let rank = (rank as u64).clamp(1, self.count);
        if rank == 1 {
            return Some(self.min);
        }
        if rank == self.count {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_range(i);
                let mid = lo + (width - 1) / 2;
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic xorshift so the tests need no dependencies.
    struct Rng(u64);
    impl Rng {
        fn next_f64(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn exact(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    fn check(values: &mut [u64]) {
        let mut h = Histogram::new();
        for &v in values.iter() {
            h.record(v);
        }
        values.sort_unstable();
        for p in [0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let want = exact(values, p) as f64;
            let got = h.percentile(p).unwrap() as f64;
            let err = (got - want).abs() / want.max(1.0);
            assert!(err <= 0.01, "p{p}: got {got}, want {want}, err {err}");
        }
        assert_eq!(h.min(), values.first().copied());
        assert_eq!(h.max(), values.last().copied());
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        assert!((h.mean().unwrap() - mean).abs() < 1e-6 * mean.max(1.0));
    }

    #[test]
    fn index_and_range_agree_everywhere() {
        assert_eq!(index(TOP), BUCKETS - 1);
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            let (lo, w) = bucket_range(i);
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + w - 1), i);
            assert!(w == 1 || w * 128 <= lo, "bucket {i} too wide");
            if i + 1 < BUCKETS {
                assert_eq!(bucket_range(i + 1).0, lo + w);
            }
        }
    }

    #[test]
    fn uniform_distribution() {
        let mut v: Vec<u64> = (1..=1_000_000).map(|i| i * 37).collect();
        check(&mut v);
    }

    #[test]
    fn exponential_distribution() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut v: Vec<u64> = (0..200_000)
            .map(|_| (-(1.0 - rng.next_f64()).ln() * 250_000.0) as u64 + 20_000)
            .collect();
        check(&mut v);
    }

    #[test]
    fn lognormal_heavy_tail() {
        let mut rng = Rng(12345);
        let mut v: Vec<u64> = (0..200_000)
            .map(|_| {
                // Box-Muller, then exp: spans several orders of magnitude.
                let (a, b) = (rng.next_f64().max(1e-12), rng.next_f64());
                let z = (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos();
                (z * 1.5 + 12.0).exp() as u64
            })
            .collect();
        check(&mut v);
    }

    #[test]
    fn small_values_are_exact_and_merge_adds() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        for v in 0..100 {
            a.record(v);
            b.record(v + 100);
        }
        a.merge(&b);
        assert_eq!(a.count(), 200);
        assert_eq!(a.percentile(50.0), Some(99));
        assert_eq!(a.min(), Some(0));
        assert_eq!(a.max(), Some(199));
        assert_eq!(a.percentile(100.0), Some(199));
        assert_eq!(Histogram::new().percentile(50.0), None);
        assert_eq!(Histogram::new().mean(), None);
    }

    #[test]
    fn huge_values_clamp_but_max_is_exact() {
        let mut h = Histogram::new();
        h.record(u64::MAX);
        h.record(1);
        assert_eq!(h.max(), Some(u64::MAX));
        assert_eq!(h.percentile(100.0), Some(u64::MAX));
        assert_eq!(h.percentile(50.0), Some(1));
    }
}
