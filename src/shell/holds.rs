//! Streams whose response headers are held while their first event is awaited, and the timer
//! that releases them when it takes too long.
//!
//! A held stream registers its context id and deadline here; the upstream root context's timer
//! releases the expired ones (`set_effective_context` + `resume_http_response`) and marks them
//! released, so that the stream's next body callback knows its headers went out. All of it is
//! per worker (VM memory): a stream's callbacks and the timer run on the same thread.

use std::cell::RefCell;

#[derive(Default)]
struct Holds {
    /// (context id, release deadline in unix ms).
    held: Vec<(u32, u64)>,
    /// Released by the timer, not yet seen by their stream.
    released: Vec<u32>,
}

thread_local! {
    static HOLDS: RefCell<Holds> = RefCell::new(Holds::default());
}

/// Registers a held stream.
pub fn hold(context_id: u32, deadline_ms: u64) {
    HOLDS.with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            h.held.retain(|(id, _)| *id != context_id);
            h.held.push((context_id, deadline_ms));
        }
    });
}

/// Forgets a stream (released by its own callback, or ended).
pub fn forget(context_id: u32) {
    HOLDS.with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            h.held.retain(|(id, _)| *id != context_id);
            h.released.retain(|id| *id != context_id);
        }
    });
}

/// Whether the stream is still held (not released by its callbacks nor by the timer).
pub fn is_held(context_id: u32) -> bool {
    HOLDS.with(|h| {
        h.try_borrow()
            .is_ok_and(|h| h.held.iter().any(|(id, _)| *id == context_id))
    })
}

/// Whether the timer released this stream (and forgets that it did).
pub fn take_released(context_id: u32) -> bool {
    HOLDS.with(|h| {
        let Ok(mut h) = h.try_borrow_mut() else {
            return false;
        };
        let before = h.released.len();
        h.released.retain(|id| *id != context_id);
        h.released.len() != before
    })
}

/// Whether any stream is held (the timer has work).
pub fn any() -> bool {
    HOLDS.with(|h| h.try_borrow().is_ok_and(|h| !h.held.is_empty()))
}

/// Releases every stream whose deadline has passed. Returns how many were released.
pub fn release_expired(now_ms: u64) -> usize {
    let expired: Vec<u32> = HOLDS.with(|h| {
        let Ok(mut h) = h.try_borrow_mut() else {
            return Vec::new();
        };
        let (expired, kept): (Vec<_>, Vec<_>) =
            h.held.iter().partition(|(_, deadline)| *deadline <= now_ms);
        h.held = kept;
        let ids: Vec<u32> = expired.into_iter().map(|(id, _)| id).collect();
        h.released.extend(&ids);
        ids
    });
    let mut released = 0;
    for id in expired {
        // A stream that ended meanwhile answers BadArgument: nothing to release.
        if super::host::resume_response_of(id) {
            released += 1;
        } else {
            forget(id);
        }
    }
    released
}
