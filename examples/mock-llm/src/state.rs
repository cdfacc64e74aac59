//! State shared by all connections.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::encoding::CompressMode;
use crate::record::Recorder;
use crate::script::ScriptBook;

pub struct Inner {
    pub scripts: ScriptBook,
    pub recorder: Recorder,
}

pub struct AppState {
    pub start: Instant,
    pub record_body_limit: usize,
    pub compress: CompressMode,
    inner: Mutex<Inner>,
    /// LLM requests being answered now, and the most at once since the last reset.
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

/// One LLM request being answered (dropped when its answer ends or the peer goes away).
pub struct Flight<'a>(&'a AppState);

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl AppState {
    pub fn new(record_limit: usize, record_body_limit: usize, compress: CompressMode) -> Self {
        AppState {
            start: Instant::now(),
            record_body_limit,
            compress,
            inner: Mutex::new(Inner {
                scripts: ScriptBook::default(),
                recorder: Recorder::new(record_limit),
            }),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
        }
    }

    /// Counts an LLM request in flight until the returned guard drops.
    pub fn enter(&self) -> Flight<'_> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Flight(self)
    }

    /// (in flight now, most at once since the last reset).
    pub fn flights(&self) -> (u64, u64) {
        (
            self.in_flight.load(Ordering::SeqCst),
            self.max_in_flight.load(Ordering::SeqCst),
        )
    }

    /// Starts the maximum again from what is in flight now.
    pub fn reset_flights(&self) {
        self.max_in_flight
            .store(self.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Locks the shared state. Never held across an await.
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the data inconsistent
        // in a way that matters for a mock; keep serving.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}
