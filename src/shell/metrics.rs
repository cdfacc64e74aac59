//! Counters: local deltas, folded into Envoy stats and shared data once a second.
//!
//! An event only bumps a local delta (no host call on the request path). The root context's
//! timer adds the deltas to the Envoy stats (`increment_metric`) and to shared data (CAS), so
//! requests never take the process-wide shared-data lock, and the key set stays the fixed set
//! of [`CounterSet`]. Stats and the status document lag by at most the flush period. (The
//! native build folds every worker's deltas in from the main thread, once a second.)

use super::host;
use crate::config::Config;
use crate::stats::{Counter, CounterSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counters of one configuration in one VM (proxy-wasm) or worker (native). Deltas are
/// atomics so that the native build can fold them in from another thread; in a VM the atomics
/// are plain loads and stores.
pub struct Metrics {
    pub set: CounterSet,
    /// Envoy metric id per counter (None when the host refused to define it).
    ids: Vec<Option<u32>>,
    /// Increments not yet folded into shared data.
    pending: Vec<AtomicU64>,
    /// Increments not yet added to the Envoy stats.
    unstated: Vec<AtomicU64>,
    /// Whether any delta is waiting (a flush without it reads nothing).
    dirty: AtomicBool,
}

impl Metrics {
    pub fn new(config: &Config) -> Self {
        let set = CounterSet::new(config);
        let ids = set
            .names()
            .iter()
            .map(|n| host::define_counter(n))
            .collect();
        for name in set.names() {
            host::shared_init(name);
        }
        let zeros = || set.names().iter().map(|_| AtomicU64::new(0)).collect();
        Self {
            pending: zeros(),
            unstated: zeros(),
            set,
            ids,
            dirty: AtomicBool::new(false),
        }
    }

    pub fn add(&self, counter: Counter, delta: u64) {
        if delta == 0 {
            return;
        }
        let Some(id) = self.set.id(counter).map(|id| id.0) else {
            return;
        };
        for deltas in [&self.pending, &self.unstated] {
            if let Some(slot) = deltas.get(id) {
                slot.fetch_add(delta, Ordering::Relaxed);
            }
        }
        self.dirty.store(true, Ordering::Release);
    }

    pub fn increment(&self, counter: Counter) {
        self.add(counter, 1);
    }

    /// Folds pending increments into the Envoy stats and shared data; what fails to land in
    /// shared data is kept for next time (the stat is incremented once). Each delta is taken
    /// once, whichever thread flushes.
    pub fn flush(&self) {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let counters = self.set.names().iter().zip(&self.pending);
        for (((name, pending), metric), unstated) in counters.zip(&self.ids).zip(&self.unstated) {
            let stat_delta = unstated.swap(0, Ordering::Relaxed);
            if stat_delta > 0 {
                if let Some(metric) = metric {
                    host::increment_metric(*metric, i64::try_from(stat_delta).unwrap_or(i64::MAX));
                }
            }
            let delta = pending.swap(0, Ordering::Relaxed);
            if delta > 0 && !host::shared_add(name, delta) {
                pending.fetch_add(delta, Ordering::Relaxed);
                self.dirty.store(true, Ordering::Release);
            }
        }
    }

    /// Increments of `counter` not yet folded into shared data (for the fake-host tests).
    #[cfg(all(test, not(feature = "native")))]
    pub fn pending(&self, counter: Counter) -> u64 {
        let Some(id) = self.set.id(counter) else {
            return 0;
        };
        self.pending
            .get(id.0)
            .map_or(0, |p| p.load(Ordering::Relaxed))
    }

    /// Current shared values of every counter, in id order.
    pub fn shared_values(&self) -> Vec<u64> {
        self.set
            .names()
            .iter()
            .map(|n| host::shared_u64(n).map_or(0, |(v, _)| v))
            .collect()
    }
}
