//! Retry safety in the client position: judges requests, refuses duplicate `Idempotency-Key`s.

use super::headers::RequestHeaders;
use super::{host, Plugin};
use crate::safety::{self, Dedup, Judgement, Slot};
use crate::stats::{Counter, ModelSlot};

/// Judges whether the held request may be sent twice (client position). A key makes a re-send
/// harmless only where the provider deduplicates by it: on every cluster the request may reach
/// (the default cluster when its model is not known).
pub fn judge_request(
    plugin: &Plugin,
    body: &[u8],
    request: &RequestHeaders,
    clusters: &[&str],
) -> Judgement {
    let config = &plugin.config.retry_safety;
    let (method, path) = (&request.method, &request.path);
    let default = [plugin.config.fallback.default_cluster.as_str()];
    let clusters = if clusters.is_empty() {
        &default[..]
    } else {
        clusters
    };
    let deduplicated = request.idempotency_key.is_some()
        && clusters
            .iter()
            .all(|c| config.key_deduplicated_by.covers(c, path));
    let judgement = safety::judge(
        config,
        method,
        path,
        request.declared_safety.as_deref(),
        deduplicated,
        Some(body),
    );
    if !judgement.safe {
        log::info!(
            "{method} {path}: not safe to send twice ({}); only proven rejections are re-sent",
            judgement.reason
        );
    }
    judgement
}

fn slot_key(index: u64) -> String {
    format!("{}.idempotency;slot={index}", crate::stats::PREFIX)
}

/// The slot and key hash of the request's `Idempotency-Key`, scoped by its credential.
pub fn slot_of(plugin: &Plugin, request: &RequestHeaders) -> Option<(u64, u64)> {
    let config = &plugin.config.retry_safety.duplicates;
    if !config.enabled {
        return None;
    }
    let key = request.idempotency_key.as_deref()?;
    let credential = request.credential.as_deref().unwrap_or_default();
    let hash = safety::hash(&[credential, key]);
    Some((hash % u64::from(config.slots.max(1)), hash))
}

/// Creates every slot key (an empty slot) that does not exist yet, at configuration time: a
/// write to a missing key carries no CAS token, so two first claims could both win; with the
/// keys in place every claim is a compare-and-swap.
pub fn init_slots(plugin: &Plugin) {
    let config = &plugin.config.retry_safety.duplicates;
    if !config.enabled {
        return;
    }
    let empty = Slot::default().encode();
    for index in 0..u64::from(config.slots) {
        let key = slot_key(index);
        if let Some((None, _)) = host::shared_data(&key) {
            host::shared_create(&key, &empty);
        }
    }
}

/// Frees the key's slot at once: the request was refused before anything was sent.
pub fn release(slot_index: u64, hash: u64) {
    settle(slot_index, hash, true);
}

/// Claims the key's slot; `Err` with the answer to give when the key is a duplicate.
pub fn claim(plugin: &Plugin, slot_index: u64, hash: u64) -> Result<(), Dedup> {
    let config = &plugin.config.retry_safety.duplicates;
    let mut refused = None;
    host::cas_update(&slot_key(slot_index), |current| {
        let current = current.map(Slot::decode).unwrap_or_default();
        match current.check(hash, host::now_unix_ms(), config) {
            Dedup::Claim(next) => {
                refused = None;
                Some(next.encode().to_vec())
            }
            other => {
                refused = Some(other);
                None
            }
        }
    });
    // A host failure lets the request through: duplicate detection never blocks on its own
    // bookkeeping.
    refused.map_or(Ok(()), Err)
}

/// Ends the key's request (if the slot still holds it): a success or an outcome that is not
/// known (5xx, timeouts) keeps the key refused for the window; an answer that proves nothing
/// was done (4xx, a proven rejection) frees it, so the client may retry with the same key.
pub fn finish(slot_index: u64, hash: u64, status: u16, proven_rejection: bool) {
    // The last attempt's proven rejection counts only when it is the answer the client got.
    let rejected = proven_rejection && matches!(status, 429 | 529);
    let release = rejected || ((400..500).contains(&status) && status != 408);
    settle(slot_index, hash, release);
}

/// Ends the key's request: freed (`release`), or kept refused for the window.
fn settle(slot_index: u64, hash: u64, release: bool) {
    host::cas_update(&slot_key(slot_index), |current| {
        let current = current.map(Slot::decode)?;
        if current.key_hash != hash || !current.in_flight {
            return None;
        }
        let done = if release {
            Slot::default()
        } else {
            Slot {
                in_flight: false,
                at_ms: host::now_unix_ms(),
                ..current
            }
        };
        Some(done.encode().to_vec())
    });
}

/// Answers a duplicate with 409 and a clear JSON error.
pub fn refuse_duplicate(plugin: &Plugin, slot: ModelSlot, why: Dedup) {
    plugin.metrics.increment(Counter::DuplicatesRefused(slot));
    let (code, message) = match why {
        Dedup::InFlight => (
            "idempotency_key_in_use",
            "A request with this Idempotency-Key is still in progress; wait for its answer instead of sending it again.",
        ),
        _ => (
            "idempotency_key_reused",
            "A request with this Idempotency-Key finished recently; check its outcome instead of sending it again.",
        ),
    };
    log::info!("duplicate Idempotency-Key refused ({code})");
    let body = serde_json::json!({
        "error": {"type": "invalid_request_error", "code": code, "message": message}
    })
    .to_string();
    host::send_response(
        409,
        vec![
            ("content-type", "application/json"),
            ("x-should-retry", "false"),
            ("x-llm-retry-blocked", "duplicate-idempotency-key"),
        ],
        body.as_bytes(),
    );
}
