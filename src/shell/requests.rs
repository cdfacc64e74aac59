//! This worker's requests in flight ([`RequestStore`]), shared by the client filter and every
//! upstream attempt of a request (same VM, same thread), keyed by the id the client filter
//! minted ([`super::identity`]).

use crate::flow::{Request, RequestStore};
use std::cell::RefCell;

thread_local! {
    static STORE: RefCell<RequestStore> = RefCell::new(RequestStore::default());
}

/// Keeps a new request's state (refused, and logged, for an id already present).
pub fn insert(id: &str, request: Request) -> bool {
    STORE.with(|s| s.try_borrow_mut().is_ok_and(|mut s| s.insert(id, request)))
}

/// Runs `f` on the state of request `id`, if any.
pub fn with<T>(id: &str, f: impl FnOnce(&mut Request) -> T) -> Option<T> {
    STORE.with(|s| s.try_borrow_mut().ok()?.get_mut(id).map(f))
}

pub fn remove(id: &str) -> Option<Request> {
    STORE.with(|s| s.try_borrow_mut().ok()?.remove(id))
}
