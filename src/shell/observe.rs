//! Observers of a successful answer as it streams by: an SSE scanner or a JSON usage tail,
//! behind an inflater when the upstream compressed the answer anyway.

use crate::inflate::{Encoding, Inflater, MAX_OBSERVED_BYTES};
use crate::sse::{SseFinding, SseScanner, Usage};
use crate::usage::UsageTail;

/// An error event a stream carried: its data, and the exception it names when it is one of
/// AWS's (`event: throttlingException`), which says what its payload (often only a message)
/// does not.
pub struct ErrorEvent {
    pub payload: Vec<u8>,
    pub exception: Option<String>,
}

/// An event stream's scanner, fed decoded bytes.
pub struct StreamObserver {
    scanner: SseScanner,
    inflater: Option<Inflater>,
}

impl StreamObserver {
    pub fn new(encoding: Encoding) -> Self {
        Self {
            scanner: SseScanner::default(),
            inflater: Inflater::new(encoding, MAX_OBSERVED_BYTES),
        }
    }

    /// Feeds the next chunk as received; returns the error events it completed.
    pub fn feed(&mut self, chunk: &[u8], end: bool) -> Vec<ErrorEvent> {
        let mut errors = Vec::new();
        let mut collect = |finding: SseFinding| match finding {
            SseFinding::Error { event, payload, .. } => errors.push(ErrorEvent {
                payload,
                exception: event.filter(|name| name.ends_with("Exception")),
            }),
        };
        let scanner = &mut self.scanner;
        match &mut self.inflater {
            Some(inflater) => inflater.feed(chunk, &mut |piece| scanner.feed(piece, &mut collect)),
            None => scanner.feed(chunk, &mut collect),
        }
        if end {
            scanner.finish(&mut collect);
        }
        errors
    }

    pub fn usage(&self) -> Usage {
        self.scanner.usage()
    }

    /// Events that are not a stream's prelude, seen so far.
    pub fn content_events(&self) -> u64 {
        self.scanner.content_events_seen()
    }

    /// Whether the stream's first content event was an error.
    pub fn opened_with_error(&self) -> bool {
        self.scanner.content_before_first_error() == Some(0)
    }
}

/// A JSON answer's usage tail, fed decoded bytes.
pub struct JsonObserver {
    tail: UsageTail,
    inflater: Option<Inflater>,
}

impl JsonObserver {
    pub fn new(encoding: Encoding) -> Self {
        Self {
            tail: UsageTail::default(),
            inflater: Inflater::new(encoding, MAX_OBSERVED_BYTES),
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        let tail = &mut self.tail;
        match &mut self.inflater {
            Some(inflater) => inflater.feed(chunk, &mut |piece| tail.feed(piece)),
            None => tail.feed(chunk),
        }
    }

    pub fn usage(&self) -> Usage {
        self.tail.finish()
    }
}
