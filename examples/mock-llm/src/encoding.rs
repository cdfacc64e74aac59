//! Response compression like CDN-fronted provider APIs: `accept-encoding`
//! negotiation, whole-body gzip/deflate, and a per-frame flushing stream
//! encoder for event streams.
//!
//! HTTP `deflate` is the zlib format (RFC 1950), not raw deflate; both
//! encoders come from flate2 with its pure-Rust miniz_oxide backend.

use std::cell::RefCell;
use std::io::Write as _;

use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// A content coding the mock can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Gzip,
    Deflate,
}

impl Encoding {
    /// The `content-encoding` token.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Deflate => "deflate",
        }
    }
}

/// The `--compress` flag: when non-stream JSON answers are compressed
/// (a step's `compress` field overrides it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressMode {
    /// Only when the request's `accept-encoding` accepts gzip or deflate.
    #[default]
    Accepted,
    /// Always gzip, even when the request did not ask (some CDNs do).
    Always,
    /// Never (unless a step forces it).
    Never,
}

impl CompressMode {
    pub fn parse(value: &str) -> Option<CompressMode> {
        match value {
            "accepted" => Some(CompressMode::Accepted),
            "always" => Some(CompressMode::Always),
            "never" => Some(CompressMode::Never),
            _ => None,
        }
    }
}

/// Quality value of one `accept-encoding` element: `None` when malformed
/// (the element is then ignored), `Some(false)` for `q=0` (refused).
fn acceptable(params: &str) -> Option<bool> {
    let mut accepted = true;
    for param in params.split(';') {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("q") {
            continue;
        }
        let q: f32 = value.trim().parse().ok()?;
        if !(0.0..=1.0).contains(&q) {
            return None;
        }
        accepted = q > 0.0;
    }
    Some(accepted)
}

/// What one or more `accept-encoding` values say about a coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Acceptance {
    gzip: Option<bool>,
    deflate: Option<bool>,
    any: Option<bool>,
}

impl Acceptance {
    fn add(&mut self, header_value: &str) {
        for element in header_value.split(',') {
            let (coding, params) = element.split_once(';').unwrap_or((element, ""));
            let coding = coding.trim();
            let Some(ok) = acceptable(params) else {
                continue;
            };
            // RFC 9110 12.5.3: x-gzip is an alias of gzip.
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                self.gzip = Some(ok);
            } else if coding.eq_ignore_ascii_case("deflate") {
                self.deflate = Some(ok);
            } else if coding == "*" {
                self.any = Some(ok);
            }
        }
    }

    /// An explicit entry wins over `*`; a coding that is not mentioned at
    /// all (and no `*`) is not acceptable.
    fn accepts(explicit: Option<bool>, any: Option<bool>) -> bool {
        explicit.or(any).unwrap_or(false)
    }
}

/// The coding to use for a request's `accept-encoding` header values
/// (repeated headers are read together): gzip when acceptable, else deflate
/// when acceptable, else none. `q=0` refuses a coding and `*` stands for
/// every coding not listed.
pub fn negotiate<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Encoding> {
    let mut acc = Acceptance::default();
    for value in values {
        acc.add(value);
    }
    if Acceptance::accepts(acc.gzip, acc.any) {
        Some(Encoding::Gzip)
    } else if Acceptance::accepts(acc.deflate, acc.any) {
        Some(Encoding::Deflate)
    } else {
        None
    }
}

/// Compression level: fast, since the mock serves benchmarks; any level
/// decodes the same.
fn level() -> Compression {
    Compression::fast()
}

/// gzip member header (RFC 1952): deflate, no flags, no mtime, OS unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

/// Reusable compressors, one set per thread: a compressor's state is a few
/// hundred KiB, and allocating (and faulting in) that per answer would cost
/// far more than compressing a small JSON body.
struct Compressors {
    /// Raw deflate, wrapped in a gzip header and trailer by hand.
    raw: Compress,
    /// zlib-wrapped deflate (HTTP `deflate`).
    zlib: Compress,
}

thread_local! {
    static COMPRESSORS: RefCell<Compressors> = RefCell::new(Compressors {
        raw: Compress::new(level(), false),
        zlib: Compress::new(level(), true),
    });
}

/// Runs `c` (freshly reset) over all of `data`, appending to `out`.
fn deflate_into(c: &mut Compress, data: &[u8], out: &mut Vec<u8>) {
    c.reset();
    out.reserve(data.len() / 2 + 64);
    loop {
        let done = usize::try_from(c.total_in()).unwrap_or(usize::MAX);
        let input = data.get(done..).unwrap_or_default();
        match c.compress_vec(input, out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) | Err(_) => return,
            // Out of room: grow and go on.
            Ok(Status::Ok | Status::BufError) => out.reserve(out.capacity().max(256)),
        }
    }
}

/// Compresses a whole body.
pub fn compress(encoding: Encoding, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    COMPRESSORS.with(|cell| {
        let mut compressors = cell.borrow_mut();
        match encoding {
            Encoding::Gzip => {
                out.extend_from_slice(&GZIP_HEADER);
                deflate_into(&mut compressors.raw, data, &mut out);
                let mut crc = Crc::new();
                crc.update(data);
                out.extend_from_slice(&crc.sum().to_le_bytes());
                // ISIZE: the input length modulo 2^32.
                out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            }
            Encoding::Deflate => deflate_into(&mut compressors.zlib, data, &mut out),
        }
    });
    out
}

/// Compresses a stream frame by frame. After each frame the encoder does a
/// sync flush, so every chunk sent so far decodes on arrival; `finish`
/// returns the trailer (gzip CRC and size, or the zlib checksum).
pub enum StreamEncoder {
    Gzip(GzEncoder<Vec<u8>>),
    Deflate(ZlibEncoder<Vec<u8>>),
}

impl StreamEncoder {
    pub fn new(encoding: Encoding) -> StreamEncoder {
        let out = Vec::with_capacity(1024);
        match encoding {
            Encoding::Gzip => StreamEncoder::Gzip(GzEncoder::new(out, level())),
            Encoding::Deflate => StreamEncoder::Deflate(ZlibEncoder::new(out, level())),
        }
    }

    fn output(&mut self) -> &mut Vec<u8> {
        match self {
            StreamEncoder::Gzip(e) => e.get_mut(),
            StreamEncoder::Deflate(e) => e.get_mut(),
        }
    }

    /// Compresses `frame` with a sync flush and returns the bytes to send
    /// (valid until the next call).
    pub fn frame(&mut self, frame: &[u8]) -> &[u8] {
        self.output().clear();
        // flush() is a sync flush (Z_SYNC_FLUSH) in flate2's writers.
        let _ = match self {
            StreamEncoder::Gzip(e) => e.write_all(frame).and_then(|()| e.flush()),
            StreamEncoder::Deflate(e) => e.write_all(frame).and_then(|()| e.flush()),
        };
        self.output()
    }

    /// Ends the compressed stream and returns its remaining bytes.
    pub fn finish(&mut self) -> &[u8] {
        self.output().clear();
        let _ = match self {
            StreamEncoder::Gzip(e) => e.try_finish(),
            StreamEncoder::Deflate(e) => e.try_finish(),
        };
        self.output()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::{GzDecoder, ZlibDecoder};
    use std::io::Read as _;

    fn neg(values: &[&str]) -> Option<Encoding> {
        negotiate(values.iter().copied())
    }

    #[test]
    fn negotiation() {
        use Encoding::{Deflate, Gzip};
        assert_eq!(neg(&[]), None);
        assert_eq!(neg(&[""]), None);
        assert_eq!(neg(&["identity"]), None);
        assert_eq!(neg(&["gzip"]), Some(Gzip));
        assert_eq!(neg(&["GZIP"]), Some(Gzip));
        assert_eq!(neg(&["x-gzip"]), Some(Gzip));
        assert_eq!(neg(&["gzip, deflate, br"]), Some(Gzip));
        assert_eq!(neg(&["deflate, gzip;q=0.5"]), Some(Gzip));
        assert_eq!(neg(&["br, deflate"]), Some(Deflate));
        assert_eq!(neg(&["gzip;q=0, deflate"]), Some(Deflate));
        assert_eq!(neg(&["gzip ; q=0.000, deflate;q=0.1"]), Some(Deflate));
        assert_eq!(neg(&["gzip;q=0,deflate;q=0"]), None);
        assert_eq!(neg(&["*"]), Some(Gzip));
        assert_eq!(neg(&["*;q=0"]), None);
        assert_eq!(neg(&["gzip;q=0, *"]), Some(Deflate));
        assert_eq!(neg(&["*;q=0, deflate"]), Some(Deflate));
        assert_eq!(neg(&["br;q=1.0, *;q=0.1"]), Some(Gzip));
        // Malformed q values are ignored, not taken as refusals.
        assert_eq!(neg(&["gzip;q=abc"]), None);
        assert_eq!(neg(&["gzip;q=2, deflate"]), Some(Deflate));
        // Repeated headers are read together; the later entry wins.
        assert_eq!(neg(&["br", "gzip"]), Some(Gzip));
        assert_eq!(neg(&["gzip", "gzip;q=0"]), None);
    }

    #[test]
    fn modes_parse() {
        assert_eq!(
            CompressMode::parse("accepted"),
            Some(CompressMode::Accepted)
        );
        assert_eq!(CompressMode::parse("always"), Some(CompressMode::Always));
        assert_eq!(CompressMode::parse("never"), Some(CompressMode::Never));
        assert_eq!(CompressMode::parse("sometimes"), None);
    }

    #[test]
    fn whole_bodies_round_trip() {
        let data = br#"{"error":{"message":"x","type":"insufficient_quota"}}"#.repeat(20);
        let gz = compress(Encoding::Gzip, &data);
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        let mut out = Vec::new();
        GzDecoder::new(&gz[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        let z = compress(Encoding::Deflate, &data);
        assert_eq!(z[0] & 0x0f, 8, "zlib header: deflate method");
        let mut out = Vec::new();
        ZlibDecoder::new(&z[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn reused_compressors_and_large_bodies() {
        // Bodies larger than the first reservation, and repeated use of the
        // thread's compressors, still round-trip.
        let mut big = Vec::new();
        let mut x: u32 = 1;
        for _ in 0..200_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            big.push((x >> 24) as u8);
        }
        for data in [&b""[..], b"{}", &big, b"{\"again\":true}"] {
            let mut out = Vec::new();
            GzDecoder::new(&compress(Encoding::Gzip, data)[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, data);
            let mut out = Vec::new();
            ZlibDecoder::new(&compress(Encoding::Deflate, data)[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, data);
        }
    }

    #[test]
    fn stream_frames_decode_as_they_arrive() {
        for encoding in [Encoding::Gzip, Encoding::Deflate] {
            let mut enc = StreamEncoder::new(encoding);
            let frames: [&[u8]; 3] = [b"data: one\n\n", b"data: two\n\n", b"data: [DONE]\n\n"];
            let mut sent = Vec::new();
            let mut expected = Vec::new();
            for frame in frames {
                sent.extend_from_slice(enc.frame(frame));
                expected.extend_from_slice(frame);
                // Everything sent so far decodes to everything written so far.
                let mut out = Vec::new();
                let mut buf = [0u8; 256];
                match encoding {
                    Encoding::Gzip => {
                        let mut d = GzDecoder::new(&sent[..]);
                        while let Ok(n) = d.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                            out.extend_from_slice(&buf[..n]);
                        }
                    }
                    Encoding::Deflate => {
                        let mut d = ZlibDecoder::new(&sent[..]);
                        while let Ok(n) = d.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                            out.extend_from_slice(&buf[..n]);
                        }
                    }
                }
                assert_eq!(out, expected, "{encoding:?}");
            }
            sent.extend_from_slice(enc.finish());
            let mut out = Vec::new();
            match encoding {
                Encoding::Gzip => GzDecoder::new(&sent[..]).read_to_end(&mut out),
                Encoding::Deflate => ZlibDecoder::new(&sent[..]).read_to_end(&mut out),
            }
            .unwrap();
            assert_eq!(out, expected);
        }
    }
}
