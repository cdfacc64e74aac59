//! Event framing per the SSE spec, whatever the chunk boundaries, with bounded memory.

use super::frame::{head_shows_error, parse_frame, skip_ws, usage_after_marker, Usage};
use super::{
    SseFinding, BOM, DEFAULT_MAX_EVENT_BYTES, ERROR_MARKER, MAX_EVENT_NAME_BYTES,
    USAGE_CAPTURE_BYTES, USAGE_MARKER,
};
use memchr::memmem::Finder;

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
    pub(super) frames_parsed: u64,
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
        // Bedrock's stream exceptions as relays pass them on (`event: throttlingException`).
        let named_error =
            name == b"error" || name == b"response.failed" || name.ends_with(b"Exception");
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
    pub(super) fn retained_bytes(&self) -> usize {
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
