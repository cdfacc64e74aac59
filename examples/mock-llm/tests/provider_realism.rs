//! End-to-end tests of the provider-realism features over real TCP:
//! compression, account scripts, error presets, mid-stream errors, resets
//! in the middle of a body and time to first token.

mod common;

use std::io::{ErrorKind, Read};
use std::time::{Duration, Instant};

use flate2::read::{GzDecoder, ZlibDecoder};
use serde_json::Value;

use common::{read_head, read_response, send, Conn, Mock, Response};

const CHAT: &str = "/v1/chat/completions";

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(data).read_to_end(&mut out).unwrap();
    out
}

fn inflate(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    ZlibDecoder::new(data).read_to_end(&mut out).unwrap();
    out
}

/// Decodes as much of a (possibly unfinished) gzip stream as is there.
fn gunzip_prefix(data: &[u8]) -> Vec<u8> {
    let mut d = GzDecoder::new(data);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = d.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

/// Asserts a gzip answer with a correct content-length and returns the
/// decompressed body.
fn gzip_body(r: &Response) -> Vec<u8> {
    assert_eq!(
        r.header("content-encoding"),
        Some("gzip"),
        "{:?}",
        r.headers
    );
    assert_eq!(r.header("vary"), Some("accept-encoding"));
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    assert_eq!(&r.body[..2], &[0x1f, 0x8b], "gzip magic");
    gunzip(&r.body)
}

/// Reads what follows on `c` until the peer closes or resets; returns the
/// bytes and whether it was a reset.
fn drain(c: &mut Conn<'_>) -> (Vec<u8>, bool) {
    let mut rest = std::mem::take(&mut c.buf);
    let mut tmp = [0u8; 4096];
    loop {
        match c.s.read(&mut tmp) {
            Ok(0) => return (rest, false),
            Ok(n) => rest.extend_from_slice(&tmp[..n]),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}");
                return (rest, true);
            }
        }
    }
}

/// Splits a chunked body (without the head) into its chunks; the bool says
/// whether the terminating zero chunk was there.
fn dechunk(mut data: &[u8]) -> (Vec<Vec<u8>>, bool) {
    let mut chunks = Vec::new();
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            return (chunks, false);
        };
        let size = usize::from_str_radix(std::str::from_utf8(&data[..eol]).unwrap(), 16).unwrap();
        if size == 0 {
            return (chunks, true);
        }
        let start = eol + 2;
        if data.len() < start + size + 2 {
            return (chunks, false);
        }
        chunks.push(data[start..start + size].to_vec());
        data = &data[start + size + 2..];
    }
}

fn records(mock: &Mock) -> Vec<Value> {
    mock.json("GET", "/_mock/requests", "")
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn json_answers_are_compressed_as_negotiated() {
    let mock = Mock::start("compress");
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;

    // Plain request: plain answer (no content-encoding, no vary).
    let r = mock.call("POST", CHAT, body, &[]);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.header("vary"), None);
    assert_eq!(
        json_of(&r.body)["choices"][0]["message"]["content"],
        "Hello from gpt-4o"
    );

    // gzip accepted: the same JSON, gzip-compressed.
    let r = mock.call(
        "POST",
        CHAT,
        body,
        &[("Accept-Encoding", "gzip, deflate, br")],
    );
    assert_eq!(r.status, 200);
    let v = json_of(&gzip_body(&r));
    assert_eq!(v["choices"][0]["message"]["content"], "Hello from gpt-4o");

    // gzip refused with q=0, deflate accepted: zlib-wrapped deflate.
    let r = mock.call(
        "POST",
        CHAT,
        body,
        &[("accept-encoding", "gzip;q=0, deflate;q=0.5")],
    );
    assert_eq!(r.header("content-encoding"), Some("deflate"));
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    assert_eq!(json_of(&inflate(&r.body))["object"], "chat.completion");

    // `*` counts; refusing everything (or naming only others) does not.
    let r = mock.call("POST", CHAT, body, &[("accept-encoding", "*")]);
    assert_eq!(json_of(&gzip_body(&r))["object"], "chat.completion");
    for accept in ["identity", "br", "*;q=0", "gzip;q=0, deflate;q=0"] {
        let r = mock.call("POST", CHAT, body, &[("accept-encoding", accept)]);
        assert_eq!(r.header("content-encoding"), None, "{accept}");
        assert_eq!(json_of(&r.body)["object"], "chat.completion");
    }

    // Error answers too: generated, preset (byte for byte) and on 404s.
    mock.script(
        r#"{"model":"err","steps":[{"status":429},{"preset":"openai_insufficient_quota"}]}"#,
    );
    let gz = [("accept-encoding", "gzip")];
    let r = mock.call("POST", CHAT, r#"{"model":"err"}"#, &gz);
    assert_eq!(r.status, 429);
    assert_eq!(
        json_of(&gzip_body(&r))["error"]["code"],
        "rate_limit_exceeded"
    );
    let r = mock.call("POST", CHAT, r#"{"model":"err"}"#, &gz);
    let plain = gzip_body(&r);
    assert!(
        plain.starts_with(b"{\n  \"error\": {\n    \"message\": \"You exceeded your current quota")
    );
    assert_eq!(json_of(&plain)["error"]["type"], "insufficient_quota");
    let r = mock.call("GET", "/nope", "", &gz);
    assert_eq!(
        (r.status, json_of(&gzip_body(&r))["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let r = mock.call("GET", "/v1/models", "", &gz);
    assert_eq!(json_of(&gzip_body(&r))["object"], "list");

    // Event streams are not compressed by negotiation.
    let r = mock.call("POST", CHAT, r#"{"model":"s","stream":true}"#, &gz);
    assert_eq!(r.header("content-encoding"), None);
    assert!(r.text().ends_with("data: [DONE]\n\n"));

    // Records: the request's accept-encoding and the coding answered with.
    let recs = records(&mock);
    let encodings: Vec<Value> = recs
        .iter()
        .map(|r| r["response_encoding"].clone())
        .collect();
    assert_eq!(
        encodings,
        [
            Value::Null,
            "gzip".into(),
            "deflate".into(),
            "gzip".into(),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            "gzip".into(),
            "gzip".into(),
            "gzip".into(),
            "gzip".into(),
            Value::Null,
        ]
    );
    assert_eq!(recs[1]["headers"]["accept-encoding"], "gzip, deflate, br");
    // Control answers are never compressed.
    let r = mock.call("GET", "/_mock/stats", "", &gz);
    assert_eq!(r.header("content-encoding"), None);
}

#[test]
fn step_compress_overrides_and_streams_flush_per_frame() {
    let mock = Mock::start("compress-step");
    mock.script(
        r#"{"model":"m","steps":[
            {"compress":"none"},
            {"compress":"deflate"},
            {"compress":"gzip","chunks":4,"chunk_delay_ms":30},
            {"compress":"gzip","status":503,"body":"upstream down","headers":{"content-type":"text/plain"}}]}"#,
    );
    let gz = [("accept-encoding", "gzip")];
    // "none" wins over an accepting request.
    let r = mock.call("POST", CHAT, r#"{"model":"m"}"#, &gz);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(json_of(&r.body)["model"], "m");
    // "deflate" is sent although the request did not ask.
    let r = mock.call("POST", CHAT, r#"{"model":"m"}"#, &[]);
    assert_eq!(r.header("content-encoding"), Some("deflate"));
    assert_eq!(json_of(&inflate(&r.body))["model"], "m");

    // A gzip stream: each chunk decodes as it arrives (sync flush per frame).
    let r = mock.call(
        "POST",
        CHAT,
        r#"{"model":"m","stream":true,"stream_options":{"include_usage":true}}"#,
        &[],
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    let mut sent = Vec::new();
    // role, 4 content chunks, finish, usage, [DONE], then the gzip trailer.
    assert_eq!(r.chunks.len(), 9, "{:?}", r.chunks.len());
    for (i, (chunk, _)) in r.chunks.iter().enumerate().take(8) {
        sent.extend_from_slice(chunk);
        let text = String::from_utf8(gunzip_prefix(&sent)).unwrap();
        assert_eq!(
            text.matches("\n\n").count(),
            i + 1,
            "after chunk {i}: {text:?}"
        );
        assert!(text.ends_with("\n\n"));
    }
    let text = String::from_utf8(gunzip(&r.body)).unwrap();
    assert!(text.contains(r#""content":" more""#), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"));

    // Forced gzip applies to any body, a text/plain one included.
    let r = mock.call("POST", CHAT, r#"{"model":"m"}"#, &[]);
    assert_eq!(r.status, 503);
    assert_eq!(gzip_body(&r), b"upstream down");

    let recs = records(&mock);
    let encodings: Vec<&str> = recs
        .iter()
        .map(|r| r["response_encoding"].as_str().unwrap_or("null"))
        .collect();
    assert_eq!(encodings, ["null", "deflate", "gzip", "gzip"]);
}

#[test]
fn compress_flag_always_and_never() {
    let always = Mock::start_with("compress-always", &["--compress", "always"]);
    let r = always.call("POST", CHAT, r#"{"model":"a"}"#, &[]);
    assert_eq!(json_of(&gzip_body(&r))["model"], "a");
    let r = always.call(
        "POST",
        "/v1/messages",
        r#"{"model":"a"}"#,
        &[("accept-encoding", "identity")],
    );
    assert_eq!(json_of(&gzip_body(&r))["type"], "message");
    let r = always.call("POST", CHAT, r#"{"model":"a","stream":true}"#, &[]);
    assert_eq!(r.header("content-encoding"), None, "streams stay plain");

    let never = Mock::start_with("compress-never", &["--compress=never"]);
    let r = never.call(
        "POST",
        CHAT,
        r#"{"model":"n"}"#,
        &[("accept-encoding", "gzip")],
    );
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(json_of(&r.body)["model"], "n");
    // A step still forces its coding.
    never.script(r#"{"model":"n","steps":[{"compress":"gzip"}]}"#);
    let r = never.call("POST", CHAT, r#"{"model":"n"}"#, &[]);
    assert_eq!(json_of(&gzip_body(&r))["model"], "n");
}

#[test]
fn account_scripts_stop_every_model_served_with_that_key() {
    let mock = Mock::start("accounts");
    let r = mock.call(
        "POST",
        "/_mock/scripts",
        r#"[{"account":"sk-broke","default":{"preset":"openai_insufficient_quota"}},
            {"account":"ant-1","path_prefix":"/v1/messages","steps":[{"preset":"anthropic_credit_balance"}]},
            {"model":"gpt-4o-mini","steps":[{"status":503}]}]"#,
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let key = |k: &'static str| ("Authorization", k);
    let broke = [key("Bearer sk-broke")];
    // Same key, two models: both hit the quota stop.
    for model in ["gpt-4o", "gpt-4o-mini", "o3"] {
        let r = mock.call("POST", CHAT, &format!(r#"{{"model":"{model}"}}"#), &broke);
        assert_eq!(r.status, 429, "{model}");
        assert_eq!(json_of(&r.body)["error"]["code"], "insufficient_quota");
    }
    // Another key: the models' own scripts and normal answers.
    let fine = [key("Bearer sk-fine")];
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o-mini"}"#, &fine);
    assert_eq!(r.status, 503);
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &fine);
    assert_eq!(r.status, 200);
    // No credential at all.
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &[]);
    assert_eq!(r.status, 200);
    // x-api-key, with a path_prefix: only the messages endpoint, one step.
    let ant = [("x-api-key", "ant-1")];
    let r = mock.call("POST", CHAT, r#"{"model":"claude"}"#, &ant);
    assert_eq!(r.status, 200);
    let r = mock.call("POST", "/v1/messages", r#"{"model":"claude"}"#, &ant);
    assert_eq!(r.status, 400);
    assert!(r.text().contains("Your credit balance is too low"));
    let r = mock.call("POST", "/v1/messages", r#"{"model":"claude"}"#, &ant);
    assert_eq!(r.status, 200);
    // Gemini's ?key= and x-goog-api-key name accounts too.
    mock.script(r#"{"account":"AIza-1","default":{"preset":"google_per_model_quota"}}"#);
    let r = mock.call(
        "POST",
        "/v1beta/models/gemini-2.0-flash:generateContent?key=AIza-1",
        "{}",
        &[],
    );
    assert_eq!(r.status, 429);
    let r = mock.call(
        "POST",
        "/v1beta/models/gemini-1.5-flash:generateContent",
        "{}",
        &[("x-goog-api-key", "AIza-1")],
    );
    assert_eq!(r.status, 429);

    let recs = records(&mock);
    let accounts: Vec<&str> = recs
        .iter()
        .map(|r| r["account"].as_str().unwrap())
        .collect();
    assert_eq!(
        accounts,
        [
            "sk-broke", "sk-broke", "sk-broke", "sk-fine", "sk-fine", "-", "ant-1", "ant-1",
            "ant-1", "AIza-1", "AIza-1"
        ]
    );
    assert_eq!(recs[0]["script"], "account:sk-broke");
    assert_eq!(recs[0]["step"], Value::Null, "the default was used");
    assert_eq!(recs[3]["script"], "gpt-4o-mini");
    assert_eq!(recs[7]["script"], "account:ant-1");
    assert_eq!(recs[7]["step"], 0);
    let stats = mock.json("GET", "/_mock/stats", "");
    assert_eq!(stats["by_account"]["sk-broke"], 3);
    assert_eq!(stats["by_account"]["sk-fine"], 2);
    assert_eq!(stats["by_account"]["-"], 1);
    assert_eq!(stats["by_account"]["AIza-1"], 2);
    assert_eq!(stats["by_model"]["gpt-4o"], 3);

    // Reset clears account scripts too.
    mock.call("POST", "/_mock/reset", "", &[]);
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &broke);
    assert_eq!(r.status, 200);

    // A script needs exactly one of model and account.
    let r = mock.call(
        "POST",
        "/_mock/script",
        r#"{"model":"m","account":"k"}"#,
        &[],
    );
    assert_eq!(r.status, 400);
    let r = mock.call("POST", "/_mock/script", r#"{"steps":[]}"#, &[]);
    assert_eq!(r.status, 400);
}

#[test]
fn presets_send_real_provider_answers() {
    let mock = Mock::start("presets");
    mock.script(
        r#"{"model":"*","steps":[
            {"preset":"openai_rate_limit"},
            {"preset":"openai_tokens_per_day","headers":{"x-request-id":"req_1"}},
            {"preset":"anthropic_overloaded"},
            {"preset":"anthropic_rate_limit","headers":{"retry-after":"30"}},
            {"preset":"deepseek_insufficient_balance"},
            {"preset":"google_per_model_quota"},
            {"preset":"capacity","status":429},
            {"preset":"openai_server_error"}]}"#,
    );
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.header("x-ratelimit-remaining-tokens"), Some("0"));
    assert_eq!(r.header("x-ratelimit-reset-tokens"), Some("1s"));
    let v = json_of(&r.body);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tokens per min (TPM)"));
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Please try again in 1s"));

    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &[]);
    assert_eq!((r.status, r.header("x-request-id")), (429, Some("req_1")));
    let v = json_of(&r.body);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("on tokens per day (TPD)"));
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");

    let r = mock.call("POST", "/v1/messages", r#"{"model":"c"}"#, &[]);
    assert_eq!(r.status, 529);
    assert_eq!(
        r.text(),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
    );
    assert_eq!(r.header("x-should-retry"), Some("true"));

    let r = mock.call("POST", "/v1/messages", r#"{"model":"c"}"#, &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("30"), "step header overrides");
    assert!(
        r.header("anthropic-ratelimit-input-tokens-limit").is_some(),
        "preset headers merge"
    );
    assert_eq!(json_of(&r.body)["error"]["type"], "rate_limit_error");

    let r = mock.call("POST", CHAT, r#"{"model":"deepseek-chat"}"#, &[]);
    assert_eq!(r.status, 402);
    assert_eq!(json_of(&r.body)["error"]["message"], "Insufficient Balance");

    let r = mock.call(
        "POST",
        "/v1beta/models/gemini-2.0-flash:generateContent",
        "{}",
        &[],
    );
    assert_eq!(r.status, 429);
    let v = json_of(&r.body);
    assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    let details = v["error"]["details"].as_array().unwrap();
    let quota = details
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.QuotaFailure")
        .unwrap();
    assert!(quota["violations"][0]["quotaId"]
        .as_str()
        .unwrap()
        .contains("PerModel"));
    assert!(details
        .iter()
        .any(|d| d["@type"] == "type.googleapis.com/google.rpc.RetryInfo"));

    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &[]);
    assert_eq!(r.status, 429, "status overrides the preset's 503");
    assert_eq!(
        json_of(&r.body)["error"]["message"],
        "Selected model is at capacity. Please try a different model."
    );
    let r = mock.call("POST", CHAT, r#"{"model":"gpt-4o"}"#, &[]);
    assert_eq!(
        (r.status, json_of(&r.body)["error"]["type"].as_str()),
        (500, Some("server_error"))
    );

    let r = mock.call(
        "POST",
        "/_mock/script",
        r#"{"model":"m","steps":[{"preset":"nope"}]}"#,
        &[],
    );
    assert_eq!(r.status, 400);
    assert!(r.text().contains("unknown preset"), "{}", r.text());
}

fn events(r: &Response) -> Vec<String> {
    r.chunks
        .iter()
        .map(|(d, _)| String::from_utf8(d.clone()).unwrap())
        .collect()
}

#[test]
fn streams_end_with_the_family_error_event() {
    let mock = Mock::start("stream-error");
    mock.script(
        r#"{"model":"*","steps":[
            {"stream_error":{"after":1}},
            {"stream_error":{"after":2,"preset":"capacity"}},
            {"stream_error":{"after":0,"payload":{"type":"api_error","message":"boom"}}}]}"#,
    );
    // Anthropic: message_start (with input usage), block start, one delta, error.
    let r = mock.call(
        "POST",
        "/v1/messages",
        r#"{"model":"claude","stream":true}"#,
        &[],
    );
    assert_eq!(r.status, 200);
    let ev = events(&r);
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert!(ev[0].starts_with("event: message_start\n"));
    let start = json_of(ev[0].split_once("data: ").unwrap().1.trim().as_bytes());
    assert!(start["message"]["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(ev[2].contains(r#""text":"Hello""#));
    assert_eq!(
        ev[3],
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
    );
    assert!(!r.text().contains("message_stop"));

    // OpenAI chat with a preset: its error object, as OpenAI sends it mid-stream.
    let r = mock.call(
        "POST",
        CHAT,
        r#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true}}"#,
        &[],
    );
    let ev = events(&r);
    assert_eq!(ev.len(), 4, "{ev:?}");
    let err = json_of(ev[3].strip_prefix("data: ").unwrap().trim().as_bytes());
    assert_eq!(err["error"]["code"], "server_is_overloaded");
    assert_eq!(
        err["error"]["message"],
        "Selected model is at capacity. Please try a different model."
    );
    assert!(!r.text().contains("[DONE]"));

    // after 0: the error is the very first event.
    let r = mock.call(
        "POST",
        "/v1/messages",
        r#"{"model":"claude","stream":true}"#,
        &[],
    );
    assert_eq!(
        events(&r),
        ["event: error\ndata: {\"type\":\"error\",\"error\":{\"message\":\"boom\",\"type\":\"api_error\"}}\n\n"]
    );
}

#[test]
fn reset_in_the_middle_of_the_body() {
    let mock = Mock::start("mid-body");
    mock.script(
        r#"{"model":"m","steps":[
            {"reset":"mid_body","reset_after_chunks":2},
            {"reset":"mid_body","reset_after_chunks":1},
            {"reset":"mid_body","reset_after_chunks":3,"compress":"gzip"}]}"#,
    );
    // Stream: headers, exactly two frames, then RST (no terminating chunk).
    let mut s = mock.connect();
    send(
        &mut s,
        "POST",
        "/v1/messages",
        r#"{"model":"m","stream":true}"#,
        &[],
    );
    let mut c = Conn {
        s: &mut s,
        buf: Vec::new(),
    };
    let (status, _) = read_head(&mut c).unwrap();
    assert_eq!(status, 200);
    let (rest, reset) = drain(&mut c);
    assert!(reset, "the connection is reset, not closed");
    let (chunks, complete) = dechunk(&rest);
    assert!(!complete);
    assert_eq!(chunks.len(), 2);
    assert!(chunks[0].starts_with(b"event: message_start"));
    assert!(String::from_utf8_lossy(&chunks[0]).contains("input_tokens"));

    // Plain body: the head announces the whole body, 64 bytes arrive, RST.
    let mut s = mock.connect();
    send(&mut s, "POST", CHAT, r#"{"model":"m"}"#, &[]);
    let mut c = Conn {
        s: &mut s,
        buf: Vec::new(),
    };
    let (status, headers) = read_head(&mut c).unwrap();
    assert_eq!(status, 200);
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .unwrap()
        .1
        .parse()
        .unwrap();
    let (rest, reset) = drain(&mut c);
    assert!(reset, "the connection is reset, not closed");
    assert!(len > 64);
    assert_eq!(rest.len(), 64);

    // A compressed stream cut after three frames: what arrived decodes.
    let mut s = mock.connect();
    send(&mut s, "POST", CHAT, r#"{"model":"m","stream":true}"#, &[]);
    let mut c = Conn {
        s: &mut s,
        buf: Vec::new(),
    };
    let (_, headers) = read_head(&mut c).unwrap();
    assert!(headers.contains(&("content-encoding".into(), "gzip".into())));
    let (rest, _) = drain(&mut c);
    let (chunks, complete) = dechunk(&rest);
    assert_eq!((chunks.len(), complete), (3, false));
    let text = String::from_utf8(gunzip_prefix(&chunks.concat())).unwrap();
    assert_eq!(text.matches("data: ").count(), 3, "{text}");

    let outcomes: Vec<String> = records(&mock)
        .iter()
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["reset_mid_body"; 3]);
}

#[test]
fn time_to_first_token_is_after_the_headers() {
    let mock = Mock::start("ttft");
    mock.script(
        r#"{"model":"m","steps":[{"ttft_ms":400},{"delay_ms":400},{"ttft_ms":400,"reset":"after_headers"}]}"#,
    );
    let body = r#"{"model":"m","stream":true}"#;
    // ttft: headers at once, the first event after ~400 ms.
    let mut s = mock.connect();
    let t = Instant::now();
    send(&mut s, "POST", CHAT, body, &[]);
    let r = read_response(&mut s).unwrap();
    let head = r.head_at.duration_since(t);
    let first = r.chunks[0].1.duration_since(t);
    assert!(head < Duration::from_millis(250), "headers after {head:?}");
    assert!(
        first >= Duration::from_millis(380),
        "first event after {first:?}"
    );
    assert!(r.text().ends_with("data: [DONE]\n\n"));

    // delay_ms: nothing, not even headers, for ~400 ms.
    let mut s = mock.connect();
    let t = Instant::now();
    send(&mut s, "POST", CHAT, body, &[]);
    let r = read_response(&mut s).unwrap();
    let head = r.head_at.duration_since(t);
    assert!(head >= Duration::from_millis(380), "headers after {head:?}");

    // ttft with a reset after the headers: headers, a wait, one frame, RST.
    let mut s = mock.connect();
    let t = Instant::now();
    send(&mut s, "POST", CHAT, body, &[]);
    let mut c = Conn {
        s: &mut s,
        buf: Vec::new(),
    };
    read_head(&mut c).unwrap();
    assert!(t.elapsed() < Duration::from_millis(250));
    let (rest, _) = drain(&mut c);
    assert!(t.elapsed() >= Duration::from_millis(380));
    let (chunks, complete) = dechunk(&rest);
    assert_eq!((chunks.len(), complete), (1, false));
}
