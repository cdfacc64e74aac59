//! Traffic shaping against the HTTP connection manager that holds the client filter: a queued
//! request counts against the manager's `stream_idle_timeout` (default 5 min) and
//! `request_timeout`, not against the route's `timeout`, so the longest queue time must stay
//! below both; and the filter, which cannot read the manager's settings, must be told the idle
//! timeout (`shaping.stream_idle_timeout_ms`) it is held to.

use super::{find_typed, finding, warning, Report, WASM_FILTER};
use crate::config::shaping::{ENVOY_STREAM_IDLE_TIMEOUT_MS, IDLE_MARGIN_MS};
use crate::config::Config;
use serde_json::Value;

const HCM: &str = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/// A protobuf duration as YAML writes it (`300s`, `1.5s`, `{seconds: 3}`), in milliseconds.
fn duration_ms(value: &Value) -> Option<u64> {
    match value {
        Value::String(text) => {
            let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
            (seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
        }
        Value::Object(map) => {
            let seconds = map.get("seconds").and_then(Value::as_u64).unwrap_or(0);
            let nanos = map.get("nanos").and_then(Value::as_u64).unwrap_or(0);
            Some(seconds * 1000 + nanos / 1_000_000)
        }
        _ => None,
    }
}

/// Whether the manager's filters include the llm-fallback client filter.
fn holds_client_filter(manager: &Value) -> bool {
    manager
        .get("http_filters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("typed_config"))
        .filter(|t| t.get("@type").and_then(Value::as_str) == Some(WASM_FILTER))
        .any(|t| t.pointer("/config/root_id").and_then(Value::as_str) == Some("client"))
}

pub(super) fn check_shaping(document: &Value, client: Option<&Config>, report: &mut Report) {
    let Some(shaping) = client.and_then(|c| c.shaping.as_ref()) else {
        return;
    };
    let longest = shaping.longest_queue_ms();
    let mut managers = Vec::new();
    find_typed(document, "", HCM, &mut managers);
    for (at, manager) in managers.into_iter().filter(|(_, m)| holds_client_filter(m)) {
        let at = at.trim_start_matches('.');
        let idle = match manager.get("stream_idle_timeout") {
            None => ENVOY_STREAM_IDLE_TIMEOUT_MS,
            Some(v) => duration_ms(v).unwrap_or(ENVOY_STREAM_IDLE_TIMEOUT_MS),
        };
        if idle != 0 && longest + IDLE_MARGIN_MS > idle {
            report.findings.push(finding(
                format!("{at}.stream_idle_timeout"),
                format!(
                    "{idle} ms: a request may wait {longest} ms in a shaping queue, and Envoy \
                     answers 504 to a stream idle that long; raise it or shorten max_queue_ms"
                ),
            ));
        }
        if idle != shaping.stream_idle_timeout_ms {
            report.findings.push(warning(
                format!("{at}.stream_idle_timeout"),
                format!(
                    "{idle} ms here, but shaping.stream_idle_timeout_ms says {} ms: the filter \
                     checks its queue times against the value it is told",
                    shaping.stream_idle_timeout_ms
                ),
            ));
        }
        if let Some(request) = manager.get("request_timeout").and_then(duration_ms) {
            if request != 0 && longest >= request {
                report.findings.push(finding(
                    format!("{at}.request_timeout"),
                    format!(
                        "{request} ms: a request may wait {longest} ms in a shaping queue before \
                         it is even sent; the whole request must fit"
                    ),
                ));
            }
        }
    }
    let text = document.to_string();
    if !text.contains(";priority=") || !text.contains(";event=") || !text.contains(";pool=") {
        report.findings.push(warning(
            "stats_config.stats_tags",
            "no tags for `;priority=`, `;event=` and `;pool=`: the shaping counters and gauges \
             reach Prometheus without their labels",
        ));
    }
}
