//! FNV-1a, 64 bits: a stable hash (across workers, restarts and builds) of short keys, and a
//! [`Hasher`] for maps of trusted keys.

use std::hash::Hasher;

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

fn extend(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// The hash of `bytes`.
pub fn hash(bytes: &[u8]) -> u64 {
    extend(OFFSET, bytes)
}

/// FNV-1a as a [`Hasher`] (`BuildHasherDefault<Fnv>`).
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(OFFSET)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = extend(self.0, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn known_values_and_the_hasher_agree() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
        let mut h = Fnv::default();
        h.write(b"foo");
        h.write(b"bar");
        assert_eq!(h.finish(), hash(b"foobar"));
    }
}
