//! End-to-end tests: start the mock-llm binary and talk to it with a plain
//! std::net::TcpStream HTTP/1.1 client (helpers in common/).

mod common;

use std::io::{ErrorKind, Read};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{read_head, read_response, send, Conn, Mock};

#[test]
fn chat_completion_json() {
    let mock = Mock::start("chat");
    let v = mock.json(
        "POST",
        "/v1/chat/completions",
        r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#,
    );
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "gpt-4o");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(v["choices"][0]["message"]["content"], "Hello from gpt-4o");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert!(v["usage"]["total_tokens"].as_u64().unwrap() > 0);

    let v = mock.json(
        "POST",
        "/v1/messages",
        r#"{"model":"claude-x","max_tokens":5}"#,
    );
    assert_eq!(v["type"], "message");
    assert_eq!(v["content"][0]["text"], "Hello from claude-x");
    let v = mock.json("POST", "/v1beta/models/gemini-x:generateContent", "{}");
    assert_eq!(
        v["candidates"][0]["content"]["parts"][0]["text"],
        "Hello from gemini-x"
    );
    let v = mock.json("GET", "/v1/models", "");
    assert_eq!(v["object"], "list");

    let r = mock.call("GET", "/nope", "", &[]);
    assert_eq!(r.status, 404);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["error"]["code"], "not_found");
}

#[test]
fn sse_frames_are_flushed_one_by_one() {
    let mock = Mock::start("sse");
    mock.script(r#"{"model":"slow","steps":[{"chunk_delay_ms":200}]}"#);
    let start = Instant::now();
    let r = mock.call(
        "POST",
        "/v1/chat/completions",
        r#"{"model":"slow","stream":true,"stream_options":{"include_usage":true}}"#,
        &[],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    // role, 3 content chunks, finish, usage, [DONE]: one chunk per frame.
    assert_eq!(r.chunks.len(), 7);
    for (data, _) in &r.chunks {
        let frame = std::str::from_utf8(data).unwrap();
        assert!(
            frame.starts_with("data: ") && frame.ends_with("\n\n"),
            "{frame:?}"
        );
    }
    // 6 gaps of 200 ms between 7 frames: the first frame must arrive long
    // before the last (a buffered response would deliver them together).
    let first = r.chunks[0].1.duration_since(start);
    let last = r.chunks[6].1.duration_since(start);
    assert!(
        last >= Duration::from_millis(1150),
        "last frame after {last:?}"
    );
    assert!(
        last - first >= Duration::from_millis(900),
        "first frame after {first:?}, last after {last:?}"
    );
    assert_eq!(r.chunks[6].0, b"data: [DONE]\n\n");
    let text = r.text();
    assert!(text.contains(r#""content":" slow""#), "{text}");
    assert!(text.contains(r#""completion_tokens":3"#), "{text}");

    // Anthropic stream: proper event sequence.
    let r = mock.call(
        "POST",
        "/v1/messages",
        r#"{"model":"c","stream":true}"#,
        &[],
    );
    let events: Vec<String> = r
        .chunks
        .iter()
        .map(|(d, _)| {
            String::from_utf8_lossy(d)
                .lines()
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        events.first().map(String::as_str),
        Some("event: message_start")
    );
    assert_eq!(
        events.last().map(String::as_str),
        Some("event: message_stop")
    );
}

#[test]
fn scripted_429_then_default_success() {
    let mock = Mock::start("429");
    mock.script(
        r#"{"model":"gpt-4o","steps":[{"status":429,"headers":{"retry-after":"7","x-ratelimit-remaining-requests":"0"}}]}"#,
    );
    let body = r#"{"model":"gpt-4o","messages":[]}"#;
    let r = mock.call("POST", "/v1/chat/completions", body, &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.header("x-ratelimit-remaining-requests"), Some("0"));
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let r = mock.call("POST", "/v1/chat/completions", body, &[]);
    assert_eq!(r.status, 200);
    assert!(r.text().contains("Hello from gpt-4o"));

    // Explicit body and a wildcard default.
    mock.script(r#"{"model":"*","default":{"status":503,"body":{"error":"down"}}}"#);
    let r = mock.call("POST", "/v1/chat/completions", r#"{"model":"other"}"#, &[]);
    assert_eq!(r.status, 503);
    assert_eq!(r.text(), r#"{"error":"down"}"#);
}

#[test]
fn reset_before_and_after_headers() {
    let mock = Mock::start("reset");
    mock.script(
        r#"{"model":"rst","steps":[{"reset":"before_headers"},{"reset":"after_headers"}]}"#,
    );
    let body = r#"{"model":"rst","stream":true}"#;

    let mut s = mock.connect();
    send(&mut s, "POST", "/v1/chat/completions", body, &[]);
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => assert!(got.is_empty(), "unexpected response {got:?}"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset),
    }
    assert!(got.is_empty());

    let mut s = mock.connect();
    send(&mut s, "POST", "/v1/chat/completions", body, &[]);
    let mut c = Conn {
        s: &mut s,
        buf: Vec::new(),
    };
    let (status, headers) = read_head(&mut c).unwrap();
    assert_eq!(status, 200);
    assert!(headers.contains(&("transfer-encoding".to_string(), "chunked".to_string())));
    // The stream never completes: the connection is reset or ends early.
    let mut rest = c.buf.clone();
    let mut tmp = [0u8; 4096];
    loop {
        match s.read(&mut tmp) {
            Ok(0) => break,
            Ok(n) => rest.extend_from_slice(&tmp[..n]),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::ConnectionReset);
                break;
            }
        }
    }
    assert!(!rest.ends_with(b"0\r\n\r\n"));

    let records: Value = mock.json("GET", "/_mock/requests", "");
    let outcomes: Vec<&str> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        vec!["reset_before_headers", "reset_after_headers"]
    );
}

#[test]
fn requests_are_recorded_and_control_works_during_delays() {
    let mock = Mock::start("record");
    mock.script(r#"{"model":"stall","steps":[{"delay_ms":5000}]}"#);
    let mut stalled = mock.connect();
    send(
        &mut stalled,
        "POST",
        "/v1/chat/completions",
        r#"{"model":"stall"}"#,
        &[],
    );
    std::thread::sleep(Duration::from_millis(50));

    let t = Instant::now();
    let r = mock.call("GET", "/_mock/health", "", &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "ok"));
    assert!(t.elapsed() < Duration::from_millis(1000));

    let body = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}"#;
    let r = mock.call(
        "POST",
        "/v1/chat/completions?trace=1",
        body,
        &[("X-Test", "abc"), ("x-multi", "1"), ("X-Multi", "2")],
    );
    assert_eq!(r.status, 200);

    let records = mock.json("GET", "/_mock/requests", "");
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 2, "{records:?}");
    let stalled_rec = &records[0];
    assert_eq!(stalled_rec["model"], "stall");
    assert_eq!(stalled_rec["step"], 0);
    assert_eq!(stalled_rec["outcome"], "scripted");
    let rec = &records[1];
    assert_eq!(rec["seq"], 2);
    assert_eq!(rec["method"], "POST");
    assert_eq!(rec["path"], "/v1/chat/completions?trace=1");
    assert_eq!(rec["model"], "gpt-4o-mini");
    assert_eq!(rec["body"], body);
    assert_eq!(rec["body_len"], body.len());
    assert_eq!(rec["body_truncated"], false);
    assert_eq!(rec["stream"], false);
    assert_eq!(rec["step"], Value::Null);
    assert_eq!(rec["outcome"], "ok");
    assert_eq!(rec["headers"]["x-test"], "abc");
    assert_eq!(rec["headers"]["x-multi"], "1, 2");
    assert_eq!(rec["headers"]["content-type"], "application/json");

    let newer = mock.json("GET", "/_mock/requests?since=1", "");
    assert_eq!(newer.as_array().unwrap().len(), 1);
    let stats = mock.json("GET", "/_mock/stats", "");
    assert_eq!(stats["requests"], 2);
    assert_eq!(stats["by_model"]["gpt-4o-mini"], 1);

    let r = mock.call("POST", "/_mock/reset", "", &[]);
    assert_eq!(r.status, 200);
    let records = mock.json("GET", "/_mock/requests", "");
    assert_eq!(records.as_array().unwrap().len(), 0);
    drop(stalled);
}

#[test]
fn keep_alive_and_sigterm() {
    let mut mock = Mock::start("sigterm");
    let mut s = mock.connect();
    for i in 0..3 {
        let body = format!(r#"{{"model":"m{i}"}}"#);
        send(&mut s, "POST", "/v1/chat/completions", &body, &[]);
        let r = read_response(&mut s).unwrap();
        assert!(r.text().contains(&format!("Hello from m{i}")));
    }
    let status = Command::new("kill")
        .args(["-TERM", &mock.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(exit) = mock.child.try_wait().unwrap() {
            assert!(exit.success(), "{exit:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "mock-llm did not exit on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn scenario_file_and_gemini_path_model() {
    let dir =
        std::env::temp_dir().join(format!("mock-llm-it-{}-scenario-file", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("scenario.json");
    std::fs::write(
        &scenario,
        r#"[{"model": "gemini-x", "steps": [{"status": 429}]},
            {"model": "*", "path_prefix": "/v1/messages", "steps": [{"status": 529}]}]"#,
    )
    .unwrap();
    let mock = Mock::start_with("scenario", &["--scenario", scenario.to_str().unwrap()]);
    let r = mock.call("POST", "/v1beta/models/gemini-x:generateContent", "{}", &[]);
    assert_eq!(r.status, 429);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    let r = mock.call("POST", "/v1/messages", r#"{"model":"claude"}"#, &[]);
    assert_eq!(r.status, 529);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");
    // The wildcard is restricted to /v1/messages.
    let r = mock.call("POST", "/v1/chat/completions", r#"{"model":"claude"}"#, &[]);
    assert_eq!(r.status, 200);
    let records = mock.json("GET", "/_mock/requests", "");
    assert_eq!(records[0]["model"], "gemini-x");
    assert_eq!(records[0]["script"], "gemini-x");
    assert_eq!(records[1]["script"], "*");
    assert_eq!(records[2]["outcome"], "ok");
    let _ = std::fs::remove_dir_all(&dir);

    // A broken scenario fails start-up with a message.
    let bad = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["--scenario", "/nonexistent/scenario.json"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot read scenario"));
}
