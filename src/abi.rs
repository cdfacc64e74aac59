//! The byte formats of the proxy-wasm ABI that the shell exchanges with the host: header maps
//! and property paths. Pure, so the encoders and decoders are tested natively.
//!
//! A map is `count` (u32 LE), then per pair its key and value lengths (u32 LE each), then every
//! key and value followed by a NUL. A property path is its segments joined by NUL.

/// Serializes header pairs for the host.
pub fn encode_map(pairs: &[(&str, &[u8])]) -> Vec<u8> {
    let size = 4 + pairs
        .iter()
        .map(|(k, v)| k.len() + v.len() + 10)
        .sum::<usize>();
    let mut out = Vec::with_capacity(size);
    let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    out.extend_from_slice(&len(pairs.len()));
    for (key, value) in pairs {
        out.extend_from_slice(&len(key.len()));
        out.extend_from_slice(&len(value.len()));
    }
    for (key, value) in pairs {
        out.extend_from_slice(key.as_bytes());
        out.push(0);
        out.extend_from_slice(value);
        out.push(0);
    }
    out
}

/// Reads host-serialized pairs; `None` when the bytes are malformed (never panics).
pub fn decode_map(bytes: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let u32_at = |at: usize| -> Option<usize> {
        let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        usize::try_from(u32::from_le_bytes(b)).ok()
    };
    let count = u32_at(0)?;
    // Every pair takes at least 10 bytes: a count beyond that is garbage.
    if count > bytes.len() / 10 + 1 {
        return None;
    }
    let mut at = 4usize.checked_add(count.checked_mul(8)?)?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let key_len = u32_at(4 + i * 8)?;
        let value_len = u32_at(8 + i * 8)?;
        let key = bytes.get(at..at.checked_add(key_len)?)?;
        at = at.checked_add(key_len + 1)?;
        let value = bytes.get(at..at.checked_add(value_len)?)?;
        at = at.checked_add(value_len + 1)?;
        out.push((key, value));
    }
    Some(out)
}

/// Serializes a property path (`["response", "code_details"]`).
pub fn encode_path(path: &[&str]) -> Vec<u8> {
    path.join("\0").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn maps_round_trip_and_garbage_is_refused() {
        let pairs: Vec<(&str, &[u8])> = vec![(":status", b"200"), ("x-a", b""), ("k", b"\xff\x00")];
        let bytes = encode_map(&pairs);
        let back = decode_map(&bytes).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0], (&b":status"[..], &b"200"[..]));
        assert_eq!(back[2].1, b"\xff\x00");
        assert_eq!(decode_map(&[]), None);
        assert_eq!(decode_map(&[255, 255, 255, 255]), None);
        assert_eq!(decode_map(&bytes[..bytes.len() - 3]), None);
        assert_eq!(decode_map(&0u32.to_le_bytes()), Some(vec![]));
        assert_eq!(encode_path(&["response", "flags"]), b"response\0flags");
    }
}
