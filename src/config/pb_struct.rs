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

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_bytes_are_an_empty_struct() {
        assert_eq!(decode_struct(b"").unwrap(), json!({}));
    }
}
