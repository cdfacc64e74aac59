//! Counters: Envoy stats updated per event, shared data updated in batches.
//!
//! Each event increments the Envoy stat at once (one host call) and a local delta. The root
//! context's timer folds the deltas into shared data with CAS, so the hot path never takes the
//! process-wide shared-data lock and the key set stays the fixed set of [`CounterSet`].

use super::host;
use crate::config::Config;
use crate::stats::{Counter, CounterSet};
use std::cell::RefCell;

pub struct Metrics {
    pub set: CounterSet,
    /// Envoy metric id per counter (None when the host refused to define it).
    ids: Vec<Option<u32>>,
    /// Increments not yet folded into shared data.
    pending: RefCell<Vec<u64>>,
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
        let pending = RefCell::new(vec![0; set.names().len()]);
        Self { set, ids, pending }
    }

    pub fn add(&self, counter: Counter, delta: u64) {
        if delta == 0 {
            return;
        }
        let id = self.set.id(counter).0;
        if let Some(Some(metric)) = self.ids.get(id) {
            host::increment_metric(*metric, i64::try_from(delta).unwrap_or(i64::MAX));
        }
        if let Ok(mut pending) = self.pending.try_borrow_mut() {
            if let Some(slot) = pending.get_mut(id) {
                *slot = slot.saturating_add(delta);
            }
        }
    }

    pub fn increment(&self, counter: Counter) {
        self.add(counter, 1);
    }

    /// Folds pending increments into shared data; what fails to land is kept for next time.
    pub fn flush_shared(&self) {
        let Ok(mut pending) = self.pending.try_borrow_mut() else {
            return;
        };
        for (name, delta) in self.set.names().iter().zip(pending.iter_mut()) {
            if *delta > 0 && host::shared_add(name, *delta) {
                *delta = 0;
            }
        }
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
