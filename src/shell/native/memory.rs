//! What the native build keeps in process memory in place of proxy-wasm's host: shared data
//! with compare-and-swap, and a byte range across a body's chunks. No host calls.

use proxy_wasm::types::Status;
use std::collections::HashMap;

/// Shared data as proxy-wasm defines it: a value per key and a CAS token that changes on
/// every write (never 0, which means "no check").
#[derive(Default)]
pub struct SharedStore {
    entries: HashMap<String, (Vec<u8>, u32)>,
}

impl SharedStore {
    /// The value and its token, or `(None, None)` for a key never written.
    pub fn get(&self, key: &str) -> (Option<Vec<u8>>, Option<u32>) {
        match self.entries.get(key) {
            Some((value, cas)) => (Some(value.clone()), Some(*cas)),
            None => (None, None),
        }
    }

    /// Writes `value`; with a token, only if nobody wrote since it was read.
    pub fn set(&mut self, key: &str, value: &[u8], cas: Option<u32>) -> Result<(), Status> {
        let next = match (self.entries.get(key), cas) {
            (Some((_, current)), Some(cas)) if *current != cas => return Err(Status::CasMismatch),
            (Some((_, current)), _) => current.wrapping_add(1).max(1),
            (None, _) => 1,
        };
        match self.entries.get_mut(key) {
            Some(entry) => {
                entry.0.clear();
                entry.0.extend_from_slice(value);
                entry.1 = next;
            }
            None => {
                self.entries.insert(key.to_owned(), (value.to_vec(), next));
            }
        }
        Ok(())
    }
}

/// Bytes `[start, start + size)` of a body held as consecutive chunks (copied once).
pub fn copy_range<'a, I>(chunks: I, start: usize, size: usize) -> Vec<u8>
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: Clone,
{
    let end = start.saturating_add(size);
    let chunks = chunks.into_iter();
    let total: usize = chunks.clone().map(<[u8]>::len).sum();
    // One allocation of the final size: growing by chunks copied a 100 KB body several times.
    let mut out = Vec::with_capacity(total.min(end).saturating_sub(start));
    let mut offset = 0usize;
    for bytes in chunks {
        let (from, to) = (offset, offset + bytes.len());
        offset = to;
        if to <= start {
            continue;
        }
        if from >= end {
            break;
        }
        let lo = start.saturating_sub(from);
        let hi = bytes.len().min(end - from);
        out.extend_from_slice(bytes.get(lo..hi).unwrap_or_default());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_with_a_stale_token_is_refused_and_a_fresh_one_lands() {
        let mut store = SharedStore::default();
        assert_eq!(store.get("k"), (None, None));
        store.set("k", b"a", None).unwrap();
        let (value, cas) = store.get("k");
        assert_eq!(value.as_deref(), Some(&b"a"[..]));
        let cas = cas.unwrap();
        assert_ne!(cas, 0);
        store.set("k", b"b", Some(cas)).unwrap();
        // The token of the first read is stale now: as between two workers racing.
        assert_eq!(store.set("k", b"c", Some(cas)), Err(Status::CasMismatch));
        let (value, fresh) = store.get("k");
        assert_eq!(value.as_deref(), Some(&b"b"[..]));
        assert_ne!(fresh, Some(cas));
        store.set("k", b"c", fresh).unwrap();
        assert_eq!(store.get("k").0.as_deref(), Some(&b"c"[..]));
    }

    #[test]
    fn a_range_across_chunks_is_the_same_bytes_as_from_one_buffer() {
        let whole: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let cuts = [0usize, 1, 7, 300, 301, 999, 1000];
        let chunks: Vec<&[u8]> = cuts
            .windows(2)
            .filter_map(|w| whole.get(w[0]..w[1]))
            .collect();
        for start in [0usize, 1, 6, 7, 299, 300, 500, 998, 999, 1000, 2000] {
            for size in [0usize, 1, 2, 100, 1000, usize::MAX] {
                let want = whole
                    .get(start.min(1000)..start.saturating_add(size).min(1000))
                    .unwrap_or_default();
                assert_eq!(
                    copy_range(chunks.iter().copied(), start, size),
                    want,
                    "start {start} size {size}"
                );
            }
        }
    }
}
