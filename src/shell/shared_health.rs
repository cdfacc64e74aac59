//! Model health in shared data: one key per configured model, updated with CAS.
//!
//! Every read goes to shared data (about 2 us): a worker-local copy refreshed by the timer was
//! tried and dropped, because a circuit another worker had just opened (an account out of
//! quota) went unseen here for up to a timer period, and that costs a failed attempt, far more
//! than the read it saves. A healthy request reads one record (its first model's).

use super::host;
use crate::flow::HealthStore;
use crate::health::Health;

fn key(model: &str) -> String {
    format!("{}.health;model={model}", crate::stats::PREFIX)
}

/// The record in shared data (a healthy record when none is stored or the host fails).
pub fn read(model: &str) -> Health {
    read_with_cas(model).0
}

fn read_with_cas(model: &str) -> (Health, Option<u32>) {
    match host::shared_data(&key(model)) {
        Some((Some(bytes), cas)) => (Health::decode(&bytes), cas),
        Some((None, cas)) => (Health::default(), cas),
        None => (Health::default(), None),
    }
}

/// Creates the key (with a healthy record) if missing, so that later writes carry a CAS token.
pub fn init(model: &str) {
    if let (_, None) = read_with_cas(model) {
        host::shared_create(&key(model), &Health::default().encode());
    }
}

/// The filter's health store: shared data.
pub struct SharedHealth;

impl HealthStore for SharedHealth {
    fn read(&self, model: &str) -> Health {
        read(model)
    }

    fn update(&self, model: &str, change: &mut dyn FnMut(&mut Health) -> bool) -> (Health, bool) {
        let mut last = Health::default();
        let outcome = host::cas_update(&key(model), |current| {
            last = current.map(Health::decode).unwrap_or_default();
            change(&mut last).then(|| last.encode().to_vec())
        });
        match outcome {
            host::CasOutcome::Written | host::CasOutcome::Unchanged => {
                (last, outcome == host::CasOutcome::Written)
            }
            host::CasOutcome::Failed => {
                log::warn!("health of {model} not saved");
                (read(model), false)
            }
        }
    }
}
