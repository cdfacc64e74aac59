//! Model health in shared data: one key per configured model, updated with CAS.

use super::host;
use crate::health::Health;

fn key(model: &str) -> String {
    format!("{}.health;model={model}", crate::stats::PREFIX)
}

/// The model's health now (a healthy record when none is stored or the host fails).
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

/// Applies `change` to the model's record with compare-and-swap, retrying on contention.
/// `change` returns false to leave the record as it is. Returns the record as written (or as
/// found, when nothing was written), and whether this call wrote it.
pub fn update(model: &str, mut change: impl FnMut(&mut Health) -> bool) -> (Health, bool) {
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
            host::log(
                proxy_wasm::types::LogLevel::Warn,
                &format!("health of {model} not saved"),
            );
            (read(model), false)
        }
    }
}

/// Creates the key (with a healthy record) if missing, so that later writes carry a CAS token.
pub fn init(model: &str) {
    if let (_, None) = read_with_cas(model) {
        host::shared_create(&key(model), &Health::default().encode());
    }
}
