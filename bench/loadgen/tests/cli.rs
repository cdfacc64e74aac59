//! End-to-end: run the `loadgen` binary against a tiny in-test HTTP server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// Keep-alive HTTP/1.1 server on 127.0.0.1. Paths:
/// `/ok` 200 with content-length; `/chunked` 200 chunked in three writes;
/// `/close503` 503 with `connection: close`, then closes.
fn start_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || serve(stream));
        }
    });
    port
}

fn serve(stream: TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split(' ').nth(1).unwrap_or("").to_string();
        let mut content_length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    content_length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let ok = match path.as_str() {
            "/ok" => writer
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}")
                .is_ok(),
            "/chunked" => {
                let parts: [&[u8]; 3] = [
                    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
                    b"7\r\ndata: a\r\n",
                    b"6\r\n[DONE]\r\n0\r\n\r\n",
                ];
                parts.iter().all(|p| {
                    thread::sleep(Duration::from_micros(200));
                    writer.write_all(p).is_ok()
                })
            }
            "/close503" => {
                let _ = writer.write_all(
                    b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 4\r\n\r\nbusy",
                );
                return;
            }
            _ => writer
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .is_ok(),
        };
        if !ok {
            return;
        }
    }
}

fn loadgen(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json = if code == 0 {
        assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
        serde_json::from_str(&stdout).unwrap()
    } else {
        assert!(stdout.is_empty(), "nothing on stdout on failure");
        Value::Null
    };
    (code, json)
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn assert_sane_latency(s: &Value) {
    let keys = ["min", "p50", "p90", "p99", "p999", "max"];
    let vals: Vec<f64> = keys.iter().map(|k| num(s, k)).collect();
    assert!(vals[0] > 0.0, "{s}");
    assert!(vals.windows(2).all(|w| w[0] <= w[1]), "not monotonic: {s}");
    let mean = num(s, "mean");
    assert!(mean >= vals[0] && mean <= vals[5], "{s}");
}

#[test]
fn closed_mode_keep_alive() {
    let port = start_server();
    let url = format!("http://127.0.0.1:{port}/ok");
    let (code, r) = loadgen(&[
        "--url",
        &url,
        "--body",
        "{\"model\":\"m\"}",
        "--mode",
        "closed",
        "--connections",
        "2",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
    ]);
    assert_eq!(code, 0);
    assert_eq!(r["mode"], "closed");
    assert_eq!(r["connections"], 2);
    let requests = num(&r, "requests");
    assert!(requests > 50.0, "{r}");
    assert_eq!(num(&r, "ok"), requests);
    assert_eq!(num(&r, "errors"), 0.0);
    assert_eq!(num(&r, "non_2xx"), 0.0);
    assert_eq!(num(&r["statuses"], "200"), requests);
    assert!((num(&r, "rps") - requests / 0.5).abs() < 1.0);
    assert_sane_latency(&r["latency_us"]);
    assert!(r.get("ttfb_us").is_none());
    assert_eq!(r["late_starts"], 0);
    assert!(r["target_rate"].is_null());
}

#[test]
fn open_mode_holds_the_rate() {
    let port = start_server();
    let url = format!("http://127.0.0.1:{port}/ok");
    let (code, r) = loadgen(&[
        "--url",
        &url,
        "--mode",
        "open",
        "--rate",
        "200",
        "--connections",
        "8",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--body",
        "{}",
    ]);
    assert_eq!(code, 0);
    assert_eq!(r["mode"], "open");
    assert_eq!(num(&r, "target_rate"), 200.0);
    let requests = num(&r, "requests");
    assert!((195.0..=205.0).contains(&requests), "{r}");
    assert_eq!(num(&r, "ok"), requests);
    assert!((num(&r, "rps") - 200.0).abs() <= 5.0, "{r}");
    assert_sane_latency(&r["latency_us"]);
    assert_sane_latency(&r["start_lag_us"]);
    assert!(num(&r, "late_starts") <= requests);
    // The schedule takes warm-up + duration; finishing needs little more.
    let elapsed = num(&r, "elapsed_s");
    assert!((1.19..3.0).contains(&elapsed), "{r}");
}

#[test]
fn stream_reports_ttfb_on_chunked_answers() {
    let port = start_server();
    let url = format!("http://127.0.0.1:{port}/chunked");
    let (code, r) = loadgen(&[
        "--url",
        &url,
        "--body",
        "{\"stream\":true}",
        "--stream",
        "--duration",
        "0.3",
        "--warmup",
        "0.1",
    ]);
    assert_eq!(code, 0);
    assert_eq!(num(&r, "errors"), 0.0, "{r}");
    assert!(num(&r, "ok") > 10.0, "{r}");
    assert_sane_latency(&r["ttfb_us"]);
    assert_sane_latency(&r["latency_us"]);
    // The last chunk comes ~200 us after the first.
    assert!(
        num(&r["ttfb_us"], "p50") + 100.0 < num(&r["latency_us"], "p50"),
        "{r}"
    );
}

#[test]
fn non_2xx_with_connection_close_reconnects() {
    let port = start_server();
    let url = format!("http://127.0.0.1:{port}/close503");
    let (code, r) = loadgen(&["--url", &url, "--duration", "0.3", "--warmup", "0"]);
    assert_eq!(code, 0);
    let requests = num(&r, "requests");
    assert!(requests > 10.0, "{r}");
    assert_eq!(num(&r, "non_2xx"), requests, "{r}");
    assert_eq!(num(&r, "ok"), 0.0);
    assert_eq!(num(&r["statuses"], "503"), requests);
    assert_eq!(num(&r, "errors"), 0.0, "{r}");
}

#[test]
fn refused_connections_are_errors_not_failures() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let (code, r) = loadgen(&["--url", &url, "--duration", "0.2", "--warmup", "0"]);
    assert_eq!(code, 0);
    assert!(num(&r, "errors") > 0.0, "{r}");
    assert_eq!(num(&r["error_kinds"], "connect"), num(&r, "errors"));
    assert_eq!(num(&r, "ok"), 0.0);
    assert!(r["latency_us"]["p50"].is_null());
}

#[test]
fn timeouts_are_counted() {
    // Accepts and reads but never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let url = format!("http://127.0.0.1:{port}/");
    let (code, r) = loadgen(&[
        "--url",
        &url,
        "--duration",
        "0.35",
        "--warmup",
        "0",
        "--timeout-ms",
        "100",
    ]);
    assert_eq!(code, 0);
    let timeouts = num(&r["error_kinds"], "timeout");
    assert!((3.0..=5.0).contains(&timeouts), "{r}");
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["--mode", "closed"][..],
        &["--url", "http://127.0.0.1:1/", "--mode", "open"],
        &["--url", "http://127.0.0.1:1/", "--mode", "sideways"],
        &["--url", "ftp://x/"],
        &["--url", "http://127.0.0.1:1/", "--connections", "0"],
    ] {
        let (code, _) = loadgen(args);
        assert_eq!(code, 2, "{args:?}");
    }
}
