//! What the decisions need from a request body, read in one pass without building a tree.
//!
//! Choosing a fallback needs the request's features (tools, a JSON schema, images, its output
//! limit), and judging a Responses API call needs `store`, `background` and its tools' types.
//! [`BodyFacts::read`] streams the body through serde once and keeps only those: every other
//! value, the prompt included, is skipped without being stored. Values of an unexpected type
//! count as absent (the same reading a tolerant parser would give), and a body that is not a
//! JSON object has no facts.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The facts of one request body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyFacts {
    /// A non-empty `tools` or `functions` array.
    pub tools: bool,
    /// `response_format.type` (chat) or `text.format.type` (Responses) is `json_schema` or
    /// `json_object`.
    pub json_schema: bool,
    /// An image part in `messages`, `input` or `contents`, however deep.
    pub images: bool,
    /// `max_tokens`, else `max_completion_tokens`, else `max_output_tokens`.
    pub max_tokens: Option<u64>,
    /// Responses API: `store` and `background` as sent.
    pub store: Option<bool>,
    pub background: Option<bool>,
    /// The `type` of each entry of `tools`.
    pub tool_types: Vec<String>,
}

impl BodyFacts {
    /// The facts of a JSON object body; `None` when the body is not one.
    pub fn read(body: &[u8]) -> Option<Self> {
        let mut de = serde_json::Deserializer::from_slice(body);
        let facts = de.deserialize_map(Root).ok()?;
        de.end().ok()?;
        Some(facts)
    }
}

/// The top-level object.
struct Root;

impl<'de> Visitor<'de> for Root {
    type Value = BodyFacts;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BodyFacts, A::Error> {
        let mut facts = BodyFacts::default();
        let (mut max_tokens, mut max_completion, mut max_output) = (None, None, None);
        let (mut tools, mut functions) = (false, false);
        let (mut chat_format, mut text_format) = (None, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "tools" => {
                    let found = map.next_value::<Tools>()?;
                    tools = found.count > 0;
                    facts.tool_types = found.types;
                }
                "functions" => functions = map.next_value::<Tools>()?.count > 0,
                "response_format" => chat_format = map.next_value::<TypeField>()?.0,
                "text" => text_format = map.next_value::<TextFormat>()?.0,
                "max_tokens" => max_tokens = map.next_value::<Scalar>()?.whole(),
                "max_completion_tokens" => max_completion = map.next_value::<Scalar>()?.whole(),
                "max_output_tokens" => max_output = map.next_value::<Scalar>()?.whole(),
                "messages" | "input" | "contents" => {
                    facts.images |= map.next_value::<Images>()?.0;
                }
                "store" => facts.store = map.next_value::<Scalar>()?.flag(),
                "background" => facts.background = map.next_value::<Scalar>()?.flag(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        facts.tools = tools || functions;
        facts.max_tokens = max_tokens.or(max_completion).or(max_output);
        // `response_format` wins over `text.format`, as a tolerant reader would take it.
        let format = chat_format.or(text_format);
        facts.json_schema = matches!(format.as_deref(), Some("json_schema" | "json_object"));
        Ok(facts)
    }
}

/// The visits of scalar values for a tolerant reader: each reads as `$none`.
macro_rules! tolerant_scalars {
    ($none:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// Skips a sequence or a map a tolerant reader does not look into.
macro_rules! skipped_containers {
    ($none:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

/// A value as a tolerant reader sees it: the scalar kinds the facts use, or anything else
/// (skipped unread).
enum Scalar {
    Bool(bool),
    /// A non-negative whole number.
    Whole(u64),
    Text(String),
    Other,
}

impl Scalar {
    fn whole(self) -> Option<u64> {
        match self {
            Self::Whole(n) => Some(n),
            _ => None,
        }
    }

    fn flag(self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn text(self) -> Option<String> {
        match self {
            Self::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Whole(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(u64::try_from(v).map_or(Scalar::Other, Scalar::Whole))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_owned()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            skipped_containers!(Scalar::Other);
        }
        d.deserialize_any(V)
    }
}

/// A `tools` array: how many entries, and each entry's `type`.
struct Tools {
    count: usize,
    types: Vec<String>,
}

impl<'de> de::Deserialize<'de> for Tools {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tools;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tools, A::Error> {
                let mut tools = Tools::NONE;
                while let Some(entry) = seq.next_element::<TypeField>()? {
                    tools.count += 1;
                    if let Some(kind) = entry.0 {
                        tools.types.push(kind);
                    }
                }
                Ok(tools)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tools, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Tools::NONE)
            }
            tolerant_scalars!(Tools::NONE);
        }
        d.deserialize_any(V)
    }
}

impl Tools {
    const NONE: Self = Self {
        count: 0,
        types: Vec::new(),
    };
}

/// An object's string `type` (anything else, or no such key: `None`).
struct TypeField(Option<String>);

impl<'de> de::Deserialize<'de> for TypeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypeField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TypeField, A::Error> {
                let mut kind = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "type" {
                        kind = map.next_value::<Scalar>()?.text();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TypeField(kind))
            }
            tolerant_scalars!(TypeField(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TypeField, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TypeField(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Responses API `text`: its `format.type`.
struct TextFormat(Option<String>);

impl<'de> de::Deserialize<'de> for TextFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextFormat;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextFormat, A::Error> {
                let mut kind = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "format" {
                        kind = map.next_value::<TypeField>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TextFormat(kind))
            }
            tolerant_scalars!(TextFormat(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TextFormat, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TextFormat(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether a value holds an image part anywhere (OpenAI `image_url`/`input_image`, Anthropic
/// `image`, Gemini `inline_data`/`file_data` with an image MIME type).
struct Images(bool);

impl<'de> de::Deserialize<'de> for Images {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Images;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Images, A::Error> {
                let mut found = false;
                while let Some(item) = seq.next_element::<Images>()? {
                    found |= item.0;
                }
                Ok(Images(found))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Images, A::Error> {
                images_in_object(map, false).map(Images)
            }
            tolerant_scalars!(Images(false));
        }
        d.deserialize_any(V)
    }
}

/// Whether an object is, or holds, an image part; `data_part` says it is the value of a Gemini
/// `inline_data` / `file_data` key, whose `mime_type` counts.
fn images_in_object<'de, A: MapAccess<'de>>(mut map: A, data_part: bool) -> Result<bool, A::Error> {
    let mut found = false;
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        found |= match key.as_ref() {
            "type" => match map.next_value::<TextOrImages>()? {
                TextOrImages::Text(kind) => {
                    matches!(kind.as_str(), "image_url" | "image" | "input_image")
                }
                TextOrImages::Other(images) => images,
            },
            "mime_type" | "mimeType" if data_part => match map.next_value::<TextOrImages>()? {
                TextOrImages::Text(mime) => mime.starts_with("image/"),
                TextOrImages::Other(images) => images,
            },
            "inline_data" | "inlineData" | "file_data" | "fileData" => map.next_value::<Mime>()?.0,
            _ => map.next_value::<Images>()?.0,
        };
    }
    Ok(found)
}

/// A string, or any other value searched for image parts.
enum TextOrImages {
    Text(String),
    Other(bool),
}

impl<'de> de::Deserialize<'de> for TextOrImages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextOrImages;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Text(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Other(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Other(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Other(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Other(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TextOrImages, E> {
                Ok(TextOrImages::Other(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TextOrImages, A::Error> {
                <Images as de::Deserialize>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(|i| TextOrImages::Other(i.0))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TextOrImages, A::Error> {
                <Images as de::Deserialize>::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|i| TextOrImages::Other(i.0))
            }
        }
        d.deserialize_any(V)
    }
}

/// A Gemini data part: whether its `mime_type` / `mimeType` is an image type (and whether it
/// holds an image part itself, as any other value would be searched).
struct Mime(bool);

impl<'de> de::Deserialize<'de> for Mime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Mime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Mime, A::Error> {
                images_in_object(map, true).map(Mime)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Mime, A::Error> {
                <Images as de::Deserialize>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(|i| Mime(i.0))
            }
            tolerant_scalars!(Mime(false));
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The reading a tolerant reader gives over a whole `Value` tree: the oracle.
    fn by_tree(body: &[u8]) -> Option<BodyFacts> {
        let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(body) else {
            return None;
        };
        fn has_image(value: &Value) -> bool {
            match value {
                Value::Array(items) => items.iter().any(has_image),
                Value::Object(map) => {
                    let typed = map
                        .get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| matches!(t, "image_url" | "image" | "input_image"));
                    let inline = ["inline_data", "inlineData", "file_data", "fileData"]
                        .iter()
                        .filter_map(|k| map.get(*k))
                        .any(|d| {
                            d.get("mime_type")
                                .or_else(|| d.get("mimeType"))
                                .and_then(Value::as_str)
                                .is_some_and(|m| m.starts_with("image/"))
                        });
                    typed || inline || map.values().any(has_image)
                }
                _ => false,
            }
        }
        let non_empty = |key: &str| {
            root.get(key)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        };
        let format = root
            .get("response_format")
            .and_then(|f| f.get("type"))
            .and_then(Value::as_str)
            .or_else(|| {
                root.get("text")
                    .and_then(|t| t.get("format"))
                    .and_then(|f| f.get("type"))
                    .and_then(Value::as_str)
            });
        Some(BodyFacts {
            tools: non_empty("tools") || non_empty("functions"),
            json_schema: matches!(format, Some("json_schema" | "json_object")),
            images: ["messages", "input", "contents"]
                .iter()
                .filter_map(|k| root.get(*k))
                .any(has_image),
            max_tokens: ["max_tokens", "max_completion_tokens", "max_output_tokens"]
                .iter()
                .find_map(|k| root.get(*k).and_then(Value::as_u64)),
            store: root.get("store").and_then(Value::as_bool),
            background: root.get("background").and_then(Value::as_bool),
            tool_types: root
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("type").and_then(Value::as_str).map(str::to_owned))
                .collect(),
        })
    }

    fn bodies() -> Vec<Value> {
        vec![
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            json!({"model": "m", "tools": [{"type": "function", "function": {"name": "f"}}], "max_tokens": 10}),
            json!({"model": "m", "tools": [], "functions": [{"name": "f"}]}),
            json!({"model": "m", "response_format": {"type": "json_schema", "json_schema": {}}}),
            json!({"model": "m", "text": {"format": {"type": "json_object"}}, "max_output_tokens": 5}),
            json!({"model": "m", "response_format": "json_object"}),
            json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}),
            json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]}),
            json!({"contents": [{"parts": [{"inline_data": {"mime_type": "image/png", "data": "…"}}]}]}),
            json!({"contents": [{"parts": [{"fileData": {"mimeType": "application/pdf"}}]}]}),
            json!({"model": "m", "max_tokens": "100", "max_completion_tokens": 7}),
            json!({"model": "m", "max_tokens": -1, "max_output_tokens": 3.5}),
            json!({"model": "m", "store": false, "background": true, "tools": [{"type": "web_search"}, {"type": "code_interpreter"}, 3]}),
            json!({"model": "m", "store": "false", "tools": {"type": "x"}}),
            json!({"messages": [{"content": [{"type": ["image"]}, {"nested": {"deep": [{"type": "image"}]}}]}]}),
            json!({"model": "m", "response_format": {"type": "json_schema"}, "text": {"format": {"type": "text"}}}),
            json!({"model": "m", "text": {"format": {"type": 5}}}),
            json!({"model": "m", "tools": [{"type": "function"}], "tools_extra": [1], "max_tokens": 1}),
            json!([1, 2, 3]),
            json!("just a string"),
        ]
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn one_pass_reads_what_a_tree_would() {
        for body in bodies() {
            let bytes = serde_json::to_vec(&body).unwrap();
            assert_eq!(BodyFacts::read(&bytes), by_tree(&bytes), "{body}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn mutated_bodies_read_as_a_tree_would() {
        // Every value of every body replaced in turn by values of other types.
        let replacements = [
            json!(null),
            json!(true),
            json!(-3),
            json!(2.5),
            json!("s"),
            json!([]),
            json!([1]),
            json!({}),
            json!({"type": "image"}),
        ];
        fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            out.push(at.clone());
            match v {
                Value::Object(map) => {
                    for (k, child) in map {
                        at.push(k.clone());
                        paths(child, at, out);
                        at.pop();
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        at.push(i.to_string());
                        paths(child, at, out);
                        at.pop();
                    }
                }
                _ => {}
            }
        }
        for body in bodies() {
            let mut all = Vec::new();
            paths(&body, &mut Vec::new(), &mut all);
            for path in all.iter().filter(|p| !p.is_empty()) {
                for replacement in &replacements {
                    let mut mutated = body.clone();
                    let pointer = format!("/{}", path.join("/"));
                    if let Some(slot) = mutated.pointer_mut(&pointer) {
                        *slot = replacement.clone();
                    }
                    let bytes = serde_json::to_vec(&mutated).unwrap();
                    assert_eq!(BodyFacts::read(&bytes), by_tree(&bytes), "{mutated}");
                }
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn not_json_or_trailing_bytes_have_no_facts() {
        assert_eq!(BodyFacts::read(b"{\"model\": "), None);
        assert_eq!(BodyFacts::read(b"{} {}"), None);
        assert_eq!(BodyFacts::read(b""), None);
    }
}
