//! Minimal HTTP/1.1 client side: an incremental response parser that skips
//! bodies without looking at them, and a keep-alive connection that sends one
//! pre-built request at a time.

use std::net::SocketAddr;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response head larger than this is an error.
const MAX_HEAD: usize = 64 * 1024;
/// A chunk-size or trailer line longer than this is an error.
const MAX_LINE: usize = 4 * 1024;
const READ_BUF: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    StatusLine,
    Header,
    ContentLength,
    Chunk,
    HeadTooLarge,
    /// `101 Switching Protocols`: not a complete HTTP answer.
    Upgrade,
    /// The peer closed before the response was complete.
    UnexpectedEof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Body(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailers,
    UntilClose,
    Done,
}

/// What one `feed` call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input that belong to this response and are used up; the
    /// caller must pass the rest again (with more data appended) next time.
    pub consumed: usize,
    /// The response is complete.
    pub done: bool,
}

/// Incremental parser for one response at a time (`reset` between responses).
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    head_only: bool,
    status: u16,
    keep_alive: bool,
    body_started: bool,
}

struct Head {
    len: usize,
    status: u16,
    keep_alive: bool,
    content_length: Option<u64>,
    chunked: bool,
    other_encoding: bool,
}

/// The next line of `data` without its `\n` or `\r\n`, and the bytes it used.
fn next_line(data: &[u8]) -> Option<(&[u8], usize)> {
    let nl = data.iter().position(|&b| b == b'\n')?;
    let line = data.get(..nl)?;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    Some((line, nl + 1))
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

fn parse_chunk_size(line: &[u8]) -> Option<u64> {
    let digits = match line.iter().position(|&b| b == b';') {
        Some(i) => line.get(..i)?,
        None => line,
    };
    let digits = trim(digits);
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let d = (b as char).to_digit(16)?;
        acc.checked_mul(16)?.checked_add(u64::from(d))
    })
}

/// `Ok(None)`: the head is not complete yet.
fn parse_head(data: &[u8]) -> Result<Option<Head>, ParseError> {
    let Some((status_line, mut pos)) = next_line(data) else {
        return Ok(None);
    };
    let (http11, status) = match status_line {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', v, b' ', a, b, c, rest @ ..]
            if (rest.is_empty() || rest.first() == Some(&b' '))
                && a.is_ascii_digit()
                && b.is_ascii_digit()
                && c.is_ascii_digit() =>
        {
            let status = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
            (*v != b'0', status)
        }
        _ => return Err(ParseError::StatusLine),
    };
    let mut head = Head {
        len: 0,
        status,
        keep_alive: http11,
        content_length: None,
        chunked: false,
        other_encoding: false,
    };
    let (mut close, mut keep) = (false, false);
    loop {
        let Some((line, used)) = data.get(pos..).and_then(next_line) else {
            return Ok(None);
        };
        pos += used;
        if line.is_empty() {
            break;
        }
        if matches!(line.first(), Some(b' ' | b'\t')) {
            continue; // obsolete line folding: ignore the continuation
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(ParseError::Header)?;
        let (name, value) = line.split_at(colon);
        let value = trim(value.get(1..).unwrap_or_default());
        if name.is_empty() {
            return Err(ParseError::Header);
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_decimal(value).ok_or(ParseError::ContentLength)?;
            if head.content_length.is_some_and(|old| old != n) {
                return Err(ParseError::ContentLength);
            }
            head.content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            let last = value.rsplit(|&b| b == b',').next().map(trim);
            if last.is_some_and(|t| t.eq_ignore_ascii_case(b"chunked")) {
                head.chunked = true;
            } else {
                head.other_encoding = true;
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(trim) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    head.len = pos;
    head.keep_alive = !close && (http11 || keep);
    Ok(Some(head))
}

impl ResponseParser {
    /// `head_only`: the request was `HEAD`, so the response has no body.
    pub fn new(head_only: bool) -> Self {
        Self {
            state: State::Head,
            head_only,
            status: 0,
            keep_alive: false,
            body_started: false,
        }
    }

    pub fn reset(&mut self, head_only: bool) {
        *self = Self::new(head_only);
    }

    /// Final status code (interim 1xx responses are skipped); 0 before the head.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The connection may carry another request after this response.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// At least one byte of the body has been consumed.
    pub fn body_started(&self) -> bool {
        self.body_started
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The peer closed the connection: completes a close-delimited body,
    /// anything else is an error.
    pub fn eof(&mut self) -> Result<(), ParseError> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                self.keep_alive = false;
                Ok(())
            }
            _ => Err(ParseError::UnexpectedEof),
        }
    }

    fn take_body(&mut self, remaining: u64, avail: usize) -> (usize, u64) {
        let take = remaining.min(avail as u64);
        if take > 0 {
            self.body_started = true;
        }
        (take as usize, remaining - take)
    }

    /// Consume as much of `data` as possible.
    pub fn feed(&mut self, data: &[u8]) -> Result<Progress, ParseError> {
        let mut pos = 0usize;
        loop {
            let rest = data.get(pos..).unwrap_or_default();
            let need_more = Progress {
                consumed: pos,
                done: false,
            };
            match self.state {
                State::Done => {
                    return Ok(Progress {
                        consumed: pos,
                        done: true,
                    })
                }
                State::Head => {
                    let Some(head) = parse_head(rest)? else {
                        if rest.len() > MAX_HEAD {
                            return Err(ParseError::HeadTooLarge);
                        }
                        return Ok(need_more);
                    };
                    pos += head.len;
                    self.start_body(&head)?;
                }
                State::Body(remaining) | State::ChunkData(remaining) => {
                    if rest.is_empty() {
                        return Ok(need_more);
                    }
                    let (take, left) = self.take_body(remaining, rest.len());
                    pos += take;
                    self.state = match (self.state, left) {
                        (State::Body(_), 0) => State::Done,
                        (State::Body(_), _) => State::Body(left),
                        (_, 0) => State::ChunkEnd,
                        _ => State::ChunkData(left),
                    };
                }
                State::ChunkSize => {
                    let Some((line, used)) = next_line(rest) else {
                        if rest.len() > MAX_LINE {
                            return Err(ParseError::Chunk);
                        }
                        return Ok(need_more);
                    };
                    pos += used;
                    let size = parse_chunk_size(line).ok_or(ParseError::Chunk)?;
                    self.state = if size == 0 {
                        State::Trailers
                    } else {
                        State::ChunkData(size)
                    };
                }
                State::ChunkEnd => {
                    match rest {
                        [b'\n', ..] => pos += 1,
                        [b'\r', b'\n', ..] => pos += 2,
                        [] | [b'\r'] => return Ok(need_more),
                        _ => return Err(ParseError::Chunk),
                    }
                    self.state = State::ChunkSize;
                }
                State::Trailers => {
                    let Some((line, used)) = next_line(rest) else {
                        if rest.len() > MAX_LINE {
                            return Err(ParseError::Chunk);
                        }
                        return Ok(need_more);
                    };
                    pos += used;
                    if line.is_empty() {
                        self.state = State::Done;
                    }
                }
                State::UntilClose => {
                    if !rest.is_empty() {
                        self.body_started = true;
                    }
                    return Ok(Progress {
                        consumed: data.len(),
                        done: false,
                    });
                }
            }
        }
    }

    fn start_body(&mut self, head: &Head) -> Result<(), ParseError> {
        match head.status {
            101 => return Err(ParseError::Upgrade),
            100..=199 => return Ok(()), // interim response: parse the next head
            _ => {}
        }
        self.status = head.status;
        self.keep_alive = head.keep_alive;
        self.state = if self.head_only || head.status == 204 || head.status == 304 {
            State::Done
        } else if head.chunked {
            State::ChunkSize
        } else if head.other_encoding || head.content_length.is_none() {
            self.keep_alive = false;
            State::UntilClose
        } else {
            match head.content_length {
                Some(0) | None => State::Done,
                Some(n) => State::Body(n),
            }
        };
        Ok(())
    }
}

/// Why a request failed at the transport level (not an HTTP status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Write,
    Read,
    /// Connection closed before the response was complete.
    Eof,
    /// Malformed response.
    Parse,
    Timeout,
    /// Open mode: still queued when the run ended (never sent).
    Unsent,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Connect,
        ErrorKind::Write,
        ErrorKind::Read,
        ErrorKind::Eof,
        ErrorKind::Parse,
        ErrorKind::Timeout,
        ErrorKind::Unsent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Write => "write",
            ErrorKind::Read => "read",
            ErrorKind::Eof => "eof",
            ErrorKind::Parse => "parse",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unsent => "unsent",
        }
    }
}

/// A completed exchange.
#[derive(Debug, Clone, Copy)]
pub struct Response {
    pub status: u16,
    /// When the first body byte was read (only when asked for).
    pub first_body: Option<Instant>,
}

pub async fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// One keep-alive connection with a reusable read buffer. Reconnects lazily.
pub struct Conn {
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    parser: ResponseParser,
}

impl Conn {
    pub fn new(stream: Option<TcpStream>) -> Self {
        Self {
            stream,
            buf: vec![0; READ_BUF],
            start: 0,
            end: 0,
            parser: ResponseParser::new(false),
        }
    }

    /// Drop the connection (the next request reconnects).
    pub fn close(&mut self) {
        self.stream = None;
        self.start = 0;
        self.end = 0;
    }

    /// Send `request` and read the whole response. On error the connection
    /// is closed. If the future is dropped midway (timeout), the caller must
    /// `close` the connection.
    pub async fn request(
        &mut self,
        addr: SocketAddr,
        request: &[u8],
        head_only: bool,
        want_first_body: bool,
    ) -> Result<Response, ErrorKind> {
        match self
            .exchange(addr, request, head_only, want_first_body)
            .await
        {
            Ok(resp) => {
                // Bytes after the response (or a closing server) poison the
                // connection: start the next request on a fresh one.
                if !self.parser.keep_alive() || self.start != self.end {
                    self.close();
                }
                Ok(resp)
            }
            Err(kind) => {
                self.close();
                Err(kind)
            }
        }
    }

    async fn exchange(
        &mut self,
        addr: SocketAddr,
        request: &[u8],
        head_only: bool,
        want_first_body: bool,
    ) -> Result<Response, ErrorKind> {
        if self.stream.is_none() {
            self.start = 0;
            self.end = 0;
            self.stream = Some(connect(addr).await.map_err(|_| ErrorKind::Connect)?);
        }
        let stream = self.stream.as_mut().ok_or(ErrorKind::Connect)?;
        stream
            .write_all(request)
            .await
            .map_err(|_| ErrorKind::Write)?;
        self.parser.reset(head_only);
        let mut first_body = None;
        loop {
            if self.start < self.end {
                let data = self.buf.get(self.start..self.end).unwrap_or_default();
                let progress = self.parser.feed(data).map_err(|_| ErrorKind::Parse)?;
                self.start += progress.consumed;
                if want_first_body && first_body.is_none() && self.parser.body_started() {
                    first_body = Some(Instant::now());
                }
                if progress.done {
                    break;
                }
            }
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            } else if self.end == self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if self.end == self.buf.len() {
                    if self.buf.len() > 2 * MAX_HEAD {
                        return Err(ErrorKind::Parse);
                    }
                    self.buf.resize(self.buf.len() * 2, 0);
                }
            }
            let space = self.buf.get_mut(self.end..).unwrap_or_default();
            let n = stream.read(space).await.map_err(|_| ErrorKind::Read)?;
            if n == 0 {
                self.parser.eof().map_err(|_| ErrorKind::Eof)?;
                if want_first_body && first_body.is_none() && self.parser.body_started() {
                    first_body = Some(Instant::now());
                }
                break;
            }
            self.end += n;
        }
        Ok(Response {
            status: self.parser.status(),
            first_body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `resp` in the given pieces the way `Conn` does (unconsumed bytes
    /// are kept and passed again with the next piece). Returns the parser and
    /// the leftover bytes once done, or `None` if it never finished.
    fn parse_pieces(pieces: &[&[u8]], eof: bool) -> Result<(ResponseParser, Vec<u8>), ParseError> {
        let mut p = ResponseParser::new(false);
        let mut buf = Vec::new();
        for piece in pieces {
            buf.extend_from_slice(piece);
            let prog = p.feed(&buf)?;
            buf.drain(..prog.consumed);
            if prog.done {
                return Ok((p, buf));
            }
        }
        if eof {
            p.eof()?;
        }
        Ok((p, buf))
    }

    fn split_everywhere(resp: &[u8], check: impl Fn(ResponseParser, Vec<u8>)) {
        for i in 0..=resp.len() {
            for j in i..=resp.len() {
                let (p, rest) =
                    parse_pieces(&[&resp[..i], &resp[i..j], &resp[j..]], false).unwrap();
                assert!(p.is_done(), "split {i}/{j} not done");
                check(p, rest);
            }
        }
        // One byte at a time.
        let bytes: Vec<&[u8]> = resp.chunks(1).collect();
        let (p, rest) = parse_pieces(&bytes, false).unwrap();
        assert!(p.is_done());
        check(p, rest);
    }

    #[test]
    fn content_length_any_split() {
        let resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCONTENT-LENGTH: 11\r\n\r\n{\"ok\":true}";
        split_everywhere(resp, |p, rest| {
            assert_eq!(p.status(), 200);
            assert!(p.keep_alive());
            assert!(p.body_started());
            assert!(rest.is_empty());
        });
    }

    #[test]
    fn leftover_bytes_are_not_consumed() {
        let (p, rest) = parse_pieces(
            &[b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\nnoHTTP/1.1"],
            false,
        )
        .unwrap();
        assert!(p.is_done());
        assert_eq!(p.status(), 404);
        assert_eq!(rest, b"HTTP/1.1");
    }

    #[test]
    fn chunked_any_split() {
        let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n\
            1b\r\ndata: {\"choices\":[1,2,3]}\n\n\r\n\
            5;ext=1\r\nhello\r\n\
            E\r\ndata: [DONE]\n\n\r\n\
            0\r\nx-trailer: yes\r\n\r\n";
        split_everywhere(resp, |p, rest| {
            assert_eq!(p.status(), 200);
            assert!(p.keep_alive());
            assert!(rest.is_empty());
        });
    }

    #[test]
    fn chunked_without_trailers_and_bare_lf() {
        let (p, rest) = parse_pieces(
            &[b"HTTP/1.1 200 OK\ntransfer-encoding: gzip, chunked\n\n3\nabc\n0\n\n"],
            false,
        )
        .unwrap();
        assert!(p.is_done());
        assert!(rest.is_empty());
    }

    #[test]
    fn chunked_body_started_only_after_data() {
        let mut p = ResponseParser::new(false);
        let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n";
        let prog = p.feed(head).unwrap();
        assert_eq!(prog.consumed, head.len());
        assert!(!p.body_started());
        p.feed(b"h").unwrap();
        assert!(p.body_started());
    }

    #[test]
    fn close_delimited_body() {
        let resp: &[&[u8]] = &[b"HTTP/1.1 200 OK\r\n\r\nsome ", b"body"];
        let (p, _) = parse_pieces(resp, false).unwrap();
        assert!(!p.is_done());
        let (p, _) = parse_pieces(resp, true).unwrap();
        assert!(p.is_done());
        assert!(!p.keep_alive());
        assert!(p.body_started());
    }

    #[test]
    fn connection_close_and_http10() {
        let (p, _) = parse_pieces(
            &[b"HTTP/1.1 503 Service Unavailable\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n"],
            false,
        )
        .unwrap();
        assert!(p.is_done());
        assert_eq!(p.status(), 503);
        assert!(!p.keep_alive());
        assert!(!p.body_started());

        let (p, _) =
            parse_pieces(&[b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx"], false).unwrap();
        assert!(!p.keep_alive());
        let (p, _) = parse_pieces(
            &[b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 1\r\n\r\nx"],
            false,
        )
        .unwrap();
        assert!(p.keep_alive());
    }

    #[test]
    fn interim_and_bodiless_responses() {
        let (p, rest) = parse_pieces(
            &[b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n"],
            false,
        )
        .unwrap();
        assert!(p.is_done());
        assert_eq!(p.status(), 204);
        assert!(rest.is_empty());

        let mut p = ResponseParser::new(true);
        let prog = p
            .feed(b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n")
            .unwrap();
        assert!(prog.done);
    }

    #[test]
    fn eof_mid_response_is_an_error() {
        let err = parse_pieces(&[b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"], true);
        assert_eq!(err.unwrap_err(), ParseError::UnexpectedEof);
        let err = parse_pieces(&[b"HTTP/1.1 200 OK\r\n"], true);
        assert_eq!(err.unwrap_err(), ParseError::UnexpectedEof);
    }

    #[test]
    fn malformed_responses() {
        let bad: &[&[u8]] = &[
            b"HTTP/2 200 OK\r\n\r\n",
            b"HTTP/1.1 20x OK\r\n\r\n",
            b"garbage\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\naXY",
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
        ];
        for resp in bad {
            assert!(
                ResponseParser::new(false).feed(resp).is_err(),
                "{:?}",
                String::from_utf8_lossy(resp)
            );
        }
    }

    #[test]
    fn oversized_head_is_rejected() {
        let mut resp = b"HTTP/1.1 200 OK\r\nx: ".to_vec();
        resp.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
        assert_eq!(
            ResponseParser::new(false).feed(&resp).unwrap_err(),
            ParseError::HeadTooLarge
        );
    }
}
