//! Decodes a serialized `google.protobuf.Struct` into a JSON value.
//!
//! Envoy hands a wasm plugin its `configuration` as the raw bytes of the `Any` it was given.
//! Operators write the configuration as plain YAML, which Envoy stores as a `Struct`, so the
//! plugin receives the Struct's protobuf encoding (not JSON). This is a small, strict decoder
//! for the three message types involved (`Struct`, `Value`, `ListValue`); it never panics on
//! arbitrary bytes.

use serde_json::{Map, Number, Value};

/// Deepest nesting accepted; real configurations are a handful of levels deep.
const MAX_DEPTH: usize = 64;

/// Why the bytes are not a `Struct`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a protobuf Struct: {}", self.0)
    }
}

/// What a plugin configuration's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Nothing, or only JSON whitespace: no configuration.
    Empty,
    /// A JSON text (an object, after optional whitespace).
    Json,
    /// A serialized `google.protobuf.Struct` (or bytes that are neither, for
    /// [`decode_struct`] to explain).
    Struct,
}

/// Tells a JSON text from a serialized `google.protobuf.Struct`.
///
/// A first-byte test cannot: a Struct is a run of `fields` map entries, each the tag `0x0a`
/// (a JSON whitespace byte) and the entry's length as a varint, so an entry of 9, 10, 13, 32 or
/// 123 bytes starts the buffer with bytes that read as whitespace or `{`. The shape decides
/// first: bytes that are exactly a run of entries (tag `0x0a`, a length, and in each entry only
/// complete key (`0x0a`) and value (`0x12`) fields) are a [`Format::Struct`]. A JSON text has
/// that shape only when crafted to: its `{` and `"` are no tag this accepts (they would be
/// fields 15 and 4), so the `{` would have to be a length, every newline after it a tag, and the
/// lengths would have to add up to the last byte. Otherwise a `{` after JSON whitespace (space, `\t`, `\n`, `\r`) means [`Format::Json`];
/// anything else is handed to [`decode_struct`] as [`Format::Struct`] so that its error
/// explains it. Bytes that are empty or only whitespace are [`Format::Empty`] (no encoder makes
/// a Struct of them: every entry it writes carries a non-whitespace length or value tag).
pub fn detect(bytes: &[u8]) -> Format {
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match first {
        None => Format::Empty,
        Some(_) if is_struct_shape(bytes) => Format::Struct,
        Some(b'{') => Format::Json,
        Some(_) => Format::Struct,
    }
}

/// Whether `bytes` are exactly a run of `Struct.fields` entries whose own fields are complete
/// key and value fields. The values themselves are left to [`decode_struct`].
fn is_struct_shape(bytes: &[u8]) -> bool {
    let mut top = Reader { bytes, pos: 0 };
    while !top.at_end() {
        if top.tag() != Ok((1, LEN)) {
            return false;
        }
        let Ok(mut entry) = top.length_delimited() else {
            return false;
        };
        while !entry.at_end() {
            if !matches!(entry.tag(), Ok((1 | 2, LEN))) || entry.length_delimited().is_err() {
                return false;
            }
        }
    }
    true
}

/// Decodes `bytes` as a `google.protobuf.Struct`.
pub fn decode_struct(bytes: &[u8]) -> Result<Value, DecodeError> {
    Reader { bytes, pos: 0 }.read_struct(0).map(Value::Object)
}

/// Protobuf wire types used here.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.bytes.get(self.pos).ok_or(DecodeError("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError("varint too long"))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(len)
            .ok_or(DecodeError("length overflow"))?;
        let slice = self
            .bytes
            .get(self.pos..end)
            .ok_or(DecodeError("truncated"))?;
        self.pos = end;
        Ok(slice)
    }

    /// Reads a field tag: (field number, wire type).
    fn tag(&mut self) -> Result<(u64, u8), DecodeError> {
        let tag = self.varint()?;
        Ok((tag >> 3, (tag & 7) as u8))
    }

    fn length_delimited(&mut self) -> Result<Reader<'a>, DecodeError> {
        let len = usize::try_from(self.varint()?).map_err(|_| DecodeError("length overflow"))?;
        Ok(Reader {
            bytes: self.take(len)?,
            pos: 0,
        })
    }

    fn skip(&mut self, wire_type: u8) -> Result<(), DecodeError> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.length_delimited().map(drop),
            FIXED32 => self.take(4).map(drop),
            _ => Err(DecodeError("unsupported wire type")),
        }
    }

    fn read_struct(&mut self, depth: usize) -> Result<Map<String, Value>, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("nested too deeply"));
        }
        let mut map = Map::new();
        while !self.at_end() {
            match self.tag()? {
                (1, LEN) => {
                    let (key, value) = self.length_delimited()?.read_entry(depth)?;
                    map.insert(key, value);
                }
                (_, wire_type) => self.skip(wire_type)?,
            }
        }
        Ok(map)
    }

    /// A `map<string, Value>` entry: field 1 is the key, field 2 the value.
    fn read_entry(&mut self, depth: usize) -> Result<(String, Value), DecodeError> {
        let mut key = String::new();
        let mut value = Value::Null;
        while !self.at_end() {
            match self.tag()? {
                (1, LEN) => key = self.string()?,
                (2, LEN) => value = self.length_delimited()?.read_value(depth + 1)?,
                (_, wire_type) => self.skip(wire_type)?,
            }
        }
        Ok((key, value))
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let len = usize::try_from(self.varint()?).map_err(|_| DecodeError("length overflow"))?;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("string is not UTF-8"))
    }

    fn read_value(&mut self, depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("nested too deeply"));
        }
        let mut value = Value::Null;
        while !self.at_end() {
            value = match self.tag()? {
                (1, VARINT) => {
                    self.varint()?;
                    Value::Null
                }
                (2, FIXED64) => {
                    let raw = self.take(8)?;
                    let mut le = [0u8; 8];
                    le.copy_from_slice(raw);
                    number(f64::from_le_bytes(le))?
                }
                (3, LEN) => Value::String(self.string()?),
                (4, VARINT) => Value::Bool(self.varint()? != 0),
                (5, LEN) => Value::Object(self.length_delimited()?.read_struct(depth + 1)?),
                (6, LEN) => self.length_delimited()?.read_list(depth + 1)?,
                (_, wire_type) => {
                    self.skip(wire_type)?;
                    continue;
                }
            };
        }
        Ok(value)
    }

    fn read_list(&mut self, depth: usize) -> Result<Value, DecodeError> {
        let mut items = Vec::new();
        while !self.at_end() {
            match self.tag()? {
                (1, LEN) => items.push(self.length_delimited()?.read_value(depth + 1)?),
                (_, wire_type) => self.skip(wire_type)?,
            }
        }
        Ok(Value::Array(items))
    }
}

/// Struct numbers are doubles; whole numbers become JSON integers so that they deserialize
/// into integer fields.
fn number(n: f64) -> Result<Value, DecodeError> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() <= EXACT {
        // In range and whole: the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or(DecodeError("number is not finite"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Minimal encoder, for tests only: the inverse of the decoder.
    pub(crate) fn encode_struct(map: &Map<String, Value>) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, value) in map {
            let mut entry = Vec::new();
            put_len(&mut entry, 1, key.as_bytes());
            put_len(&mut entry, 2, &encode_value(value));
            put_len(&mut out, 1, &entry);
        }
        out
    }

    fn encode_value(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        match value {
            Value::Null => put_varint(&mut out, 1 << 3, 0),
            Value::Number(n) => {
                out.push((2 << 3) | FIXED64);
                out.extend_from_slice(&n.as_f64().unwrap().to_le_bytes());
            }
            Value::String(s) => put_len(&mut out, 3, s.as_bytes()),
            Value::Bool(b) => put_varint(&mut out, 4 << 3, u64::from(*b)),
            Value::Object(map) => put_len(&mut out, 5, &encode_struct(map)),
            Value::Array(items) => {
                let mut list = Vec::new();
                for item in items {
                    put_len(&mut list, 1, &encode_value(item));
                }
                put_len(&mut out, 6, &list);
            }
        }
        out
    }

    fn put_varint(out: &mut Vec<u8>, tag: u64, value: u64) {
        write_varint(out, tag);
        write_varint(out, value);
    }

    fn write_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn put_len(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
        write_varint(out, (field << 3) | u64::from(LEN));
        write_varint(out, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn round_trips_nested_values() {
        let value = json!({
            "models": [{"name": "gpt-4o", "tier": "flagship", "window": 128000},
                       {"name": "模型", "ratio": 0.05, "on": true, "none": null}],
            "empty": {}, "list": []
        });
        let bytes = encode_struct(value.as_object().unwrap());
        assert_eq!(decode_struct(&bytes).unwrap(), value);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rejects_garbage_without_panicking() {
        assert!(decode_struct(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff").is_err());
        assert!(decode_struct(b"\x0a\x05abc").is_err());
        assert!(decode_struct(b"\x0f").is_err());
        for len in 0..64u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37) ^ 0x0a).collect();
            let _ = decode_struct(&bytes);
        }
    }

    /// Length of `x` as a varint.
    fn varint_len(x: usize) -> usize {
        let mut n = 1;
        let mut x = x >> 7;
        while x > 0 {
            n += 1;
            x >>= 7;
        }
        n
    }

    /// The payload length `x` whose field (its length varint plus `x` bytes) takes `total` bytes.
    fn payload_for(total: usize) -> Option<usize> {
        (1..=3)
            .filter_map(|l| total.checked_sub(l))
            .find(|&x| varint_len(x) + x == total)
    }

    /// Text of `len` bytes cycling through bytes that mislead a first-byte test.
    fn tricky(len: usize, salt: usize) -> String {
        const CHARS: &[u8] = b"{ \t\n\r\"a\":[1]}";
        (0..len)
            .map(|i| char::from(CHARS[(i + salt) % CHARS.len()]))
            .collect()
    }

    /// A key and a string value whose map entry is exactly `n` bytes, with a key of about
    /// `key_len` bytes (the nearest that fits).
    fn entry_of_len(n: usize, key_len: usize, salt: usize) -> Option<(String, Value)> {
        (key_len..=n).chain((0..key_len).rev()).find_map(|k| {
            // Entry: key tag, key length, key; value tag, value length, value message.
            let rest = n.checked_sub(1 + varint_len(k) + k + 1)?;
            let message = payload_for(rest)?;
            // Value message: string tag, string length, string.
            let string = payload_for(message.checked_sub(1)?)?;
            Some((tricky(k, salt), Value::String(tricky(string, salt + 3))))
        })
    }

    /// Reads the first entry's length (after its tag).
    fn first_entry_len(bytes: &[u8]) -> usize {
        assert_eq!(bytes[0], 0x0a);
        let mut value = 0;
        for (i, b) in bytes[1..].iter().enumerate() {
            value |= usize::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                break;
            }
        }
        value
    }

    /// What the old test (first non-whitespace byte is `{`) would have called JSON.
    fn looks_like_json(bytes: &[u8]) -> bool {
        bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
    }

    const TRICKY_LENGTHS: [usize; 12] = [9, 10, 13, 32, 123, 0, 1, 7, 127, 128, 200, 300];

    #[wasm_bindgen_test(unsupported = test)]
    fn every_first_entry_length_is_a_struct() {
        let mut misread_before = 0;
        for n in 0..=400usize {
            for (salt, key_len) in TRICKY_LENGTHS.into_iter().enumerate() {
                let mut bytes = Vec::new();
                let mut value = Map::new();
                if n < 6 {
                    // Below the smallest key + value entry: an entry with a key only (or
                    // nothing), as a decoder must still take it.
                    let Some(k) = n.checked_sub(2).filter(|_| n != 1) else {
                        if n == 0 {
                            bytes.extend_from_slice(&[0x0a, 0x00]);
                            value.insert(String::new(), Value::Null);
                        } else {
                            continue;
                        }
                        assert_eq!(detect(&bytes), Format::Struct);
                        assert_eq!(decode_struct(&bytes).unwrap(), Value::Object(value));
                        continue;
                    };
                    let key = tricky(k, salt);
                    let mut entry = Vec::new();
                    put_len(&mut entry, 1, key.as_bytes());
                    put_len(&mut bytes, 1, &entry);
                    value.insert(key, Value::Null);
                } else {
                    let (key, v) = entry_of_len(n, key_len, salt).unwrap();
                    value.insert(key, v);
                    bytes = encode_struct(&value);
                }
                assert_eq!(first_entry_len(&bytes), n, "{bytes:?}");
                // Alone, and followed by an entry of a tricky length.
                for more in [None, Some(TRICKY_LENGTHS[(n + salt) % 5])] {
                    let mut bytes = bytes.clone();
                    let mut value = value.clone();
                    if let Some(m) = more {
                        let (key, v) = entry_of_len(m.max(6), m, salt + 1).unwrap();
                        if !value.contains_key(&key) {
                            let mut one = Map::new();
                            one.insert(key.clone(), v.clone());
                            bytes.extend(encode_struct(&one));
                            value.insert(key, v);
                        }
                    }
                    misread_before += usize::from(looks_like_json(&bytes));
                    assert_eq!(detect(&bytes), Format::Struct, "entry of {n}: {bytes:?}");
                    assert_eq!(decode_struct(&bytes).unwrap(), Value::Object(value));
                }
            }
        }
        // The first-byte test got some of these wrong (0x0a 0x7b: "\n{").
        assert!(misread_before > 0);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn structs_of_many_tricky_entries_are_structs() {
        let mut rng = crate::test_support::Rng(0x9e37_79b9_7f4a_7c15);
        let pick = |rng: &mut crate::test_support::Rng| {
            if rng.below(3) == 0 {
                6 + rng.below(395)
            } else {
                TRICKY_LENGTHS[rng.below(TRICKY_LENGTHS.len())].max(6)
            }
        };
        for round in 0..500 {
            let mut map = Map::new();
            for i in 0..1 + rng.below(6) {
                let n = pick(&mut rng);
                let (key, value) = entry_of_len(n, pick(&mut rng), round + i).unwrap();
                // Some values are themselves Structs or lists of tricky entries.
                let value = match rng.below(4) {
                    0 => {
                        let (k, v) = entry_of_len(pick(&mut rng), 10, i).unwrap();
                        Value::Object([(k, v)].into_iter().collect())
                    }
                    1 => Value::Array(vec![value, Value::Bool(true), json!(12.5)]),
                    _ => value,
                };
                map.insert(key, value);
            }
            let bytes = encode_struct(&map);
            assert_eq!(detect(&bytes), Format::Struct, "{bytes:?}");
            assert_eq!(decode_struct(&bytes).unwrap(), Value::Object(map));
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn json_texts_are_json() {
        let exact = format!("\n{{\"models\": [], \"pad\": \"{}\"}}", "x".repeat(99));
        // `\n{` is a tag and the length 123, and exactly 123 bytes follow: still JSON, as the
        // entry's first byte (`"`) is no key or value field.
        assert_eq!(exact.len(), 2 + 123);
        let texts = [
            "{}".to_owned(),
            "{\"models\": [{\"name\": \"gpt-4o\"}]}".to_owned(),
            " \n\t\r\n{\"models\": []}\n".to_owned(),
            "\n\n\n{\n  \"fallback\": {\"default_cluster\": \"llm\"}\n}\n".to_owned(),
            "\r\n{\"status_path\": \"/s\"}".to_owned(),
            format!("\n{{\"a\": \"{}\"}}", "y".repeat(400)),
            exact,
        ];
        for text in texts {
            assert!(serde_json::from_str::<Value>(&text).is_ok(), "{text:?}");
            assert_eq!(detect(text.as_bytes()), Format::Json, "{text:?}");
        }
        // JSON with every whitespace prefix up to 130 bytes (so `\n{` lengths line up).
        for pad in 0..130 {
            for ws in [" ", "\n", "\t", "\r"] {
                let text = format!("{}{{\"models\": []}}", ws.repeat(pad));
                assert_eq!(detect(text.as_bytes()), Format::Json, "{text:?}");
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn blank_and_unreadable_bytes() {
        assert_eq!(detect(b""), Format::Empty);
        assert_eq!(detect(b" \n\t\r "), Format::Empty);
        // Neither: left to the decoder, whose error says why.
        for bytes in [&b"models: []"[..], b"\x0a\x05abc", b"\xff"] {
            assert_eq!(detect(bytes), Format::Struct, "{bytes:?}");
            assert!(decode_struct(bytes).is_err());
        }
        // A cut Struct that starts like JSON is read as JSON (and fails there).
        assert_eq!(detect(b"\x0a\x7b\x0a\x01"), Format::Json);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_bytes_are_an_empty_struct() {
        assert_eq!(decode_struct(b"").unwrap(), json!({}));
    }
}
