//! Reads compressed answers (`content-encoding: gzip` / `deflate`) for the classifier and the
//! usage counters, without ever changing what the client receives.
//!
//! The upstream filter asks every attempt for `accept-encoding: identity`, so providers answer
//! in plain bytes and nothing needs inflating. Some upstreams compress anyway (a CDN that
//! ignores the request, a relay); their answers are inflated here, a bounded amount at a time:
//! an error body up to the classifier's cap, a success only through a small fixed buffer fed
//! to the stream and usage scanners, and never more than [`MAX_OBSERVED_BYTES`] in all (a
//! compression bomb costs bounded CPU and no memory). The bytes forwarded to the client are
//! the upstream's, untouched, with their `content-encoding`.

use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

/// Most decoded bytes observed per answer; past this, observation stops (the answer streams on).
pub const MAX_OBSERVED_BYTES: usize = 64 * 1024 * 1024;

/// Longest gzip header accepted (name, comment and extra fields included).
const MAX_GZIP_HEADER: usize = 64 * 1024;

/// How an answer body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    /// HTTP `deflate`: zlib-wrapped per the RFC, raw deflate from some servers; both are read.
    Deflate,
    /// Anything else (`br`, `zstd`, a list of codings): not read.
    Other,
}

impl Encoding {
    /// Reads a `content-encoding` header value.
    pub fn of_header(value: Option<&[u8]>) -> Self {
        let Some(value) = value else {
            return Encoding::Identity;
        };
        let value = value.trim_ascii();
        if value.is_empty() || value.eq_ignore_ascii_case(b"identity") {
            Encoding::Identity
        } else if value.eq_ignore_ascii_case(b"gzip") || value.eq_ignore_ascii_case(b"x-gzip") {
            Encoding::Gzip
        } else if value.eq_ignore_ascii_case(b"deflate") {
            Encoding::Deflate
        } else {
            Encoding::Other
        }
    }

    /// Whether the filter can read it (identity, or one it inflates).
    pub fn readable(self) -> bool {
        !matches!(self, Encoding::Other)
    }

    /// A compression the filter inflates.
    pub fn readable_compressed(self) -> bool {
        matches!(self, Encoding::Gzip | Encoding::Deflate)
    }
}

/// Where the gzip framing is.
#[derive(Debug)]
enum Framing {
    /// Collecting the gzip header.
    GzipHeader(Vec<u8>),
    /// Waiting for the first byte of a `deflate` body to tell zlib from raw.
    DeflateStart,
    /// Inflating.
    Body,
    /// The compressed stream ended (or was corrupt): nothing more is decoded.
    Done,
}

/// A streaming, bounded inflater for one answer body.
pub struct Inflater {
    framing: Framing,
    state: Option<Box<InflateState>>,
    produced: usize,
    limit: usize,
    corrupt: bool,
    /// The compressed stream reached its end marker.
    ended: bool,
    /// A gzip member (an 8-byte CRC and size trail its deflate stream).
    gzip: bool,
    /// Input bytes left over after the end marker.
    trailing: usize,
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflater")
            .field("framing", &self.framing)
            .field("produced", &self.produced)
            .field("corrupt", &self.corrupt)
            .finish()
    }
}

impl Inflater {
    /// An inflater for `encoding` (`None` for identity and unreadable encodings) that decodes at
    /// most `limit` bytes in all.
    pub fn new(encoding: Encoding, limit: usize) -> Option<Self> {
        let framing = match encoding {
            Encoding::Gzip => Framing::GzipHeader(Vec::new()),
            Encoding::Deflate => Framing::DeflateStart,
            Encoding::Identity | Encoding::Other => return None,
        };
        Some(Self {
            framing,
            state: None,
            produced: 0,
            limit,
            corrupt: false,
            ended: false,
            gzip: encoding == Encoding::Gzip,
            trailing: 0,
        })
    }

    /// Whether the input was not valid compressed data (what was decoded before stays valid).
    pub fn corrupt(&self) -> bool {
        self.corrupt
    }

    /// Decodes the next piece of the body, handing decoded bytes to `sink` in pieces.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(&[u8])) {
        let mut input = input;
        loop {
            match &mut self.framing {
                Framing::Done => {
                    if self.ended {
                        self.trailing = self.trailing.saturating_add(input.len());
                    }
                    return;
                }
                Framing::GzipHeader(header) => {
                    let before = header.len();
                    header.extend_from_slice(input);
                    match gzip_header_len(header) {
                        HeaderScan::Incomplete if header.len() <= MAX_GZIP_HEADER => return,
                        HeaderScan::Incomplete | HeaderScan::Invalid => {
                            self.fail();
                            return;
                        }
                        HeaderScan::Complete(len) => {
                            let consumed = len.saturating_sub(before);
                            input = input.get(consumed..).unwrap_or_default();
                            self.state = Some(InflateState::new_boxed(DataFormat::Raw));
                            self.framing = Framing::Body;
                        }
                    }
                }
                Framing::DeflateStart => {
                    let Some(&first) = input.first() else { return };
                    // A zlib stream starts with CM = 8 and a header checksum (RFC 1950).
                    let second = input.get(1).copied();
                    let zlib = first & 0x0f == 8
                        && second.is_none_or(|s| (u16::from(first) << 8 | u16::from(s)) % 31 == 0);
                    let format = if zlib {
                        DataFormat::ZLibIgnoreChecksum
                    } else {
                        DataFormat::Raw
                    };
                    self.state = Some(InflateState::new_boxed(format));
                    self.framing = Framing::Body;
                }
                Framing::Body => {
                    self.inflate(input, sink);
                    return;
                }
            }
        }
    }

    fn fail(&mut self) {
        self.corrupt = true;
        self.framing = Framing::Done;
        self.state = None;
    }

    fn inflate(&mut self, mut input: &[u8], sink: &mut impl FnMut(&[u8])) {
        let Some(state) = self.state.as_mut() else {
            return;
        };
        let mut out = [0u8; 8192];
        loop {
            let room = self.limit.saturating_sub(self.produced).min(out.len());
            if room == 0 {
                self.framing = Framing::Done;
                self.state = None;
                return;
            }
            let Some(window) = out.get_mut(..room) else {
                return;
            };
            let result = inflate(state, input, window, MZFlush::None);
            if let Some(decoded) = window.get(..result.bytes_written) {
                if !decoded.is_empty() {
                    sink(decoded);
                }
            }
            self.produced = self.produced.saturating_add(result.bytes_written);
            input = input.get(result.bytes_consumed..).unwrap_or_default();
            match result.status {
                Ok(MZStatus::StreamEnd) => {
                    self.ended = true;
                    self.trailing = self.trailing.saturating_add(input.len());
                    self.framing = Framing::Done;
                    self.state = None;
                    return;
                }
                Ok(_) | Err(MZError::Buf) => {
                    // Stop when the input is used up and nothing more came out.
                    if result.bytes_written < room && input.is_empty() {
                        return;
                    }
                    if result.bytes_written == 0 && result.bytes_consumed == 0 {
                        return;
                    }
                }
                Err(_) => {
                    self.fail();
                    return;
                }
            }
        }
    }
}

/// Inflates a whole compressed body: `None` unless it decoded completely within `limit` bytes
/// (a request body is rewritten from it, so a prefix will not do).
pub fn inflate_complete(encoding: Encoding, body: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut inflater = Inflater::new(encoding, limit)?;
    let mut out = Vec::new();
    inflater.feed(body, &mut |piece| out.extend_from_slice(piece));
    // Exactly one member and nothing after it: a second gzip member or trailing bytes would be
    // dropped by a rewrite, so such a body is not rewritten at all.
    let expected_trailer = if inflater.gzip { 8 } else { 0 };
    (inflater.ended && !inflater.corrupt && inflater.trailing == expected_trailer).then_some(out)
}

/// Inflates a (possibly truncated) compressed body, keeping at most `limit` decoded bytes.
/// Returns what could be decoded.
pub fn inflate_prefix(encoding: Encoding, body: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut inflater = Inflater::new(encoding, limit)?;
    let mut out = Vec::new();
    inflater.feed(body, &mut |piece| out.extend_from_slice(piece));
    Some(out)
}

enum HeaderScan {
    Incomplete,
    Invalid,
    Complete(usize),
}

/// The length of a gzip member header (RFC 1952), once all of it is in `bytes`.
fn gzip_header_len(bytes: &[u8]) -> HeaderScan {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let Some(fixed) = bytes.get(..10) else {
        let matches = bytes
            .iter()
            .zip([0x1f, 0x8b, 8])
            .all(|(b, want)| *b == want);
        return if matches {
            HeaderScan::Incomplete
        } else {
            HeaderScan::Invalid
        };
    };
    let (magic, flags) = (fixed.get(..3), fixed.get(3).copied().unwrap_or(0));
    if magic != Some(&[0x1f, 0x8b, 8][..]) || flags & 0xe0 != 0 {
        return HeaderScan::Invalid;
    }
    let mut at = 10usize;
    if flags & FEXTRA != 0 {
        let (Some(lo), Some(hi)) = (bytes.get(at), bytes.get(at + 1)) else {
            return HeaderScan::Incomplete;
        };
        at += 2 + usize::from(u16::from_le_bytes([*lo, *hi]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = bytes.get(at..).unwrap_or_default();
            match memchr::memchr(0, rest) {
                Some(end) => at += end + 1,
                None => return HeaderScan::Incomplete,
            }
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if bytes.len() < at {
        HeaderScan::Incomplete
    } else {
        HeaderScan::Complete(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::{compress_to_vec, compress_to_vec_zlib};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn gzip(data: &[u8]) -> Vec<u8> {
        // A minimal gzip member: header, raw deflate, then CRC32 and size (not checked here).
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        out.extend(compress_to_vec(data, 6));
        out.extend([0; 8]);
        out
    }

    const QUOTA: &[u8] = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;

    #[wasm_bindgen_test(unsupported = test)]
    fn encodings_from_headers() {
        assert_eq!(Encoding::of_header(None), Encoding::Identity);
        assert_eq!(Encoding::of_header(Some(b" GZIP ")), Encoding::Gzip);
        assert_eq!(Encoding::of_header(Some(b"deflate")), Encoding::Deflate);
        assert_eq!(Encoding::of_header(Some(b"br")), Encoding::Other);
        assert_eq!(Encoding::of_header(Some(b"gzip, br")), Encoding::Other);
        assert!(!Encoding::Other.readable());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn whole_and_split_bodies_inflate_the_same() {
        for (encoding, body) in [
            (Encoding::Gzip, gzip(QUOTA)),
            (Encoding::Deflate, compress_to_vec_zlib(QUOTA, 6)),
            (Encoding::Deflate, compress_to_vec(QUOTA, 6)),
        ] {
            assert_eq!(
                inflate_prefix(encoding, &body, 1 << 20).as_deref(),
                Some(QUOTA)
            );
            for split in 0..body.len() {
                let mut inflater = Inflater::new(encoding, 1 << 20).unwrap();
                let mut out = Vec::new();
                let (a, b) = body.split_at(split);
                inflater.feed(a, &mut |p| out.extend_from_slice(p));
                inflater.feed(b, &mut |p| out.extend_from_slice(p));
                assert_eq!(out, QUOTA, "{encoding:?} split at {split}");
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn truncated_bodies_give_their_prefix_and_limits_hold() {
        let big: Vec<u8> = QUOTA
            .iter()
            .copied()
            .chain(std::iter::repeat_n(b' ', 1 << 20))
            .collect();
        let body = gzip(&big);
        // Cut in the middle of the compressed stream: the head is still there.
        let cut = inflate_prefix(Encoding::Gzip, body.get(..200).unwrap(), 1 << 22).unwrap();
        assert!(cut.starts_with(QUOTA));
        // A bomb decodes to the limit only.
        let limited = inflate_prefix(Encoding::Gzip, &body, 4096).unwrap();
        assert_eq!(limited.len(), 4096);
        assert!(limited.starts_with(QUOTA));
        // Only a complete decode counts as the whole body.
        assert_eq!(inflate_complete(Encoding::Gzip, &body, 4096), None);
        assert_eq!(
            inflate_complete(Encoding::Gzip, body.get(..200).unwrap(), 1 << 22),
            None
        );
        assert_eq!(
            inflate_complete(Encoding::Gzip, &body, 1 << 22).map(|b| b.len()),
            Some(big.len())
        );
        // Two members, or bytes after the member: not one whole body.
        let two: Vec<u8> = gzip(QUOTA).into_iter().chain(gzip(QUOTA)).collect();
        assert_eq!(inflate_complete(Encoding::Gzip, &two, 1 << 20), None);
        let mut junk = gzip(QUOTA);
        junk.extend(b"junk");
        assert_eq!(inflate_complete(Encoding::Gzip, &junk, 1 << 20), None);
        assert_eq!(
            inflate_complete(Encoding::Gzip, &gzip(QUOTA), 1 << 20).as_deref(),
            Some(QUOTA)
        );
        let zlib = compress_to_vec_zlib(QUOTA, 6);
        assert_eq!(
            inflate_complete(Encoding::Deflate, &zlib, 1 << 20).as_deref(),
            Some(QUOTA)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn garbage_is_reported_not_trusted() {
        let mut inflater = Inflater::new(Encoding::Gzip, 1024).unwrap();
        let mut out = Vec::new();
        inflater.feed(b"{\"plain\":\"json\"}", &mut |p| out.extend_from_slice(p));
        assert!(inflater.corrupt());
        assert!(out.is_empty());
        // A header with a file name, split byte by byte.
        let mut named = vec![0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 255];
        named.extend(b"answer.json\0");
        named.extend(compress_to_vec(QUOTA, 6));
        let mut inflater = Inflater::new(Encoding::Gzip, 1024).unwrap();
        let mut out = Vec::new();
        for byte in &named {
            inflater.feed(std::slice::from_ref(byte), &mut |p| {
                out.extend_from_slice(p)
            });
        }
        assert_eq!(out, QUOTA);
        assert!(!inflater.corrupt());
    }
}
