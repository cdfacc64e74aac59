//! `llm-fallback check`: validates a plugin configuration, alone or inside an Envoy config.
//!
//! Runs the filter's own validation ([`Config::from_value`]) on every llm-fallback plugin it
//! finds, then the checks only the whole Envoy config allows: the roles present, the settings
//! each role needs, one VM for the client and upstream filters, clusters that exist and carry
//! the upstream filter, retry circuit breakers fit for LLM traffic (and the same on every LLM
//! cluster), the route's cluster header and retry marker, and the stats tags that make the
//! labels. Every finding names where it is and how to fix it.

use crate::config::Config;
use serde_json::Value;

const WASM_FILTER: &str = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const STRUCT: &str = "type.googleapis.com/google.protobuf.Struct";
const STRING_VALUE: &str = "type.googleapis.com/google.protobuf.StringValue";
const HTTP_PROTOCOL_OPTIONS: &str = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

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
    // (location, role, wasm `config`) of the client and upstream filters.
    let mut vm_users = Vec::new();
    for plugin in &plugins {
        let at = plugin.location.trim_start_matches('.').to_owned();
        let config = plugin.wasm.get("config").unwrap_or(&Value::Null);
        let root_id = config.get("root_id").and_then(Value::as_str).unwrap_or("");
        report.plugins.push((at.clone(), root_id.to_owned()));
        if matches!(root_id, "client" | "upstream") {
            vm_users.push((at.clone(), root_id, config));
        }
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
    check_one_vm(&vm_users, &mut report);
    let defined: Vec<(usize, &Value)> = document
        .pointer("/static_resources/clusters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .collect();
    let routing: Vec<&Config> = configs
        .iter()
        .filter(|(_, role, _)| role != "status")
        .map(|(_, _, config)| config)
        .collect();
    check_llm_clusters(&llm_clusters(&routing), &defined, &mut report);
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

/// The code a `vm_config` loads, for a finding: its file, URI, or that it is inline.
fn describe_code(code: &Value) -> String {
    if let Some(file) = code.pointer("/local/filename").and_then(Value::as_str) {
        return format!("code `{file}`");
    }
    if let Some(uri) = code.pointer("/remote/http_uri/uri").and_then(Value::as_str) {
        return format!("code from `{uri}`");
    }
    if code.get("local").is_some() {
        return "inline code".into();
    }
    "no code".into()
}

/// (b) The client and upstream filters must run in one VM: Envoy shares a VM between filters
/// whose `vm_config` has the same `vm_id`, code and `configuration`.
fn check_one_vm(users: &[(String, &str, &Value)], report: &mut Report) {
    let vm = |config: &Value| {
        let vm = config.get("vm_config").unwrap_or(&Value::Null);
        let part = |key| vm.get(key).cloned().unwrap_or(Value::Null);
        (part("vm_id"), part("code"), part("configuration"))
    };
    let describe = |(id, code, configuration): &(Value, Value, Value)| {
        let mut text = format!(
            "vm_id `{}`, {}",
            id.as_str().unwrap_or(""),
            describe_code(code)
        );
        if !configuration.is_null() {
            text.push_str(&format!(", vm configuration {configuration}"));
        }
        text
    };
    // The first client filter is the reference (the first filter at all without one).
    let Some((first_at, first_role, first)) = users
        .iter()
        .find(|(_, role, _)| *role == "client")
        .or(users.first())
    else {
        return;
    };
    let reference = vm(first);
    for (at, role, config) in users {
        let this = vm(config);
        if this != reference {
            report.findings.push(finding(
                format!("{at}.config.vm_config"),
                format!(
                    "the {role} filter runs in another VM than the {first_role} filter at {first_at}: {} here, {} there; \
                     give both the same vm_config (vm_id, code and configuration; a YAML anchor keeps them one), \
                     or the upstream filter never sees the state the client filter keeps for each request and nothing falls back",
                    describe(&this),
                    describe(&reference),
                ),
            ));
        }
    }
}

/// A cluster the filter routes to: named by models, or the default cluster.
struct LlmCluster<'a> {
    name: &'a str,
    /// The models it serves (none when it is only the default cluster).
    models: Vec<&'a str>,
}

impl LlmCluster<'_> {
    fn what(&self) -> String {
        if self.models.is_empty() {
            return format!("cluster `{}` (the default cluster)", self.name);
        }
        let models: Vec<String> = self.models.iter().map(|m| format!("`{m}`")).collect();
        format!("cluster `{}` (models {})", self.name, models.join(", "))
    }
}

/// The LLM clusters of the routing configurations, in order of first mention.
fn llm_clusters<'a>(configs: &[&'a Config]) -> Vec<LlmCluster<'a>> {
    let mut out: Vec<LlmCluster<'a>> = Vec::new();
    let mut add = |name: &'a str, model: Option<&'a str>| {
        let index = match out.iter().position(|c| c.name == name) {
            Some(index) => index,
            None => {
                out.push(LlmCluster {
                    name,
                    models: Vec::new(),
                });
                out.len() - 1
            }
        };
        if let (Some(model), Some(cluster)) = (model, out.get_mut(index)) {
            if !cluster.models.contains(&model) {
                cluster.models.push(model);
            }
        }
    };
    for config in configs {
        for model in &config.models {
            let cluster = model
                .cluster
                .as_deref()
                .unwrap_or(&config.fallback.default_cluster);
            add(cluster, Some(&model.name));
        }
        add(&config.fallback.default_cluster, None);
    }
    out
}

/// Whether a cluster carries the upstream filter in its HTTP protocol options.
fn has_upstream_filter(cluster: &Value) -> bool {
    cluster
        .get("typed_extension_protocol_options")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, options)| {
            key.as_str() == HTTP_PROTOCOL_OPTIONS
                || options.get("@type").and_then(Value::as_str)
                    == Some(&format!("type.googleapis.com/{HTTP_PROTOCOL_OPTIONS}"))
        })
        .filter_map(|(_, options)| options.get("http_filters").and_then(Value::as_array))
        .flatten()
        .filter_map(|filter| filter.get("typed_config"))
        .any(|typed| {
            typed.get("@type").and_then(Value::as_str) == Some(WASM_FILTER)
                && typed.pointer("/config/root_id").and_then(Value::as_str) == Some("upstream")
        })
}

/// The retry limit of a cluster's DEFAULT-priority circuit breaker, as text: its
/// `retry_budget` (which wins when both are set) or its `max_retries`.
fn retry_limit(cluster: &Value) -> Option<String> {
    let threshold = cluster
        .pointer("/circuit_breakers/thresholds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| {
            matches!(
                t.get("priority").and_then(Value::as_str),
                None | Some("DEFAULT")
            )
        })?;
    if let Some(budget) = threshold.get("retry_budget") {
        return Some(format!("retry_budget {budget}"));
    }
    let max = threshold.get("max_retries")?;
    // YAML may quote the number.
    let max = max.as_str().map_or_else(|| max.to_string(), str::to_owned);
    Some(format!("max_retries {max}"))
}

/// (a) every model's cluster carries the upstream filter; (c) every LLM cluster sets a retry
/// circuit breaker; (d) all of them the same one.
fn check_llm_clusters(
    clusters: &[LlmCluster<'_>],
    defined: &[(usize, &Value)],
    report: &mut Report,
) {
    let mut limits: Vec<(&str, String)> = Vec::new();
    for cluster in clusters {
        let Some((index, value)) = defined
            .iter()
            .find(|(_, c)| c.get("name").and_then(Value::as_str) == Some(cluster.name))
        else {
            // Not defined here: reported with the model (or left to a dynamic config).
            continue;
        };
        let at = format!("static_resources.clusters[{index}]");
        if !cluster.models.is_empty() && !has_upstream_filter(value) {
            report.findings.push(finding(
                format!("{at}.typed_extension_protocol_options"),
                format!(
                    "{} has no llm-fallback upstream filter: add the envoy.filters.http.wasm filter with root_id `upstream` \
                     (before envoy.filters.http.upstream_codec) to its typed_extension_protocol_options.{HTTP_PROTOCOL_OPTIONS}.http_filters; \
                     without it this cluster's attempts are never classified and never fall back",
                    cluster.what()
                ),
            ));
        }
        match retry_limit(value) {
            Some(limit) => limits.push((cluster.name, limit)),
            None => report.findings.push(finding(
                format!("{at}.circuit_breakers"),
                format!(
                    "{} sets no retry circuit breaker (max_retries or retry_budget at priority DEFAULT): Envoy's default of 3 \
                     concurrent retries per cluster refuses fallbacks and rate-limit retries under load (upstream_rq_retry_overflow), \
                     and a retry holds its slot while it waits out rate_limited_retry_back_off and while its attempt runs; \
                     set circuit_breakers: {{thresholds: [{{priority: DEFAULT, max_retries: 1024}}]}} (about the retries you expect at once) \
                     or a retry_budget, the same on every LLM cluster",
                    cluster.what()
                ),
            )),
        }
    }
    let first = limits.first().map(|(_, limit)| limit);
    if limits.iter().any(|(_, limit)| Some(limit) != first) {
        let each: Vec<String> = limits
            .iter()
            .map(|(name, limit)| format!("`{name}` {limit}"))
            .collect();
        report.findings.push(finding(
            "static_resources.clusters",
            format!(
                "LLM clusters set different retry circuit breakers ({}): Envoy counts a request's retries against the cluster it \
                 was routed to (its first model's), so how many retries may run at once would depend on the model a request \
                 started on; give every LLM cluster the same thresholds (one YAML anchor)",
                each.join(", ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn vm() -> Value {
        json!({"vm_id": "llm_fallback", "runtime": "envoy.wasm.runtime.v8",
               "code": {"local": {"filename": "llm_fallback.wasm"}}})
    }

    fn wasm(root_id: &str, configuration: Value) -> Value {
        json!({"name": "f", "typed_config": {"@type": WASM_FILTER, "config": {
            "root_id": root_id, "failure_policy": "FAIL_RELOAD",
            "allow_on_headers_stop_iteration": true, "vm_config": vm(),
            "configuration": {"@type": STRUCT, "value": configuration}}}})
    }

    /// A cluster as the shipped config has it: the upstream filter and retry breakers.
    fn cluster(name: &str, upstream: Value) -> Value {
        json!({"name": name,
               "circuit_breakers": {"thresholds": [{"priority": "DEFAULT", "max_requests": 4096, "max_retries": 1024}]},
               "typed_extension_protocol_options": {HTTP_PROTOCOL_OPTIONS: {
                   "@type": format!("type.googleapis.com/{HTTP_PROTOCOL_OPTIONS}"),
                   "http_filters": [upstream, {"name": "envoy.filters.http.upstream_codec"}]}}})
    }

    fn envoy(client: Value, upstream: Value) -> Value {
        envoy_with(client, vec![cluster("llm", upstream)])
    }

    fn envoy_with(client: Value, clusters: Vec<Value>) -> Value {
        json!({
            "stats_config": {"stats_tags": [{"tag_name": "model", "regex": "(;model=([^;]*))"}]},
            "static_resources": {
                "listeners": [{"filter_chains": [{"filters": [{"typed_config": {
                    "route_config": {"virtual_hosts": [{"routes": [{"route": {
                        "cluster_header": "x-llm-cluster",
                        "retry_policy": {"retriable_headers": [{"name": "x-llm-retry"}]}}}]}]},
                    "http_filters": [client]}}]}]}],
                "clusters": clusters
            }
        })
    }

    fn findings(document: &Value) -> Vec<String> {
        check(document)
            .findings
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Two models on two clusters, both as shipped.
    fn two_clusters() -> (Value, Value) {
        let c =
            json!({"models": [{"name": "a", "cluster": "llm"}, {"name": "b", "cluster": "llm_b"}]});
        (wasm("client", c.clone()), wasm("upstream", c))
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
    fn two_sound_clusters_have_no_findings() {
        let (client, upstream) = two_clusters();
        let doc = envoy_with(
            client,
            vec![cluster("llm", upstream.clone()), cluster("llm_b", upstream)],
        );
        assert_eq!(findings(&doc), Vec::<String>::new());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn every_model_cluster_carries_the_upstream_filter() {
        let (client, upstream) = two_clusters();
        // `llm_b` has protocol options but no wasm filter; the client role in a cluster
        // does not count either.
        let mut bare = cluster("llm_b", json!({"name": "other"}));
        let all = findings(&envoy_with(
            client.clone(),
            vec![cluster("llm", upstream.clone()), bare.clone()],
        ));
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(
            all[0].starts_with("static_resources.clusters[1].typed_extension_protocol_options: cluster `llm_b` (models `b`) has no llm-fallback upstream filter: add the envoy.filters.http.wasm filter with root_id `upstream`"),
            "{all:?}"
        );
        let wrong_role = cluster("llm_b", wasm("client", json!({})));
        let all = findings(&envoy_with(
            client.clone(),
            vec![cluster("llm", upstream.clone()), wrong_role],
        ));
        assert!(
            all.iter()
                .any(|f| f
                    .contains("cluster `llm_b` (models `b`) has no llm-fallback upstream filter")),
            "{all:?}"
        );
        // No protocol options at all.
        bare.as_object_mut()
            .unwrap()
            .remove("typed_extension_protocol_options");
        let all = findings(&envoy_with(client, vec![cluster("llm", upstream), bare]));
        assert!(
            all.iter()
                .any(|f| f.contains("`llm_b` (models `b`) has no llm-fallback upstream filter")),
            "{all:?}"
        );
        // A model that names no cluster is served by the default cluster.
        let c = json!({"models": [{"name": "m"}], "fallback": {"default_cluster": "dflt"}});
        let doc = envoy_with(
            wasm("client", c.clone()),
            vec![
                cluster("llm", wasm("upstream", c)),
                cluster("dflt", json!({"name": "x"})),
            ],
        );
        let all = findings(&doc);
        assert!(
            all.iter()
                .any(|f| f
                    .contains("cluster `dflt` (models `m`) has no llm-fallback upstream filter")),
            "{all:?}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn client_and_upstream_share_one_vm() {
        let c = json!({"models": [{"name": "m"}]});
        let mut upstream = wasm("upstream", c.clone());
        upstream["typed_config"]["config"]["vm_config"]["vm_id"] = json!("other");
        let all = findings(&envoy(wasm("client", c.clone()), upstream));
        assert_eq!(all.len(), 1, "{all:?}");
        let f = &all[0];
        assert!(
            f.starts_with("static_resources.clusters[0].typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.http_filters[0].typed_config.config.vm_config: the upstream filter runs in another VM than the client filter at static_resources.listeners[0]"),
            "{f}"
        );
        assert!(
            f.contains("vm_id `other`, code `llm_fallback.wasm` here, vm_id `llm_fallback`, code `llm_fallback.wasm` there"),
            "{f}"
        );
        assert!(f.contains("give both the same vm_config"), "{f}");
        // Another code file, or another vm configuration, is another VM too.
        let mut upstream = wasm("upstream", c.clone());
        upstream["typed_config"]["config"]["vm_config"]["code"] =
            json!({"local": {"filename": "old.wasm"}});
        let all = findings(&envoy(wasm("client", c.clone()), upstream));
        assert!(
            all.iter().any(|f| f.contains("code `old.wasm` here")),
            "{all:?}"
        );
        let mut upstream = wasm("upstream", c.clone());
        upstream["typed_config"]["config"]["vm_config"]["configuration"] =
            json!({"@type": STRING_VALUE, "value": "x"});
        let all = findings(&envoy(wasm("client", c.clone()), upstream));
        assert!(
            all.iter().any(|f| f.contains("vm configuration")),
            "{all:?}"
        );
        // No vm_config on one side.
        let mut upstream = wasm("upstream", c.clone());
        upstream["typed_config"]["config"]
            .as_object_mut()
            .unwrap()
            .remove("vm_config");
        let all = findings(&envoy(wasm("client", c), upstream));
        assert!(
            all.iter().any(|f| f.contains("vm_id ``, no code here")),
            "{all:?}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn llm_clusters_set_retry_circuit_breakers() {
        let (client, upstream) = two_clusters();
        let mut plain = cluster("llm_b", upstream.clone());
        plain.as_object_mut().unwrap().remove("circuit_breakers");
        let all = findings(&envoy_with(
            client.clone(),
            vec![cluster("llm", upstream.clone()), plain],
        ));
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(
            all[0].starts_with("static_resources.clusters[1].circuit_breakers: cluster `llm_b` (models `b`) sets no retry circuit breaker (max_retries or retry_budget at priority DEFAULT): Envoy's default of 3 concurrent retries"),
            "{all:?}"
        );
        assert!(all[0].contains("rate_limited_retry_back_off"), "{all:?}");
        assert!(
            all[0].contains(
                "circuit_breakers: {thresholds: [{priority: DEFAULT, max_retries: 1024}]}"
            ),
            "{all:?}"
        );
        // Thresholds without max_retries, or only for HIGH priority, do not count.
        for thresholds in [
            json!([{"priority": "DEFAULT", "max_requests": 4096}]),
            json!([{"priority": "HIGH", "max_retries": 1024}]),
            json!([]),
        ] {
            let mut c = cluster("llm_b", upstream.clone());
            c["circuit_breakers"]["thresholds"] = thresholds.clone();
            let all = findings(&envoy_with(
                client.clone(),
                vec![cluster("llm", upstream.clone()), c],
            ));
            assert!(
                all.iter()
                    .any(|f| f.contains("`llm_b` (models `b`) sets no retry circuit breaker")),
                "{thresholds}: {all:?}"
            );
        }
        // A retry budget (on both, the same) is fine; no priority means DEFAULT.
        let budget = json!([{"retry_budget": {"budget_percent": {"value": 25.0}, "min_retry_concurrency": 64}}]);
        let mut a = cluster("llm", upstream.clone());
        let mut b = cluster("llm_b", upstream.clone());
        a["circuit_breakers"]["thresholds"] = budget.clone();
        b["circuit_breakers"]["thresholds"] = budget;
        assert_eq!(
            findings(&envoy_with(client, vec![a, b])),
            Vec::<String>::new()
        );
        // The default cluster is an LLM cluster even when no model names it.
        let c = json!({"models": [{"name": "m", "cluster": "llm"}], "fallback": {"default_cluster": "dflt"}});
        let mut dflt = cluster("dflt", json!({"name": "x"}));
        dflt.as_object_mut().unwrap().remove("circuit_breakers");
        let all = findings(&envoy_with(
            wasm("client", c.clone()),
            vec![cluster("llm", wasm("upstream", c)), dflt],
        ));
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(
            all[0].contains("cluster `dflt` (the default cluster) sets no retry circuit breaker"),
            "{all:?}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn llm_clusters_share_their_retry_thresholds() {
        let (client, upstream) = two_clusters();
        let mut small = cluster("llm_b", upstream.clone());
        small["circuit_breakers"]["thresholds"][0]["max_retries"] = json!(16);
        let all = findings(&envoy_with(
            client.clone(),
            vec![cluster("llm", upstream.clone()), small],
        ));
        assert_eq!(
            all,
            vec!["static_resources.clusters: LLM clusters set different retry circuit breakers (`llm` max_retries 1024, `llm_b` max_retries 16): \
                  Envoy counts a request's retries against the cluster it was routed to (its first model's), so how many retries may run \
                  at once would depend on the model a request started on; give every LLM cluster the same thresholds (one YAML anchor)"
                .to_owned()]
        );
        // A budget on one and max_retries on the other differ too; a quoted number is the same.
        let mut budget = cluster("llm_b", upstream.clone());
        budget["circuit_breakers"]["thresholds"][0]["retry_budget"] = json!({});
        let all = findings(&envoy_with(
            client.clone(),
            vec![cluster("llm", upstream.clone()), budget],
        ));
        assert!(
            all.iter().any(|f| f.contains("`llm_b` retry_budget {}")),
            "{all:?}"
        );
        let mut quoted = cluster("llm_b", upstream.clone());
        quoted["circuit_breakers"]["thresholds"][0]["max_retries"] = json!("1024");
        assert_eq!(
            findings(&envoy_with(client, vec![cluster("llm", upstream), quoted])),
            Vec::<String>::new()
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
