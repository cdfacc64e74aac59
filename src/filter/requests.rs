//! Per-request state shared by the client filter and every upstream attempt.
//!
//! All attempts of a request run on the worker thread that owns the downstream stream, and both
//! filter positions run in the same VM (same `vm_id`), so this state lives in VM memory, keyed
//! by the id the filter minted for the stream ([`super::identity`]): no shared-data key per
//! request (shared data has no delete). The client filter creates the entry and removes it when
//! the stream ends. The map is bounded in entries and in bytes, so that a missed removal or a
//! burst of large requests can never grow memory without bound: past the byte bound the kept
//! request bodies of the oldest entries go first (they only speed up choosing a fallback), then
//! whole entries.

use crate::classify::ErrorClass;
use crate::plan::{Features, Priority};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

/// Entries kept at most per worker; the oldest go first.
const MAX_REQUESTS: usize = 16_384;
/// Bytes of kept request bodies at most per worker.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// What the attempts of one request know about it.
#[derive(Debug)]
pub struct RequestState {
    /// The model the client asked for.
    pub requested: String,
    pub task: Option<String>,
    pub priority: Priority,
    /// The cluster the client filter routed to (switches stay within it).
    pub cluster: String,
    /// The model the next attempt must ask.
    pub next: String,
    /// Models asked so far, in order.
    pub tried: Vec<String>,
    /// The model that answered last, and whether it succeeded.
    pub served: Option<String>,
    /// The class that caused the first switch away from the requested model.
    pub fallback_reason: Option<ErrorClass>,
    /// Whether the first attempt is the probe of a half-open circuit.
    pub probe: bool,
    /// Parsed lazily when a fallback is chosen.
    pub features: Option<Features>,
    /// The request body as the client sent it, kept (moved, not copied) when the chain has a
    /// fallback, so that a failure can be matched against fallbacks' capabilities without the
    /// first attempt ever reading the body again.
    pub body: Option<Vec<u8>>,
    /// Set when the upstream asked for a wait the caller should honour (batch requests).
    pub retry_after_ms: Option<u64>,
    /// The first model chosen, when its health record was clean at that moment.
    pub clean_at_start: Option<String>,
    /// The request may act: only answers that prove it was rejected may be re-sent.
    pub unsafe_: bool,
    /// The last failed answer proved the request was rejected before any processing.
    pub proven_rejection: bool,
    /// The client sent the body compressed: every attempt inflates it and sends it plain (the
    /// router replays the original bytes, while header changes carry over between attempts).
    pub body_encoding: crate::inflate::Encoding,
}

#[derive(Default)]
struct Store {
    map: HashMap<String, RequestState>,
    order: VecDeque<String>,
    /// Bytes of the request bodies kept in `map`.
    body_bytes: usize,
}

fn body_len(state: &RequestState) -> usize {
    state.body.as_ref().map_or(0, Vec::capacity)
}

thread_local! {
    static STORE: RefCell<Store> = RefCell::new(Store::default());
}

/// Keeps a new request's state. An id is never reused, so a live entry is never overwritten:
/// an insert for an id already present is refused (and logged).
pub fn insert(id: &str, mut state: RequestState) -> bool {
    STORE.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return false;
        };
        let s = &mut *s;
        if s.map.contains_key(id) {
            log::warn!("request state {id} exists already: not overwritten");
            return false;
        }
        if s.map.len() >= MAX_REQUESTS {
            while let Some(old) = s.order.pop_front() {
                if let Some(gone) = s.map.remove(&old) {
                    s.body_bytes = s.body_bytes.saturating_sub(body_len(&gone));
                    break;
                }
            }
        }
        if body_len(&state) > MAX_BODY_BYTES / 4 {
            state.body = None;
        }
        // Oldest bodies go first until the new one fits.
        let mut cursor = 0;
        while s.body_bytes + body_len(&state) > MAX_BODY_BYTES {
            let Some(old) = s.order.get(cursor) else {
                state.body = None;
                break;
            };
            cursor += 1;
            if let Some(entry) = s.map.get_mut(old) {
                s.body_bytes = s.body_bytes.saturating_sub(body_len(entry));
                entry.body = None;
            }
        }
        s.body_bytes += body_len(&state);
        s.map.insert(id.to_owned(), state);
        s.order.push_back(id.to_owned());
        true
    })
}

/// Runs `f` on the state of request `id`, if any.
pub fn with<T>(id: &str, f: impl FnOnce(&mut RequestState) -> T) -> Option<T> {
    STORE.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return None;
        };
        s.map.get_mut(id).map(f)
    })
}

pub fn remove(id: &str) -> Option<RequestState> {
    STORE.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return None;
        };
        let s = &mut *s;
        let state = s.map.remove(id);
        if let Some(gone) = &state {
            s.body_bytes = s.body_bytes.saturating_sub(body_len(gone));
            // Ids stay in `order` until it is compacted (a scan per removal would cost O(n)
            // with many requests in flight); eviction skips ids that are gone.
            if s.order.len() > 2 * s.map.len() + 64 {
                let map = &s.map;
                s.order.retain(|k| map.contains_key(k));
            }
        }
        state
    })
}
