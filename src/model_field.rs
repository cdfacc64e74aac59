//! Finds the top-level `"model"` string of a JSON request body without parsing the body.
//!
//! LLM request bodies are mostly one large `messages` array, and the `model` key often comes
//! after it. [`ModelScanner`] is a resumable state machine fed chunk by chunk as Envoy hands
//! them over: it tracks only what is needed to know where the top level is (strings, escapes and
//! bracket depth), jumps through string contents with `memchr`, and never copies the body. It
//! reports the decoded value and the byte span of the value token, so a caller can splice in a
//! new value. Nested `model` keys (inside messages, tools, metadata) are ignored.
//!
//! The scanner validates the top-level object's shape (`{ "key": value, ... }`) and the
//! balance of nested brackets, not every nested scalar: it only has to be certain which `model`
//! key is the top-level one.

use std::ops::Range;

/// Longest model name we accept; longer values are reported as [`Skip::ModelTooLong`].
pub const MAX_MODEL_LEN: usize = 256;

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
    /// Not a JSON object (or broken JSON before the answer was known).
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

/// Where the scanner is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{` (whitespace and a UTF-8 BOM are allowed).
    Start,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,`: a key.
    Key,
    /// Inside a top-level key string.
    KeyString,
    /// After a key: `:`.
    Colon,
    /// After `:`: the start of a value.
    Value,
    /// Inside the top-level `model` string value.
    ModelString,
    /// Inside a top-level string value that is not the model.
    SkipString,
    /// Inside a top-level scalar (number, `true`, `false`, `null`).
    Scalar,
    /// Inside a nested object or array, at `depth` > 0 below the top-level value.
    Nested,
    /// Inside a string within a nested value.
    NestedString,
    /// After a top-level value: `,` or `}`.
    AfterValue,
    /// After the closing `}`: only whitespace may follow.
    Done,
    /// The body is not something we understand; terminal.
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

/// Small fixed buffer for the key being read: only `model` matters, so longer keys are not kept.
#[derive(Debug, Clone, Copy)]
struct KeyBuf {
    bytes: [u8; 5],
    len: u8,
    overflow: bool,
}

impl KeyBuf {
    const fn new() -> Self {
        Self {
            bytes: [0; 5],
            len: 0,
            overflow: false,
        }
    }

    fn push_char(&mut self, c: char) {
        let mut utf8 = [0u8; 4];
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            self.push(b);
        }
    }

    fn push(&mut self, b: u8) {
        match self.bytes.get_mut(usize::from(self.len)) {
            Some(slot) if !self.overflow => {
                *slot = b;
                self.len += 1;
            }
            _ => self.overflow = true,
        }
    }

    fn is_model(&self) -> bool {
        !self.overflow && self.bytes.get(..usize::from(self.len)) == Some(b"model".as_slice())
    }
}

/// Resumable scanner for the top-level `model` key. Feed it every chunk in order, then call
/// [`ModelScanner::finish`].
#[derive(Debug, Clone)]
pub struct ModelScanner {
    state: State,
    /// Bytes consumed so far (offset of the next chunk in the whole body).
    offset: usize,
    /// Bracket depth inside a nested top-level value.
    depth: u32,
    /// One bit per open bracket below the top level: 1 for `{`, 0 for `[` (bit 0 = depth 1).
    brackets: u128,
    escape: Escape,
    /// A decoded high surrogate waiting for its low half.
    high_surrogate: Option<u32>,
    key: KeyBuf,
    /// Whether the value being read belongs to a `model` key.
    value_is_model: bool,
    /// Decoded model value being read.
    value: Vec<u8>,
    value_start: usize,
    value_too_long: bool,
    found: Option<ModelField>,
    /// First problem with the model key itself (not string, too long, duplicate).
    model_problem: Option<Skip>,
    /// Whether a `model` key was seen at all.
    model_keys: u8,
}

impl Default for ModelScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelScanner {
    pub const fn new() -> Self {
        Self {
            state: State::Start,
            offset: 0,
            depth: 0,
            brackets: 0,
            escape: Escape::None,
            high_surrogate: None,
            key: KeyBuf::new(),
            value_is_model: false,
            value: Vec::new(),
            value_start: 0,
            value_too_long: false,
            found: None,
            model_problem: None,
            model_keys: 0,
        }
    }

    /// The model found so far, if any. A later duplicate key or broken JSON can still turn the
    /// final answer into a [`Skip`]; use this only where a first answer is good enough (counting).
    pub fn found(&self) -> Option<&ModelField> {
        self.found.as_ref()
    }

    /// Whether more input can no longer change the answer for the worse (the body is invalid).
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
        match self.state {
            State::Start => {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    // UTF-8 byte order mark, tolerated by most parsers.
                    0xEF | 0xBB | 0xBF if self.offset + i < 3 => {}
                    b'{' => self.state = State::KeyOrEnd,
                    _ => self.state = State::Invalid,
                }
                i + 1
            }
            State::KeyOrEnd | State::Key => {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b'"' => {
                        self.key = KeyBuf::new();
                        self.state = State::KeyString;
                    }
                    b'}' if self.state == State::KeyOrEnd => self.state = State::Done,
                    _ => self.state = State::Invalid,
                }
                i + 1
            }
            State::KeyString => self.key_string(chunk, i),
            State::Colon => {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b':' => {
                        self.value_is_model = self.key.is_model();
                        if self.value_is_model {
                            self.model_keys = self.model_keys.saturating_add(1);
                            if self.model_keys > 1 {
                                self.model_problem = Some(Skip::Duplicate);
                            }
                        }
                        self.state = State::Value;
                    }
                    _ => self.state = State::Invalid,
                }
                i + 1
            }
            State::Value => self.value_start(b, i),
            State::ModelString => self.model_string(chunk, i),
            State::SkipString => self.skip_string(chunk, i, State::AfterValue),
            State::NestedString => self.skip_string(chunk, i, State::Nested),
            State::Scalar => match b {
                b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n' => {
                    // Re-read the delimiter as the byte after the value.
                    self.state = State::AfterValue;
                    i
                }
                b'"' | b'{' | b'[' | b':' | b']' => {
                    self.state = State::Invalid;
                    i
                }
                _ => i + 1,
            },
            State::Nested => self.nested(chunk, i),
            State::AfterValue => {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b',' => self.state = State::Key,
                    b'}' => self.state = State::Done,
                    _ => self.state = State::Invalid,
                }
                i + 1
            }
            State::Done => {
                if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                    self.state = State::Invalid;
                }
                i + 1
            }
            State::Invalid => chunk.len(),
        }
    }

    fn value_start(&mut self, b: u8, i: usize) -> usize {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' if self.value_is_model => {
                self.value.clear();
                self.value_too_long = false;
                self.value_start = self.offset + i;
                self.state = State::ModelString;
            }
            b'"' => self.state = State::SkipString,
            b'{' | b'[' => {
                self.note_model_not_string();
                self.depth = 0;
                self.state = State::Nested;
                self.open(b);
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.note_model_not_string();
                self.state = State::Scalar;
            }
            _ => self.state = State::Invalid,
        }
        i + 1
    }

    fn note_model_not_string(&mut self) {
        if self.value_is_model && self.model_problem.is_none() {
            self.model_problem = Some(Skip::NotString);
        }
    }

    /// Reads a top-level key, keeping only enough of it to compare with `model`.
    fn key_string(&mut self, chunk: &[u8], i: usize) -> usize {
        let mut i = i;
        while let Some(&b) = chunk.get(i) {
            i += 1;
            match self.escape {
                Escape::None => match b {
                    b'"' => {
                        self.state = State::Colon;
                        return i;
                    }
                    b'\\' => self.escape = Escape::Backslash,
                    _ => self.key.push(b),
                },
                _ => match self.escape_byte(b) {
                    EscapeStep::Pending => {}
                    EscapeStep::Char(c) => self.key.push_char(c),
                    EscapeStep::Invalid => {
                        self.state = State::Invalid;
                        return i;
                    }
                },
            }
            if self.key.overflow && self.escape == Escape::None {
                // Not `model`: skip the rest of the key quickly.
                return self.skip_string(chunk, i, State::Colon);
            }
        }
        i
    }

    /// Reads the model value, decoding escapes into `self.value`.
    fn model_string(&mut self, chunk: &[u8], i: usize) -> usize {
        let mut i = i;
        while let Some(&b) = chunk.get(i) {
            i += 1;
            match self.escape {
                Escape::None => match b {
                    b'"' => {
                        self.end_model_value(self.offset + i);
                        self.state = State::AfterValue;
                        return i;
                    }
                    b'\\' => self.escape = Escape::Backslash,
                    // Raw control characters are not allowed inside JSON strings.
                    0x00..=0x1F => {
                        self.state = State::Invalid;
                        return i;
                    }
                    _ => self.push_value(&[b]),
                },
                _ => match self.escape_byte(b) {
                    EscapeStep::Pending => {}
                    EscapeStep::Char(c) => {
                        let mut utf8 = [0u8; 4];
                        self.push_value(c.encode_utf8(&mut utf8).as_bytes());
                    }
                    EscapeStep::Invalid => {
                        self.state = State::Invalid;
                        return i;
                    }
                },
            }
        }
        i
    }

    fn push_value(&mut self, bytes: &[u8]) {
        if self.value.len() + bytes.len() > MAX_MODEL_LEN {
            self.value_too_long = true;
        } else {
            self.value.extend_from_slice(bytes);
        }
    }

    fn end_model_value(&mut self, end: usize) {
        let value = std::mem::take(&mut self.value);
        match String::from_utf8(value) {
            Ok(value) if !self.value_too_long && self.high_surrogate.is_none() => {
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
    }

    /// Skips string contents (escapes included) and moves to `next` after the closing quote.
    fn skip_string(&mut self, chunk: &[u8], i: usize, next: State) -> usize {
        let mut i = i;
        loop {
            if self.escape != Escape::None {
                // Inside an escape: `\"` and `\\` must not end or start anything. `\uXXXX` digits
                // are plain bytes for skipping purposes.
                let Some(_) = chunk.get(i) else { return i };
                self.escape = Escape::None;
                i += 1;
                continue;
            }
            let Some(rest) = chunk.get(i..) else {
                return chunk.len();
            };
            match memchr::memchr2(b'"', b'\\', rest) {
                None => return chunk.len(),
                Some(pos) => {
                    i += pos + 1;
                    if rest.get(pos) == Some(&b'"') {
                        self.state = next;
                        return i;
                    }
                    self.escape = Escape::Backslash;
                }
            }
        }
    }

    /// Skips a nested object or array, tracking only strings and bracket depth.
    fn nested(&mut self, chunk: &[u8], i: usize) -> usize {
        let mut i = i;
        while let Some(&b) = chunk.get(i) {
            i += 1;
            match b {
                b'"' => {
                    self.state = State::NestedString;
                    return i;
                }
                b'{' | b'[' => self.open(b),
                b'}' | b']' => {
                    self.close(b);
                    if self.depth == 0 && self.state == State::Nested {
                        self.state = State::AfterValue;
                        return i;
                    }
                }
                _ => {}
            }
            if self.state == State::Invalid {
                return i;
            }
        }
        i
    }

    /// Pushes an opening bracket; deeper than 128 levels (serde_json's own limit) is invalid.
    fn open(&mut self, b: u8) {
        if self.depth >= u128::BITS {
            self.state = State::Invalid;
            return;
        }
        if b == b'{' {
            self.brackets |= 1 << self.depth;
        } else {
            self.brackets &= !(1 << self.depth);
        }
        self.depth += 1;
    }

    /// Pops a closing bracket, which must match the innermost opening one.
    fn close(&mut self, b: u8) {
        let Some(top) = self.depth.checked_sub(1) else {
            self.state = State::Invalid;
            return;
        };
        let was_brace = self.brackets & (1 << top) != 0;
        if was_brace != (b == b'}') {
            self.state = State::Invalid;
            return;
        }
        self.depth = top;
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

/// Replaces the value token at `field.span` with `new_value` as a JSON string; every other byte
/// of the body is kept as it was.
pub fn rewrite(body: &[u8], field: &ModelField, new_value: &str) -> Vec<u8> {
    let head = body.get(..field.span.start).unwrap_or(body);
    let tail = body.get(field.span.end..).unwrap_or_default();
    let mut out = Vec::with_capacity(body.len() + new_value.len() + 2);
    out.extend_from_slice(head);
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
    out.extend_from_slice(tail);
    out
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
        assert_eq!(value("\u{feff}{\"model\":\"bom\"}"), "bom");
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
        assert_eq!(
            scan_all_ways(r#"{"model":"\ud800"}"#),
            Err(Skip::ModelTooLong)
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

    #[wasm_bindgen_test(unsupported = test)]
    fn found_is_available_before_the_end() {
        let mut scanner = ModelScanner::new();
        scanner.feed(br#"{"model":"early","messages":["#);
        assert_eq!(scanner.found().map(|f| f.value.as_str()), Some("early"));
    }
}
