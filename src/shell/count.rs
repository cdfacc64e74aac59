//! Counting a request (or attempt) under its model, read from a body that is not held.

use super::{host, Plugin};
use crate::model_field::{ModelScanner, Skip};
use crate::stats::{BodySkip, Counter, ModelSlot};
use proxy_wasm::types::BufferType;

/// Which count a position keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Client requests (and, once per request, bodies that could not be read).
    Client,
    /// Router attempts.
    Upstream,
}

/// Counts one request or attempt for `model`; a `skip` says why the model is not known.
pub fn count(
    plugin: &Plugin,
    position: Position,
    model: Option<&str>,
    skip: Option<BodySkip>,
) -> ModelSlot {
    let metrics = &plugin.metrics;
    let slot = metrics.set.slot(model);
    match position {
        Position::Client => {
            metrics.increment(Counter::Requests(slot));
            // Bodies are the same on every attempt: counted once, in the client position.
            if let Some(skip) = skip {
                metrics.increment(Counter::BodySkipped(skip));
                log::debug!("model not read from request body: {}", skip.as_str());
            }
        }
        Position::Upstream => metrics.increment(Counter::Attempts(slot)),
    }
    slot
}

/// The model of a body that streams through: scanned chunk by chunk, never held.
pub struct Streaming(ModelScanner);

impl Streaming {
    pub fn new() -> Self {
        Self(ModelScanner::new())
    }

    /// Feeds the body's next `size` bytes: `Err` as soon as the body is known not to be JSON.
    /// Scans to the end even once the model is found: a second top-level `model` makes the
    /// body ambiguous (parsers disagree on which wins), and it must be counted as such.
    pub fn feed(&mut self, size: usize) -> Result<(), BodySkip> {
        if let Some(chunk) = host::buffer(BufferType::HttpRequestBody, 0, size) {
            self.0.feed(&chunk);
        }
        if self.0.is_invalid() {
            return Err(BodySkip::Scan(Skip::NotJson));
        }
        Ok(())
    }

    /// The outcome at the body's end.
    pub fn finish(self) -> Result<String, BodySkip> {
        self.0.finish().map(|f| f.value).map_err(BodySkip::Scan)
    }

    /// The model as far as it was seen (a body that ended with trailers).
    pub fn found(&self) -> Option<&str> {
        self.0.found().map(|f| f.value.as_str())
    }
}
