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
    pub(crate) fn from_map(map: &Map<String, Value>) -> Usage {
        let mut counts = Counts::default();
        for (key, value) in map {
            let nested = || value.get("cached_tokens").and_then(Value::as_u64);
            counts.take(key, value.as_u64(), nested);
        }
        counts.usage()
    }

    /// Reads a usage object from its JSON text (one value; what follows it is ignored), without
    /// building a tree of it.
    pub(crate) fn parse(object: &[u8]) -> Option<Usage> {
        let mut de = serde_json::Deserializer::from_slice(object);
        UsageObject::deserialize(&mut de).ok().map(|o| o.0)
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
    Usage::parse(value)
}

/// The counts of a usage object, by the key that carried them (the last of a repeated key wins).
#[derive(Debug, Default)]
struct Counts {
    input_tokens: Option<u64>,
    prompt_tokens: Option<u64>,
    prompt_token_count: Option<u64>,
    output_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    candidates_token_count: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    cached_content: Option<u64>,
    prompt_details_cached: Option<u64>,
    input_details_cached: Option<u64>,
}

impl Counts {
    /// Takes one key: `value` its count if it is one, `nested` its `cached_tokens` if it is
    /// an object that has one (asked only for the two details objects).
    fn take(&mut self, key: &str, value: Option<u64>, nested: impl FnOnce() -> Option<u64>) {
        let slot = match key {
            "input_tokens" => &mut self.input_tokens,
            "prompt_tokens" => &mut self.prompt_tokens,
            "promptTokenCount" => &mut self.prompt_token_count,
            "output_tokens" => &mut self.output_tokens,
            "completion_tokens" => &mut self.completion_tokens,
            "candidatesTokenCount" => &mut self.candidates_token_count,
            "cache_read_input_tokens" => &mut self.cache_read,
            "cache_creation_input_tokens" => &mut self.cache_write,
            "cachedContentTokenCount" => &mut self.cached_content,
            "prompt_tokens_details" => return self.prompt_details_cached = nested(),
            "input_tokens_details" => return self.input_details_cached = nested(),
            _ => return,
        };
        *slot = value;
    }

    fn usage(&self) -> Usage {
        // Anthropic counts cache reads and writes beside `input_tokens`, not in it; the others
        // count cached tokens inside their input figure.
        let (cache_read, cache_write) = (self.cache_read, self.cache_write);
        let mut input = self
            .input_tokens
            .or(self.prompt_tokens)
            .or(self.prompt_token_count);
        if cache_read.is_some() || cache_write.is_some() {
            input = input.map(|i| {
                i.saturating_add(cache_read.unwrap_or(0))
                    .saturating_add(cache_write.unwrap_or(0))
            });
        }
        Usage {
            input_tokens: input,
            output_tokens: self
                .output_tokens
                .or(self.completion_tokens)
                .or(self.candidates_token_count),
            cached_input_tokens: cache_read
                .or(self.prompt_details_cached)
                .or(self.input_details_cached)
                .or(self.cached_content),
        }
    }
}

/// A usage object deserialized key by key into [`Counts`]: no tree, nothing kept but numbers.
/// Only an object is one; a count that is not a non-negative integer is no count (as with
/// `Value::as_u64`).
struct UsageObject(Usage);

impl<'de> Deserialize<'de> for UsageObject {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = UsageObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a usage object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UsageObject, A::Error> {
                let mut counts = Counts::default();
                while let Some(Key(key)) = map.next_key::<Key>()? {
                    match key {
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        Some(key) if key.ends_with("_details") => {
                            let cached = map.next_value::<Details>()?.0;
                            counts.take(key, None, || cached);
                        }
                        Some(key) => {
                            let value = map.next_value::<Count>()?.0;
                            counts.take(key, value, || None);
                        }
                    }
                }
                Ok(UsageObject(counts.usage()))
            }
        }
        deserializer.deserialize_map(Object)
    }
}

/// A key of a usage or details object, if it is one of those read (no allocation).
struct Key(Option<&'static str>);

const KEYS: &[&str] = &[
    "input_tokens",
    "prompt_tokens",
    "promptTokenCount",
    "output_tokens",
    "completion_tokens",
    "candidatesTokenCount",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cachedContentTokenCount",
    "prompt_tokens_details",
    "input_tokens_details",
    "cached_tokens",
];

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(KEYS.iter().find(|k| **k == v).copied()))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// A token count: a non-negative integer, or any other value (skipped: no count).
struct Count(Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Lenient { details: false })
            .map(Count)
    }
}

/// A details object's `cached_tokens` count (any other value, or no such key: none).
struct Details(Option<u64>);

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Lenient { details: true })
            .map(Details)
    }
}

/// Accepts any JSON value and reads one count from it: the value itself when it is a
/// non-negative integer (a count), its `cached_tokens` when it is an object (`details`).
struct Lenient {
    details: bool,
}

impl<'de> Visitor<'de> for Lenient {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<u64>, E> {
        Ok((!self.details).then_some(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<u64>, E> {
        Ok(u64::try_from(v).ok().filter(|_| !self.details))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<u64>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<u64>, A::Error> {
        let mut cached = None;
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if self.details && key == Some("cached_tokens") {
                cached = map.next_value::<Count>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(cached)
    }
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
