//! Finds the top-level `"model"` string of a JSON request body without building the body.
//!
//! LLM request bodies are mostly one large `messages` array, and the `model` key often comes
//! after it. [`ModelScanner`] is a resumable, validating JSON state machine fed chunk by chunk
//! as Envoy hands them over: it checks the grammar (strings, escapes, numbers, literals,
//! bracket matching), jumps through string contents eight bytes at a time, and never copies
//! the body. It reports the decoded value and the byte span of the value token, so a caller can
//! splice in a new value. Nested `model` keys (inside messages, tools, metadata) are ignored.
//!
//! # What is read
//!
//! The scanner reads the body *leniently* where that cannot change which key is top-level, so
//! that trouble somewhere else in a body does not cost the request its routing:
//!
//! - **Strings other than the model value** may hold bytes that are not UTF-8 and lone
//!   surrogate escapes (`"\ud800"`, a high half not followed by its low half, a low half
//!   alone). They are still strings: they end at the first unescaped `"`, every escape must be
//!   one of JSON's, and raw control bytes are refused. A top-level key that holds either is not
//!   `model`.
//! - **Nesting** has no depth limit. The depth is a counter; the kind of the first 128 levels
//!   (object or array) is kept in a 128-bit mask and checked as before. Below that, containers
//!   are counted but not typed: the closing bracket is not checked against the opening one,
//!   and values may be separated by `,` or `:` in any order (`[1:2]` passes there; a key is
//!   read as a string value). After `{` a key or `}` must still follow, and strings, escapes
//!   and scalars are checked as everywhere. Brackets inside strings never count, so the depth
//!   is exact and which key is top-level is still certain.
//!
//! Everything else is strict JSON (RFC 8259), as serde_json reads it. So the scanner accepts
//! some bodies serde_json refuses (it refuses invalid UTF-8 and lone surrogates anywhere, and
//! nesting deeper than 128), and on every body a lenient reader accepts (one that decodes bad
//! UTF-8 and lone surrogates into U+FFFD, with no depth limit) it finds the same top-level
//! `model` or refuses the body. Bytes outside strings are ASCII or the body is not JSON, so a
//! reader that replaces bad UTF-8 the standard way (never swallowing an ASCII byte after a
//! broken sequence, as Rust, Python, Go and WHATWG decoders do) sees the same string
//! boundaries; a non-conforming decoder that swallows the `"` after a broken lead byte would
//! not, and would read such a body differently from every conforming one.
//!
//! Still refused: a body that is not a JSON object, is cut short or has trailing bytes, breaks
//! the grammar anywhere, or holds a number or literal longer than 64 bytes ([`Skip::NotJson`]);
//! an object without a top-level `model` ([`Skip::NoModel`]); two top-level `model` keys
//! ([`Skip::Duplicate`]); a `model` that is not a string ([`Skip::NotString`]); a `model` string
//! that is too long, holds bytes that are not UTF-8 or a lone surrogate ([`Skip::ModelTooLong`],
//! counted as `model_invalid`).

use std::ops::Range;

/// The character a one-letter JSON escape (`\n`, `\"`, ...) stands for; `None` for `u` and
/// anything that is not an escape.
pub(crate) fn simple_escape(byte: u8) -> Option<char> {
    Some(match byte {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// Longest model name we accept; longer values are reported as [`Skip::ModelTooLong`].
pub const MAX_MODEL_LEN: usize = 256;
/// Levels whose kind (object or array) is kept: one bit each in a `u128`. Deeper levels are
/// only counted.
const TYPED_DEPTH: u64 = 128;
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
    /// The model name is longer than [`MAX_MODEL_LEN`] or is not valid UTF-8 after unescaping
    /// (bytes that are not UTF-8, a lone surrogate escape).
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
    /// Too long to keep, or holding a lone surrogate: it cannot be the target.
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

    /// Marks the key as none that is looked for (it holds a lone surrogate).
    fn poison(&mut self) {
        self.overflow = true;
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
    /// Open containers, however deep.
    depth: u64,
    /// One bit per open container of the first [`TYPED_DEPTH`] levels: 1 for an object, 0 for
    /// an array (bit 0 = the root).
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
    /// The model value is too long, or holds a lone surrogate escape.
    value_unusable: bool,
    /// The number or literal being read.
    scalar: [u8; MAX_SCALAR],
    scalar_len: usize,
    /// Where the target key's scalar value started, while it is being read.
    scalar_start: Option<usize>,
    /// The span of the target key's scalar value.
    found_scalar: Option<Range<usize>>,
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
            value_unusable: false,
            scalar: [0; MAX_SCALAR],
            scalar_len: 0,
            scalar_start: None,
            found_scalar: None,
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
        if self.state != State::Done {
            return Err(Skip::NotJson);
        }
        if let Some(problem) = self.model_problem {
            return Err(problem);
        }
        self.found.ok_or(Skip::NoModel)
    }

    /// Feeds the next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut i = 0;
        while i < chunk.len() && self.state != State::Invalid {
            i = self.step(chunk, i);
        }
        self.offset += chunk.len();
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
            State::CommaOrEnd => match (b, self.container()) {
                (b',', Some(true)) => self.state = State::Key,
                // In an array, or below the typed levels: the next key or value.
                (b',', _) => self.state = State::Value,
                // Below the typed levels a key was read as a value; its colon follows.
                (b':', None) => self.state = State::Value,
                (b'}' | b']', _) => self.close(b),
                _ => self.state = State::Invalid,
            },
            State::Done => self.state = State::Invalid,
            State::InString(_) | State::Scalar | State::Invalid => {}
        }
        i + 1
    }

    /// The kind of the innermost open container: `Some(true)` for an object, `Some(false)` for
    /// an array (or nothing open), `None` below the typed levels.
    fn container(&self) -> Option<bool> {
        let Some(top) = self.depth.checked_sub(1) else {
            return Some(false);
        };
        level_bit(top).map(|bit| self.objects & bit != 0)
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
                self.value_unusable = false;
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

    /// Pushes a container (its kind is kept for the first [`TYPED_DEPTH`] levels).
    fn open(&mut self, b: u8) {
        let bit = level_bit(self.depth).unwrap_or(0);
        if b == b'{' {
            self.objects |= bit;
            self.state = State::KeyOrEnd;
        } else {
            self.objects &= !bit;
            self.state = State::ValueOrEnd;
        }
        self.depth = self.depth.saturating_add(1);
    }

    /// Pops a container; a typed one must match the closing bracket.
    fn close(&mut self, b: u8) {
        let matches = self.container().is_none_or(|object| object == (b == b'}'));
        if !matches || self.depth == 0 {
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
                match self.escape_byte(kind, b) {
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
                if !rest.is_empty() {
                    self.lone_high_surrogate(kind);
                }
                self.keep(kind, rest);
                return chunk.len();
            };
            let plain = rest.get(..pos).unwrap_or_default();
            if !plain.is_empty() {
                // A high surrogate escape not followed directly by its low half is alone.
                self.lone_high_surrogate(kind);
            }
            self.keep(kind, plain);
            i += pos + 1;
            match rest.get(pos) {
                Some(b'"') => {
                    self.lone_high_surrogate(kind);
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
                    self.value_unusable = true;
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
                    Ok(value) if !self.value_unusable => {
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
    fn escape_byte(&mut self, kind: Str, b: u8) -> EscapeStep {
        match self.escape {
            Escape::None => EscapeStep::Invalid,
            Escape::Backslash => {
                let c = match (b, simple_escape(b)) {
                    (_, Some(c)) => c,
                    (b'u', None) => {
                        self.escape = Escape::Unicode { digits: 0, code: 0 };
                        return EscapeStep::Pending;
                    }
                    _ => return EscapeStep::Invalid,
                };
                self.escape = Escape::None;
                self.lone_high_surrogate(kind);
                EscapeStep::Char(c)
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
                self.code_point(kind, code)
            }
        }
    }

    /// A pending high surrogate escape that is not followed by its low half is alone.
    fn lone_high_surrogate(&mut self, kind: Str) {
        if self.high_surrogate.take().is_some() {
            self.lone_surrogate(kind);
        }
    }

    /// A lone surrogate escape: fine in a string that is skipped, but a key holding one is not
    /// the target and a model value holding one is unusable.
    fn lone_surrogate(&mut self, kind: Str) {
        match kind {
            Str::TopKey => self.key.poison(),
            Str::Model => self.value_unusable = true,
            Str::Key | Str::Value => {}
        }
    }

    fn code_point(&mut self, kind: Str, code: u32) -> EscapeStep {
        if let Some(high) = self.high_surrogate.take() {
            if let 0xDC00..=0xDFFF = code {
                let c = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                return char::from_u32(c).map_or(EscapeStep::Invalid, EscapeStep::Char);
            }
            self.lone_surrogate(kind);
        }
        match code {
            0xD800..=0xDBFF => {
                self.high_surrogate = Some(code);
                EscapeStep::Pending
            }
            0xDC00..=0xDFFF => {
                self.lone_surrogate(kind);
                EscapeStep::Pending
            }
            code => char::from_u32(code).map_or(EscapeStep::Invalid, EscapeStep::Char),
        }
    }
}

/// The bit of a typed level in [`ModelScanner::objects`], `None` below the typed levels.
fn level_bit(level: u64) -> Option<u128> {
    if level < TYPED_DEPTH {
        u32::try_from(level).ok().and_then(|l| 1u128.checked_shl(l))
    } else {
        None
    }
}

enum EscapeStep {
    /// Nothing to keep (yet).
    Pending,
    Char(char),
    Invalid,
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

/// Index of the first `"`, `\\` or control byte (< 0x20): where a string's plain run ends.
/// Sixteen bytes at a time with SSE2 natively (every x86_64 has it) and with `simd128` in the
/// `.wasm` (`.cargo/config.toml`; Envoy's V8 runs it): about twice the eight-byte scan below on
/// a chat body (`cargo bench --bench hot_paths`, `find_model`).
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "sse2"),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
fn find_special(bytes: &[u8]) -> Option<usize> {
    let mut blocks = bytes.chunks_exact(16);
    let mut base = 0;
    for block in blocks.by_ref() {
        let mut word = [0u8; 16];
        word.copy_from_slice(block);
        // SAFETY: `special_mask` needs only the vector feature this build has (`cfg` above)
        // and takes no pointers. (Where that feature is on for the whole build, as `simd128`
        // is, the call needs no `unsafe`.)
        #[allow(unsafe_code, unused_unsafe)]
        let mask = unsafe { special_mask(u128::from_le_bytes(word)) };
        if mask != 0 {
            return Some(base + mask.trailing_zeros() as usize);
        }
        base += 16;
    }
    blocks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| base + p)
}

/// Bit `i` set where byte `i` of the 16 (little-endian) is `"`, `\\` or below 0x20.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn special_mask(block: u128) -> u32 {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };
    let v = _mm_set_epi64x((block >> 64) as i64, block as i64);
    // `min(v, 0x1f) == v` is `v <= 0x1f`, unsigned.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
}

/// Bit `i` set where byte `i` of the 16 (little-endian) is `"`, `\\` or below 0x20.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[target_feature(enable = "simd128")]
fn special_mask(block: u128) -> u32 {
    use core::arch::wasm32::{u64x2, u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_or};
    let v = u64x2(block as u64, (block >> 64) as u64);
    let control = u8x16_lt(v, u8x16_splat(0x20));
    let quote = u8x16_eq(v, u8x16_splat(b'"'));
    let backslash = u8x16_eq(v, u8x16_splat(b'\\'));
    u32::from(u8x16_bitmask(v128_or(v128_or(quote, backslash), control)))
}

/// Index of the first `"`, `\\` or control byte (< 0x20), eight bytes at a time.
#[cfg(not(any(
    all(target_arch = "x86_64", target_feature = "sse2"),
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
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
        // A model value with a lone surrogate is read but cannot be used.
        assert_eq!(
            scan_all_ways(r#"{"model":"\ud800"}"#),
            Err(Skip::ModelTooLong)
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
        // Bytes that are not ASCII outside strings are not JSON.
        assert_eq!(
            scan_in_chunks(b"{\"a\":\xff,\"model\":\"m\"}", 3),
            Err(Skip::NotJson)
        );
        assert_eq!(
            value(r#"{"a":[1,-2.5e+3,true,null,{"x":[]}],"model":"m"}"#),
            "m"
        );
        assert_eq!(
            scan_all_ways(r#"{"model":"\udc00"}"#),
            Err(Skip::ModelTooLong)
        );
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

    /// Every chunking of a byte body must give the same answer as one whole feed.
    fn scan_bytes_all_ways(body: &[u8]) -> Result<ModelField, Skip> {
        let whole = find_model(body);
        for size in 1..=body.len().min(17) {
            assert_eq!(scan_in_chunks(body, size), whole, "chunk size {size}");
        }
        whole
    }

    fn model_of(body: &[u8]) -> Result<String, Skip> {
        scan_bytes_all_ways(body).map(|field| {
            assert_eq!(
                &body[field.span.clone()],
                format!("\"{}\"", field.value).as_bytes()
            );
            field.value
        })
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_the_model_despite_invalid_utf8_in_other_strings() {
        let ok = || Ok("gpt-4o".to_owned());
        // A lone byte, a sequence cut by the closing quote, an overlong `/`, an encoded
        // surrogate, a lone continuation byte: all only inside other strings.
        for bad in [
            &b"\xff"[..],
            b"\xc3",
            b"caf\xc3\"",
            b"\xe2\x82",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\x80\x80",
            b"\xf4\x90\x80\x80",
        ] {
            // `caf\xc3"` is cut by its own quote: keep it a well-formed string.
            let bad: Vec<u8> = bad.iter().copied().filter(|&b| b != b'"').collect();
            let content = [&b"hello "[..], &bad, b" world"].concat();
            let message = [&br#"{"role":"user","content":""#[..], &content, br#""}"#].concat();
            let after = [
                &br#"{"messages":["#[..],
                &message,
                br#"],"model":"gpt-4o"}"#,
            ]
            .concat();
            let before = [&br#"{"model":"gpt-4o","messages":["#[..], &message, b"]}"].concat();
            assert_eq!(model_of(&after), ok(), "{after:?}");
            assert_eq!(model_of(&before), ok(), "{before:?}");
            // In a nested key and in another top-level key.
            let keys = [
                &br#"{"metadata":{""#[..],
                &bad,
                br#"":1},""#,
                &bad,
                br#"":2,"model":"gpt-4o"}"#,
            ]
            .concat();
            assert_eq!(model_of(&keys), ok(), "{keys:?}");
        }
        // A top-level key with a bad byte is some other key.
        assert_eq!(model_of(b"{\"mod\xffl\":\"x\"}"), Err(Skip::NoModel));
        assert_eq!(model_of(b"{\"model\xff\":\"x\"}"), Err(Skip::NoModel));
        assert_eq!(
            model_of(b"{\"model\xff\":\"x\",\"model\":\"y\"}"),
            Ok("y".to_owned())
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_the_model_despite_lone_surrogates_in_other_strings() {
        for lone in [
            r"\ud800",
            r"\udc00",
            r"x\ud83d",
            r"\ude00x",
            r"\ud800\u0041",
            r"\ud800\n",
            r"\ud800\ud800\udc00",
            r"\ud83d\ude00\udc00",
            r"\udbff\\",
        ] {
            for body in [
                format!(
                    r#"{{"messages":[{{"role":"user","content":"{lone}"}}],"model":"gpt-4o"}}"#
                ),
                format!(r#"{{"model":"gpt-4o","user":"{lone}"}}"#),
                format!(r#"{{"{lone}":1,"meta":{{"{lone}":"{lone}"}},"model":"gpt-4o"}}"#),
            ] {
                assert_eq!(model_of(body.as_bytes()), Ok("gpt-4o".to_owned()), "{body}");
            }
        }
        // A top-level key holding a lone surrogate is not `model`, even if the rest spells it.
        assert_eq!(model_of(br#"{"model\ud800":"x"}"#), Err(Skip::NoModel));
        assert_eq!(model_of(br#"{"mod\ud800el":"x"}"#), Err(Skip::NoModel));
        assert_eq!(
            model_of(br#"{"\udc00model":"x","model":"m"}"#),
            Ok("m".to_owned())
        );
        // A real pair is one character.
        assert_eq!(value(r#"{"model":"\ud83d\ude00"}"#), "😀");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn still_refuses_a_model_it_cannot_use() {
        for bad in [
            &br#"{"model":"\ud800"}"#[..],
            br#"{"model":"gpt\udc00"}"#,
            br#"{"model":"\ud83d\u0041"}"#,
            br#"{"model":"\ud83d"}"#,
            br#"{"messages":[],"model":"\ude00\ud83d"}"#,
            b"{\"model\":\"\xff\"}",
            b"{\"model\":\"gpt-\xc3\"}",
            b"{\"model\":\"\xed\xa0\x80\"}",
            b"{\"messages\":[\"\xff\"],\"model\":\"\xc0\xaf\"}",
        ] {
            assert_eq!(model_of(bad), Err(Skip::ModelTooLong), "{bad:?}");
        }
        // Still not JSON: bad bytes outside strings, cut bodies, broken grammar next to bad
        // strings, bad escapes.
        for bad in [
            &b"\xff{\"model\":\"m\"}"[..],
            b"{\"model\":\"m\"}\xff",
            b"{\"a\":\"\xff\",\"model\":\"gpt-4o\"",
            b"{\"a\":\"\xff\",\"model\":\"gpt",
            b"{\"a\":\"\xff\",\"model\":\"m\",}",
            br#"{"a":"\ud800","model":"m"]"#,
            br#"{"a":"\ud800\x","model":"m"}"#,
            br#"{"a":"\ud800\u12","model":"m"}"#,
            b"{\"a\":\"\xff\x01\",\"model\":\"m\"}",
        ] {
            assert_eq!(model_of(bad), Err(Skip::NotJson), "{bad:?}");
        }
        // Duplicates and non-strings, next to bad strings.
        assert_eq!(
            model_of(b"{\"model\":\"a\",\"x\":\"\xff\",\"model\":\"b\"}"),
            Err(Skip::Duplicate)
        );
        assert_eq!(
            model_of(br#"{"model":"a","x":"\ud800","m\u006fdel":"b"}"#),
            Err(Skip::Duplicate)
        );
        assert_eq!(
            model_of(b"{\"x\":\"\xff\",\"model\":[\"\xff\"]}"),
            Err(Skip::NotString)
        );
    }

    /// `depth` nested containers of the given kinds (cycled), with `leaf` inside.
    fn nested(depth: usize, kinds: &str, leaf: &str) -> String {
        let mut open = String::new();
        let mut close = String::new();
        for kind in kinds.chars().cycle().take(depth) {
            match kind {
                '[' => {
                    open.push('[');
                    close.insert(0, ']');
                }
                _ => {
                    open.push_str(r#"{"k\"[":"#);
                    close.insert(0, '}');
                }
            }
        }
        format!("{open}{leaf}{close}")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_the_model_past_deep_nesting_elsewhere() {
        let deep = nested(10_000, "[", "");
        let after = format!(r#"{{"messages": {deep}, "model": "gpt-4o"}}"#);
        let before = format!(r#"{{"model": "gpt-4o", "messages": {deep}}}"#);
        for body in [&after, &before] {
            assert_eq!(find_model(body.as_bytes()).unwrap().value, "gpt-4o");
            for size in [1, 3, 7, 4096] {
                assert_eq!(
                    scan_in_chunks(body.as_bytes(), size).unwrap().value,
                    "gpt-4o"
                );
            }
        }
        // Objects, mixed kinds, strings with brackets and a nested `model` at the bottom.
        for kinds in ["{", "[{", "{[[", "[[{"] {
            let deep = nested(10_000, kinds, r#"{"model":"deep","s":"]}\"["}"#);
            let body = format!(r#"{{"a":{deep},"model":"gpt-4o","b":{deep}}}"#);
            assert_eq!(
                find_model(body.as_bytes()).unwrap().value,
                "gpt-4o",
                "{kinds}"
            );
            assert_eq!(
                scan_in_chunks(body.as_bytes(), 5).unwrap().value,
                "gpt-4o",
                "{kinds}"
            );
            let (value, _) = find_top_level_u64(
                format!(r#"{{"a":{deep},"max_tokens":7}}"#).as_bytes(),
                "max_tokens",
            )
            .unwrap();
            assert_eq!(value, 7);
        }
        // One bracket short: the `model` key is not top-level, and the body is cut.
        let short = nested(10_000, "[", "");
        let short = &short[..short.len() - 1];
        let body = format!(r#"{{"messages": {short}, "model": "gpt-4o"}}"#);
        assert_eq!(find_model(body.as_bytes()), Err(Skip::NotJson));
        // One too many: it closes the root object with `]`.
        let body = format!(r#"{{"messages": {deep}], "model": "gpt-4o"}}"#);
        assert_eq!(find_model(body.as_bytes()), Err(Skip::NotJson));
        // Cut inside the nesting.
        assert_eq!(
            find_model(format!(r#"{{"model":"gpt-4o","m":{}"#, &deep[..9000]).as_bytes()),
            Err(Skip::NotJson)
        );
        // A duplicate or a non-string model past deep nesting is still refused.
        let body = format!(r#"{{"model":"a","messages":{deep},"model":"b"}}"#);
        assert_eq!(find_model(body.as_bytes()), Err(Skip::Duplicate));
        let body = format!(r#"{{"messages":[],"model":{deep}}}"#);
        assert_eq!(find_model(body.as_bytes()), Err(Skip::NotString));
        // Within the typed levels a mismatched bracket is refused as before.
        let body = format!(r#"{{"a":{},"model":"m"}}"#, nested(100, "[", "{}]"));
        assert_eq!(find_model(body.as_bytes()), Err(Skip::NotJson));
        let body = format!(r#"{{"a":[{}}},"model":"m"}}"#, nested(100, "[", ""));
        assert_eq!(find_model(body.as_bytes()), Err(Skip::NotJson));
    }

    /// Around the typed levels and far below them, a well-formed deep value anywhere gives the
    /// same answer as `null` in its place, with bad strings and keys inside it.
    #[wasm_bindgen_test(unsupported = test)]
    fn deep_values_read_like_null() {
        let mut rng = crate::test_support::Rng(0x51_7cc1_b727_220a);
        let leaves = [
            "1",
            r#""\ud800""#,
            r#"{"model":"x","k":["]","}"]}"#,
            "[]",
            r#"{"a":true,"b":[null,-1.5e3]}"#,
        ];
        let kinds = ["[", "{", "[{", "{{[", "[[[{"];
        for round in 0..300 {
            let depth = [1, 2, 126, 127, 128, 129, 130, 131, 256, 1000][round % 10] + rng.below(3);
            let deep = nested(
                depth,
                kinds[rng.below(kinds.len())],
                leaves[rng.below(leaves.len())],
            );
            let fields = [
                r#""model":"gpt-4o""#,
                r#""messages":[{"content":"hi"}]"#,
                r#""stream":true"#,
                r#""model":"again""#,
                r#""model":7"#,
            ];
            let mut parts: Vec<&str> = (0..1 + rng.below(3))
                .map(|_| fields[rng.below(fields.len())])
                .collect();
            let at = rng.below(parts.len() + 1);
            parts.insert(at, "\"deep\":DEEP");
            let template = format!("{{{}}}", parts.join(","));
            let with_deep = template.replace("DEEP", &deep);
            let with_null = template.replace("DEEP", "null");
            assert_eq!(
                find_model(with_deep.as_bytes()).map(|f| f.value),
                find_model(with_null.as_bytes()).map(|f| f.value),
                "{template} at depth {depth}"
            );
            assert_eq!(
                scan_in_chunks(with_deep.as_bytes(), 1 + rng.below(64)).map(|f| f.value),
                find_model(with_null.as_bytes()).map(|f| f.value),
            );
        }
    }

    /// The lenient reading, for reference: `body` with, in every string, the bytes that are
    /// not UTF-8 and the lone surrogate escapes replaced by U+FFFD, so that serde_json reads
    /// what a lenient parser reads in the original. A string ends at the first quote that no
    /// backslash escapes; everything else is left for serde_json to judge.
    fn lenient(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len());
        let mut i = 0;
        while i < body.len() {
            if body[i] != b'"' {
                out.push(body[i]);
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < body.len() && body[end] != b'"' {
                end += if body[end] == b'\\' { 2 } else { 1 };
            }
            if end >= body.len() {
                out.extend_from_slice(&body[i..]);
                break;
            }
            let text: Vec<char> = String::from_utf8_lossy(&body[i + 1..end]).chars().collect();
            let hex = |at: usize| -> Option<u32> {
                if text.get(at..at + 2)? != ['\\', 'u'] {
                    return None;
                }
                let digits: String = text.get(at + 2..at + 6)?.iter().collect();
                u32::from_str_radix(&digits, 16).ok()
            };
            let mut fixed = String::from("\"");
            let mut j = 0;
            while j < text.len() {
                match (text[j], hex(j)) {
                    (_, Some(high @ 0xD800..=0xDBFF))
                        if matches!(hex(j + 6), Some(0xDC00..=0xDFFF)) =>
                    {
                        let _ = high;
                        fixed.extend(&text[j..j + 12]);
                        j += 12;
                    }
                    (_, Some(0xD800..=0xDFFF)) => {
                        fixed.push_str("\\ufffd");
                        j += 6;
                    }
                    ('\\', _) => {
                        fixed.extend(text.get(j..j + 2).unwrap_or(&text[j..]));
                        j += 2;
                    }
                    (c, _) => {
                        fixed.push(c);
                        j += 1;
                    }
                }
            }
            fixed.push('"');
            out.extend_from_slice(fixed.as_bytes());
            i = end + 1;
        }
        out
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_lenient_reference_reads_what_it_should() {
        let read =
            |body: &[u8]| -> serde_json::Value { serde_json::from_slice(&lenient(body)).unwrap() };
        assert_eq!(
            read(b"{\"a\":\"x\xffy\",\"b\":\"\\ud800\\\\ud800\"}"),
            serde_json::json!({"a": "x\u{fffd}y", "b": "\u{fffd}\\ud800"})
        );
        assert_eq!(
            read(br#"{"a":"\ud83d\ude00\ud83d","\udc00":"\"\\"}"#),
            serde_json::json!({"a": "😀\u{fffd}", "\u{fffd}": "\"\\"})
        );
        assert!(serde_json::from_slice::<serde_json::Value>(&lenient(br#"{"a":"\q"}"#)).is_err());
    }

    /// Differential fuzzing against serde_json and a lenient reading: random structured bodies
    /// (with bad UTF-8 and lone surrogates in some strings) and byte mutations. Whenever
    /// serde_json reads a top-level string `model`, the scanner finds the same value. Whenever
    /// the lenient reading (see [`lenient`]) gives a body without duplicate keys, the scanner
    /// agrees with it: the same `model`, or [`Skip::ModelTooLong`] for one that is too long or
    /// was not well-formed, [`Skip::NoModel`] without one, [`Skip::NotString`] for another
    /// value. Whenever the scanner finds a model, the lenient reading accepts the body, and a
    /// rewrite changes nothing but the value. `LLMFB_FUZZ_ITERS` runs it longer.
    #[wasm_bindgen_test(unsupported = test)]
    fn fuzz_scanner_and_rewrite_against_serde_json() {
        let iterations: usize = option_env!("LLMFB_FUZZ_ITERS")
            .and_then(|n| n.parse().ok())
            .unwrap_or(4000);
        let mut rng = crate::test_support::Rng(0x2545_f491_4f6c_dd1d);
        let keys: [&[u8]; 7] = [
            br#""model""#,
            br#""m\u006fdel""#,
            br#""gpt-4o""#,
            br#""model""#,
            br#""model\ud800""#,
            b"\"mod\xffel\"",
            br#""\udc00""#,
        ];
        let atoms: [&[u8]; 23] = [
            br#""model""#,
            br#""m\u006fdel""#,
            br#""gpt-4o""#,
            br#""a\"b""#,
            br#""\\""#,
            b"1",
            b"-2.5e3",
            b"true",
            b"null",
            b"[]",
            b"{}",
            br#""\ud83d\ude00""#,
            "\"模型\"".as_bytes(),
            b" ",
            b"\n",
            br#""\ud800""#,
            br#""\udc00x""#,
            br#""\ud83d\u0041""#,
            br#""\ud800\ud83d\ude00""#,
            b"\"\xff\xfe\"",
            b"\"\xe2\x82\"",
            b"\"\xed\xa0\x80\"",
            b"\"\xc3\"",
        ];
        // Bodies serde_json refuses whose model the scanner still reads.
        let mut lenient_only = 0;
        for _ in 0..iterations {
            // A random JSON-ish object built from atoms, sometimes with a top-level model.
            let mut bytes = b"{".to_vec();
            let fields = rng.below(5);
            for i in 0..fields {
                if i > 0 {
                    bytes.push(b',');
                }
                bytes.extend_from_slice(keys[rng.below(keys.len())]);
                bytes.push(b':');
                match rng.below(5) {
                    0 => bytes.extend_from_slice(atoms[rng.below(atoms.len())]),
                    1 => {
                        bytes.extend_from_slice(br#"[{"model":"#);
                        bytes.extend_from_slice(atoms[rng.below(atoms.len())]);
                        bytes.extend_from_slice(b"}]");
                    }
                    2 => bytes.extend_from_slice(br#"{"model":"x","k":[1,{}]}"#),
                    3 => bytes.extend_from_slice(atoms[15 + rng.below(8)]),
                    _ => bytes.extend_from_slice(atoms[2]),
                }
            }
            bytes.push(b'}');
            for _ in 0..rng.below(3) {
                if rng.below(2) == 0 {
                    let i = rng.below(bytes.len());
                    bytes[i] = rng.below(256) as u8;
                }
            }
            let ours = find_model(&bytes);
            let text = String::from_utf8_lossy(&bytes);
            let strict: Option<serde_json::Map<String, serde_json::Value>> =
                serde_json::from_slice(&bytes).ok();
            let read: Option<serde_json::Map<String, serde_json::Value>> =
                serde_json::from_slice(&lenient(&bytes)).ok();
            if strict.is_some() {
                assert_eq!(strict, read, "{text:?}");
            }
            let duplicate = ours == Err(Skip::Duplicate);
            if let (Some(map), false) = (&read, duplicate) {
                match (map.get("model"), &ours) {
                    (Some(serde_json::Value::String(v)), Ok(field)) => {
                        assert_eq!(&field.value, v, "{text:?}")
                    }
                    (Some(serde_json::Value::String(v)), Err(e)) => {
                        assert_eq!(*e, Skip::ModelTooLong, "{text:?}");
                        assert!(
                            v.len() > MAX_MODEL_LEN || v.contains('\u{fffd}'),
                            "{text:?}"
                        );
                    }
                    (_, Ok(field)) => panic!("found {field:?} in {text:?}"),
                    (None, Err(e)) => assert_eq!(*e, Skip::NoModel, "{text:?}"),
                    (Some(_), Err(e)) => assert_eq!(*e, Skip::NotString, "{text:?}"),
                }
            }
            if let Ok(field) = &ours {
                assert!(read.is_some() || duplicate, "{text:?}");
                lenient_only += usize::from(strict.is_none());
                let out = rewrite(&bytes, field, "new-model");
                assert_eq!(&out[..field.span.start], &bytes[..field.span.start]);
                assert_eq!(
                    &out[out.len() - (bytes.len() - field.span.end)..],
                    &bytes[field.span.end..]
                );
                assert_eq!(find_model(&out).unwrap().value, "new-model");
            }
        }
        eprintln!("{lenient_only} of {iterations} bodies read only leniently");
        assert!(lenient_only > iterations / 50, "{lenient_only}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn found_is_available_before_the_end() {
        let mut scanner = ModelScanner::new();
        scanner.feed(br#"{"model":"early","messages":["#);
        assert_eq!(scanner.found().map(|f| f.value.as_str()), Some("early"));
    }
}
