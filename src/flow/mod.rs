//! The request flow: every decision the filter takes about a request, as plain functions of
//! the configuration, the request's state, the models' health and the time, returning
//! [`Effect`]s for the shell to apply. No host calls: the clock is an input ([`Clock`], read only when a decision needs it),
//! health goes through [`HealthStore`] (shared data in the filter, memory in tests), and
//! headers, local replies and counters come back as values.
//!
//! - [`route`]: the client position: the first model and cluster, exhausted chains, the final
//!   answer's explanation headers and the client-side retry block.
//! - [`attempt`]: the upstream position, once per router attempt: which model it asks and how
//!   the body is rewritten for it, how its answer is judged, what the model's health learns, and
//!   whether (and where) Envoy retries.
//! - [`request`]: the state every attempt of a request shares, and its bounded store.

pub mod answer;
pub mod attempt;
pub mod canary;
pub mod effect;
pub mod latency;
pub mod request;
pub mod route;

#[cfg(test)]
mod tests;

pub use effect::{Effect, Effects};
pub use request::{Request, RequestStore, Safety};

use crate::classify::rules::Rules;
use crate::config::Config;
use crate::health::{Admission, ErrorWindow, Health};
use crate::stats::CounterSet;
use std::cell::RefCell;
use std::collections::HashMap;

/// Where the models' health records live (shared data in the filter).
pub trait HealthStore {
    /// The model's record now (a healthy record when none is stored or the host fails).
    fn read(&self, model: &str) -> Health;
    /// Applies `change` with compare-and-swap, again on contention; `change` returns false to
    /// leave the record as it is. Returns the record as written (or as found) and whether this
    /// call wrote it.
    fn update(&self, model: &str, change: &mut dyn FnMut(&mut Health) -> bool) -> (Health, bool);
}

/// Health records in memory: the native tests' store, and a reference for the shell's.
#[derive(Debug, Default)]
pub struct MemoryHealth(RefCell<HashMap<String, Health>>);

impl HealthStore for MemoryHealth {
    fn read(&self, model: &str) -> Health {
        self.0
            .try_borrow()
            .ok()
            .and_then(|m| m.get(model).copied())
            .unwrap_or_default()
    }

    fn update(&self, model: &str, change: &mut dyn FnMut(&mut Health) -> bool) -> (Health, bool) {
        let Ok(mut map) = self.0.try_borrow_mut() else {
            return (Health::default(), false);
        };
        let record = map.entry(model.to_owned()).or_default();
        let mut next = *record;
        if change(&mut next) {
            *record = next;
            (next, true)
        } else {
            (*record, false)
        }
    }
}

/// The time, as the flow may ask for it: the shell reads the host clock only when a decision
/// needs it (a healthy request needs none).
pub trait Clock {
    /// Wall-clock time now, in Unix milliseconds.
    fn now_ms(&self) -> u64;
    /// A recent time (at most a timer period old), for windows of many seconds.
    fn coarse_ms(&self) -> u64 {
        self.now_ms()
    }
}

/// A clock that says what it was told: the tests' clock.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
}

/// What every flow step reads: configuration, counters' labels, health, this worker's error
/// windows, and the time.
pub struct Cx<'a> {
    pub config: &'a Config,
    pub rules: &'a Rules,
    pub counters: &'a CounterSet,
    pub health: &'a dyn HealthStore,
    /// Per configured model (same order): this worker's error-rate window.
    pub windows: &'a RefCell<Vec<ErrorWindow>>,
    /// Per configured canary (same order): this worker's tally of it and its base.
    pub canaries: &'a RefCell<Vec<canary::CanaryWindow>>,
    pub clock: &'a dyn Clock,
}

impl Cx<'_> {
    /// Wall-clock time now, in Unix milliseconds.
    pub fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Whether `model`'s shared health lets a request use it now.
    pub fn admission_of(&self, model: &str) -> Admission {
        self.admission(&self.health.read(model))
    }

    /// Whether `health` lets a request use its model now (a clean record needs no clock).
    pub fn admission(&self, health: &Health) -> Admission {
        if health.is_clean() {
            Admission::Healthy
        } else {
            health.admission(self.now())
        }
    }
}

/// A cheap pseudo-random number for cooldown jitter (the VM has no randomness source).
pub fn jitter(seed: &str, now: u64) -> u64 {
    seed.bytes().fold(now ^ 0x9e37_79b9_7f4a_7c15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Header values must be visible ASCII; reasons can quote non-ASCII messages.
pub fn header_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(200)
        .collect()
}
