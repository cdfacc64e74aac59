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

use std::fmt;

use memchr::memmem::Finder;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

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

/// Token counts reported by the provider so far. Each field holds the last value seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `prompt_tokens` (OpenAI chat), `input_tokens` (Anthropic, OpenAI Responses),
    /// `promptTokenCount` (Gemini).
    pub input_tokens: Option<u64>,
    /// `completion_tokens` (OpenAI chat), `output_tokens` (Anthropic, OpenAI Responses),
    /// `candidatesTokenCount` (Gemini).
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// Takes every field `later` has (last value wins).
    fn update(&mut self, later: Usage) {
        if later.input_tokens.is_some() {
            self.input_tokens = later.input_tokens;
        }
        if later.output_tokens.is_some() {
            self.output_tokens = later.output_tokens;
        }
    }

    /// Reads a usage object of any of the supported providers.
    fn from_map(map: &Map<String, Value>) -> Usage {
        let first = |keys: &[&str]| {
            keys.iter()
                .find_map(|key| map.get(*key).and_then(Value::as_u64))
        };
        Usage {
            input_tokens: first(&["input_tokens", "prompt_tokens", "promptTokenCount"]),
            output_tokens: first(&["output_tokens", "completion_tokens", "candidatesTokenCount"]),
        }
    }

    pub(crate) fn from_value(value: Option<&Value>) -> Usage {
        match value {
            Some(Value::Object(map)) => Usage::from_map(map),
            _ => Usage::default(),
        }
    }
}

/// The fields an event's field name can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Other,
}

impl Field {
    fn of(name: &[u8]) -> Field {
        match name {
            b"data" => Field::Data,
            b"event" => Field::Event,
            _ => Field::Other,
        }
    }
}

/// Where the scanner is within a line that continues into the next chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// At the start of a line.
    Start,
    /// Inside the field name (no colon yet). Only names up to 5 bytes (`data`, `event`) are
    /// kept; a longer one makes the line [`Line::Skip`].
    Name { name: [u8; 5], len: u8 },
    /// Just after the colon: one space may follow and is not part of the value.
    Colon(Field),
    /// Inside the value of a `data` or `event` field.
    Value(Field),
    /// A comment or an unknown field: ignored up to the end of the line.
    Skip,
}

/// Whether the stream's first bytes are still being compared with the BOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// This many leading bytes matched the BOM so far.
    Checking(u8),
    Done,
}

/// Streaming SSE observer. See the module documentation.
#[derive(Debug, Clone)]
pub struct SseScanner {
    max_event_bytes: usize,
    bom: Bom,
    line: Line,
    /// The previous line ended with `\r`: a `\n` right after it belongs to that line end.
    skip_lf: bool,
    /// The current event has at least one `data` field (the spec dispatches only those).
    has_data: bool,
    /// The current event's data, up to `max_event_bytes` (empty while the only data line sits
    /// in the chunk being scanned).
    data: Vec<u8>,
    /// The current event's data went past `max_event_bytes`.
    truncated: bool,
    /// The current event's name, up to [`MAX_EVENT_NAME_BYTES`].
    name: Vec<u8>,
    /// Usage search in the part of the current event beyond `max_event_bytes`.
    overflow: Overflow,
    usage: Usage,
    events_seen: u64,
    content_events_seen: u64,
    /// Content events dispatched before the first error event, once there was one.
    content_before_first_error: Option<u64>,
    malformed_frames: u64,
    frames_parsed: u64,
    usage_finder: Finder<'static>,
    error_finder: Finder<'static>,
}

impl Default for SseScanner {
    fn default() -> Self {
        SseScanner::new(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseScanner {
    /// A scanner for one response body. Events longer than `max_event_bytes` are reported cut to
    /// that length.
    pub fn new(max_event_bytes: usize) -> Self {
        SseScanner {
            max_event_bytes,
            bom: Bom::Checking(0),
            line: Line::Start,
            skip_lf: false,
            has_data: false,
            data: Vec::new(),
            truncated: false,
            name: Vec::new(),
            overflow: Overflow::default(),
            usage: Usage::default(),
            events_seen: 0,
            content_events_seen: 0,
            content_before_first_error: None,
            malformed_frames: 0,
            frames_parsed: 0,
            usage_finder: Finder::new(USAGE_MARKER),
            error_finder: Finder::new(ERROR_MARKER),
        }
    }

    /// Scans the next chunk of the body; `found` is called for every error event completed by
    /// it. The chunk is not kept.
    pub fn feed(&mut self, chunk: &[u8], found: &mut impl FnMut(SseFinding)) {
        let mut chunk = chunk;
        while let Bom::Checking(matched) = self.bom {
            let Some((&byte, rest)) = chunk.split_first() else {
                return;
            };
            if BOM.get(usize::from(matched)) == Some(&byte) {
                chunk = rest;
                self.bom = if matched >= 2 {
                    Bom::Done
                } else {
                    Bom::Checking(matched + 1)
                };
            } else {
                // Not a BOM: the bytes that looked like one are ordinary bytes.
                self.bom = Bom::Done;
                self.scan(BOM.get(..usize::from(matched)).unwrap_or_default(), found);
            }
        }
        self.scan(chunk, found);
    }

    /// Ends the stream: an event not followed by a blank line is dispatched anyway (the spec
    /// would drop it, but a provider that fails may close the stream right after its error).
    /// The scanner can then take a new stream's lines (counters and usage are kept).
    pub fn finish(&mut self, found: &mut impl FnMut(SseFinding)) {
        if let Bom::Checking(matched) = self.bom {
            self.bom = Bom::Done;
            self.scan(BOM.get(..usize::from(matched)).unwrap_or_default(), found);
        }
        let mut pending = None;
        self.end_line(&mut pending);
        self.skip_lf = false;
        self.dispatch(pending, found);
    }

    /// The latest usage numbers seen so far, per field.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Events dispatched so far (events with at least one `data` field).
    pub fn events_seen(&self) -> u64 {
        self.events_seen
    }

    /// Events dispatched so far that are not a stream's prelude: Anthropic's `message_start`,
    /// `content_block_start` and `ping`, the Responses API's `response.created` and
    /// `response.in_progress`. The first such event shows whether the answer really started.
    pub fn content_events_seen(&self) -> u64 {
        self.content_events_seen
    }

    /// How many content events came before the first error event (`None`: no error yet). Zero
    /// means the stream opened with an error: the client has seen nothing of the answer.
    pub fn content_before_first_error(&self) -> Option<u64> {
        self.content_before_first_error
    }

    /// Events whose data had to be read as JSON (see the module documentation) and did not
    /// parse. Events that were not candidates are not validated and never counted.
    pub fn malformed_frames(&self) -> u64 {
        self.malformed_frames
    }

    /// Splits `chunk` into lines and handles them.
    fn scan<'c>(&mut self, chunk: &'c [u8], found: &mut impl FnMut(SseFinding)) {
        // The data of the current event when it is a single line inside `chunk`: kept as a
        // slice and copied only if the event does not end in this chunk.
        let mut pending: Option<&'c [u8]> = None;
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.skip_lf {
                self.skip_lf = false;
                if let Some(after) = rest.strip_prefix(b"\n") {
                    rest = after;
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(end) => {
                    let line = rest.get(..end).unwrap_or_default();
                    self.skip_lf = rest.get(end) == Some(&b'\r');
                    rest = rest.get(end + 1..).unwrap_or_default();
                    if self.line == Line::Start {
                        self.whole_line(line, &mut pending, found);
                    } else {
                        self.line_part(line, &mut pending);
                        self.end_line(&mut pending);
                    }
                }
                None => {
                    self.line_part(rest, &mut pending);
                    rest = &[];
                }
            }
        }
        if let Some(line) = pending {
            self.push_data(line);
        }
    }

    /// A line that starts and ends inside the chunk (terminator excluded).
    fn whole_line<'c>(
        &mut self,
        line: &'c [u8],
        pending: &mut Option<&'c [u8]>,
        found: &mut impl FnMut(SseFinding),
    ) {
        if line.is_empty() {
            self.dispatch(pending.take(), found);
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(0) => return, // comment
            Some(colon) => {
                let value = line.get(colon + 1..).unwrap_or_default();
                (
                    line.get(..colon).unwrap_or_default(),
                    value.strip_prefix(b" ").unwrap_or(value),
                )
            }
            None => (line, &[][..]),
        };
        match Field::of(name) {
            Field::Data => {
                if !self.has_data && value.len() <= self.max_event_bytes {
                    self.has_data = true;
                    *pending = Some(value);
                } else {
                    self.start_field(Field::Data, pending);
                    self.push_data(value);
                }
            }
            Field::Event => {
                self.start_field(Field::Event, pending);
                self.push_name(value);
            }
            Field::Other => {}
        }
    }

    /// Part of a line that does not end inside the chunk, or the rest of one that began in an
    /// earlier chunk (terminator excluded).
    fn line_part(&mut self, part: &[u8], pending: &mut Option<&[u8]>) {
        let mut part = part;
        loop {
            match self.line {
                Line::Start => match part.first() {
                    None => return,
                    Some(b':') => self.line = Line::Skip,
                    Some(_) => {
                        self.line = Line::Name {
                            name: [0; 5],
                            len: 0,
                        }
                    }
                },
                Line::Name { mut name, len } => {
                    let colon = memchr::memchr(b':', part);
                    let piece = match colon {
                        Some(at) => part.get(..at).unwrap_or_default(),
                        None => part,
                    };
                    let start = usize::from(len);
                    let end = start + piece.len();
                    let Some(slot) = name.get_mut(start..end) else {
                        // Longer than `event`: not a field we read.
                        self.line = Line::Skip;
                        return;
                    };
                    slot.copy_from_slice(piece);
                    let len = u8::try_from(end).unwrap_or(u8::MAX);
                    match colon {
                        None => {
                            self.line = Line::Name { name, len };
                            return;
                        }
                        Some(at) => {
                            let field = Field::of(name.get(..end).unwrap_or_default());
                            self.start_field(field, pending);
                            self.line = match field {
                                Field::Other => Line::Skip,
                                _ => Line::Colon(field),
                            };
                            part = part.get(at + 1..).unwrap_or_default();
                        }
                    }
                }
                Line::Colon(field) => match part.split_first() {
                    None => return,
                    Some((&first, rest)) => {
                        if first == b' ' {
                            part = rest;
                        }
                        self.line = Line::Value(field);
                    }
                },
                Line::Value(Field::Data) => {
                    self.push_data(part);
                    return;
                }
                Line::Value(Field::Event) => {
                    self.push_name(part);
                    return;
                }
                Line::Value(Field::Other) | Line::Skip => return,
            }
        }
    }

    /// The end of a line handled by [`Self::line_part`].
    fn end_line(&mut self, pending: &mut Option<&[u8]>) {
        if let Line::Name { name, len } = self.line {
            // A field name without a colon: the value is empty.
            let field = Field::of(name.get(..usize::from(len)).unwrap_or_default());
            self.start_field(field, pending);
        }
        self.line = Line::Start;
    }

    /// A `data` or `event` field begins (its value follows).
    fn start_field(&mut self, field: Field, pending: &mut Option<&[u8]>) {
        match field {
            Field::Data => {
                if let Some(line) = pending.take() {
                    self.push_data(line);
                }
                if self.has_data {
                    self.push_data(b"\n");
                }
                self.has_data = true;
            }
            Field::Event => self.name.clear(),
            Field::Other => {}
        }
    }

    fn push_name(&mut self, bytes: &[u8]) {
        let room = MAX_EVENT_NAME_BYTES.saturating_sub(self.name.len());
        self.name
            .extend_from_slice(bytes.get(..room).unwrap_or(bytes));
    }

    /// Appends to the current event's data, keeping at most `max_event_bytes`.
    fn push_data(&mut self, bytes: &[u8]) {
        if self.truncated {
            self.overflow.feed(bytes, &self.usage_finder);
            return;
        }
        let room = self.max_event_bytes.saturating_sub(self.data.len());
        match (bytes.get(..room), bytes.get(room..)) {
            (Some(head), Some(rest)) if !rest.is_empty() => {
                self.data.extend_from_slice(head);
                self.truncated = true;
                self.overflow.start(&self.data, &self.usage_finder);
                self.overflow.feed(rest, &self.usage_finder);
            }
            _ => self.data.extend_from_slice(bytes),
        }
    }

    /// A blank line (or the end of the stream): the current event is complete.
    fn dispatch(&mut self, pending: Option<&[u8]>, found: &mut impl FnMut(SseFinding)) {
        if self.has_data {
            self.events_seen += 1;
            const PRELUDES: [&[u8]; 5] = [
                b"message_start",
                b"content_block_start",
                b"ping",
                b"response.created",
                b"response.in_progress",
            ];
            if !PRELUDES.contains(&self.name.trim_ascii()) {
                self.content_events_seen += 1;
            }
            let data = std::mem::take(&mut self.data);
            self.inspect(pending.unwrap_or(data.as_slice()), found);
            self.data = data;
        }
        self.data.clear();
        self.name.clear();
        self.has_data = false;
        self.truncated = false;
        self.overflow.reset();
    }

    /// Decides whether a complete event matters, and reports it.
    fn inspect(&mut self, data: &[u8], found: &mut impl FnMut(SseFinding)) {
        let name = self.name.trim_ascii();
        let named_error = name == b"error" || name == b"response.failed";
        let is_error = if self.truncated {
            let mut usage = Usage::default();
            for at in self.usage_finder.find_iter(data) {
                let after = data.get(at + USAGE_MARKER.len()..).unwrap_or_default();
                usage.update(usage_after_marker(after).unwrap_or_default());
            }
            usage.update(self.overflow.finish());
            self.usage.update(usage);
            named_error || (self.may_hold_error(data) && head_shows_error(data))
        } else {
            if !named_error && !self.may_hold_error(data) && !self.may_hold_usage(data) {
                return;
            }
            self.frames_parsed += 1;
            match parse_frame(data) {
                Ok(frame) => {
                    self.usage.update(frame.usage());
                    named_error || frame.is_error()
                }
                Err(_) => {
                    self.malformed_frames += 1;
                    named_error
                }
            }
        };
        if is_error {
            if self.content_before_first_error.is_none() {
                // This event was counted already (an error is never a prelude).
                let before = self.content_events_seen.saturating_sub(1);
                self.content_before_first_error = Some(before);
            }
            found(SseFinding::Error {
                event: (!self.name.is_empty())
                    .then(|| String::from_utf8_lossy(&self.name).into_owned()),
                payload: data.to_vec(),
                truncated: self.truncated,
            });
        }
    }

    /// Whether `data` may hold a live `"error"`: a key whose value is not `null`, or a string
    /// value (`"type":"error"`). The cheap filter run on every event.
    fn may_hold_error(&self, data: &[u8]) -> bool {
        self.error_finder.find_iter(data).any(|at| {
            let after = data.get(at + ERROR_MARKER.len()..).unwrap_or_default();
            match skip_ws(after).strip_prefix(b":") {
                Some(value) => !skip_ws(value).starts_with(b"null"),
                None => true,
            }
        })
    }

    /// Whether `data` may hold a `"usage"` or `"usageMetadata"` key whose value is not `null`.
    fn may_hold_usage(&self, data: &[u8]) -> bool {
        self.usage_finder.find_iter(data).any(|at| {
            let after = data.get(at + USAGE_MARKER.len()..).unwrap_or_default();
            after
                .strip_prefix(b"\"")
                .or_else(|| after.strip_prefix(b"Metadata\""))
                .and_then(|key_end| skip_ws(key_end).strip_prefix(b":"))
                .is_some_and(|value| !skip_ws(value).starts_with(b"null"))
        })
    }

    #[cfg(test)]
    fn retained_bytes(&self) -> usize {
        self.data.capacity()
            + self.name.capacity()
            + self.overflow.capture.capacity()
            + self.overflow.carry.capacity()
    }
}

/// Looks for usage in the part of an event beyond `max_event_bytes`, which is not kept.
#[derive(Debug, Clone, Default)]
struct Overflow {
    /// The last bytes seen (fewer than the marker), to find a marker split between pieces.
    carry: Vec<u8>,
    /// Bytes after the latest marker, up to [`USAGE_CAPTURE_BYTES`].
    capture: Vec<u8>,
    /// `capture` holds the bytes after a marker not yet read.
    open: bool,
    /// `capture` is still being filled.
    filling: bool,
    /// Usage read from the captures so far (last wins).
    usage: Usage,
}

impl Overflow {
    fn reset(&mut self) {
        self.carry.clear();
        self.capture.clear();
        self.open = false;
        self.filling = false;
        self.usage = Usage::default();
    }

    /// The event just went past the limit; `head` is what was kept of it.
    fn start(&mut self, head: &[u8], finder: &Finder<'static>) {
        self.reset();
        // A usage object that begins in the head and ends beyond it.
        if let Some(at) = finder.find_iter(head).last() {
            let after = head.get(at + USAGE_MARKER.len()..).unwrap_or_default();
            if after.len() < USAGE_CAPTURE_BYTES {
                self.begin_capture(after);
            }
        }
        self.remember_tail(head);
    }

    fn feed(&mut self, bytes: &[u8], finder: &Finder<'static>) {
        if self.filling {
            let room = USAGE_CAPTURE_BYTES.saturating_sub(self.capture.len());
            self.capture
                .extend_from_slice(bytes.get(..room).unwrap_or(bytes));
            self.filling = self.capture.len() < USAGE_CAPTURE_BYTES;
        }
        // A marker that starts in the carried bytes and ends in `bytes`.
        let carried = self.carry.len();
        if carried > 0 {
            let mut window = [0u8; 2 * USAGE_MARKER.len()];
            let joined = self
                .carry
                .iter()
                .chain(bytes.iter().take(USAGE_MARKER.len()));
            let mut len = 0;
            for (slot, byte) in window.iter_mut().zip(joined) {
                *slot = *byte;
                len += 1;
            }
            let window = window.get(..len).unwrap_or_default();
            if let Some(at) = finder.find_iter(window).find(|&at| at < carried) {
                let start = at + USAGE_MARKER.len() - carried;
                self.begin_capture(bytes.get(start..).unwrap_or_default());
            }
        }
        for at in finder.find_iter(bytes) {
            self.begin_capture(bytes.get(at + USAGE_MARKER.len()..).unwrap_or_default());
        }
        self.remember_tail(bytes);
    }

    /// Reads the previous capture and starts a new one with the bytes after a marker.
    fn begin_capture(&mut self, after: &[u8]) {
        self.close_capture();
        self.capture.clear();
        self.capture
            .extend_from_slice(after.get(..USAGE_CAPTURE_BYTES).unwrap_or(after));
        self.open = true;
        self.filling = self.capture.len() < USAGE_CAPTURE_BYTES;
    }

    fn close_capture(&mut self) {
        if self.open {
            self.usage
                .update(usage_after_marker(&self.capture).unwrap_or_default());
        }
        self.open = false;
        self.filling = false;
    }

    /// Keeps the last bytes of the data seen so far (fewer than the marker's length).
    fn remember_tail(&mut self, bytes: &[u8]) {
        let keep = USAGE_MARKER.len() - 1;
        if bytes.len() >= keep {
            self.carry.clear();
            self.carry
                .extend_from_slice(bytes.get(bytes.len() - keep..).unwrap_or_default());
        } else {
            self.carry.extend_from_slice(bytes);
            let excess = self.carry.len().saturating_sub(keep);
            self.carry.drain(..excess);
        }
    }

    /// Usage found beyond the head (the event is complete).
    fn finish(&mut self) -> Usage {
        self.close_capture();
        self.usage
    }
}

/// The bytes after a `"usage` marker: `"` or `Metadata"`, a colon, then an object.
fn usage_after_marker(after: &[u8]) -> Option<Usage> {
    let key_end = after
        .strip_prefix(b"\"")
        .or_else(|| after.strip_prefix(b"Metadata\""))?;
    let value = skip_ws(skip_ws(key_end).strip_prefix(b":")?);
    if !value.starts_with(b"{") {
        return None;
    }
    // One value, whatever follows it.
    let mut de = serde_json::Deserializer::from_slice(value);
    let map = Map::<String, Value>::deserialize(&mut de).ok()?;
    Some(Usage::from_map(&map))
}

/// The parts of a frame we read. Other keys are skipped without being stored.
#[derive(Debug, Default, Deserialize)]
struct Frame {
    #[serde(default, rename = "type")]
    kind: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    /// OpenAI chat (top level), Anthropic `message_delta`.
    #[serde(default)]
    usage: Option<Value>,
    /// Gemini.
    #[serde(default, rename = "usageMetadata")]
    usage_metadata: Option<Value>,
    /// Anthropic `message_start`.
    #[serde(default)]
    message: Option<Nested>,
    /// OpenAI Responses `response.*` events.
    #[serde(default)]
    response: Option<Nested>,
}

impl Frame {
    fn is_error(&self) -> bool {
        let error_field = match &self.error {
            Some(Value::Object(_)) => true,
            Some(Value::String(text)) => !text.is_empty(),
            _ => false,
        };
        let error_type = matches!(
            self.kind.as_ref().and_then(Value::as_str),
            Some("error" | "response.failed")
        );
        error_field || error_type
    }

    fn usage(&self) -> Usage {
        let mut usage = Usage::default();
        for nested in [&self.message, &self.response].into_iter().flatten() {
            usage.update(Usage::from_value(nested.usage.as_ref()));
        }
        usage.update(Usage::from_value(self.usage.as_ref()));
        usage.update(Usage::from_value(self.usage_metadata.as_ref()));
        usage
    }
}

/// Event data as JSON: a [`Frame`] if it is an object, nothing otherwise (but it must parse).
fn parse_frame(data: &[u8]) -> serde_json::Result<Frame> {
    if skip_ws(data).starts_with(b"{") {
        serde_json::from_slice(data)
    } else {
        serde_json::from_slice::<IgnoredAny>(data).map(|_| Frame::default())
    }
}

/// An object nested in a frame (`message`, `response`) of which only `usage` is read. Any other
/// JSON value is accepted and ignored.
#[derive(Debug, Default)]
struct Nested {
    usage: Option<Value>,
}

impl<'de> Deserialize<'de> for Nested {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NestedVisitor)
    }
}

struct NestedVisitor;

impl<'de> Visitor<'de> for NestedVisitor {
    type Value = Nested;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Nested, A::Error> {
        let mut nested = Nested::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "usage" {
                nested.usage = map.next_value()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(nested)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Nested, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Nested::default())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Nested, E> {
        Ok(Nested::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Nested, E> {
        Ok(Nested::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Nested, E> {
        Ok(Nested::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Nested, E> {
        Ok(Nested::default())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Nested, E> {
        Ok(Nested::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Nested, E> {
        Ok(Nested::default())
    }
}

/// Whether the beginning of a JSON object (the rest was cut) shows a top-level `"error"` that
/// is an object or a non-empty string, or a top-level `"type"` of `"error"` or
/// `"response.failed"`. Walks the top level only; gives up (false) where the text ends or is not
/// JSON.
fn head_shows_error(data: &[u8]) -> bool {
    let Some(mut rest) = skip_ws(data).strip_prefix(b"{") else {
        return false;
    };
    loop {
        let Some(key_start) = skip_ws(rest).strip_prefix(b"\"") else {
            return false;
        };
        let Some((key, after_key)) = split_string(key_start) else {
            return false;
        };
        let Some(value) = skip_ws(after_key).strip_prefix(b":") else {
            return false;
        };
        let value = skip_ws(value);
        match key {
            b"error" => match value.split_first() {
                Some((b'{', _)) => return true,
                Some((b'"', text)) if text.first().is_some_and(|&c| c != b'"') => return true,
                _ => {}
            },
            b"type" => {
                if let Some((text, _)) = value.strip_prefix(b"\"").and_then(split_string) {
                    if text == b"error" || text == b"response.failed" {
                        return true;
                    }
                }
            }
            _ => {}
        }
        let Some(after_value) = skip_value(value) else {
            return false;
        };
        match skip_ws(after_value).strip_prefix(b",") {
            Some(next) => rest = next,
            None => return false,
        }
    }
}

/// Splits a JSON string's raw contents (the opening quote already consumed) from what follows
/// the closing quote. `None` if the string does not end.
fn split_string(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut from = 0;
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', text.get(from..)?)?;
        if text.get(at) == Some(&b'"') {
            return Some((text.get(..at)?, text.get(at + 1..)?));
        }
        from = at + 2;
    }
}

/// What follows one JSON value at the start of `value`. `None` if the value does not end.
fn skip_value(value: &[u8]) -> Option<&[u8]> {
    match value.first()? {
        b'"' => split_string(value.get(1..)?).map(|(_, rest)| rest),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = 0;
            loop {
                match value.get(at)? {
                    b'"' => {
                        let (_, rest) = split_string(value.get(at + 1..)?)?;
                        at = value.len() - rest.len();
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return value.get(at + 1..);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let end = value
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            value.get(end..)
        }
    }
}

/// `bytes` without leading JSON whitespace.
fn skip_ws(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(bytes.len());
    bytes.get(start..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Everything a scanner says about a stream.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Outcome {
        findings: Vec<SseFinding>,
        usage: Usage,
        events: u64,
        malformed: u64,
        parsed: u64,
    }

    fn run<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, max: usize) -> Outcome {
        let mut scanner = SseScanner::new(max);
        let mut findings = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, &mut |f| findings.push(f));
        }
        scanner.finish(&mut |f| findings.push(f));
        // `finish` twice changes nothing.
        scanner.finish(&mut |f| findings.push(f));
        Outcome {
            findings,
            usage: scanner.usage(),
            events: scanner.events_seen(),
            malformed: scanner.malformed_frames(),
            parsed: scanner.frames_parsed,
        }
    }

    use crate::test_support::Rng;

    fn random_split<'a>(input: &'a [u8], rng: &mut Rng, max_piece: usize) -> Vec<&'a [u8]> {
        let mut pieces = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let n = (1 + rng.below(max_piece)).min(rest.len());
            let (piece, tail) = rest.split_at(n);
            pieces.push(piece);
            rest = tail;
        }
        pieces
    }

    /// Feeds `input` whole, in every fixed chunk size, split in two at every byte, and split
    /// at random; every way must give `expected`.
    fn check_splits(input: &[u8], max: usize, expected: &Outcome) {
        assert_eq!(&run([input], max), expected, "whole input");
        for size in 1..=input.len() {
            assert_eq!(&run(input.chunks(size), max), expected, "chunks of {size}");
        }
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(&run([a, b], max), expected, "split at {at}");
        }
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ input.len() as u64);
        for round in 0..300 {
            let max_piece = [3, 17, 64, 300][round % 4];
            let pieces = random_split(input, &mut rng, max_piece);
            assert_eq!(
                &run(pieces.iter().copied(), max),
                expected,
                "random round {round}"
            );
        }
    }

    fn error(event: Option<&str>, payload: &str) -> SseFinding {
        SseFinding::Error {
            event: event.map(str::to_owned),
            payload: payload.as_bytes().to_vec(),
            truncated: false,
        }
    }

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
        }
    }

    const OPENAI_CHAT: &str = concat!(
        "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
        "\n",
        "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The word \\\"error\\\" and \\\"usage\\\": {\\\"x\\\": 1}\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
        "\n",
        "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" are just words.\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
        "\n",
        "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\": null}\n",
        "\n",
        "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":10,\"total_tokens\":29,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n",
        "\n",
        "data: [DONE]\n",
        "\n",
    );

    #[wasm_bindgen_test(unsupported = test)]
    fn openai_chat_stream_with_usage() {
        check_splits(
            OPENAI_CHAT.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![],
                usage: usage(19, 10),
                events: 6,
                malformed: 0,
                // Only the usage chunk: `"usage":null` and escaped text are not parsed.
                parsed: 1,
            },
        );
    }

    const OPENAI_CHAT_ERROR: &str = "{\"error\": {\"message\": \"The server had an error while processing your request. Sorry about that!\", \"type\": \"server_error\", \"param\": null, \"code\": null}}";

    #[wasm_bindgen_test(unsupported = test)]
    fn openai_chat_error_frame_without_event_name() {
        let input = format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hel\"}},\"finish_reason\":null}}]}}\n\ndata: {OPENAI_CHAT_ERROR}\n\n"
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(None, OPENAI_CHAT_ERROR)],
                usage: Usage::default(),
                events: 2,
                malformed: 0,
                parsed: 1,
            },
        );
    }

    const ANTHROPIC: &str = concat!(
        "event: message_start\n",
        "data: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"model\": \"claude-3-5-sonnet-20241022\", \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 25, \"cache_creation_input_tokens\": 0, \"cache_read_input_tokens\": 0, \"output_tokens\": 1}}}\n",
        "\n",
        "event: content_block_start\n",
        "data: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n",
        "\n",
        "event: ping\n",
        "data: {\"type\": \"ping\"}\n",
        "\n",
        "event: content_block_delta\n",
        "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"Hello\"}}\n",
        "\n",
        "event: content_block_delta\n",
        "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"!\"}}\n",
        "\n",
        "event: content_block_stop\n",
        "data: {\"type\": \"content_block_stop\", \"index\": 0}\n",
        "\n",
        "event: message_delta\n",
        "data: {\"type\": \"message_delta\", \"delta\": {\"stop_reason\": \"end_turn\", \"stop_sequence\":null}, \"usage\": {\"output_tokens\": 15}}\n",
        "\n",
        "event: message_stop\n",
        "data: {\"type\": \"message_stop\"}\n",
        "\n",
    );

    #[wasm_bindgen_test(unsupported = test)]
    fn anthropic_stream_usage() {
        check_splits(
            ANTHROPIC.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![],
                usage: usage(25, 15),
                events: 8,
                malformed: 0,
                parsed: 2,
            },
        );
    }

    const ANTHROPIC_ERROR: &str = "{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}";

    #[wasm_bindgen_test(unsupported = test)]
    fn anthropic_error_after_deltas() {
        let input = concat!(
            "event: message_start\n",
            "data: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_01\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"model\": \"claude-sonnet-4-20250514\", \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 472, \"output_tokens\": 2}}}\n",
            "\n",
            "event: content_block_start\n",
            "data: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n",
            "\n",
            "event: content_block_delta\n",
            "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"Once upon\"}}\n",
            "\n",
            "event: content_block_delta\n",
            "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \" a time\"}}\n",
            "\n",
            "event: error\n",
            "data: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n",
            "\n",
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(Some("error"), ANTHROPIC_ERROR)],
                usage: usage(472, 2),
                events: 5,
                malformed: 0,
                parsed: 2,
            },
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn anthropic_message_delta_with_input_tokens() {
        let input = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"usage\":{\"input_tokens\":0,\"output_tokens\":1}}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":null,\"cache_read_input_tokens\":null,\"output_tokens\":89}}\n\n",
        );
        let out = run([input.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
        assert_eq!(out.usage, usage(472, 89));
        assert!(out.findings.is_empty());
    }

    fn responses_created(kind: &str, seq: u32) -> String {
        format!(
            "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{seq},\"response\":{{\"id\":\"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654\",\"object\":\"response\",\"created_at\":1741290958,\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,\"instructions\":\"You are a helpful assistant.\",\"max_output_tokens\":null,\"model\":\"gpt-4.1-2025-04-14\",\"output\":[],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"reasoning\":{{\"effort\":null,\"summary\":null}},\"store\":true,\"temperature\":1.0,\"text\":{{\"format\":{{\"type\":\"text\"}}}},\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":null,\"user\":null,\"metadata\":{{}}}}}}\n\n"
        )
    }

    const RESPONSES_DELTAS: &str = concat!(
        "event: response.output_item.added\n",
        "data: {\"type\":\"response.output_item.added\",\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "event: response.output_text.delta\n",
        "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\",\"logprobs\":[]}\n\n",
        "event: response.output_text.delta\n",
        "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"output_index\":0,\"content_index\":0,\"delta\":\" there\",\"logprobs\":[]}\n\n",
    );

    const RESPONSES_FAILED: &str = "{\"type\":\"response.failed\",\"sequence_number\":5,\"response\":{\"id\":\"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654\",\"object\":\"response\",\"created_at\":1741290958,\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed to generate a response.\"},\"incomplete_details\":null,\"instructions\":\"You are a helpful assistant.\",\"max_output_tokens\":null,\"model\":\"gpt-4.1-2025-04-14\",\"output\":[],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"reasoning\":{\"effort\":null,\"summary\":null},\"store\":true,\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":null,\"user\":null,\"metadata\":{}}}";

    #[wasm_bindgen_test(unsupported = test)]
    fn responses_stream_ending_in_failed() {
        let input = format!(
            "{}{}{RESPONSES_DELTAS}event: response.failed\ndata: {RESPONSES_FAILED}\n\n",
            responses_created("response.created", 0),
            responses_created("response.in_progress", 1),
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(Some("response.failed"), RESPONSES_FAILED)],
                usage: Usage::default(),
                events: 6,
                malformed: 0,
                // `"error":null` and `"usage":null` do not make a frame worth parsing.
                parsed: 1,
            },
        );
        // Without the event name, `"type":"response.failed"` is enough.
        let out = run(
            [format!("data: {RESPONSES_FAILED}\n\n").as_bytes()],
            DEFAULT_MAX_EVENT_BYTES,
        );
        assert_eq!(out.findings, vec![error(None, RESPONSES_FAILED)]);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn responses_completed_usage_and_incomplete_is_not_an_error() {
        let completed = concat!(
            "event: response.completed\n",
            "data: {\"type\":\"response.completed\",\"sequence_number\":7,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,\"output\":[{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Hi there\"}],\"role\":\"assistant\"}],\"usage\":{\"input_tokens\":37,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":11,\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":48},\"user\":null,\"metadata\":{}}}\n\n",
        );
        let input = format!(
            "{}{RESPONSES_DELTAS}{completed}",
            responses_created("response.created", 0)
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![],
                usage: usage(37, 11),
                events: 5,
                malformed: 0,
                parsed: 1,
            },
        );

        let incomplete = concat!(
            "event: response.incomplete\n",
            "data: {\"type\":\"response.incomplete\",\"sequence_number\":9,\"response\":{\"id\":\"resp_2\",\"object\":\"response\",\"status\":\"incomplete\",\"error\":null,\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[],\"usage\":{\"input_tokens\":12,\"output_tokens\":16,\"total_tokens\":28},\"user\":null,\"metadata\":{}}}\n\n",
        );
        let out = run([incomplete.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
        assert_eq!(out.findings, vec![]);
        assert_eq!(out.usage, usage(12, 16));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn responses_error_event() {
        let payload = "{\"type\":\"error\",\"code\":\"ERR_SOMETHING\",\"message\":\"Something went wrong\",\"param\":null,\"sequence_number\":1}";
        let input = format!(
            "{}event: error\ndata: {payload}\n\n",
            responses_created("response.created", 0)
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(Some("error"), payload)],
                usage: Usage::default(),
                events: 2,
                malformed: 0,
                parsed: 1,
            },
        );
        // `"type":"error"` alone, without the event name.
        let out = run([format!("data: {payload}\n\n").as_bytes()], 1024);
        assert_eq!(out.findings, vec![error(None, payload)]);
    }

    const GEMINI: &str = concat!(
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Here you go!\\n\\n1.  **English:** Hi\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"totalTokenCount\": 191,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
        "\r\n",
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\\n2.  **Spanish:** Hola\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 39,\"totalTokenCount\": 230,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
        "\r\n",
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"**Italian:** Ciao\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 44,\"totalTokenCount\": 235,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
        "\r\n",
    );

    #[wasm_bindgen_test(unsupported = test)]
    fn gemini_stream_usage_last_wins() {
        check_splits(
            GEMINI.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![],
                usage: usage(5, 44),
                events: 3,
                malformed: 0,
                parsed: 3,
            },
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn gemini_error_frame() {
        let payload = "{\"error\": {\"code\": 429, \"message\": \"Resource has been exhausted (e.g. check quota).\", \"status\": \"RESOURCE_EXHAUSTED\"}}";
        let first_frame = GEMINI.split("\r\n\r\n").next().unwrap_or_default();
        let input = format!("{first_frame}\r\n\r\ndata: {payload}\r\n\r\n");
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(None, payload)],
                usage: Usage {
                    input_tokens: Some(5),
                    output_tokens: None,
                },
                events: 2,
                malformed: 0,
                parsed: 2,
            },
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn line_endings_are_equivalent() {
        let lf = format!("event: error\ndata: {{\"type\": \"error\",\ndata:  \"error\": {{\"type\": \"api_error\"}}}}\n\n: keep-alive\n\ndata: {OPENAI_CHAT_ERROR}\n\n");
        let expected = Outcome {
            findings: vec![
                error(
                    Some("error"),
                    "{\"type\": \"error\",\n \"error\": {\"type\": \"api_error\"}}",
                ),
                error(None, OPENAI_CHAT_ERROR),
            ],
            usage: Usage::default(),
            events: 2,
            malformed: 0,
            parsed: 2,
        };
        for ending in ["\n", "\r\n", "\r"] {
            let input = lf.replace('\n', ending);
            check_splits(input.as_bytes(), DEFAULT_MAX_EVENT_BYTES, &expected);
        }
        // Mixed line endings, `\r\n` split across chunks (covered by `check_splits`), and a
        // lone `\r` followed by `\n` later on is two line ends.
        let mixed = format!("data: {OPENAI_CHAT_ERROR}\r\n\rdata: {OPENAI_CHAT_ERROR}\r\r\n");
        let out = run([mixed.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
        assert_eq!(out.findings.len(), 2);
        assert_eq!(out.events, 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn field_syntax_per_spec() {
        let input = concat!(
            "\u{FEFF}: comment line\n",
            "id: 7\n",
            "retry: 1000\n",
            "unknown: field\n",
            "Data: {\"error\": \"ignored: field names are case-sensitive\"}\n",
            "data:{\"error\":\n",
            "data\n",
            "data:  \"bad\"}\n",
            "event:error\n",
            "\n",
            // An event name without data is not dispatched, and is forgotten.
            "event: error\n",
            "\n",
            "data: {\"error\": \"second\"}\n",
            "\n",
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![
                    error(Some("error"), "{\"error\":\n\n \"bad\"}"),
                    error(None, "{\"error\": \"second\"}"),
                ],
                usage: Usage::default(),
                events: 2,
                malformed: 0,
                parsed: 2,
            },
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bom_only_at_the_start() {
        let with_bom = format!("\u{FEFF}data: {OPENAI_CHAT_ERROR}\n\n");
        check_splits(
            with_bom.as_bytes(),
            64,
            &run([&with_bom.as_bytes()[3..]], 64),
        );
        assert_eq!(run([with_bom.as_bytes()], 1024).findings.len(), 1);
        // A partial BOM is ordinary bytes: this line's field name is not `data`.
        let partial = format!("\u{EF}data: {OPENAI_CHAT_ERROR}\n\n");
        assert_eq!(run([partial.as_bytes()], 1024).events, 0);
        let bytes = [0xEF, 0xBB, b'd', b'a', b't', b'a', b':', b'1', b'\n', b'\n'];
        assert_eq!(run([&bytes[..]], 1024).events, 0);
        assert_eq!(run([&bytes[..1]], 1024).events, 0);
        // A BOM later in the stream is kept.
        let late = format!("data: 1\n\n\u{FEFF}data: {OPENAI_CHAT_ERROR}\n\n");
        assert_eq!(run([late.as_bytes()], 1024).events, 1);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn finish_flushes_the_last_event() {
        for tail in ["", "\n", "\r", "\r\n"] {
            let input = format!("data: 1\n\nevent: error\ndata: {ANTHROPIC_ERROR}{tail}");
            check_splits(
                input.as_bytes(),
                DEFAULT_MAX_EVENT_BYTES,
                &Outcome {
                    findings: vec![error(Some("error"), ANTHROPIC_ERROR)],
                    usage: Usage::default(),
                    events: 2,
                    malformed: 0,
                    parsed: 1,
                },
            );
        }
        // A stream cut inside a field name: `dat` is not `data`.
        let out = run([&b"data: 1\n\ndat"[..]], 64);
        assert_eq!(out.events, 1);
        // `data` without colon at the very end still makes an (empty) event.
        let out = run([&b"data"[..]], 64);
        assert_eq!(out.events, 1);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn what_is_not_an_error() {
        for data in [
            "{\"error\": null, \"choices\": []}",
            "{\"error\": \"\"}",
            "{\"error\": false}",
            "{\"choices\": [{\"error\": {\"message\": \"nested\"}}]}",
            "{\"type\": \"response.incomplete\", \"response\": {\"error\": null}}",
            "{\"text\": \"\\\"error\\\": {}\"}",
            "[{\"error\": {\"code\": 1}}]",
            "\"error\"",
            "[DONE]",
        ] {
            let input = format!("event: message\ndata: {data}\n\n");
            let out = run([input.as_bytes()], 1024);
            assert_eq!(out.findings, vec![], "{data}");
            assert_eq!(out.malformed, 0, "{data}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn malformed_json_is_counted_not_reported() {
        let input = concat!(
            "data: {\"usage\": {\"prompt_tokens\": 3,}}\n\n",
            "data: {\"error\": oops}\n\n",
            "data: {\"error\": {\"message\": \"x\"}} trailing\n\n",
            "data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 4, \"completion_tokens\": 2}}\n\n",
            "data: not json at all\n\n",
            "event: error\n",
            "data: upstream overloaded, retry later\n\n",
        );
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                // An event named `error` is reported whatever its data.
                findings: vec![error(Some("error"), "upstream overloaded, retry later")],
                usage: usage(4, 2),
                events: 6,
                malformed: 4,
                parsed: 5,
            },
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn usage_fields_are_lenient() {
        let input = concat!(
            "data: {\"usage\": {\"prompt_tokens\": 10, \"completion_tokens\": 3}}\n\n",
            // Wrong types are ignored field by field.
            "data: {\"usage\": {\"prompt_tokens\": \"11\", \"completion_tokens\": 4}}\n\n",
            "data: {\"usage\": [1, 2], \"message\": \"text\", \"response\": 5}\n\n",
            "data: {\"usage\": {\"prompt_tokens\": -1, \"completion_tokens\": 4.5}}\n\n",
        );
        let out = run([input.as_bytes()], 1024);
        assert_eq!(out.usage, usage(10, 4));
        assert_eq!(out.malformed, 0);
    }

    /// An error event longer than the limit is reported cut, with or without an event name.
    #[wasm_bindgen_test(unsupported = test)]
    fn long_error_events_are_truncated() {
        let long = "x".repeat(3000);
        let cases = [
            (
                Some("error"),
                format!("{{\"type\": \"error\", \"error\": {{\"type\": \"overloaded_error\", \"message\": \"{long}\"}}}}"),
            ),
            (
                None,
                format!("{{\"error\": {{\"message\": \"{long}\", \"type\": \"server_error\"}}}}"),
            ),
            (
                None,
                format!("{{\"id\": \"a\", \"meta\": {{\"k\": [1, \"]}}\"]}}, \"error\": \"{long}\"}}"),
            ),
            (
                None,
                format!("{{\"sequence_number\": 3, \"type\": \"error\", \"message\": \"{long}\"}}"),
            ),
        ];
        for max in [0, 1, 40, 120, 256] {
            for (event, payload) in &cases {
                let input = match event {
                    Some(name) => format!("event: {name}\ndata: {payload}\n\n"),
                    None => format!("data: {payload}\n\n"),
                };
                let head = &payload.as_bytes()[..max];
                // Whether the cut payload still shows it is an error.
                let visible = event.is_some()
                    || (head_shows_error(head) && head.windows(7).any(|w| w == b"\"error\""));
                let expected = Outcome {
                    findings: if visible {
                        vec![SseFinding::Error {
                            event: event.map(str::to_owned),
                            payload: head.to_vec(),
                            truncated: true,
                        }]
                    } else {
                        vec![]
                    },
                    usage: Usage::default(),
                    events: 1,
                    malformed: 0,
                    parsed: 0,
                };
                if max == 120 {
                    assert!(visible, "{payload:.60}");
                }
                check_splits(input.as_bytes(), max, &expected);
            }
        }
        // Long but not an error.
        let quiet =
            format!("data: {{\"choices\": [{{\"text\": \"{long}\"}}], \"error\": null}}\n\n");
        assert_eq!(run([quiet.as_bytes()], 100).findings, vec![]);
    }

    /// Usage placed after a long output is found wherever the limit cuts the event.
    #[wasm_bindgen_test(unsupported = test)]
    fn usage_after_the_limit_is_found() {
        let text = "lorem ipsum ".repeat(60);
        let responses = format!(
            "event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"id\":\"resp_1\",\"status\":\"completed\",\"error\":null,\"instructions\":\"{text}\",\"output\":[{{\"type\":\"message\",\"content\":[{{\"type\":\"output_text\",\"text\":\"{text}\"}}]}}],\"tools\":[{{\"type\":\"function\",\"name\":\"f\",\"parameters\":{{\"type\":\"object\",\"properties\":{{\"usage\":{{\"type\":\"string\"}}}}}}}}],\"usage\":{{\"input_tokens\":1200,\"input_tokens_details\":{{\"cached_tokens\":0}},\"output_tokens\":340,\"total_tokens\":1540}},\"user\":null,\"metadata\":{{\"usage\":\"tag\"}}}}}}\n\n"
        );
        let gemini = format!(
            "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{text}\"}}],\"role\": \"model\"}},\"finishReason\": \"STOP\",\"index\": 0}}],\"usageMetadata\": {{\"promptTokenCount\": 8,\"candidatesTokenCount\": 400,\"totalTokenCount\": 408}},\"modelVersion\": \"gemini-2.5-flash\"}}\r\n\r\n"
        );
        let mut rng = Rng(7);
        for (input, expected) in [(responses, usage(1200, 340)), (gemini, usage(8, 400))] {
            let len = input.len();
            for max in 0..len {
                let out = run([input.as_bytes()], max);
                assert_eq!(out.usage, expected, "max {max}");
                assert!(out.findings.is_empty());
                for max_piece in [1, 5, 40] {
                    let pieces = random_split(input.as_bytes(), &mut rng, max_piece);
                    let out = run(pieces.iter().copied(), max);
                    assert_eq!(out.usage, expected, "max {max}, pieces up to {max_piece}");
                }
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ten_megabyte_line_keeps_memory_bounded() {
        let max = 4096;
        let bound = 2 * max + MAX_EVENT_NAME_BYTES * 2 + USAGE_CAPTURE_BYTES * 2 + 64;
        let piece = vec![b'a'; 64 * 1024];
        for start in [
            &b"data: {\"error\": {\"message\": \""[..],
            b"",
            b"event: ",
            b": ",
        ] {
            let mut scanner = SseScanner::new(max);
            let mut findings = Vec::new();
            scanner.feed(start, &mut |f| findings.push(f));
            for _ in 0..160 {
                scanner.feed(&piece, &mut |f| findings.push(f));
                assert!(
                    scanner.retained_bytes() <= bound,
                    "{}",
                    scanner.retained_bytes()
                );
            }
            scanner.feed(b"\"}}\n\n", &mut |f| findings.push(f));
            scanner.finish(&mut |f| findings.push(f));
            if start.starts_with(b"data") {
                assert_eq!(scanner.events_seen(), 1);
                assert_eq!(findings.len(), 1);
                match &findings[0] {
                    SseFinding::Error {
                        payload, truncated, ..
                    } => {
                        assert!(*truncated);
                        assert_eq!(payload.len(), max);
                    }
                }
            } else {
                assert_eq!(scanner.events_seen(), 0);
                assert!(findings.is_empty());
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn garbage_never_panics_or_grows() {
        let max = 512;
        let bound = 2 * max + MAX_EVENT_NAME_BYTES * 2 + USAGE_CAPTURE_BYTES * 2 + 64;
        let mut rng = Rng(0xDEAD_BEEF);
        let alphabet = b"data:event:error\"usage{}[],: \r\n\n\n\xEF\xBB\xBF\xFF\x00";
        for round in 0..200 {
            let len = rng.below(4000);
            let input: Vec<u8> = (0..len)
                .map(|_| {
                    if round % 2 == 0 {
                        rng.next() as u8
                    } else {
                        alphabet[rng.below(alphabet.len())]
                    }
                })
                .collect();
            let mut scanner = SseScanner::new(max);
            for piece in random_split(&input, &mut rng, 100) {
                scanner.feed(piece, &mut |_| {});
                assert!(scanner.retained_bytes() <= bound);
            }
            scanner.finish(&mut |_| {});
        }
        // Fixtures with random bytes overwritten.
        for fixture in [OPENAI_CHAT, ANTHROPIC, GEMINI] {
            for _ in 0..200 {
                let mut input = fixture.as_bytes().to_vec();
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(input.len());
                    input[at] = alphabet[rng.below(alphabet.len())];
                }
                let pieces = random_split(&input, &mut rng, 50);
                let out = run(pieces.iter().copied(), 64);
                assert!(out.events <= 10);
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn event_names() {
        let long_name = "n".repeat(1000);
        let input = format!(
            "event: {long_name}\ndata: {OPENAI_CHAT_ERROR}\n\nevent: \u{FFFD}\ndata: {OPENAI_CHAT_ERROR}\n\nevent: error\nevent:\ndata: {OPENAI_CHAT_ERROR}\n\n"
        );
        let out = run([input.as_bytes()], 1024);
        let names: Vec<Option<String>> = out
            .findings
            .iter()
            .map(|SseFinding::Error { event, .. }| event.clone())
            .collect();
        assert_eq!(
            names,
            vec![
                Some("n".repeat(MAX_EVENT_NAME_BYTES)),
                Some("\u{FFFD}".to_owned()),
                None
            ]
        );
        let mut raw = b"event: \xFF\xFE\ndata: {\"type\":\"error\"}\n\n".to_vec();
        raw.extend_from_slice(b"event: error \ndata: x\n\n");
        let out = run([&raw[..]], 1024);
        assert_eq!(out.findings.len(), 2);
        assert_eq!(
            out.findings[0],
            SseFinding::Error {
                event: Some("\u{FFFD}\u{FFFD}".to_owned()),
                payload: b"{\"type\":\"error\"}".to_vec(),
                truncated: false,
            }
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn synthetic_openai_stream(bytes: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes + 512);
        let mut i = 0u64;
        while out.len() < bytes {
            out.extend_from_slice(
                format!(
                    "data: {{\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" tok{i}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
                )
                .as_bytes(),
            );
            i += 1;
        }
        out.extend_from_slice(b"data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":5000,\"total_tokens\":5019}}\n\ndata: [DONE]\n\n");
        out
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    #[ignore = "throughput measurement; run with --release --ignored --nocapture"]
    fn throughput() {
        let stream = synthetic_openai_stream(1 << 20);
        for chunk_size in [512, 4096, 16 * 1024] {
            let rounds = 200;
            let start = std::time::Instant::now();
            let mut events = 0;
            for _ in 0..rounds {
                let mut scanner = SseScanner::new(DEFAULT_MAX_EVENT_BYTES);
                for chunk in stream.chunks(chunk_size) {
                    scanner.feed(std::hint::black_box(chunk), &mut |_| {});
                }
                scanner.finish(&mut |_| {});
                assert_eq!(scanner.usage(), usage(19, 5000));
                assert_eq!(scanner.frames_parsed, 1);
                events = scanner.events_seen();
            }
            let secs = start.elapsed().as_secs_f64();
            let mb = (stream.len() * rounds) as f64 / 1e6;
            println!(
                "sse throughput: {:.0} MB/s ({chunk_size}-byte chunks, {events} events/MB, {:.0} ns/event)",
                mb / secs,
                secs * 1e9 / (events as f64 * rounds as f64)
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn preludes_are_not_content() {
        let mut scanner = SseScanner::default();
        let mut findings = Vec::new();
        scanner.feed(
            b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9}}}\n\nevent: ping\ndata: {}\n\n: keep-alive\n\n",
            &mut |f| findings.push(f),
        );
        assert_eq!(scanner.events_seen(), 2);
        assert_eq!(scanner.content_events_seen(), 0);
        assert_eq!(scanner.usage().input_tokens, Some(9));
        scanner.feed(
            b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
            &mut |f| findings.push(f),
        );
        assert_eq!(scanner.content_events_seen(), 1);
        assert_eq!(findings.len(), 1);
        assert_eq!(scanner.content_before_first_error(), Some(0));
        let mut openai = SseScanner::default();
        openai.feed(
            b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            &mut |_| {},
        );
        assert_eq!(openai.content_events_seen(), 1);
        openai.feed(
            b"data: {\"error\":{\"message\":\"Overloaded\"}}\n\n",
            &mut |_| {},
        );
        assert_eq!(openai.content_before_first_error(), Some(1));
    }
}
