//! What one event says: whether it reports a failure, and the token usage it carries.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Token counts reported by the provider so far. Each field holds the last value seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `prompt_tokens` (OpenAI chat), `input_tokens` (Anthropic, OpenAI Responses),
    /// `promptTokenCount` (Gemini).
    pub input_tokens: Option<u64>,
    /// `completion_tokens` (OpenAI chat), `output_tokens` (Anthropic, OpenAI Responses),
    /// `candidatesTokenCount` (Gemini).
    pub output_tokens: Option<u64>,
    /// Input tokens read from the provider's prompt cache, part of `input_tokens`:
    /// `prompt_tokens_details.cached_tokens` (OpenAI chat), `input_tokens_details.cached_tokens`
    /// (Responses), `cache_read_input_tokens` (Anthropic), `cachedContentTokenCount` (Gemini).
    pub cached_input_tokens: Option<u64>,
}

impl Usage {
    /// Takes every field `later` has (last value wins).
    pub(super) fn update(&mut self, later: Usage) {
        if later.input_tokens.is_some() {
            self.input_tokens = later.input_tokens;
        }
        if later.output_tokens.is_some() {
            self.output_tokens = later.output_tokens;
        }
        if later.cached_input_tokens.is_some() {
            self.cached_input_tokens = later.cached_input_tokens;
        }
    }

    /// Reads a usage object of any of the supported providers.
    pub(super) fn from_map(map: &Map<String, Value>) -> Usage {
        let first = |keys: &[&str]| {
            keys.iter()
                .find_map(|key| map.get(*key).and_then(Value::as_u64))
        };
        let nested = |outer: &str| {
            map.get(outer)
                .and_then(|d| d.get("cached_tokens"))
                .and_then(Value::as_u64)
        };
        // Anthropic counts cache reads and writes beside `input_tokens`, not in it; the others
        // count cached tokens inside their input figure.
        let cache_read = first(&["cache_read_input_tokens"]);
        let cache_write = first(&["cache_creation_input_tokens"]);
        let mut input = first(&["input_tokens", "prompt_tokens", "promptTokenCount"]);
        if cache_read.is_some() || cache_write.is_some() {
            input = input.map(|i| {
                i.saturating_add(cache_read.unwrap_or(0))
                    .saturating_add(cache_write.unwrap_or(0))
            });
        }
        Usage {
            input_tokens: input,
            output_tokens: first(&["output_tokens", "completion_tokens", "candidatesTokenCount"]),
            cached_input_tokens: cache_read
                .or_else(|| nested("prompt_tokens_details"))
                .or_else(|| nested("input_tokens_details"))
                .or_else(|| first(&["cachedContentTokenCount"])),
        }
    }

    pub(crate) fn from_value(value: Option<&Value>) -> Usage {
        match value {
            Some(Value::Object(map)) => Usage::from_map(map),
            _ => Usage::default(),
        }
    }
}

/// The bytes after a `"usage` marker: `"` or `Metadata"`, a colon, then an object.
pub(super) fn usage_after_marker(after: &[u8]) -> Option<Usage> {
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
pub(super) struct Frame {
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
    pub(super) fn is_error(&self) -> bool {
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

    pub(super) fn usage(&self) -> Usage {
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
pub(super) fn parse_frame(data: &[u8]) -> serde_json::Result<Frame> {
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
pub(super) fn head_shows_error(data: &[u8]) -> bool {
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
pub(super) fn split_string(text: &[u8]) -> Option<(&[u8], &[u8])> {
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
pub(super) fn skip_value(value: &[u8]) -> Option<&[u8]> {
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
pub(super) fn skip_ws(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(bytes.len());
    bytes.get(start..).unwrap_or_default()
}
