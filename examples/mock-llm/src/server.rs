//! Per-connection loop: read and parse requests, apply scripts, record, and
//! write responses (including delays, chunk timing and TCP resets).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::control;
use crate::encoding::{self, CompressMode, Encoding, StreamEncoder};
use crate::http::{
    find_account, write_chunk, write_head, write_head_encoded, Framing, Parser, Request,
    CONTINUE_100, LAST_CHUNK,
};
use crate::llm::{self, Api, Body, GenParams, Generated, RouteInfo, DEFAULT_CHUNKS};
use crate::record::{record_body, Outcome, Record};
use crate::script::{ResetMode, Step};
use crate::state::AppState;

/// Read granularity and initial buffer size.
const READ_CHUNK: usize = 16 * 1024;
/// Buffers that grew beyond this are released after use.
const KEEP_BUFFER: usize = 1 << 20;
/// Upper bound for a step's `chunks`.
const MAX_CHUNKS: usize = 100_000;
/// A "chunk" of a plain body for `reset: mid_body`.
const PLAIN_CHUNK: usize = 64;

/// The step used when no script applies.
static NO_STEP: Step = Step {
    status: None,
    headers: Vec::new(),
    body: None,
    sse: None,
    delay_ms: 0,
    ttft_ms: 0,
    chunk_delay_ms: 0,
    chunks: None,
    reset: None,
    reset_after_chunks: 0,
    close: false,
    compress: None,
    stream_error: None,
    cached_tokens: 0,
};

/// What to do with the connection after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    KeepAlive,
    Close,
    Reset,
}

/// Serves one accepted connection until it closes. I/O errors just end it.
pub async fn serve_connection(stream: TcpStream, state: Arc<AppState>) {
    let _ = connection(stream, &state).await;
}

async fn connection(mut stream: TcpStream, state: &AppState) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut start = 0usize;
    let mut parser = Parser::new();
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    loop {
        let progress = match parser.advance(buf.get(start..).unwrap_or_default()) {
            Ok(p) => p,
            Err(e) => {
                let body = json!({"error": {
                    "message": format!("mock-llm: {}", e.message()),
                    "type": "invalid_request_error",
                    "code": "bad_http",
                }})
                .to_string();
                out.clear();
                write_head(
                    &mut out,
                    e.status(),
                    "application/json",
                    Framing::Length(body.len()),
                    true,
                    &[],
                );
                out.extend_from_slice(body.as_bytes());
                stream.write_all(&out).await?;
                let _ = stream.shutdown().await;
                return Ok(());
            }
        };
        start += progress.consumed;
        if start >= buf.len() {
            buf.clear();
            start = 0;
            if buf.capacity() > KEEP_BUFFER {
                buf = Vec::with_capacity(READ_CHUNK);
            }
        }
        if let Some(req) = progress.request {
            out.clear();
            let after = respond(&mut stream, state, req, &mut out).await?;
            if out.capacity() > KEEP_BUFFER {
                out = Vec::with_capacity(4096);
            }
            match after {
                After::KeepAlive => continue,
                After::Close => {
                    let _ = stream.shutdown().await;
                    return Ok(());
                }
                After::Reset => {
                    // SO_LINGER 0: closing the socket sends RST.
                    stream.set_zero_linger()?;
                    drop(stream);
                    return Ok(());
                }
            }
        }
        if parser.take_continue() {
            stream.write_all(CONTINUE_100).await?;
        }
        if buf.capacity() - buf.len() < READ_CHUNK / 2 {
            if start > 0 {
                buf.drain(..start);
                start = 0;
            }
            buf.reserve(READ_CHUNK);
        }
        if stream.read_buf(&mut buf).await? == 0 {
            // Peer closed (between requests, or mid-request: nothing to answer).
            return Ok(());
        }
    }
}

fn is_control(path: &str) -> bool {
    path == "/_mock" || path.starts_with("/_mock/")
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

async fn respond(
    stream: &mut TcpStream,
    state: &AppState,
    req: Request,
    out: &mut Vec<u8>,
) -> io::Result<After> {
    if is_control(req.path()) {
        let reply = control::handle(state, &req);
        write_head(
            out,
            reply.status,
            reply.content_type,
            Framing::Length(reply.body.len()),
            !req.keep_alive,
            &[],
        );
        out.extend_from_slice(&reply.body);
        stream.write_all(out).await?;
        return Ok(if req.keep_alive {
            After::KeepAlive
        } else {
            After::Close
        });
    }
    let _flight = state.enter();

    let info = llm::classify(&req.method, req.path(), req.query(), &req.body);
    let path = req.path().to_string();
    let Request {
        method,
        target,
        headers,
        body,
        keep_alive,
    } = req;
    let account = find_account(&headers, &target);
    let (body_text, body_truncated, body_len) = record_body(body, state.record_body_limit);
    let mut record = Record {
        seq: 0,
        t_ms: state.elapsed_ms(),
        method: method.clone(),
        path: target,
        headers,
        body: body_text,
        body_truncated,
        body_len,
        model: info.model.clone(),
        stream: info.stream,
        step: None,
        script: None,
        outcome: Outcome::Ok,
        account,
        response_encoding: None,
    };

    // Choose the step and record the request under one lock, before any
    // delay or reset, so attempts are counted even if they never complete.
    let (seq, step, models, encoding) = {
        let mut inner = state.lock();
        let selection = inner
            .scripts
            .select(record.account(), info.model.as_deref(), &path);
        let step = selection.map(|sel| {
            record.step = sel.index;
            record.script = Some(sel.script);
            record.outcome = match sel.step.reset {
                Some(ResetMode::BeforeHeaders) => Outcome::ResetBeforeHeaders,
                Some(ResetMode::AfterHeaders) => Outcome::ResetAfterHeaders,
                Some(ResetMode::MidBody) => Outcome::ResetMidBody,
                None => Outcome::Scripted,
            };
            sel.step
        });
        let encoding = response_encoding(
            step.as_deref().unwrap_or(&NO_STEP),
            &info,
            &record.headers,
            state.compress,
        );
        record.response_encoding = encoding;
        let models: Vec<String> = if info.api == Api::Models {
            inner.scripts.models().map(str::to_string).collect()
        } else {
            Vec::new()
        };
        let seq = inner.recorder.push(record);
        (seq, step, models, encoding)
    };

    let step: &Step = step.as_deref().unwrap_or(&NO_STEP);
    sleep_ms(step.delay_ms).await;
    if step.reset == Some(ResetMode::BeforeHeaders) {
        return Ok(After::Reset);
    }

    let params = GenParams {
        seq,
        chunks: step.chunks.unwrap_or(DEFAULT_CHUNKS).min(MAX_CHUNKS),
        body_len,
        method: &method,
        path: &path,
        cached_tokens: step.cached_tokens,
    };
    let mut generated = build_response(&info, step, &params, &models);
    if let (Some(cut), Body::Stream { frames, .. }) = (&step.stream_error, &mut generated.body) {
        llm::cut_stream(
            info.api,
            frames,
            params.chunks,
            cut.after,
            cut.error.as_deref(),
        );
    }
    let close = step.close
        || !keep_alive
        || step
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close"));
    let coding = encoding.map(Encoding::as_str);

    match generated.body {
        Body::Full {
            content_type,
            bytes,
        } => {
            let compressed;
            let bytes: &[u8] = match encoding {
                Some(e) => {
                    compressed = encoding::compress(e, &bytes);
                    &compressed
                }
                None => &bytes,
            };
            write_head_encoded(
                out,
                generated.status,
                content_type,
                Framing::Length(bytes.len()),
                close,
                &step.headers,
                coding,
            );
            let partial = match step.reset {
                // Headers plus the first half of the body, then RST.
                Some(ResetMode::AfterHeaders) => Some(bytes.len() / 2),
                // Headers plus N x 64 bytes (never the whole body), then RST.
                Some(ResetMode::MidBody) => Some(
                    step.reset_after_chunks
                        .saturating_mul(PLAIN_CHUNK)
                        .min(bytes.len().saturating_sub(1)),
                ),
                _ => None,
            };
            if let Some(n) = partial {
                out.extend_from_slice(bytes.get(..n).unwrap_or_default());
                stream.write_all(out).await?;
                sleep_ms(step.chunk_delay_ms).await;
                return Ok(After::Reset);
            }
            out.extend_from_slice(bytes);
            stream.write_all(out).await?;
        }
        Body::Stream {
            content_type,
            frames,
        } => {
            write_head_encoded(
                out,
                generated.status,
                content_type,
                Framing::Chunked,
                close,
                &step.headers,
                coding,
            );
            let reset_after = match step.reset {
                Some(ResetMode::AfterHeaders) => Some(1),
                Some(ResetMode::MidBody) => Some(step.reset_after_chunks),
                _ => None,
            };
            let mut encoder = encoding.map(StreamEncoder::new);
            if step.ttft_ms > 0 {
                // Headers now, the first event after the time to first token.
                stream.write_all(out).await?;
                out.clear();
                sleep_ms(step.ttft_ms).await;
            }
            let total = frames.len();
            let send = total.min(reset_after.unwrap_or(usize::MAX));
            for (i, frame) in frames.iter().take(send).enumerate() {
                if i > 0 {
                    sleep_ms(step.chunk_delay_ms).await;
                }
                match &mut encoder {
                    Some(enc) => write_chunk(out, enc.frame(frame)),
                    None => write_chunk(out, frame),
                }
                if i + 1 == total && reset_after.is_none() {
                    end_stream(out, encoder.as_mut());
                }
                stream.write_all(out).await?;
                out.clear();
            }
            if reset_after.is_some() {
                if !out.is_empty() {
                    stream.write_all(out).await?;
                }
                sleep_ms(step.chunk_delay_ms).await;
                return Ok(After::Reset);
            }
            if total == 0 {
                end_stream(out, encoder.as_mut());
                stream.write_all(out).await?;
            }
        }
    }
    Ok(if close {
        After::Close
    } else {
        After::KeepAlive
    })
}

/// Appends the end of a chunked body: the compressed stream's trailer (if
/// any) and the last chunk.
fn end_stream(out: &mut Vec<u8>, encoder: Option<&mut StreamEncoder>) {
    if let Some(enc) = encoder {
        write_chunk(out, enc.finish());
    }
    out.extend_from_slice(LAST_CHUNK);
}

/// True for JSON content types (`application/json`, `...+json`, with
/// parameters).
fn is_json(content_type: &str) -> bool {
    content_type
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"json"))
}

/// The content coding of the response to a request answered with `step`
/// (the empty step when no script applies): the step's `compress` when set
/// (any body, streams included); else, for non-stream JSON bodies whose
/// step does not set `content-encoding` itself, what `--compress` says
/// (`accepted`: negotiated from `accept-encoding`). Must agree with
/// [`build_response`] on what is streamed (tested).
fn response_encoding(
    step: &Step,
    info: &RouteInfo,
    headers: &[(String, String)],
    mode: CompressMode,
) -> Option<Encoding> {
    if step.reset == Some(ResetMode::BeforeHeaders) {
        return None;
    }
    if let Some(forced) = step.compress {
        return forced.encoding();
    }
    if mode == CompressMode::Never || step.has_header("content-encoding") {
        return None;
    }
    let streamed = step.sse.is_some()
        || (step.body.is_none() && step.status.is_none_or(|s| s < 400) && info.streams());
    if streamed || !step.content_type().is_none_or(is_json) {
        return None;
    }
    match mode {
        CompressMode::Always => Some(Encoding::Gzip),
        _ => encoding::negotiate(
            headers
                .iter()
                .filter(|(n, _)| n == "accept-encoding")
                .map(|(_, v)| v.as_str()),
        ),
    }
}

/// The response for a request given the chosen step (a default step when
/// no script applies).
fn build_response(
    info: &RouteInfo,
    step: &Step,
    params: &GenParams<'_>,
    models: &[String],
) -> Generated {
    if let Some(sse) = &step.sse {
        return Generated {
            status: step.status.unwrap_or(200),
            body: Body::Stream {
                content_type: "text/event-stream",
                frames: sse.iter().map(|f| f.as_bytes().to_vec()).collect(),
            },
        };
    }
    if let Some(body) = &step.body {
        return Generated {
            status: step.status.unwrap_or(200),
            body: Body::Full {
                content_type: "application/json",
                bytes: body.clone(),
            },
        };
    }
    if let Some(status) = step.status.filter(|s| *s >= 400) {
        return llm::error_response(
            info.api,
            status,
            &format!("mock-llm scripted error (status {status})"),
        );
    }
    let mut generated = llm::generate(info, params, models);
    if let Some(status) = step.status {
        generated.status = status;
    }
    generated
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    async fn start() -> (std::net::SocketAddr, Arc<AppState>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(AppState::new(100, 1 << 20, CompressMode::Accepted));
        let st = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                tokio::spawn(serve_connection(s, Arc::clone(&st)));
            }
        });
        (addr, state)
    }

    /// Reads one content-length response: (status, body).
    async fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>) -> (u16, String) {
        loop {
            if let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") {
                let head = String::from_utf8(buf[..end].to_vec()).unwrap();
                let status: u16 = head[9..12].parse().unwrap();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .unwrap()
                    .parse()
                    .unwrap();
                while buf.len() < end + 4 + len {
                    assert!(s.read_buf(buf).await.unwrap() > 0);
                }
                let body = String::from_utf8(buf[end + 4..end + 4 + len].to_vec()).unwrap();
                buf.drain(..end + 4 + len);
                return (status, body);
            }
            assert!(s.read_buf(buf).await.unwrap() > 0);
        }
    }

    #[tokio::test]
    async fn keep_alive_two_requests_on_one_connection() {
        let (addr, state) = start().await;
        let mut s = TcpStream::connect(addr).await.unwrap();
        let mut buf = Vec::new();
        // Chunked body, written in awkward pieces.
        let body = br#"{"model":"m1","messages":[]}"#;
        let (a, b) = body.split_at(7);
        let parts: Vec<Vec<u8>> = vec![
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec(),
            format!("{:x}\r\n", a.len()).into_bytes(),
            a.to_vec(),
            format!("\r\n{:X}\r", b.len()).into_bytes(),
            [b"\n".as_slice(), b, b"\r\n0\r"].concat(),
            b"\n\r\n".to_vec(),
        ];
        for p in parts {
            s.write_all(&p).await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (status, resp) = read_response(&mut s, &mut buf).await;
        assert_eq!(status, 200);
        assert!(resp.contains("Hello from m1"), "{resp}");
        // Second request on the same connection, with expect: 100-continue.
        let body = br#"{"model":"m2"}"#;
        s.write_all(
            format!(
                "POST /v1/messages HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut interim = vec![0u8; CONTINUE_100.len()];
        s.read_exact(&mut interim).await.unwrap();
        assert_eq!(interim, CONTINUE_100);
        s.write_all(body).await.unwrap();
        let (status, resp) = read_response(&mut s, &mut buf).await;
        assert_eq!(status, 200);
        assert!(resp.contains(r#""type":"message""#), "{resp}");
        let records = state.lock().recorder.since(0);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].model.as_deref(), Some("m1"));
        assert_eq!(records[0].body, r#"{"model":"m1","messages":[]}"#);
        assert_eq!(records[1].model.as_deref(), Some("m2"));
    }

    #[test]
    fn response_encoding_agrees_with_build_response() {
        use crate::script::parse_script;
        let steps = parse_script(
            br#"{"model":"m","steps":[{},{"status":429},{"status":201},{"body":{"a":1}},
                {"sse":["data: x\n\n"]},{"body":"<html>","headers":{"content-type":"text/html"}},
                {"status":503,"headers":{"Content-Type":"application/problem+json"}},
                {"preset":"capacity"},{"headers":{"content-encoding":"br"}}]}"#,
        )
        .unwrap()
        .steps;
        let requests: &[(&str, &str, &str, &[u8])] = &[
            ("POST", "/v1/chat/completions", "", br#"{"stream":true}"#),
            ("POST", "/v1/chat/completions", "", b"{}"),
            ("POST", "/v1/messages", "", br#"{"stream":true}"#),
            ("POST", "/v1/messages", "", b"not json"),
            ("POST", "/v1/embeddings", "", br#"{"stream":true}"#),
            ("POST", "/v1beta/models/g:streamGenerateContent", "", b""),
            ("POST", "/v1beta/models/g:generateContent", "", b""),
            ("GET", "/v1/models", "", b""),
            ("GET", "/nope", "", b""),
        ];
        let gzip = [("accept-encoding".to_string(), "gzip".to_string())];
        for (method, path, query, body) in requests {
            let info = llm::classify(method, path, query, body);
            for (i, step) in steps.iter().enumerate() {
                let params = GenParams {
                    seq: 1,
                    chunks: 3,
                    body_len: body.len(),
                    method,
                    path,
                    cached_tokens: 0,
                };
                let expect = match build_response(&info, step, &params, &[]).body {
                    Body::Full { .. } if i == 8 => None,
                    Body::Full { content_type, .. } => {
                        let ct = step.content_type().unwrap_or(content_type);
                        is_json(ct).then_some(Encoding::Gzip)
                    }
                    Body::Stream { .. } => None,
                };
                for mode in [CompressMode::Accepted, CompressMode::Always] {
                    assert_eq!(
                        response_encoding(step, &info, &gzip, mode),
                        expect,
                        "{method} {path} step {i} {mode:?}"
                    );
                }
                assert_eq!(
                    response_encoding(step, &info, &[], CompressMode::Accepted),
                    None
                );
                assert_eq!(
                    response_encoding(step, &info, &gzip, CompressMode::Never),
                    None
                );
            }
        }
    }

    #[tokio::test]
    async fn bad_request_gets_400_and_close() {
        let (addr, _) = start().await;
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"BROKEN\r\n\r\n").await.unwrap();
        let mut buf = Vec::new();
        let (status, _) = read_response(&mut s, &mut buf).await;
        assert_eq!(status, 400);
        assert_eq!(s.read_buf(&mut buf).await.unwrap(), 0);
    }
}
