//! Minimal HTTP/1.1: an incremental request parser (keep-alive, `content-length`
//! and `transfer-encoding: chunked` bodies, `expect: 100-continue`) and helpers
//! to write response heads and chunks.

use std::io::Write as _;

/// Largest accepted request head (request line + headers).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Longest accepted chunk-size or trailer line in a chunked body.
const MAX_LINE_BYTES: usize = 8 * 1024;

/// The interim response sent when a client asks for `expect: 100-continue`.
pub const CONTINUE_100: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
/// Terminates a chunked response body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// A fully read request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// Request target as sent: path plus optional `?query`.
    pub target: String,
    /// Headers in arrival order, names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// Decoded body (chunked framing removed).
    pub body: Vec<u8>,
    /// Whether the connection may be reused after the response.
    pub keep_alive: bool,
}

impl Request {
    /// The path without the query string.
    pub fn path(&self) -> &str {
        match self.target.split_once('?') {
            Some((path, _)) => path,
            None => &self.target,
        }
    }

    /// The query string without the `?` (empty when absent).
    pub fn query(&self) -> &str {
        match self.target.split_once('?') {
            Some((_, query)) => query,
            None => "",
        }
    }

    /// The first value of a header; `name` must be lowercase.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Returns the value of `key` in an `a=1&b=2` query string.
pub fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Where a request's account (its credential) sits in the request, as
/// offsets so that finding it allocates nothing; see [`find_account`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccountAt {
    /// No credential: the account is `-`.
    #[default]
    None,
    /// `headers[index].1[start..end]`.
    Header {
        index: usize,
        start: usize,
        end: usize,
    },
    /// `target[start..end]` (the `key` query parameter).
    Target { start: usize, end: usize },
}

/// The account of a request without a credential.
pub const NO_ACCOUNT: &str = "-";

impl AccountAt {
    /// The account string, given the request's headers and target.
    pub fn resolve<'a>(self, headers: &'a [(String, String)], target: &'a str) -> &'a str {
        let found = match self {
            AccountAt::None => None,
            AccountAt::Header { index, start, end } => headers
                .get(index)
                .and_then(|(_, value)| value.get(start..end)),
            AccountAt::Target { start, end } => target.get(start..end),
        };
        found.unwrap_or(NO_ACCOUNT)
    }
}

/// The bearer token in an `authorization` value (`Bearer <token>`, scheme
/// case-insensitive), as a byte range of the value.
fn bearer_token(value: &str) -> Option<(usize, usize)> {
    let scheme = value.get(..6)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let rest = value.get(6..)?;
    let token = rest.trim_start_matches([' ', '\t']);
    if token.len() == rest.len() {
        return None; // "Bearerx": no separator
    }
    let start = value.len() - token.len();
    let token = token.trim_end();
    (!token.is_empty()).then_some((start, start + token.len()))
}

/// Finds a request's account: the bearer token of `authorization: Bearer
/// <key>`, else `x-api-key`, else `x-goog-api-key`, else the `key` query
/// parameter (as sent, not percent-decoded), else none (`-`). Empty values
/// are skipped. `headers` have lowercase names.
pub fn find_account(headers: &[(String, String)], target: &str) -> AccountAt {
    let header = |name: &str| {
        headers
            .iter()
            .enumerate()
            .find(|(_, (n, v))| n == name && !v.is_empty())
            .map(|(index, (_, v))| (index, v.as_str()))
    };
    let bearer = headers
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| n == "authorization")
        .find_map(|(index, (_, v))| bearer_token(v).map(|(start, end)| (index, start, end)));
    if let Some((index, start, end)) = bearer {
        return AccountAt::Header { index, start, end };
    }
    for name in ["x-api-key", "x-goog-api-key"] {
        if let Some((index, value)) = header(name) {
            return AccountAt::Header {
                index,
                start: 0,
                end: value.len(),
            };
        }
    }
    let Some(q) = target.find('?') else {
        return AccountAt::None;
    };
    let mut pos = q + 1;
    for pair in target.get(pos..).unwrap_or_default().split('&') {
        if let Some(value) = pair.strip_prefix("key=") {
            if !value.is_empty() {
                let start = pos + 4;
                return AccountAt::Target {
                    start,
                    end: start + value.len(),
                };
            }
        }
        pos += pair.len() + 1;
    }
    AccountAt::None
}

/// A request that cannot be served; the connection is answered and closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpError {
    BadRequest(&'static str),
    HeadTooLarge,
    BodyTooLarge,
    UnsupportedVersion,
}

impl HttpError {
    pub fn status(self) -> u16 {
        match self {
            HttpError::BadRequest(_) => 400,
            HttpError::HeadTooLarge => 431,
            HttpError::BodyTooLarge => 413,
            HttpError::UnsupportedVersion => 505,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            HttpError::BadRequest(msg) => msg,
            HttpError::HeadTooLarge => "request head too large",
            HttpError::BodyTooLarge => "request body too large",
            HttpError::UnsupportedVersion => "only HTTP/1.0 and HTTP/1.1 are supported",
        }
    }
}

#[derive(Debug)]
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    keep_alive: bool,
    framing: BodyFraming,
    expect_continue: bool,
}

impl Head {
    fn into_request(self, body: Vec<u8>) -> Request {
        Request {
            method: self.method,
            target: self.target,
            headers: self.headers,
            body,
            keep_alive: self.keep_alive,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyFraming {
    Empty,
    Length(usize),
    Chunked,
}

#[derive(Debug, Clone, Copy)]
enum ChunkState {
    /// Expecting a `hex-size[;ext]\r\n` line.
    Size,
    /// Inside chunk data, this many bytes left.
    Data(usize),
    /// Expecting the CRLF that ends chunk data.
    DataEnd,
    /// After the zero-size chunk: trailer lines until an empty line.
    Trailers,
}

#[derive(Debug)]
enum State {
    Head,
    Fixed {
        head: Head,
        body: Vec<u8>,
        remaining: usize,
    },
    Chunked {
        head: Head,
        body: Vec<u8>,
        chunk: ChunkState,
    },
}

/// Result of one [`Parser::advance`] call.
#[derive(Debug)]
pub struct Progress {
    /// Bytes of the input that were consumed; the caller drops them.
    pub consumed: usize,
    /// A request, when one was completed.
    pub request: Option<Request>,
}

/// Incremental HTTP/1.1 request parser. Feed it the unconsumed bytes of the
/// connection's read buffer; it consumes what it can and returns at most one
/// request per call.
#[derive(Debug)]
pub struct Parser {
    state: State,
    continue_pending: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    pub fn new() -> Self {
        Parser {
            state: State::Head,
            continue_pending: false,
        }
    }

    /// True when a `100 Continue` should be sent now (returns true once).
    pub fn take_continue(&mut self) -> bool {
        std::mem::take(&mut self.continue_pending)
    }

    /// True when no partial request has been consumed.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Head)
    }

    pub fn advance(&mut self, input: &[u8]) -> Result<Progress, HttpError> {
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            match &mut self.state {
                State::Head => {
                    // Tolerate stray CRLFs between requests (RFC 9112 2.2).
                    let skip = rest
                        .iter()
                        .take_while(|b| **b == b'\r' || **b == b'\n')
                        .count();
                    pos += skip;
                    let rest = rest.get(skip..).unwrap_or_default();
                    let Some(end) = memchr::memmem::find(rest, b"\r\n\r\n") else {
                        if rest.len() > MAX_HEAD_BYTES {
                            return Err(HttpError::HeadTooLarge);
                        }
                        return Ok(Progress {
                            consumed: pos,
                            request: None,
                        });
                    };
                    if end > MAX_HEAD_BYTES {
                        return Err(HttpError::HeadTooLarge);
                    }
                    let head = parse_head(rest.get(..end).unwrap_or_default())?;
                    pos += end + 4;
                    let available = input.len().saturating_sub(pos);
                    match head.framing {
                        BodyFraming::Empty | BodyFraming::Length(0) => {
                            return Ok(Progress {
                                consumed: pos,
                                request: Some(head.into_request(Vec::new())),
                            });
                        }
                        BodyFraming::Length(n) => {
                            self.continue_pending = head.expect_continue && available < n;
                            self.state = State::Fixed {
                                head,
                                body: Vec::with_capacity(n.min(1 << 20)),
                                remaining: n,
                            };
                        }
                        BodyFraming::Chunked => {
                            self.continue_pending = head.expect_continue && available == 0;
                            self.state = State::Chunked {
                                head,
                                body: Vec::new(),
                                chunk: ChunkState::Size,
                            };
                        }
                    }
                }
                State::Fixed {
                    body, remaining, ..
                } => {
                    let take = (*remaining).min(rest.len());
                    body.extend_from_slice(rest.get(..take).unwrap_or_default());
                    pos += take;
                    *remaining -= take;
                    if *remaining > 0 {
                        return Ok(Progress {
                            consumed: pos,
                            request: None,
                        });
                    }
                    return Ok(Progress {
                        consumed: pos,
                        request: Some(self.finish()),
                    });
                }
                State::Chunked { body, chunk, .. } => {
                    let (used, done) = advance_chunked(chunk, body, rest)?;
                    pos += used;
                    if !done {
                        return Ok(Progress {
                            consumed: pos,
                            request: None,
                        });
                    }
                    return Ok(Progress {
                        consumed: pos,
                        request: Some(self.finish()),
                    });
                }
            }
        }
    }

    fn finish(&mut self) -> Request {
        self.continue_pending = false;
        match std::mem::replace(&mut self.state, State::Head) {
            State::Head => Request {
                method: String::new(),
                target: String::new(),
                headers: Vec::new(),
                body: Vec::new(),
                keep_alive: false,
            },
            State::Fixed { head, body, .. } | State::Chunked { head, body, .. } => {
                head.into_request(body)
            }
        }
    }
}

/// Runs the chunked-body state machine over `input`. Returns bytes consumed
/// and whether the body (including trailers) is complete.
fn advance_chunked(
    state: &mut ChunkState,
    body: &mut Vec<u8>,
    input: &[u8],
) -> Result<(usize, bool), HttpError> {
    let mut pos = 0usize;
    loop {
        let rest = input.get(pos..).unwrap_or_default();
        match *state {
            ChunkState::Size => {
                let Some(line) = take_line(rest)? else {
                    return Ok((pos, false));
                };
                pos += line.len() + 1;
                let size = parse_chunk_size(line)?;
                if size == 0 {
                    *state = ChunkState::Trailers;
                } else {
                    if body.len().saturating_add(size) > MAX_BODY_BYTES {
                        return Err(HttpError::BodyTooLarge);
                    }
                    *state = ChunkState::Data(size);
                }
            }
            ChunkState::Data(remaining) => {
                let take = remaining.min(rest.len());
                body.extend_from_slice(rest.get(..take).unwrap_or_default());
                pos += take;
                if take < remaining {
                    *state = ChunkState::Data(remaining - take);
                    return Ok((pos, false));
                }
                *state = ChunkState::DataEnd;
            }
            ChunkState::DataEnd => match rest {
                [b'\r', b'\n', ..] => {
                    pos += 2;
                    *state = ChunkState::Size;
                }
                [b'\n', ..] => {
                    pos += 1;
                    *state = ChunkState::Size;
                }
                [] | [b'\r'] => return Ok((pos, false)),
                _ => return Err(HttpError::BadRequest("missing CRLF after chunk data")),
            },
            ChunkState::Trailers => {
                let Some(line) = take_line(rest)? else {
                    return Ok((pos, false));
                };
                pos += line.len() + 1;
                if trim_cr(line).is_empty() {
                    *state = ChunkState::Size;
                    return Ok((pos, true));
                }
            }
        }
    }
}

/// The bytes before the next `\n` (the `\n` excluded), or None if no full
/// line is buffered yet.
fn take_line(input: &[u8]) -> Result<Option<&[u8]>, HttpError> {
    match memchr::memchr(b'\n', input) {
        Some(i) if i > MAX_LINE_BYTES => Err(HttpError::BadRequest("chunk line too long")),
        Some(i) => Ok(input.get(..i)),
        None if input.len() > MAX_LINE_BYTES => Err(HttpError::BadRequest("chunk line too long")),
        None => Ok(None),
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn parse_chunk_size(line: &[u8]) -> Result<usize, HttpError> {
    const BAD: HttpError = HttpError::BadRequest("invalid chunk size");
    let line = trim_cr(line);
    let digits = match memchr::memchr(b';', line) {
        Some(i) => line.get(..i).unwrap_or_default(),
        None => line,
    };
    let digits = digits.trim_ascii();
    if digits.is_empty() || digits.len() > 15 {
        return Err(BAD);
    }
    let mut size = 0usize;
    for &b in digits {
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(BAD),
        };
        size = size * 16 + usize::from(v);
    }
    Ok(size)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn parse_head(raw: &[u8]) -> Result<Head, HttpError> {
    let text = match std::str::from_utf8(raw) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    };
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::BadRequest("malformed request line"));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(HttpError::BadRequest("malformed method"));
    }
    if target.is_empty() {
        return Err(HttpError::BadRequest("empty request target"));
    }
    let mut keep_alive = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        v if v.starts_with("HTTP/") => return Err(HttpError::UnsupportedVersion),
        _ => return Err(HttpError::BadRequest("malformed HTTP version")),
    };
    let http11 = keep_alive;

    let mut headers = Vec::with_capacity(16);
    let mut content_length: Option<usize> = None;
    let mut chunked = false;
    let mut expect_continue = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(HttpError::BadRequest("malformed header line"));
        };
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(HttpError::BadRequest("malformed header name"));
        }
        let name = name.to_ascii_lowercase();
        let value = value.trim_matches([' ', '\t']);
        match name.as_str() {
            "content-length" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| HttpError::BadRequest("invalid content-length"))?;
                if content_length.is_some_and(|prev| prev != n) {
                    return Err(HttpError::BadRequest("conflicting content-length headers"));
                }
                if n > MAX_BODY_BYTES {
                    return Err(HttpError::BodyTooLarge);
                }
                content_length = Some(n);
            }
            "transfer-encoding" => {
                let last = value.rsplit(',').next().unwrap_or_default().trim();
                if last.eq_ignore_ascii_case("chunked") {
                    chunked = true;
                } else {
                    return Err(HttpError::BadRequest("unsupported transfer-encoding"));
                }
            }
            "connection" => {
                for token in value.split(',') {
                    let token = token.trim();
                    if token.eq_ignore_ascii_case("close") {
                        keep_alive = false;
                    } else if token.eq_ignore_ascii_case("keep-alive") {
                        keep_alive = true;
                    }
                }
            }
            "expect" => {
                expect_continue = http11 && value.eq_ignore_ascii_case("100-continue");
            }
            _ => {}
        }
        headers.push((name, value.to_string()));
    }
    let framing = if chunked {
        BodyFraming::Chunked
    } else if let Some(n) = content_length {
        BodyFraming::Length(n)
    } else {
        BodyFraming::Empty
    };
    Ok(Head {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        keep_alive,
        framing,
        expect_continue,
    })
}

/// Standard reason phrase for a status code ("Status" when unknown).
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

/// How the response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Length(usize),
    Chunked,
}

/// Appends a response head. `extra` headers are written as given, except
/// that framing headers (`content-length`, `transfer-encoding`) are skipped
/// and an extra `content-type` replaces the default one.
pub fn write_head(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    framing: Framing,
    close: bool,
    extra: &[(String, String)],
) {
    write_head_encoded(out, status, content_type, framing, close, extra, None);
}

/// [`write_head`] for a body sent with a content coding: adds
/// `content-encoding: <coding>` (replacing one in `extra`) and
/// `vary: accept-encoding` (unless `extra` has a `vary`).
pub fn write_head_encoded(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    framing: Framing,
    close: bool,
    extra: &[(String, String)],
    content_encoding: Option<&str>,
) {
    // Writes into a Vec cannot fail.
    let _ = write!(out, "HTTP/1.1 {} {}\r\n", status, reason(status));
    let has = |name: &str| extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !has("content-type") {
        out.extend_from_slice(b"content-type: ");
        out.extend_from_slice(content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match framing {
        Framing::Length(n) => {
            let _ = write!(out, "content-length: {n}\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    if let Some(coding) = content_encoding {
        out.extend_from_slice(b"content-encoding: ");
        out.extend_from_slice(coding.as_bytes());
        out.extend_from_slice(b"\r\n");
        if !has("vary") {
            out.extend_from_slice(b"vary: accept-encoding\r\n");
        }
    }
    if close && !has("connection") {
        out.extend_from_slice(b"connection: close\r\n");
    }
    for (name, value) in extra {
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
            || (content_encoding.is_some() && name.eq_ignore_ascii_case("content-encoding"))
        {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends `data` as one chunk of a chunked body (nothing when empty, since
/// an empty chunk would end the body).
pub fn write_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces` one after another through a parser the way a
    /// connection does (unconsumed bytes stay buffered) and collects requests.
    fn feed(pieces: &[&[u8]]) -> Result<(Vec<Request>, Vec<u8>), HttpError> {
        let mut parser = Parser::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut out = Vec::new();
        for piece in pieces {
            buf.extend_from_slice(piece);
            loop {
                let p = parser.advance(&buf)?;
                buf.drain(..p.consumed);
                match p.request {
                    Some(r) => out.push(r),
                    None => break,
                }
            }
        }
        Ok((out, buf))
    }

    #[test]
    fn content_length_body() {
        let raw = b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"model\":1}";
        let (reqs, rest) = feed(&[raw]).unwrap();
        assert_eq!(reqs.len(), 1);
        assert!(rest.is_empty());
        let r = &reqs[0];
        assert_eq!(r.method, "POST");
        assert_eq!(r.path(), "/v1/chat/completions");
        assert_eq!(r.query(), "x=1");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("host"), Some("a"));
        assert_eq!(r.body, b"{\"model\":1}");
        assert!(r.keep_alive);
    }

    #[test]
    fn content_length_body_split_everywhere() {
        let raw: &[u8] =
            b"POST /a HTTP/1.1\r\ncontent-length: 10\r\nX-Thing:  v  \r\n\r\n0123456789";
        for split in 0..=raw.len() {
            let (a, b) = raw.split_at(split);
            let (reqs, rest) = feed(&[a, b]).unwrap();
            assert_eq!(reqs.len(), 1, "split at {split}");
            assert!(rest.is_empty());
            assert_eq!(reqs[0].body, b"0123456789");
            assert_eq!(reqs[0].header("x-thing"), Some("v"));
        }
    }

    const CHUNKED: &[u8] = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nx-trailer: t\r\n\r\n";

    #[test]
    fn chunked_body_whole() {
        let (reqs, rest) = feed(&[CHUNKED]).unwrap();
        assert_eq!(reqs.len(), 1);
        assert!(rest.is_empty());
        assert_eq!(reqs[0].body, b"hello 0123456789");
    }

    #[test]
    fn chunked_body_split_at_every_pair_of_points() {
        for i in 0..=CHUNKED.len() {
            for j in i..=CHUNKED.len() {
                let (reqs, rest) = feed(&[&CHUNKED[..i], &CHUNKED[i..j], &CHUNKED[j..]]).unwrap();
                assert_eq!(reqs.len(), 1, "splits {i} {j}");
                assert!(rest.is_empty());
                assert_eq!(reqs[0].body, b"hello 0123456789", "splits {i} {j}");
            }
        }
    }

    #[test]
    fn chunked_body_byte_by_byte() {
        let pieces: Vec<&[u8]> = CHUNKED.chunks(1).collect();
        let (reqs, _) = feed(&pieces).unwrap();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].body, b"hello 0123456789");
    }

    #[test]
    fn chunked_wins_over_content_length() {
        let raw = b"POST / HTTP/1.1\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        let (reqs, _) = feed(&[raw]).unwrap();
        assert_eq!(reqs[0].body, b"ok");
    }

    #[test]
    fn keep_alive_two_requests_one_buffer_and_split() {
        let two: &[u8] = b"POST /one HTTP/1.1\r\ncontent-length: 3\r\n\r\nabcGET /two HTTP/1.1\r\nConnection: close\r\n\r\n";
        for split in 0..=two.len() {
            let (reqs, rest) = feed(&[&two[..split], &two[split..]]).unwrap();
            assert_eq!(reqs.len(), 2, "split at {split}");
            assert!(rest.is_empty());
            assert_eq!(reqs[0].target, "/one");
            assert_eq!(reqs[0].body, b"abc");
            assert!(reqs[0].keep_alive);
            assert_eq!(reqs[1].method, "GET");
            assert_eq!(reqs[1].target, "/two");
            assert!(reqs[1].body.is_empty());
            assert!(!reqs[1].keep_alive);
        }
    }

    #[test]
    fn chunked_then_next_request() {
        let mut raw = CHUNKED.to_vec();
        raw.extend_from_slice(b"GET /v1/models HTTP/1.1\r\n\r\n");
        let (reqs, rest) = feed(&[&raw]).unwrap();
        assert_eq!(reqs.len(), 2);
        assert!(rest.is_empty());
        assert_eq!(reqs[1].target, "/v1/models");
    }

    #[test]
    fn partial_request_is_kept() {
        let mut parser = Parser::new();
        let p = parser.advance(b"GET /x HTTP/1.1\r\nHost").unwrap();
        assert_eq!(p.consumed, 0);
        assert!(p.request.is_none());
        assert!(parser.is_idle());
        let p = parser
            .advance(b"POST /x HTTP/1.1\r\ncontent-length: 4\r\n\r\nab")
            .unwrap();
        assert!(p.request.is_none());
        assert!(!parser.is_idle());
    }

    #[test]
    fn http10_defaults_to_close() {
        let (reqs, _) = feed(&[b"GET / HTTP/1.0\r\n\r\n"]).unwrap();
        assert!(!reqs[0].keep_alive);
        let (reqs, _) = feed(&[b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"]).unwrap();
        assert!(reqs[0].keep_alive);
    }

    #[test]
    fn expect_continue_is_signalled_once() {
        let mut parser = Parser::new();
        let head = b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\ncontent-length: 2\r\n\r\n";
        let p = parser.advance(head).unwrap();
        assert_eq!(p.consumed, head.len());
        assert!(parser.take_continue());
        assert!(!parser.take_continue());
        let p = parser.advance(b"hi").unwrap();
        assert_eq!(p.request.unwrap().body, b"hi");
        // Body already present: no 100 Continue needed.
        let mut parser = Parser::new();
        let mut all = head.to_vec();
        all.extend_from_slice(b"hi");
        assert!(parser.advance(&all).unwrap().request.is_some());
        assert!(!parser.take_continue());
    }

    #[test]
    fn malformed_requests_are_rejected() {
        let cases: &[&[u8]] = &[
            b"GARBAGE\r\n\r\n",
            b"GET / HTTP/2.0\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
            b"POST / HTTP/1.1\r\ncontent-length: x\r\n\r\n",
            b"POST / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
            b"POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
            b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX",
        ];
        for raw in cases {
            assert!(feed(&[raw]).is_err(), "{:?}", String::from_utf8_lossy(raw));
        }
        assert_eq!(
            feed(&[b"POST / HTTP/1.1\r\ncontent-length: 999999999999\r\n\r\n"]).unwrap_err(),
            HttpError::BodyTooLarge
        );
        let huge = vec![b'a'; MAX_HEAD_BYTES + 10];
        assert_eq!(feed(&[&huge]).unwrap_err(), HttpError::HeadTooLarge);
    }

    #[test]
    fn query_params() {
        assert_eq!(query_param("alt=sse&key=1", "alt"), Some("sse"));
        assert_eq!(query_param("key=1&alt=sse", "alt"), Some("sse"));
        assert_eq!(query_param("flag", "flag"), Some(""));
        assert_eq!(query_param("", "alt"), None);
    }

    fn account_of(headers: &[(&str, &str)], target: &str) -> String {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        find_account(&headers, target)
            .resolve(&headers, target)
            .to_string()
    }

    #[test]
    fn accounts() {
        assert_eq!(account_of(&[], "/v1/models"), "-");
        assert_eq!(account_of(&[("authorization", "Bearer sk-a")], "/"), "sk-a");
        assert_eq!(
            account_of(&[("authorization", "bearer   sk-b  ")], "/"),
            "sk-b"
        );
        // Not a bearer credential: the next source counts.
        assert_eq!(
            account_of(
                &[("authorization", "Basic eDp5"), ("x-api-key", "ant-1")],
                "/"
            ),
            "ant-1"
        );
        assert_eq!(account_of(&[("authorization", "Bearer")], "/"), "-");
        assert_eq!(account_of(&[("authorization", "Bearerx")], "/"), "-");
        assert_eq!(
            account_of(
                &[("x-goog-api-key", "g-1"), ("authorization", "Bearer sk-c")],
                "/"
            ),
            "sk-c"
        );
        assert_eq!(
            account_of(&[("x-api-key", ""), ("x-goog-api-key", "g-2")], "/"),
            "g-2"
        );
        assert_eq!(
            account_of(&[], "/v1beta/models/g:generateContent?alt=sse&key=AIza1"),
            "AIza1"
        );
        assert_eq!(account_of(&[], "/x?key=&monkey=1"), "-");
        assert_eq!(account_of(&[], "/x?monkey=1&key=k2&key=k3"), "k2");
        assert_eq!(account_of(&[("x-goog-api-key", "g-3")], "/x?key=q"), "g-3");
    }

    #[test]
    fn encoded_head() {
        let mut out = Vec::new();
        let extra = vec![("content-encoding".to_string(), "br".to_string())];
        write_head_encoded(
            &mut out,
            200,
            "application/json",
            Framing::Length(5),
            false,
            &extra,
            Some("gzip"),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\ncontent-encoding: gzip\r\nvary: accept-encoding\r\n\r\n"
        );
    }

    #[test]
    fn response_head_and_chunks() {
        let mut out = Vec::new();
        let extra = vec![
            ("retry-after".to_string(), "7".to_string()),
            ("Content-Length".to_string(), "1".to_string()),
        ];
        write_head(
            &mut out,
            429,
            "application/json",
            Framing::Length(2),
            true,
            &extra,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\nretry-after: 7\r\n\r\n"
        );
        let mut out = Vec::new();
        let extra = vec![("content-type".to_string(), "text/plain".to_string())];
        write_head(
            &mut out,
            200,
            "text/event-stream",
            Framing::Chunked,
            false,
            &extra,
        );
        write_chunk(&mut out, b"");
        write_chunk(&mut out, b"data: x\n\n");
        out.extend_from_slice(LAST_CHUNK);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n9\r\ndata: x\n\n\r\n0\r\n\r\n"
        );
    }
}
