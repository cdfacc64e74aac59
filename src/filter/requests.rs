//! Per-request state shared by the client filter and every upstream attempt.
//!
//! All attempts of a request run on the worker thread that owns the downstream stream, and both
//! filter positions run in the same VM (same `vm_id`), so this state lives in VM memory, keyed
//! by `x-request-id`: no shared-data key per request (shared data has no delete). The client
//! filter creates the entry and removes it when the stream ends; the map is capped so that a
//! missed removal can never grow memory without bound.

use crate::classify::ErrorClass;
use crate::plan::{Features, Priority};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

/// Entries kept at most per worker; the oldest go first.
const MAX_REQUESTS: usize = 16_384;

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
}

#[derive(Default)]
struct Store {
    map: HashMap<String, RequestState>,
    order: VecDeque<String>,
}

thread_local! {
    static STORE: RefCell<Store> = RefCell::new(Store::default());
}

pub fn insert(id: &str, state: RequestState) {
    STORE.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return;
        };
        if s.map.len() >= MAX_REQUESTS {
            while let Some(old) = s.order.pop_front() {
                if s.map.remove(&old).is_some() {
                    break;
                }
            }
        }
        if s.map.insert(id.to_owned(), state).is_none() {
            s.order.push_back(id.to_owned());
        }
    });
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
        let state = s.map.remove(id);
        if state.is_some() {
            if let Some(pos) = s.order.iter().position(|k| k == id) {
                s.order.remove(pos);
            }
        }
        state
    })
}
