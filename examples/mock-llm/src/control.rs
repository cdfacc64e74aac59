//! The `/_mock/` control API. Control requests are never recorded.

use serde_json::json;

use crate::http::{query_param, Request};
use crate::script::{parse_script, parse_scripts};
use crate::state::AppState;

/// A control response: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

fn json_reply(status: u16, value: &serde_json::Value) -> Reply {
    Reply {
        status,
        content_type: "application/json",
        body: value.to_string().into_bytes(),
    }
}

fn error_reply(status: u16, code: &str, message: &str) -> Reply {
    json_reply(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "code": code}}),
    )
}

pub fn handle(state: &AppState, req: &Request) -> Reply {
    match (req.method.as_str(), req.path()) {
        ("GET", "/_mock/health") => Reply {
            status: 200,
            content_type: "text/plain",
            body: b"ok".to_vec(),
        },
        ("POST", "/_mock/script") => match parse_script(&req.body) {
            Ok(script) => {
                state.lock().scripts.install(script);
                json_reply(200, &json!({"ok": true, "installed": 1}))
            }
            Err(e) => error_reply(400, "bad_script", &e),
        },
        ("POST", "/_mock/scripts") => match parse_scripts(&req.body) {
            Ok(scripts) => {
                let n = scripts.len();
                let mut inner = state.lock();
                for script in scripts {
                    inner.scripts.install(script);
                }
                json_reply(200, &json!({"ok": true, "installed": n}))
            }
            Err(e) => error_reply(400, "bad_script", &e),
        },
        ("GET", "/_mock/requests") => {
            let since = match query_param(req.query(), "since") {
                None => 0,
                Some(s) => match s.parse::<u64>() {
                    Ok(n) => n,
                    Err(_) => return error_reply(400, "bad_since", "since must be an integer"),
                },
            };
            // Clone the Arcs under the lock, serialize outside it.
            let records = state.lock().recorder.since(since);
            let records: Vec<&crate::record::Record> = records.iter().map(|r| &**r).collect();
            match serde_json::to_vec(&records) {
                Ok(body) => Reply {
                    status: 200,
                    content_type: "application/json",
                    body,
                },
                Err(e) => error_reply(500, "serialize", &e.to_string()),
            }
        }
        ("GET", "/_mock/stats") => {
            let mut stats = state.lock().recorder.stats();
            let (in_flight, max_in_flight) = state.flights();
            stats["in_flight"] = in_flight.into();
            stats["max_in_flight"] = max_in_flight.into();
            json_reply(200, &stats)
        }
        ("POST", "/_mock/reset") => {
            let mut inner = state.lock();
            inner.scripts.clear();
            inner.recorder.clear();
            drop(inner);
            state.reset_flights();
            json_reply(200, &json!({"ok": true}))
        }
        (method, path) => error_reply(
            404,
            "not_found",
            &format!("mock-llm: no control endpoint {method} {path}"),
        ),
    }
}
