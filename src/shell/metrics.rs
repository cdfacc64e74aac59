//! Counters: local deltas, folded into Envoy stats and shared data once a second.
//!
//! An event only bumps a local delta (no host call on the request path). The root context's
//! timer adds the deltas to the Envoy stats (`increment_metric`) and to shared data (CAS), so
//! requests never take the process-wide shared-data lock, and the key set stays the fixed set
//! of [`CounterSet`]. Stats and the status document lag by at most the flush period.

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
    /// Increments not yet added to the Envoy stats.
    unstated: RefCell<Vec<u64>>,
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
        let unstated = RefCell::new(vec![0; set.names().len()]);
        Self {
            set,
            ids,
            pending,
            unstated,
        }
    }

    pub fn add(&self, counter: Counter, delta: u64) {
        if delta == 0 {
            return;
        }
        let Some(id) = self.set.id(counter).map(|id| id.0) else {
            return;
        };
        for cell in [&self.pending, &self.unstated] {
            if let Ok(mut deltas) = cell.try_borrow_mut() {
                if let Some(slot) = deltas.get_mut(id) {
                    *slot = slot.saturating_add(delta);
                }
            }
        }
    }

    pub fn increment(&self, counter: Counter) {
        self.add(counter, 1);
    }

    /// Folds pending increments into the Envoy stats and shared data; what fails to land in
    /// shared data is kept for next time (the stat is incremented once).
    pub fn flush(&self) {
        let Ok(mut pending) = self.pending.try_borrow_mut() else {
            return;
        };
        let Ok(mut unstated) = self.unstated.try_borrow_mut() else {
            return;
        };
        let counters = self.set.names().iter().zip(pending.iter_mut());
        for (((name, delta), metric), stat_delta) in
            counters.zip(&self.ids).zip(unstated.iter_mut())
        {
            if *stat_delta > 0 {
                if let Some(metric) = metric {
                    host::increment_metric(*metric, i64::try_from(*stat_delta).unwrap_or(i64::MAX));
                }
                *stat_delta = 0;
            }
            if *delta > 0 && host::shared_add(name, *delta) {
                *delta = 0;
            }
        }
    }

    /// Increments of `counter` not yet folded into shared data.
    #[cfg(test)]
    pub fn pending(&self, counter: Counter) -> u64 {
        let Some(id) = self.set.id(counter) else {
            return 0;
        };
        self.pending
            .try_borrow()
            .ok()
            .and_then(|p| p.get(id.0).copied())
            .unwrap_or(0)
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
