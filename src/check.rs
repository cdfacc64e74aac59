//! `llm-fallback check`: validates a plugin configuration, alone or inside an Envoy config.
//!
//! Runs the filter's own validation ([`Config::from_value`]) on every llm-fallback plugin it
//! finds, then the checks only the whole Envoy config allows: the roles present, the settings
//! each role needs, clusters that exist, the route's cluster header and retry marker, and the
//! stats tags that make the labels. Every finding names where it is and how to fix it.

use crate::config::Config;
use serde_json::Value;

const WASM_FILTER: &str = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const STRUCT: &str = "type.googleapis.com/google.protobuf.Struct";
const STRING_VALUE: &str = "type.googleapis.com/google.protobuf.StringValue";

/// A problem, where it is, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// What was checked.
#[derive(Debug, Default)]
pub struct Report {
    /// (location, root_id) of each llm-fallback plugin found.
    pub plugins: Vec<(String, String)>,
    pub findings: Vec<Finding>,
}

fn finding(location: impl Into<String>, message: impl Into<String>) -> Finding {
    Finding {
        location: location.into(),
        message: message.into(),
    }
}

/// Checks a document: an Envoy config (has `static_resources`) or a bare plugin configuration.
pub fn check(document: &Value) -> Report {
    if document.get("static_resources").is_some() || document.get("admin").is_some() {
        return check_envoy(document);
    }
    let mut report = Report::default();
    report
        .plugins
        .push(("(plugin configuration)".into(), String::new()));
    if let Err(e) = Config::from_value(document.clone()) {
        report
            .findings
            .push(finding("(plugin configuration)", e.to_string()));
    }
    report
}

/// A plugin found in an Envoy config.
struct Plugin<'a> {
    location: String,
    wasm: &'a Value,
}

fn find_plugins<'a>(value: &'a Value, path: &str, out: &mut Vec<Plugin<'a>>) {
    match value {
        Value::Object(map) => {
            if map.get("@type").and_then(Value::as_str) == Some(WASM_FILTER) {
                out.push(Plugin {
                    location: path.to_owned(),
                    wasm: value,
                });
                return;
            }
            for (key, child) in map {
                find_plugins(child, &format!("{path}.{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_plugins(child, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Decodes the plugin's `configuration` (a Struct as YAML, or a JSON string).
fn plugin_config(configuration: Option<&Value>) -> Result<Config, String> {
    let Some(configuration) = configuration else {
        return Config::from_bytes(b"").map_err(|e| e.to_string());
    };
    match configuration.get("@type").and_then(Value::as_str) {
        Some(STRUCT) => Config::from_value(
            configuration
                .get("value")
                .cloned()
                .unwrap_or(Value::Object(Default::default())),
        )
        .map_err(|e| e.to_string()),
        Some(STRING_VALUE) => {
            let text = configuration.get("value").and_then(Value::as_str).unwrap_or("");
            Config::from_bytes(text.as_bytes()).map_err(|e| e.to_string())
        }
        other => Err(format!(
            "configuration has @type {other:?}; use {STRUCT} (plain YAML) or {STRING_VALUE} (JSON text)"
        )),
    }
}

fn check_envoy(document: &Value) -> Report {
    let mut report = Report::default();
    let mut plugins = Vec::new();
    find_plugins(document, "", &mut plugins);
    let clusters: Vec<&str> = document
        .pointer("/static_resources/clusters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    let mut configs = Vec::new();
    for plugin in &plugins {
        let at = plugin.location.trim_start_matches('.').to_owned();
        let config = plugin.wasm.get("config").unwrap_or(&Value::Null);
        let root_id = config.get("root_id").and_then(Value::as_str).unwrap_or("");
        report.plugins.push((at.clone(), root_id.to_owned()));
        if !matches!(root_id, "client" | "upstream" | "status") {
            report.findings.push(finding(
                format!("{at}.config.root_id"),
                format!("`{root_id}` is not a role: use `client` (HTTP connection manager), `upstream` (cluster filter) or `status` (internal listener)"),
            ));
            continue;
        }
        if config.get("failure_policy").is_none() {
            report.findings.push(finding(
                format!("{at}.config.failure_policy"),
                "not set: set it on purpose (FAIL_RELOAD keeps traffic flowing and brings the filter back after a VM failure)",
            ));
        }
        let allow = config
            .get("allow_on_headers_stop_iteration")
            .and_then(Value::as_bool);
        if matches!(root_id, "client" | "upstream") && allow != Some(true) {
            report.findings.push(finding(
                format!("{at}.config.allow_on_headers_stop_iteration"),
                "must be true: the filter holds headers while it reads bodies",
            ));
        }
        match plugin_config(config.get("configuration")) {
            Ok(parsed) => {
                if root_id == "status" && parsed.status_path.is_none() {
                    report.findings.push(finding(
                        format!("{at}.config.configuration"),
                        "field `status_path`: required by the status filter, e.g. /llm-fallback/status",
                    ));
                }
                configs.push((at, root_id.to_owned(), parsed));
            }
            Err(e) => report
                .findings
                .push(finding(format!("{at}.config.configuration"), e)),
        }
    }
    if plugins.is_empty() {
        report.findings.push(finding(
            "(envoy config)",
            "no llm-fallback plugin found (an envoy.filters.http.wasm filter)",
        ));
        return report;
    }
    for role in ["client", "upstream"] {
        if !configs.iter().any(|(_, r, _)| r == role) {
            report.findings.push(finding(
                "(envoy config)",
                format!("no `{role}` filter: llm-fallback needs both the client filter (HTTP connection manager) and the upstream filter (cluster http_filters)"),
            ));
        }
    }
    let text = document.to_string();
    let mut seen: Vec<&Config> = Vec::new();
    for (at, _, config) in &configs {
        // The positions usually share one configuration (a YAML anchor): report it once.
        if seen.contains(&config) {
            continue;
        }
        seen.push(config);
        for (i, model) in config.models.iter().enumerate() {
            let cluster = model
                .cluster
                .as_deref()
                .unwrap_or(&config.fallback.default_cluster);
            if !clusters.is_empty() && !clusters.contains(&cluster) {
                report.findings.push(finding(
                    format!("{at}.config.configuration: models[{i}].cluster"),
                    format!("cluster `{cluster}` of model `{}` is not defined in static_resources.clusters", model.name),
                ));
            }
        }
        if !config.models.is_empty()
            && !text.contains(&format!(
                "\"cluster_header\":\"{}\"",
                config.fallback.cluster_header
            ))
        {
            report.findings.push(finding(
                format!("{at}.config.configuration: fallback.cluster_header"),
                format!("no route uses `cluster_header: {}`: the client filter routes to the first healthy model's cluster through it", config.fallback.cluster_header),
            ));
        }
    }
    if !text.contains("\"x-llm-retry\"") {
        report.findings.push(finding(
            "route retry_policy",
            "no `retriable_headers` entry for `x-llm-retry`: Envoy will never make the attempts the filter asks for",
        ));
    }
    if !text.contains(";model=") {
        report.findings.push(finding(
            "stats_config.stats_tags",
            "no tag for `;model=`: add {tag_name: model, regex: \"(;model=([^;]*))\"} (and class, to, direction, reason, account, outcome) so Prometheus sees labels",
        ));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn wasm(root_id: &str, configuration: Value) -> Value {
        json!({"name": "f", "typed_config": {"@type": WASM_FILTER, "config": {
            "root_id": root_id, "failure_policy": "FAIL_RELOAD",
            "allow_on_headers_stop_iteration": true,
            "configuration": {"@type": STRUCT, "value": configuration}}}})
    }

    fn envoy(client: Value, upstream: Value) -> Value {
        json!({
            "stats_config": {"stats_tags": [{"tag_name": "model", "regex": "(;model=([^;]*))"}]},
            "static_resources": {
                "listeners": [{"filter_chains": [{"filters": [{"typed_config": {
                    "route_config": {"virtual_hosts": [{"routes": [{"route": {
                        "cluster_header": "x-llm-cluster",
                        "retry_policy": {"retriable_headers": [{"name": "x-llm-retry"}]}}}]}]},
                    "http_filters": [client]}}]}]}],
                "clusters": [{"name": "llm", "typed_extension_protocol_options": {"x": {"http_filters": [upstream]}}}]
            }
        })
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_sound_config_has_no_findings() {
        let c = json!({"models": [{"name": "m"}]});
        let report = check(&envoy(wasm("client", c.clone()), wasm("upstream", c)));
        assert_eq!(report.findings, vec![]);
        assert_eq!(report.plugins.len(), 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn broken_configs_are_named_with_a_fix() {
        let c = json!({"models": [{"name": "m", "cluster": "nowhere"}]});
        let report = check(&envoy(wasm("client", c.clone()), wasm("upstrem", c)));
        let text: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
        let all = text.join("\n");
        assert!(all.contains("`upstrem` is not a role"), "{all}");
        assert!(
            all.contains("cluster `nowhere` of model `m` is not defined"),
            "{all}"
        );
        assert!(all.contains("no `upstream` filter"), "{all}");
        let bad = json!({"models": [{"name": "m"}], "fallback": {"chains": {"m": ["x"]}}});
        let report = check(&envoy(wasm("client", bad.clone()), wasm("upstream", bad)));
        assert!(
            report.findings[0]
                .message
                .contains("field `fallback.chains.m[0]`"),
            "{:?}",
            report.findings
        );
        assert!(
            report.findings[0].location.contains("http_filters[0]"),
            "{:?}",
            report.findings
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bare_plugin_configurations_are_checked_too() {
        assert!(check(&json!({"models": [{"name": "m"}]}))
            .findings
            .is_empty());
        let report = check(&json!({"modles": []}));
        assert!(report.findings[0]
            .message
            .contains("unknown field `modles`"));
    }
}
