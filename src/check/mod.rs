//! `llm-fallback check`: validates a plugin configuration, alone or inside an Envoy config.
//!
//! Runs the filter's own validation ([`Config::from_value`]) on every llm-fallback plugin it
//! finds, then the checks only the whole Envoy config allows: the roles present, the settings
//! each role needs, one VM for the client and upstream filters, clusters that exist and carry
//! the upstream filter, retry circuit breakers fit for LLM traffic (and the same on every LLM
//! cluster), the route each `fallback.providers.switch` needs (a `cluster_header` route, or a
//! matcher cluster specifier reading the filter's filter state and the routing header), the
//! provider clusters' upstream filter order and credentials, chains that cross clusters or API
//! families, the retry marker, and the stats tags that make the labels. Every finding names
//! where it is and how to fix it; warnings point at what works but likely not as meant.
//!
//! This module holds the report types, the entry point, plugin discovery and parsing, the
//! one-VM check, and the LLM clusters with their retry circuit breakers; `routes` checks the
//! routes and matcher cluster specifiers, `providers` the provider clusters' upstream filters
//! and the chains.

mod metering;
mod providers;
mod routes;
mod shaping;
#[cfg(test)]
mod tests;

use crate::config::Config;
use providers::{check_api_families, is_upstream_wasm, upstream_http_filters};
use routes::{check_routing, find_routes, matcher_of, Matcher, Route};
use serde_json::Value;

const WASM_FILTER: &str = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const STRUCT: &str = "type.googleapis.com/google.protobuf.Struct";
const STRING_VALUE: &str = "type.googleapis.com/google.protobuf.StringValue";
const HTTP_PROTOCOL_OPTIONS: &str = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/// How bad a finding is: errors fail the check, warnings are told and pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The filter cannot work as configured.
    Error,
    /// It works, but likely not as meant.
    Warning,
}

/// A problem, where it is, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub location: String,
    pub message: String,
    pub severity: Severity,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.severity == Severity::Warning {
            write!(f, "warning: ")?;
        }
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

impl Report {
    /// Whether any finding is an error (warnings alone pass).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// An error finding.
fn finding(location: impl Into<String>, message: impl Into<String>) -> Finding {
    Finding {
        location: location.into(),
        message: message.into(),
        severity: Severity::Error,
    }
}

/// A warning finding.
fn warning(location: impl Into<String>, message: impl Into<String>) -> Finding {
    Finding {
        severity: Severity::Warning,
        ..finding(location, message)
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
    match Config::from_value(document.clone()) {
        Ok(config) => check_api_families("(plugin configuration)", &config, &mut report),
        Err(e) => report
            .findings
            .push(finding("(plugin configuration)", e.to_string())),
    }
    report
}

/// A plugin found in an Envoy config.
struct Plugin<'a> {
    location: String,
    wasm: &'a Value,
}

fn find_plugins<'a>(value: &'a Value, path: &str, out: &mut Vec<Plugin<'a>>) {
    let mut found = Vec::new();
    find_typed(value, path, WASM_FILTER, &mut found);
    out.extend(
        found
            .into_iter()
            .map(|(location, wasm)| Plugin { location, wasm }),
    );
}

/// Every object with `@type: type_url`, with its path (not looking inside a match).
pub(super) fn find_typed<'a>(
    value: &'a Value,
    path: &str,
    type_url: &str,
    out: &mut Vec<(String, &'a Value)>,
) {
    match value {
        Value::Object(map) => {
            if map.get("@type").and_then(Value::as_str) == Some(type_url) {
                out.push((path.to_owned(), value));
                return;
            }
            for (key, child) in map {
                find_typed(child, &format!("{path}.{key}"), type_url, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_typed(child, &format!("{path}[{i}]"), type_url, out);
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
    // The positions usually share one configuration (a YAML anchor): each is checked once.
    for (at, config) in distinct(configs.iter().map(|(at, _, c)| (at.as_str(), c))) {
        check_models_defined(at, config, &clusters, &mut report);
    }
    let mut routes = Vec::new();
    find_routes(document, "", &mut routes);
    let routing = configs
        .iter()
        .filter(|(_, role, _)| role != "status")
        .map(|(at, _, c)| (at.as_str(), c));
    for (at, config) in distinct(routing) {
        let scope = Scope {
            at: format!("{at}.config.configuration"),
            config,
            routes: &routes,
            defined: &defined,
        };
        check_routing(&scope, &mut report);
    }
    let client = configs
        .iter()
        .find(|(_, role, _)| role == "client")
        .map(|(_, _, c)| c);
    shaping::check_shaping(document, client, &mut report);
    metering::check_metering(document, client, &mut report);
    let text = document.to_string();
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

/// The configurations, each once (equal ones are one YAML anchor), at their first position.
fn distinct<'a>(
    configs: impl Iterator<Item = (&'a str, &'a Config)>,
) -> Vec<(&'a str, &'a Config)> {
    let mut out: Vec<(&str, &Config)> = Vec::new();
    for (at, config) in configs {
        if !out.iter().any(|(_, seen)| *seen == config) {
            out.push((at, config));
        }
    }
    out
}

/// Every model's cluster is defined (when the config defines clusters at all).
fn check_models_defined(at: &str, config: &Config, clusters: &[&str], report: &mut Report) {
    for (i, model) in config.models.iter().enumerate() {
        let cluster = config.cluster_of(model);
        if !clusters.is_empty() && !clusters.contains(&cluster) {
            report.findings.push(finding(
                format!("{at}.config.configuration: models[{i}].cluster"),
                format!(
                    "cluster `{cluster}` of model `{}` is not defined in static_resources.clusters",
                    model.name
                ),
            ));
        }
    }
}

/// One routing configuration and the parts of the Envoy config its checks look at.
struct Scope<'a> {
    /// Where the configuration is: `<plugin>.config.configuration`.
    at: String,
    config: &'a Config,
    routes: &'a [Route<'a>],
    defined: &'a [(usize, &'a Value)],
}

impl<'a> Scope<'a> {
    /// The clusters its models name (the default cluster for models naming none).
    fn providers(&self) -> Vec<LlmCluster<'a>> {
        llm_clusters(&[self.config])
            .into_iter()
            .filter(|c| !c.models.is_empty())
            .collect()
    }

    fn filter_state_key(&self) -> String {
        format!("wasm.{}", self.config.fallback.providers.filter_state_key)
    }

    /// The routes with a matcher cluster specifier, and their matchers.
    fn matchers(&self) -> Vec<(&'a Route<'a>, Matcher<'a>)> {
        self.routes
            .iter()
            .filter_map(|route| Some((route, matcher_of(route)?)))
            .collect()
    }
}

/// The message type of a typed config (`@type` after its last `/`).
fn type_name(value: &Value) -> Option<&str> {
    value.get("@type")?.as_str()?.rsplit('/').next()
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
    upstream_http_filters(cluster)
        .into_iter()
        .any(is_upstream_wasm)
}

/// A cluster defined in `static_resources.clusters`, with its index.
fn defined_cluster<'a>(defined: &[(usize, &'a Value)], name: &str) -> Option<(usize, &'a Value)> {
    defined
        .iter()
        .copied()
        .find(|(_, c)| c.get("name").and_then(Value::as_str) == Some(name))
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

/// `retry_limit` of a cluster that allows no retry at all.
const NO_RETRIES: &str = "max_retries 0";

/// (a) every model's cluster carries the upstream filter; (c) every LLM cluster sets a retry
/// circuit breaker, not 0; (d) all of them the same one (every retry of a request, on whatever
/// cluster, is gated by its first attempt's cluster).
fn check_llm_clusters(
    clusters: &[LlmCluster<'_>],
    defined: &[(usize, &Value)],
    report: &mut Report,
) {
    let mut limits: Vec<(&str, String)> = Vec::new();
    for cluster in clusters {
        let Some((index, value)) = defined_cluster(defined, cluster.name) else {
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
            Some(limit) if limit == NO_RETRIES => {
                report.findings.push(warning(
                    format!("{at}.circuit_breakers"),
                    format!(
                        "{} sets max_retries 0: Envoy makes no retry of a request that starts here, so such a request \
                         never falls back inside itself (no other model, no other provider); give it the max_retries \
                         of the other LLM clusters (one YAML anchor)",
                        cluster.what()
                    ),
                ));
                limits.push((cluster.name, limit));
            }
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
