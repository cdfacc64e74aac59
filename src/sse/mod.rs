//! Watches a `text/event-stream` response body go by and reports error events and token usage.
//!
//! A 200 streaming answer can still fail half-way: Anthropic sends `event: error`, OpenAI chat
//! completions and Gemini send a `data:` frame whose JSON has an `"error"` object, the OpenAI
//! Responses API sends `response.failed`. The filter forwards every chunk to the client unchanged
//! and hands a copy to [`SseScanner::feed`], which frames events per the SSE spec
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html>) whatever the chunk
//! boundaries, and reports each error event with its raw JSON payload for the classifier. It also
//! keeps the latest token usage seen ([`SseScanner::usage`]).
//!
//! Cost and memory:
//! - A line that lies inside one chunk is not copied; lines split across chunks are copied into
//!   the event buffer, which never holds more than `max_event_bytes` of an event. The rest of a
//!   larger event is only searched for a `"usage` key, and the few bytes after that key are kept
//!   (at most [`USAGE_CAPTURE_BYTES`]) so usage placed after a long output is not lost.
//! - When an event is complete, two `memmem` searches decide whether it can matter: it must hold
//!   an `"error"` or `"usage"`/`"usageMetadata"` key whose value is not `null` (or `"error"` as a
//!   value, as in `"type":"error"`), or be named `error` / `response.failed`. Only such events
//!   are parsed as JSON. Typical token streams (including OpenAI's `"usage":null` on every chunk)
//!   are therefore never parsed.
//! - Nothing here calls the host or panics on any input.
//!
//! Layout: [`scanner`] frames events and bounds what is kept of them; [`frame`] reads what an
//! event says (an error, token usage) with as little parsing as possible.

mod frame;
mod scanner;
#[cfg(test)]
mod tests;

pub use frame::Usage;
pub use scanner::SseScanner;

/// A sensible default for [`SseScanner::new`]: error payloads are a few hundred bytes, usage
/// frames a few KiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 64 * 1024;

/// Longest event name kept (longer names are cut; no event name we look for is that long).
pub const MAX_EVENT_NAME_BYTES: usize = 128;

/// Bytes kept after a `"usage` key found beyond the first `max_event_bytes` of an event.
pub const USAGE_CAPTURE_BYTES: usize = 2048;

/// The UTF-8 byte order mark, ignored at the very start of the stream.
const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// Searched in event data; also matches the start of `"usageMetadata"` (Gemini).
const USAGE_MARKER: &[u8] = b"\"usage";

/// Searched in event data; matches the `"error"` key and the `"error"` string value.
const ERROR_MARKER: &[u8] = b"\"error\"";

/// What the scanner reports while a stream goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseFinding {
    /// An event that reports a failure: named `error` or `response.failed`, or whose data is a
    /// JSON object with a top-level `"error"` that is an object or a non-empty string, or with
    /// `"type"` equal to `"error"` or `"response.failed"`.
    Error {
        /// The event name (`event:` field), if the event had one.
        event: Option<String>,
        /// The event data: `data:` lines joined with `\n`, at most `max_event_bytes`.
        payload: Vec<u8>,
        /// The event was longer than `max_event_bytes`; `payload` is its beginning.
        truncated: bool,
    },
}
