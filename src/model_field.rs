//! Finds the top-level `"model"` string of a JSON request body without building the body.
//!
//! LLM request bodies are mostly one large `messages` array, and the `model` key often comes
//! after it. [`ModelScanner`] is a resumable, validating JSON state machine fed chunk by chunk
//! as Envoy hands them over: it checks the whole grammar (strings, escapes, numbers, literals,
//! bracket matching, UTF-8), jumps through string contents eight bytes at a time, and never
//! copies the body. It reports the decoded value and the byte span of the value token, so a
//! caller can splice in a new value. Nested `model` keys (inside messages, tools, metadata) are
//! ignored. Anything that is not valid JSON is reported as such, so that it passes untouched.

use std::ops::Range;

/// Longest model name we accept; longer values are reported as [`Skip::ModelTooLong`].
pub const MAX_MODEL_LEN: usize = 256;
/// Deepest nesting accepted (serde_json's own default limit).
const MAX_DEPTH: u32 = 128;
/// Longest number or literal accepted.
const MAX_SCALAR: usize = 64;

/// The top-level `model` string found in a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelField {
    /// The decoded value (escapes resolved).
    pub value: String,
    /// Byte range of the value token in the whole body, quotes included.
    pub span: Range<usize>,
}

/// Why a body yields no usable `model`. The body must then pass through untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Skip {
    /// Not a JSON object (or not valid JSON).
    NotJson,
    /// A JSON object without a top-level `model` key.
    NoModel,
    /// The top-level `model` is not a string.
    NotString,
    /// Two top-level `model` keys: parsers disagree on which wins, so we touch neither.
    Duplicate,
    /// The model name is longer than [`MAX_MODEL_LEN`] or is not valid UTF-8 after unescaping.
    ModelTooLong,
}

impl Skip {
    /// Stable name used in stats and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Skip::NotJson => "not_json",
            Skip::NoModel => "no_model",
            Skip::NotString => "model_not_string",
            Skip::Duplicate => "duplicate_model",
            Skip::ModelTooLong => "model_invalid",
        }
    }
}

/// What a string being read is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Str {
    /// A key of the top-level object (compared with `model`).
    TopKey,
    /// The value of a top-level `model` key (decoded).
    Model,
    /// A key at a deeper level (skipped).
    Key,
    /// Any other string value (skipped).
    Value,
}

/// Where the scanner is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the root object.
    Start,
    /// A value is expected.
    Value,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    CommaOrEnd,
    /// Inside a string.
    InString(Str),
    /// Inside a number or literal.
    Scalar,
    /// After the root object: only whitespace may follow.
    Done,
    /// Not valid JSON (or not an object); terminal.
    Invalid,
}

/// Progress through an escape sequence inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// Just read `\`.
    Backslash,
    /// Reading the hex digits of `\uXXXX`: how many read so far and their value.
    Unicode {
        digits: u8,
        code: u32,
    },
}

/// Small fixed buffer for the key being read: only the target key matters, so longer keys are
/// not kept.
#[derive(Debug, Clone, Copy)]
struct KeyBuf {
    bytes: [u8; 24],
    len: u8,
    overflow: bool,
}

impl KeyBuf {
    const fn new() -> Self {
        Self {
            bytes: [0; 24],
            len: 0,
            overflow: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match self.bytes.get_mut(usize::from(self.len)) {
                Some(slot) if !self.overflow => {
                    *slot = b;
                    self.len += 1;
                }
                _ => self.overflow = true,
            }
        }
    }

    fn is(&self, key: &[u8]) -> bool {
        !self.overflow && self.bytes.get(..usize::from(self.len)) == Some(key)
    }
}

/// Resumable scanner for the top-level `model` key. Feed it every chunk in order, then call
/// [`ModelScanner::finish`].
#[derive(Debug, Clone)]
pub struct ModelScanner {
    /// The top-level key looked for (`model`, or e.g. `max_tokens` for [`find_top_level_u64`]).
    target: &'static [u8],
    state: State,
    /// Bytes consumed so far (offset of the next chunk in the whole body).
    offset: usize,
    /// Open containers.
    depth: u32,
    /// One bit per open container: 1 for an object, 0 for an array (bit 0 = the root).
    objects: u128,
    escape: Escape,
    /// A decoded high surrogate waiting for its low half.
    high_surrogate: Option<u32>,
    key: KeyBuf,
    /// Whether the value being read belongs to a top-level `model` key.
    value_is_model: bool,
    /// Decoded model value being read.
    value: Vec<u8>,
    value_start: usize,
    value_too_long: bool,
    /// The number or literal being read.
    scalar: [u8; MAX_SCALAR],
    scalar_len: usize,
    /// Where the target key's scalar value started, while it is being read.
    scalar_start: Option<usize>,
    /// The span of the target key's scalar value.
    found_scalar: Option<Range<usize>>,
    /// Bytes of a UTF-8 sequence split across chunks.
    utf8_carry: [u8; 4],
    utf8_carry_len: usize,
    found: Option<ModelField>,
    /// First problem with the model key itself (not string, too long, duplicate).
    model_problem: Option<Skip>,
    model_keys: u8,
}

impl Default for ModelScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelScanner {
    pub const fn new() -> Self {
        Self::with_key(b"model")
    }

    /// A scanner for another top-level key (values that are not strings are reported by span).
    pub const fn with_key(target: &'static [u8]) -> Self {
        Self {
            target,
            state: State::Start,
            offset: 0,
            depth: 0,
            objects: 0,
            escape: Escape::None,
            high_surrogate: None,
            key: KeyBuf::new(),
            value_is_model: false,
            value: Vec::new(),
            value_start: 0,
            value_too_long: false,
            scalar: [0; MAX_SCALAR],
            scalar_len: 0,
            scalar_start: None,
            found_scalar: None,
            utf8_carry: [0; 4],
            utf8_carry_len: 0,
            found: None,
            model_problem: None,
            model_keys: 0,
        }
    }

    /// The model found so far, if any. A later duplicate key or broken JSON can still turn the
    /// final answer into a [`Skip`]; use this only where a first answer is good enough.
    pub fn found(&self) -> Option<&ModelField> {
        self.found.as_ref()
    }

    /// Whether the body is already known not to be valid JSON.
    pub fn is_invalid(&self) -> bool {
        self.state == State::Invalid
    }

    /// Total bytes fed so far.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The answer once the whole body has been fed.
    pub fn finish(self) -> Result<ModelField, Skip> {
        if self.state != State::Done || self.utf8_carry_len != 0 {
            return Err(Skip::NotJson);
        }
        if let Some(problem) = self.model_problem {
            return Err(problem);
        }
        self.found.ok_or(Skip::NoModel)
    }

    /// Feeds the next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.state != State::Invalid && !self.valid_utf8(chunk) {
            self.state = State::Invalid;
        }
        let mut i = 0;
        while i < chunk.len() && self.state != State::Invalid {
            i = self.step(chunk, i);
        }
        self.offset += chunk.len();
    }

    /// Checks UTF-8 across chunk boundaries (a sequence may be split between chunks).
    fn valid_utf8(&mut self, chunk: &[u8]) -> bool {
        let mut rest = chunk;
        if self.utf8_carry_len > 0 {
            // Complete the carried sequence with the first bytes of this chunk.
            let mut seq: Vec<u8> = self
                .utf8_carry
                .iter()
                .take(self.utf8_carry_len)
                .copied()
                .collect();
            let total = seq.first().map_or(1, |lead| utf8_len(*lead));
            let take = total.saturating_sub(seq.len()).min(rest.len());
            seq.extend(rest.iter().take(take));
            rest = rest.get(take..).unwrap_or_default();
            match std::str::from_utf8(&seq) {
                Ok(_) => self.utf8_carry_len = 0,
                Err(e) if e.error_len().is_none() && seq.len() < total => {
                    self.store_carry(&seq);
                    return true;
                }
                Err(_) => return false,
            }
        }
        match std::str::from_utf8(rest) {
            Ok(_) => true,
            Err(e) if e.error_len().is_none() => {
                self.store_carry(rest.get(e.valid_up_to()..).unwrap_or_default());
                true
            }
            Err(_) => false,
        }
    }

    fn store_carry(&mut self, bytes: &[u8]) {
        self.utf8_carry_len = bytes.len().min(self.utf8_carry.len());
        for (dst, src) in self.utf8_carry.iter_mut().zip(bytes) {
            *dst = *src;
        }
    }

    /// Consumes input from `chunk[i..]` (at least one byte) and returns the new index.
    fn step(&mut self, chunk: &[u8], i: usize) -> usize {
        let Some(&b) = chunk.get(i) else {
            return chunk.len();
        };
        if let State::InString(kind) = self.state {
            return self.string(chunk, i, kind);
        }
        if self.state == State::Scalar {
            return self.scalar_byte(b, i);
        }
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            return i + 1;
        }
        match self.state {
            State::Start => {
                if b == b'{' {
                    self.open(b);
                } else {
                    self.state = State::Invalid;
                }
            }
            State::Value => self.value(b, i),
            State::ValueOrEnd => {
                if b == b']' {
                    self.close(b);
                } else {
                    self.value(b, i);
                }
            }
            State::KeyOrEnd | State::Key => match b {
                b'"' => self.start_key(),
                b'}' if self.state == State::KeyOrEnd => self.close(b),
                _ => self.state = State::Invalid,
            },
            State::Colon => {
                if b == b':' {
                    self.value_is_model = self.depth == 1 && self.key.is(self.target);
                    if self.value_is_model {
                        self.model_keys = self.model_keys.saturating_add(1);
                        if self.model_keys > 1 {
                            self.model_problem = Some(Skip::Duplicate);
                        }
                    }
                    self.state = State::Value;
                } else {
                    self.state = State::Invalid;
                }
            }
            State::CommaOrEnd => match b {
                b',' if self.in_object() => self.state = State::Key,
                b',' => self.state = State::Value,
                b'}' | b']' => self.close(b),
                _ => self.state = State::Invalid,
            },
            State::Done => self.state = State::Invalid,
            State::InString(_) | State::Scalar | State::Invalid => {}
        }
        i + 1
    }

    fn in_object(&self) -> bool {
        self.depth
            .checked_sub(1)
            .is_some_and(|top| self.objects & (1u128 << top) != 0)
    }

    fn start_key(&mut self) {
        self.key = KeyBuf::new();
        self.state = State::InString(if self.depth == 1 {
            Str::TopKey
        } else {
            Str::Key
        });
    }

    /// The first byte of a value.
    fn value(&mut self, b: u8, i: usize) {
        let is_model = std::mem::take(&mut self.value_is_model);
        match b {
            b'"' if is_model => {
                self.value.clear();
                self.value_too_long = false;
                self.value_start = self.offset + i;
                self.state = State::InString(Str::Model);
            }
            b'"' => self.state = State::InString(Str::Value),
            b'{' | b'[' => {
                if is_model {
                    self.model_problem.get_or_insert(Skip::NotString);
                }
                self.open(b);
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                if is_model {
                    self.model_problem.get_or_insert(Skip::NotString);
                    self.scalar_start = Some(self.offset + i);
                }
                self.scalar_len = 0;
                self.scalar_byte(b, i);
                self.state = State::Scalar;
            }
            _ => self.state = State::Invalid,
        }
    }

    /// Collects a number or literal; its end is the first structural or space byte.
    fn scalar_byte(&mut self, b: u8, i: usize) -> usize {
        match b {
            b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' => {
                let text = self.scalar.get(..self.scalar_len).unwrap_or_default();
                self.state = if valid_scalar(text) {
                    State::CommaOrEnd
                } else {
                    State::Invalid
                };
                if let Some(start) = self.scalar_start.take() {
                    self.found_scalar.get_or_insert(start..self.offset + i);
                }
                // Re-read the delimiter after the value.
                i
            }
            _ => {
                match self.scalar.get_mut(self.scalar_len) {
                    Some(slot) => *slot = b,
                    None => self.state = State::Invalid,
                }
                self.scalar_len += 1;
                i + 1
            }
        }
    }

    /// Pushes a container; deeper than [`MAX_DEPTH`] is refused.
    fn open(&mut self, b: u8) {
        if self.depth >= MAX_DEPTH {
            self.state = State::Invalid;
            return;
        }
        if b == b'{' {
            self.objects |= 1u128 << self.depth;
            self.state = State::KeyOrEnd;
        } else {
            self.objects &= !(1u128 << self.depth);
            self.state = State::ValueOrEnd;
        }
        self.depth += 1;
    }

    /// Pops a container, which must match the closing bracket.
    fn close(&mut self, b: u8) {
        if self.in_object() != (b == b'}') || self.depth == 0 {
            self.state = State::Invalid;
            return;
        }
        self.depth -= 1;
        self.state = if self.depth == 0 {
            State::Done
        } else {
            State::CommaOrEnd
        };
    }

    /// Reads string contents from `chunk[i..]`.
    fn string(&mut self, chunk: &[u8], i: usize, kind: Str) -> usize {
        let mut i = i;
        loop {
            if self.escape != Escape::None {
                let Some(&b) = chunk.get(i) else { return i };
                i += 1;
                match self.escape_byte(b) {
                    EscapeStep::Pending => {}
                    EscapeStep::Char(c) => {
                        let mut utf8 = [0u8; 4];
                        self.keep(kind, c.encode_utf8(&mut utf8).as_bytes());
                    }
                    EscapeStep::Invalid => {
                        self.state = State::Invalid;
                        return i;
                    }
                }
                continue;
            }
            let Some(rest) = chunk.get(i..) else {
                return chunk.len();
            };
            let Some(pos) = find_special(rest) else {
                if self.high_surrogate.is_some() && !rest.is_empty() {
                    self.state = State::Invalid;
                }
                self.keep(kind, rest);
                return chunk.len();
            };
            let plain = rest.get(..pos).unwrap_or_default();
            if self.high_surrogate.is_some() && !plain.is_empty() {
                // A high surrogate escape must be followed directly by its low half.
                self.state = State::Invalid;
                return i;
            }
            self.keep(kind, plain);
            i += pos + 1;
            match rest.get(pos) {
                Some(b'"') => {
                    if self.high_surrogate.is_some() {
                        self.state = State::Invalid;
                        return i;
                    }
                    self.end_string(kind, i);
                    return i;
                }
                Some(b'\\') => self.escape = Escape::Backslash,
                _ => {
                    // A raw control character: not allowed inside JSON strings.
                    self.state = State::Invalid;
                    return i;
                }
            }
        }
    }

    /// Keeps decoded string bytes where they matter (keys of the top level, the model value).
    fn keep(&mut self, kind: Str, bytes: &[u8]) {
        match kind {
            Str::TopKey => self.key.push(bytes),
            Str::Model => {
                if self.value.len() + bytes.len() > MAX_MODEL_LEN {
                    self.value_too_long = true;
                } else {
                    self.value.extend_from_slice(bytes);
                }
            }
            Str::Key | Str::Value => {}
        }
    }

    fn end_string(&mut self, kind: Str, i: usize) {
        match kind {
            Str::TopKey | Str::Key => self.state = State::Colon,
            Str::Model => {
                let end = self.offset + i;
                let value = std::mem::take(&mut self.value);
                match String::from_utf8(value) {
                    Ok(value) if !self.value_too_long => {
                        if self.found.is_none() {
                            self.found = Some(ModelField {
                                value,
                                span: self.value_start..end,
                            });
                        }
                    }
                    _ => {
                        self.model_problem.get_or_insert(Skip::ModelTooLong);
                    }
                }
                self.state = State::CommaOrEnd;
            }
            Str::Value => self.state = State::CommaOrEnd,
        }
    }

    /// Advances an escape sequence by one byte (the byte after `\`, or a hex digit).
    fn escape_byte(&mut self, b: u8) -> EscapeStep {
        match self.escape {
            Escape::None => EscapeStep::Invalid,
            Escape::Backslash => {
                let c = match b {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        self.escape = Escape::Unicode { digits: 0, code: 0 };
                        return EscapeStep::Pending;
                    }
                    _ => return EscapeStep::Invalid,
                };
                self.escape = Escape::None;
                self.char_or_surrogate_error(c)
            }
            Escape::Unicode { digits, code } => {
                let Some(d) = char::from(b).to_digit(16) else {
                    return EscapeStep::Invalid;
                };
                let code = code * 16 + d;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        digits: digits + 1,
                        code,
                    };
                    return EscapeStep::Pending;
                }
                self.escape = Escape::None;
                self.code_point(code)
            }
        }
    }

    /// A plain escaped char may not follow a lone high surrogate.
    fn char_or_surrogate_error(&mut self, c: char) -> EscapeStep {
        if self.high_surrogate.take().is_some() {
            return EscapeStep::Invalid;
        }
        EscapeStep::Char(c)
    }

    fn code_point(&mut self, code: u32) -> EscapeStep {
        match (self.high_surrogate.take(), code) {
            (None, 0xD800..=0xDBFF) => {
                self.high_surrogate = Some(code);
                EscapeStep::Pending
            }
            (Some(high), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                char::from_u32(c).map_or(EscapeStep::Invalid, EscapeStep::Char)
            }
            (Some(_), _) | (None, 0xDC00..=0xDFFF) => EscapeStep::Invalid,
            (None, code) => char::from_u32(code).map_or(EscapeStep::Invalid, EscapeStep::Char),
        }
    }
}

enum EscapeStep {
    Pending,
    Char(char),
    Invalid,
}

/// Length of the UTF-8 sequence a lead byte starts.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// A JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) or literal.
fn valid_scalar(text: &[u8]) -> bool {
    if matches!(text, b"true" | b"false" | b"null") {
        return true;
    }
    let mut rest = text.strip_prefix(b"-").unwrap_or(text);
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(rest);
    if int == 0 || (int > 1 && rest.first() == Some(&b'0')) {
        return false;
    }
    rest = rest.get(int..).unwrap_or_default();
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = digits(frac);
        if n == 0 {
            return false;
        }
        rest = frac.get(n..).unwrap_or_default();
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"+")
            .or_else(|| exp.strip_prefix(b"-"))
            .unwrap_or(exp);
        let n = digits(exp);
        if n == 0 {
            return false;
        }
        rest = exp.get(n..).unwrap_or_default();
    }
    rest.is_empty()
}

/// Index of the first `"`, `\\` or control byte (< 0x20), eight bytes at a time.
fn find_special(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        let quote = has_zero(v ^ (ONES * u64::from(b'"')));
        let backslash = has_zero(v ^ (ONES * u64::from(b'\\')));
        let control = v.wrapping_sub(ONES * 0x20) & !v & HIGHS;
        let mask = quote | backslash | control;
        if mask != 0 {
            // The lowest flagged byte is exact (borrows only run towards higher bytes).
            return Some(base + (mask.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| base + p)
}

/// The value of a top-level integer field (e.g. `max_tokens`) and its span, when the body is
/// valid JSON with exactly one such key.
pub fn find_top_level_u64(body: &[u8], key: &'static str) -> Option<(u64, Range<usize>)> {
    let mut scanner = ModelScanner::with_key(key.as_bytes());
    scanner.feed(body);
    if scanner.state != State::Done || scanner.model_keys != 1 {
        return None;
    }
    let span = scanner.found_scalar?;
    let text = std::str::from_utf8(body.get(span.clone())?).ok()?;
    Some((text.parse().ok()?, span))
}

/// Replaces `span` of `body` with `replacement`, keeping every other byte.
pub fn splice(body: &[u8], span: &Range<usize>, replacement: &[u8]) -> Vec<u8> {
    let head = body.get(..span.start).unwrap_or(body);
    let tail = body.get(span.end..).unwrap_or_default();
    let mut out = Vec::with_capacity(head.len() + replacement.len() + tail.len());
    out.extend_from_slice(head);
    out.extend_from_slice(replacement);
    out.extend_from_slice(tail);
    out
}

/// Replaces the value token at `field.span` with `new_value` as a JSON string; every other byte
/// of the body is kept as it was.
pub fn rewrite(body: &[u8], field: &ModelField, new_value: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(new_value.len() + 2);
    out.push(b'"');
    for c in new_value.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.push(b'"');
    splice(body, &field.span, &out)
}

/// Scans a complete body in one go.
pub fn find_model(body: &[u8]) -> Result<ModelField, Skip> {
    let mut scanner = ModelScanner::new();
    scanner.feed(body);
    scanner.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn scan_in_chunks(body: &[u8], size: usize) -> Result<ModelField, Skip> {
        let mut scanner = ModelScanner::new();
        for chunk in body.chunks(size) {
            scanner.feed(chunk);
        }
        scanner.finish()
    }

    /// Every chunking of `body` must give the same answer as one whole feed.
    fn scan_all_ways(body: &str) -> Result<ModelField, Skip> {
        let whole = find_model(body.as_bytes());
        for size in 1..=body.len().min(17) {
            assert_eq!(
                scan_in_chunks(body.as_bytes(), size),
                whole,
                "chunk size {size}"
            );
        }
        whole
    }

    fn value(body: &str) -> String {
        let field = scan_all_ways(body).unwrap();
        // The span must cover exactly the quoted token.
        let token = &body[field.span.clone()];
        assert!(token.starts_with('"') && token.ends_with('"'), "{token}");
        field.value
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn finds_model_first_or_last() {
        assert_eq!(value(r#"{"model":"gpt-4o","messages":[]}"#), "gpt-4o");
        assert_eq!(
            value(r#"{"messages":[{"role":"user","content":"hi"}],"model":"gpt-4o"}"#),
            "gpt-4o"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ignores_nested_model_keys() {
        let body = r#"{"messages":[{"model":"evil","content":"{\"model\":\"x\"}"}],
            "metadata":{"model":"nested"},"tools":[{"function":{"model":"t"}}],"model":"real"}"#;
        assert_eq!(value(body), "real");
        let nested_only = r#"{"metadata":{"model":"nested"},"m":"model"}"#;
        assert_eq!(scan_all_ways(nested_only), Err(Skip::NoModel));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn handles_whitespace_escapes_and_unicode() {
        assert_eq!(value(" \r\n{ \"model\" \t:\n \"a\\\"b\" } "), "a\"b");
        assert_eq!(value(r#"{"mod\u0065l":"x"}"#), "x");
        assert_eq!(value(r#"{"model":"caf\u00e9-\ud83d\ude00"}"#), "café-😀");
        assert_eq!(value("{\"model\":\"模型-1\"}"), "模型-1");
        assert_eq!(value(r#"{"a":"\\","model":"m"}"#), "m");
        assert_eq!(value(r#"{"a":"x\\\"model\":\"no","model":"yes"}"#), "yes");
        // serde_json (and Python's json) refuse a byte order mark; so do we.
        assert_eq!(
            scan_all_ways("\u{feff}{\"model\":\"bom\"}"),
            Err(Skip::NotJson)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn span_points_at_the_value_token() {
        let body = r#"{"messages":[], "model" : "gpt-4o" }"#;
        let field = find_model(body.as_bytes()).unwrap();
        assert_eq!(&body[field.span], "\"gpt-4o\"");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rejects_what_it_cannot_trust() {
        assert_eq!(scan_all_ways(""), Err(Skip::NotJson));
        assert_eq!(scan_all_ways("model=gpt-4o"), Err(Skip::NotJson));
        assert_eq!(scan_all_ways(r#"["model","x"]"#), Err(Skip::NotJson));
        assert_eq!(scan_all_ways(r#"{"model":"x""#), Err(Skip::NotJson));
        assert_eq!(
            scan_all_ways(r#"{"model":"x"} trailing"#),
            Err(Skip::NotJson)
        );
        assert_eq!(
            scan_all_ways(r#"{"a":[1,2},"model":"x"}"#),
            Err(Skip::NotJson)
        );
        assert_eq!(scan_all_ways(r#"{"model":"x",}"#), Err(Skip::NotJson));
        assert_eq!(scan_all_ways(r#"{"model":"bad\q"}"#), Err(Skip::NotJson));
        assert_eq!(scan_all_ways(r#"{"model":"\ud800"}"#), Err(Skip::NotJson));
        assert_eq!(
            scan_all_ways(r#"{"a":"\ud800x","model":"m"}"#),
            Err(Skip::NotJson)
        );
        assert_eq!(
            scan_all_ways(r#"{"a":[1x],"model":"m"}"#),
            Err(Skip::NotJson)
        );
        assert_eq!(
            scan_all_ways(r#"{"a":{"b" 1},"model":"m"}"#),
            Err(Skip::NotJson)
        );
        assert_eq!(scan_all_ways(r#"{"a":01,"model":"m"}"#), Err(Skip::NotJson));
        assert_eq!(
            scan_all_ways("{\"a\":\"\u{1}\",\"model\":\"m\"}"),
            Err(Skip::NotJson)
        );
        assert_eq!(
            scan_in_chunks(b"{\"a\":\"\xff\",\"model\":\"m\"}", 3),
            Err(Skip::NotJson)
        );
        assert_eq!(
            value(r#"{"a":[1,-2.5e+3,true,null,{"x":[]}],"model":"m"}"#),
            "m"
        );
        assert_eq!(scan_all_ways(r#"{"model":"\udc00"}"#), Err(Skip::NotJson));
        assert_eq!(scan_all_ways("{\"model\":\"a\nb\"}"), Err(Skip::NotJson));
        assert_eq!(scan_all_ways(r#"{"model":42}"#), Err(Skip::NotString));
        assert_eq!(scan_all_ways(r#"{"model":null}"#), Err(Skip::NotString));
        assert_eq!(
            scan_all_ways(r#"{"model":{"name":"x"}}"#),
            Err(Skip::NotString)
        );
        assert_eq!(
            scan_all_ways(r#"{"model":"a","model":"b"}"#),
            Err(Skip::Duplicate)
        );
        assert_eq!(scan_all_ways(r#"{}"#), Err(Skip::NoModel));
        let long = format!(r#"{{"model":"{}"}}"#, "m".repeat(MAX_MODEL_LEN + 1));
        assert_eq!(scan_all_ways(&long), Err(Skip::ModelTooLong));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn model_after_large_messages() {
        let content = "x\\\"{[".repeat(20_000);
        let body = format!(
            r#"{{"messages":[{{"role":"user","content":"{content}"}}],"stream":true,"model":"after"}}"#
        );
        for size in [1, 7, 4096, 65536] {
            assert_eq!(
                scan_in_chunks(body.as_bytes(), size).unwrap().value,
                "after"
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn finds_top_level_integers_for_clamping() {
        let body = br#"{"messages":[{"max_tokens":5}],"max_tokens": 4096 ,"model":"m"}"#;
        let (value, span) = find_top_level_u64(body, "max_tokens").unwrap();
        assert_eq!(value, 4096);
        assert_eq!(&body[span.clone()], b"4096");
        let out = splice(body, &span, b"1000");
        assert_eq!(find_top_level_u64(&out, "max_tokens").unwrap().0, 1000);
        assert_eq!(find_model(&out).unwrap().value, "m");
        assert_eq!(
            find_top_level_u64(br#"{"max_tokens":"5"}"#, "max_tokens"),
            None
        );
        assert_eq!(
            find_top_level_u64(br#"{"max_tokens":1,"max_tokens":2}"#, "max_tokens"),
            None
        );
        assert_eq!(
            find_top_level_u64(br#"{"max_tokens":1.5}"#, "max_tokens"),
            None
        );
        assert_eq!(find_top_level_u64(br#"{"a":1}"#, "max_tokens"), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rewrite_changes_only_the_value() {
        let body = br#"{"messages":[{"model":"x"}], "model" : "gpt-4o" ,"stream":true}"#;
        let field = find_model(body).unwrap();
        let out = rewrite(body, &field, "claude-\"q\"\n");
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"messages":[{"model":"x"}], "model" : "claude-\"q\"\u000a" ,"stream":true}"#
        );
        assert_eq!(find_model(&out).unwrap().value, "claude-\"q\"\n");
    }

    /// Differential fuzzing against serde_json: random structured bodies and byte mutations;
    /// whenever serde_json reads a top-level string `model` (without duplicate keys) the scanner
    /// must find the same value, whenever the scanner finds one serde_json must agree, and a
    /// rewrite must change nothing but the value. `LLMFB_FUZZ_ITERS` runs it longer.
    #[wasm_bindgen_test(unsupported = test)]
    fn fuzz_scanner_and_rewrite_against_serde_json() {
        let iterations: usize = option_env!("LLMFB_FUZZ_ITERS")
            .and_then(|n| n.parse().ok())
            .unwrap_or(4000);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let atoms = [
            r#""model""#,
            r#""m\u006fdel""#,
            r#""gpt-4o""#,
            r#""a\"b""#,
            r#""\\""#,
            "1",
            "-2.5e3",
            "true",
            "null",
            "[]",
            "{}",
            r#""\ud83d\ude00""#,
            r#""模型""#,
            " ",
            "\n",
        ];
        for _ in 0..iterations {
            // A random JSON-ish object built from atoms, sometimes with a top-level model.
            let mut body = String::from("{");
            let fields = (next() % 5) as usize;
            for i in 0..fields {
                if i > 0 {
                    body.push(',');
                }
                let key = atoms[(next() % 3) as usize];
                body.push_str(key);
                body.push(':');
                match next() % 4 {
                    0 => body.push_str(atoms[(next() % atoms.len() as u64) as usize]),
                    1 => body.push_str(&format!(r#"[{{"model":{}}}]"#, atoms[2])),
                    2 => body.push_str(r#"{"model":"x","k":[1,{}]}"#),
                    _ => body.push_str(atoms[2]),
                }
            }
            body.push('}');
            let mut bytes = body.into_bytes();
            if next() % 3 == 0 && !bytes.is_empty() {
                let i = (next() % bytes.len() as u64) as usize;
                bytes[i] = (next() % 128) as u8;
            }
            let ours = find_model(&bytes);
            let theirs: Option<serde_json::Map<String, serde_json::Value>> =
                serde_json::from_slice(&bytes).ok();
            let duplicate = ours == Err(Skip::Duplicate);
            if let (Some(map), false) = (&theirs, duplicate) {
                match (map.get("model"), &ours) {
                    (Some(serde_json::Value::String(v)), Ok(field)) => assert_eq!(&field.value, v),
                    (Some(serde_json::Value::String(_)), Err(e)) => {
                        assert_eq!(
                            *e,
                            Skip::ModelTooLong,
                            "{:?}",
                            String::from_utf8_lossy(&bytes)
                        )
                    }
                    (_, Ok(field)) => {
                        panic!("found {field:?} in {:?}", String::from_utf8_lossy(&bytes))
                    }
                    _ => {}
                }
            }
            if let Ok(field) = &ours {
                assert!(
                    theirs.is_some() || duplicate,
                    "{:?}",
                    String::from_utf8_lossy(&bytes)
                );
                let out = rewrite(&bytes, field, "new-model");
                assert_eq!(&out[..field.span.start], &bytes[..field.span.start]);
                assert_eq!(
                    &out[out.len() - (bytes.len() - field.span.end)..],
                    &bytes[field.span.end..]
                );
                assert_eq!(find_model(&out).unwrap().value, "new-model");
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn found_is_available_before_the_end() {
        let mut scanner = ModelScanner::new();
        scanner.feed(br#"{"model":"early","messages":["#);
        assert_eq!(scanner.found().map(|f| f.value.as_str()), Some("early"));
    }
}
