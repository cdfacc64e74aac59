//! State shared by all connections.

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
        }
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
