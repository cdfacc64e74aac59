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

use crate::config::{Config, ModelConfig};
use crate::plan;
use serde_json::{Map, Value};

const WASM_FILTER: &str = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const STRUCT: &str = "type.googleapis.com/google.protobuf.Struct";
const STRING_VALUE: &str = "type.googleapis.com/google.protobuf.StringValue";
const HTTP_PROTOCOL_OPTIONS: &str = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";
const MATCHER_SPECIFIER: &str =
    "envoy.extensions.router.cluster_specifiers.matcher.v3.MatcherClusterSpecifier";
const CLUSTER_ACTION: &str = "envoy.extensions.router.cluster_specifiers.matcher.v3.ClusterAction";
const FILTER_STATE_INPUT: &str =
    "envoy.extensions.matching.common_inputs.network.v3.FilterStateInput";
const HEADER_INPUT: &str = "envoy.type.matcher.v3.HttpRequestHeaderMatchInput";
const CREDENTIAL_INJECTOR: &str = "envoy.filters.http.credential_injector";
const CREDENTIAL_INJECTOR_TYPE: &str =
    "envoy.extensions.filters.http.credential_injector.v3.CredentialInjector";

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

/// The route and provider checks of one routing configuration with models.
fn check_routing(scope: &Scope<'_>, report: &mut Report) {
    if scope.config.models.is_empty() {
        return;
    }
    if scope.config.fallback.providers.in_request() {
        check_in_request_routes(scope, report);
        check_provider_filters(scope, report);
    } else {
        check_next_request_route(scope, report);
        check_cross_cluster_chains(scope, report);
    }
    check_api_families(&scope.at, scope.config, report);
}

/// A route's action (`routes[].route`) and its virtual host, whose retry policy applies when
/// the route has none.
struct Route<'a> {
    at: String,
    action: &'a Value,
    host: &'a Value,
}

impl Route<'_> {
    fn cluster_header(&self) -> Option<&str> {
        self.action.get("cluster_header").and_then(Value::as_str)
    }

    fn refreshes_cluster_on_retry(&self) -> bool {
        let policy = self
            .action
            .get("retry_policy")
            .or_else(|| self.host.get("retry_policy"));
        policy
            .and_then(|p| p.get("refresh_cluster_on_retry"))
            .and_then(Value::as_bool)
            == Some(true)
    }
}

/// Collects the routes of every `virtual_hosts` list (not inside plugin configurations).
fn find_routes<'a>(value: &'a Value, path: &str, out: &mut Vec<Route<'a>>) {
    match value {
        Value::Object(map) => {
            if map.get("@type").and_then(Value::as_str) == Some(WASM_FILTER) {
                return;
            }
            for (key, child) in map {
                let here = format!("{path}.{key}");
                if key == "virtual_hosts" {
                    routes_of_hosts(child, &here, out);
                } else {
                    find_routes(child, &here, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_routes(child, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn routes_of_hosts<'a>(hosts: &'a Value, path: &str, out: &mut Vec<Route<'a>>) {
    let path = path.trim_start_matches('.');
    for (h, host) in hosts.as_array().into_iter().flatten().enumerate() {
        let routes = host.get("routes").and_then(Value::as_array);
        for (r, route) in routes.into_iter().flatten().enumerate() {
            if let Some(action) = route.get("route") {
                out.push(Route {
                    at: format!("{path}[{h}].routes[{r}].route"),
                    action,
                    host,
                });
            }
        }
    }
}

/// The message type of a typed config (`@type` after its last `/`).
fn type_name(value: &Value) -> Option<&str> {
    value.get("@type")?.as_str()?.rsplit('/').next()
}

/// What one level of a matcher reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input<'a> {
    FilterState(&'a str),
    Header(&'a str),
    Other,
}

/// One `matcher_tree` of a matcher cluster specifier: its input and its exact-match map.
struct Level<'a> {
    at: String,
    input: Input<'a>,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Level<'a> {
    fn of(matcher: &'a Value, at: &str) -> Self {
        let tree = matcher.get("matcher_tree");
        let typed = tree.and_then(|t| t.pointer("/input/typed_config"));
        let read = |field: &str| {
            typed
                .and_then(|t| t.get(field))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let input = match typed.and_then(type_name) {
            Some(FILTER_STATE_INPUT) => Input::FilterState(read("key")),
            Some(HEADER_INPUT) => Input::Header(read("header_name")),
            _ => Input::Other,
        };
        Level {
            at: format!("{at}.matcher_tree"),
            input,
            map: tree
                .and_then(|t| t.pointer("/exact_match_map/map"))
                .and_then(Value::as_object),
        }
    }

    /// The cluster the map's entry for `key` sends to, if it has one.
    fn sends(&self, key: &str) -> Option<&'a str> {
        let entry = self.map?.get(key)?;
        Some(
            entry
                .pointer("/action/typed_config/cluster")
                .and_then(Value::as_str)
                .unwrap_or("(no ClusterAction)"),
        )
    }
}

/// A route's matcher cluster specifier: its levels, outermost first, then the cluster its
/// final `on_no_match` action names.
struct Matcher<'a> {
    /// Where its `cluster_matcher` is.
    at: String,
    levels: Vec<Level<'a>>,
    default: Option<&'a str>,
    /// Where its final `on_no_match` is.
    default_at: String,
}

impl Matcher<'_> {
    fn level(&self, input: Input<'_>) -> Option<&Level<'_>> {
        self.levels.iter().find(|l| l.input == input)
    }

    /// The first level reading some filter state, or some header (another one than wanted).
    fn first(&self, filter_state: bool) -> Option<(&Level<'_>, &str)> {
        self.levels.iter().find_map(|l| match l.input {
            Input::FilterState(key) if filter_state => Some((l, key)),
            Input::Header(name) if !filter_state => Some((l, name)),
            _ => None,
        })
    }
}

/// The route's matcher cluster specifier, if its cluster is picked by one.
fn matcher_of<'a>(route: &Route<'a>) -> Option<Matcher<'a>> {
    let typed = route
        .action
        .pointer("/inline_cluster_specifier_plugin/extension/typed_config")?;
    if type_name(typed) != Some(MATCHER_SPECIFIER) {
        return None;
    }
    let start = format!(
        "{}.inline_cluster_specifier_plugin.extension.typed_config.cluster_matcher",
        route.at
    );
    let mut matcher = typed.get("cluster_matcher").unwrap_or(&Value::Null);
    let mut at = start.clone();
    let mut levels = Vec::new();
    loop {
        levels.push(Level::of(matcher, &at));
        let on_no_match = matcher.get("on_no_match");
        at.push_str(".on_no_match");
        match on_no_match.and_then(|o| o.get("matcher")) {
            Some(next) => {
                matcher = next;
                at.push_str(".matcher");
            }
            None => {
                return Some(Matcher {
                    at: start,
                    levels,
                    default: on_no_match
                        .and_then(|o| o.pointer("/action/typed_config/cluster"))
                        .and_then(Value::as_str),
                    default_at: at,
                })
            }
        }
    }
}

/// `in_request`: a matcher route reads the filter's filter state, refreshes the cluster on
/// retry, maps every provider cluster, and falls through to the default cluster.
fn check_in_request_routes(scope: &Scope<'_>, report: &mut Report) {
    let key = scope.filter_state_key();
    let matchers = scope.matchers();
    let mut found = false;
    for (route, matcher) in &matchers {
        if matcher.level(Input::FilterState(&key)).is_none() {
            continue;
        }
        found = true;
        if !route.refreshes_cluster_on_retry() {
            report.findings.push(finding(
                format!("{}.retry_policy.refresh_cluster_on_retry", route.at),
                "must be true with fallback.providers.switch: in_request: without it Envoy keeps a request's \
                 first cluster for every retry, so a fallback the filter names on another provider is sent \
                 to the first one (Envoy >= 1.39)",
            ));
        }
        check_matcher_maps(scope, matcher, report);
        check_matcher_default(scope, matcher, report);
    }
    if !found {
        report
            .findings
            .push(no_matcher_route(scope, &key, &matchers));
    }
}

/// Why no route fits `in_request`, naming the filter-state key a matcher reads instead.
fn no_matcher_route(
    scope: &Scope<'_>,
    key: &str,
    matchers: &[(&Route<'_>, Matcher<'_>)],
) -> Finding {
    let other = matchers.iter().find_map(|(_, m)| m.first(true));
    if let Some((level, other)) = other {
        let rename = other
            .strip_prefix("wasm.")
            .map(|k| format!(", or set fallback.providers.filter_state_key: {k}"))
            .unwrap_or_default();
        return finding(
            format!("{}.input.typed_config.key", level.at),
            format!(
                "the matcher reads filter state `{other}`, but the filter names each retry's cluster in `{key}` \
                 (fallback.providers.filter_state_key `{}`): set key: {key}{rename}",
                scope.config.fallback.providers.filter_state_key
            ),
        );
    }
    let header = scope
        .routes
        .iter()
        .find(|r| r.cluster_header().is_some())
        .map(|r| {
            format!(
                " (the `cluster_header` route at {} cannot switch clusters inside a request)",
                r.at
            )
        })
        .unwrap_or_default();
    finding(
        format!("{}: fallback.providers.switch", scope.at),
        format!(
            "in_request needs a route whose cluster is picked by a matcher cluster specifier \
             (inline_cluster_specifier_plugin envoy.router.cluster_specifier_plugin.matcher) reading FilterStateInput \
             key `{key}`, then the `{}` header, with retry_policy.refresh_cluster_on_retry: true (Envoy >= 1.39; see \
             envoy/envoy.yaml), and no route has one{header}; or set providers.switch: next_request",
            scope.config.fallback.cluster_header
        ),
    )
}

/// Both maps (filter state, then the routing header) send every provider cluster to itself.
fn check_matcher_maps(scope: &Scope<'_>, matcher: &Matcher<'_>, report: &mut Report) {
    let providers = scope.providers();
    let key = scope.filter_state_key();
    if let Some(level) = matcher.level(Input::FilterState(&key)) {
        check_map(level, &providers, "a retry the filter names for it falls through to the header's cluster or the default, on another provider", report);
    }
    let header = &scope.config.fallback.cluster_header;
    match matcher.level(Input::Header(header)) {
        Some(level) => check_map(
            level,
            &providers,
            "a request whose first model is there is sent to the default cluster instead",
            report,
        ),
        None => {
            let instead = matcher
                .first(false)
                .map(|(_, h)| format!(" (it reads `{h}` instead)"))
                .unwrap_or_default();
            report.findings.push(finding(
                matcher.at.clone(),
                format!(
                    "no level reads the routing header `{header}` (fallback.cluster_header){instead}: the client filter names \
                     the first attempt's cluster there; add an on_no_match matcher whose input is \
                     HttpRequestHeaderMatchInput {{header_name: {header}}} with the same exact_match_map"
                ),
            ));
        }
    }
}

/// One map sends every provider cluster to itself; `otherwise` says what happens if not.
fn check_map(
    level: &Level<'_>,
    providers: &[LlmCluster<'_>],
    otherwise: &str,
    report: &mut Report,
) {
    let missing: Vec<String> = providers
        .iter()
        .filter_map(|c| match level.sends(c.name) {
            Some(to) if to == c.name => None,
            Some(to) => Some(format!("{} (sent to `{to}`)", c.what())),
            None => Some(c.what()),
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    report.findings.push(finding(
        format!("{}.exact_match_map.map", level.at),
        format!(
            "misses {}: add `NAME: {{action: {{name: NAME, typed_config: {{\"@type\": type.googleapis.com/{CLUSTER_ACTION}, \
             cluster: NAME}}}}}}` for each; otherwise {otherwise}",
            missing.join(", ")
        ),
    ));
}

/// The matcher's last resort is the default cluster: after the first attempt the routing
/// header is gone, and the filter names no cluster for a retry on the default cluster.
fn check_matcher_default(scope: &Scope<'_>, matcher: &Matcher<'_>, report: &mut Report) {
    let default = &scope.config.fallback.default_cluster;
    if matcher.default == Some(default.as_str()) {
        return;
    }
    let found = match matcher.default {
        Some(cluster) => format!("sends what no map matches to `{cluster}`"),
        None => "names no cluster".to_owned(),
    };
    report.findings.push(finding(
        format!("{}.action", matcher.default_at),
        format!(
            "{found}: it must be a ClusterAction for `{default}` (fallback.default_cluster): after the first attempt \
             the routing header is gone and the filter names no cluster for a retry on the default cluster, so such a \
             retry lands here"
        ),
    ));
}

/// A cluster's upstream HTTP filters (its HTTP protocol options' `http_filters`).
fn upstream_http_filters(cluster: &Value) -> Vec<&Value> {
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
        .collect()
}

/// Whether an HTTP filter is the llm-fallback upstream filter.
fn is_upstream_wasm(filter: &Value) -> bool {
    filter.get("typed_config").is_some_and(|typed| {
        typed.get("@type").and_then(Value::as_str) == Some(WASM_FILTER)
            && typed.pointer("/config/root_id").and_then(Value::as_str) == Some("upstream")
    })
}

fn is_credential_injector(filter: &Value) -> bool {
    filter.get("name").and_then(Value::as_str) == Some(CREDENTIAL_INJECTOR)
        || filter.get("typed_config").and_then(type_name) == Some(CREDENTIAL_INJECTOR_TYPE)
}

/// `in_request`: each provider cluster runs the llm-fallback filter first (it removes the
/// last provider's key before this one's is injected), and injects a key of its own.
fn check_provider_filters(scope: &Scope<'_>, report: &mut Report) {
    let forwards = scope
        .config
        .fallback
        .providers
        .forwards_client_credentials();
    for cluster in scope.providers() {
        let Some((index, value)) = defined_cluster(scope.defined, cluster.name) else {
            continue;
        };
        let at = format!(
            "static_resources.clusters[{index}].typed_extension_protocol_options.{HTTP_PROTOCOL_OPTIONS}.http_filters"
        );
        let filters = upstream_http_filters(value);
        let first = filters.first().copied();
        // A cluster without it at all is reported by `check_llm_clusters`.
        if has_upstream_filter(value) && !first.is_some_and(is_upstream_wasm) {
            let name = first
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("another filter");
            report.findings.push(finding(
                format!("{at}[0]"),
                format!(
                    "{} runs `{name}` first: the llm-fallback upstream filter must be its first upstream HTTP filter, \
                     since it removes the last provider's credential headers before this provider's credential_injector \
                     adds its own; move it first",
                    cluster.what()
                ),
            ));
        }
        if !forwards && !filters.iter().copied().any(is_credential_injector) {
            report.findings.push(warning(
                at,
                format!(
                    "{} has no {CREDENTIAL_INJECTOR} upstream filter, and with providers.switch: in_request the filter \
                     removes the client's credential headers (fallback.providers.forward_client_credentials is not true): \
                     this provider gets no key; add a credential_injector after the llm-fallback filter (see \
                     envoy/envoy.yaml), or set forward_client_credentials: true if every provider takes the client's key",
                    cluster.what()
                ),
            ));
        }
    }
}

/// `next_request`: a route names the cluster from the routing header (either shape); a
/// matcher route is better used with `in_request`.
fn check_next_request_route(scope: &Scope<'_>, report: &mut Report) {
    let header = &scope.config.fallback.cluster_header;
    let key = scope.filter_state_key();
    let matchers = scope.matchers();
    let by_matcher = matchers
        .iter()
        .any(|(_, m)| m.level(Input::Header(header)).is_some());
    let by_header = scope
        .routes
        .iter()
        .any(|r| r.cluster_header() == Some(header.as_str()));
    if !by_header && !by_matcher {
        report.findings.push(finding(
            format!("{}: fallback.cluster_header", scope.at),
            format!(
                "no route uses `cluster_header: {header}` (or a matcher cluster specifier reading that header): the \
                 client filter routes to the first healthy model's cluster through it"
            ),
        ));
    }
    let ours = |m: &Matcher<'_>| {
        m.level(Input::Header(header)).is_some() || m.level(Input::FilterState(&key)).is_some()
    };
    for (route, _) in matchers.iter().filter(|(_, m)| ours(m)) {
        report.findings.push(warning(
            format!("{}.inline_cluster_specifier_plugin", route.at),
            format!(
                "a matcher cluster specifier route works best with fallback.providers.switch: in_request (at {}): \
                 with next_request the filter never switches clusters inside a request, so a fallback on another \
                 cluster waits for the client's next request",
                scope.at
            ),
        ));
    }
}

/// Each configured chain (`fallback.chains`, `fallback.tasks`) with the models it tries.
fn chains(config: &Config) -> Vec<(String, Vec<&ModelConfig>)> {
    let by_model = config.fallback.chains.keys().map(|model| {
        (
            format!("fallback.chains.{model}"),
            plan::chain(config, model, None),
        )
    });
    let by_task = config.fallback.tasks.keys().map(|task| {
        (
            format!("fallback.tasks.{task}"),
            plan::chain(config, "", Some(task)),
        )
    });
    by_model.chain(by_task).collect()
}

/// `next_request`: chains that span clusters fall back across them only between requests.
fn check_cross_cluster_chains(scope: &Scope<'_>, report: &mut Report) {
    let config = scope.config;
    let spanning: Vec<String> = chains(config)
        .into_iter()
        .filter_map(|(field, models)| {
            let mut clusters: Vec<String> = Vec::new();
            for model in models {
                let cluster = format!("`{}`", config.cluster_of(model));
                if !clusters.contains(&cluster) {
                    clusters.push(cluster);
                }
            }
            (clusters.len() > 1).then(|| format!("{field}: {}", clusters.join(", ")))
        })
        .collect();
    if spanning.is_empty() {
        return;
    }
    report.findings.push(warning(
        format!("{}: fallback.providers.switch", scope.at),
        format!(
            "chains span more than one cluster ({}): on this route a fallback on another cluster is served only from \
             the client's next request (x-should-retry + x-llm-fallback-next); set providers.switch: in_request with a \
             matcher route (Envoy >= 1.39) to switch inside the request",
            spanning.join("; ")
        ),
    ));
}

/// Any mode: a chain keeps one API family, since the filter rewrites only `model`.
fn check_api_families(at: &str, config: &Config, report: &mut Report) {
    for (field, models) in chains(config) {
        let first = models.first().map(|m| m.api);
        if models.iter().all(|m| Some(m.api) == first) {
            continue;
        }
        let each: Vec<String> = models
            .iter()
            .map(|m| format!("`{}` {}", m.name, m.api.as_str()))
            .collect();
        report.findings.push(warning(
            format!("{at}: {field}"),
            format!(
                "the chain mixes API families ({}): the filter rewrites only `model`, never the request format, so an \
                 OpenAI-shaped request would reach an Anthropic- or Gemini-native endpoint; keep one family per chain \
                 (most providers also serve an OpenAI-compatible endpoint: api: openai)",
                each.join(", ")
            ),
        ));
    }
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

    /// Checks against the shipped envoy/envoy.yaml, read as the CLI reads it (native only: the
    /// YAML loader is not part of the filter's build).
    #[cfg(not(target_arch = "wasm32"))]
    mod shipped {
        use super::super::*;
        use serde_json::json;
        use wasm_bindgen_test::wasm_bindgen_test;

        const ROUTE: &str = "/static_resources/listeners/0/filter_chains/0/filters/0/typed_config/route_config/virtual_hosts/0/routes/0/route";
        const MATCHER: &str =
            "/inline_cluster_specifier_plugin/extension/typed_config/cluster_matcher";

        fn shipped() -> Value {
            serde_yaml_ng::from_str(include_str!("../envoy/envoy.yaml")).unwrap()
        }

        fn route(doc: &mut Value) -> &mut Value {
            doc.pointer_mut(ROUTE).unwrap()
        }

        /// The route's matcher, at `path` below its `cluster_matcher`.
        fn matcher<'a>(doc: &'a mut Value, path: &str) -> &'a mut Value {
            route(doc).pointer_mut(&format!("{MATCHER}{path}")).unwrap()
        }

        fn clusters(doc: &mut Value) -> &mut Vec<Value> {
            doc.pointer_mut("/static_resources/clusters")
                .and_then(Value::as_array_mut)
                .unwrap()
        }

        fn upstream_filters(cluster: &mut Value) -> &mut Vec<Value> {
            cluster
                .pointer_mut(&format!(
                    "/typed_extension_protocol_options/{HTTP_PROTOCOL_OPTIONS}/http_filters"
                ))
                .and_then(Value::as_array_mut)
                .unwrap()
        }

        /// Edits every plugin configuration alike (YAML anchors load as copies).
        fn edit_configs(doc: &mut Value, edit: &dyn Fn(&mut Value)) {
            match doc {
                Value::Object(map) => {
                    if map.get("@type").and_then(Value::as_str) == Some(STRUCT) {
                        edit(map.get_mut("value").unwrap());
                        return;
                    }
                    map.values_mut().for_each(|c| edit_configs(c, edit));
                }
                Value::Array(items) => items.iter_mut().for_each(|c| edit_configs(c, edit)),
                _ => {}
            }
        }

        fn next_request(doc: &mut Value) {
            edit_configs(doc, &|c| {
                c["fallback"]["providers"] = json!({"switch": "next_request"});
            });
        }

        /// (errors, warnings) as the CLI prints them.
        fn split(doc: &Value) -> (Vec<String>, Vec<String>) {
            let report = check(doc);
            let (errors, warnings): (Vec<&Finding>, Vec<&Finding>) = report
                .findings
                .iter()
                .partition(|f| f.severity == Severity::Error);
            let text = |f: Vec<&Finding>| f.iter().map(ToString::to_string).collect();
            (text(errors), text(warnings))
        }

        /// The one error of `doc`, with no warnings.
        fn one_error(doc: &Value) -> String {
            let (errors, warnings) = split(doc);
            assert_eq!(errors.len(), 1, "{errors:#?}");
            assert_eq!(warnings, Vec::<String>::new());
            errors[0].clone()
        }

        /// The one warning of `doc`, with no errors.
        fn one_warning(doc: &Value) -> String {
            let (errors, warnings) = split(doc);
            assert_eq!(errors, Vec::<String>::new());
            assert_eq!(warnings.len(), 1, "{warnings:#?}");
            assert!(warnings[0].starts_with("warning: "), "{warnings:?}");
            warnings[0].clone()
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn the_shipped_config_has_no_errors_and_no_warnings() {
            let report = check(&shipped());
            assert_eq!(report.findings, vec![]);
            assert_eq!(report.plugins.len(), 4);
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn in_request_needs_a_matcher_route_on_the_filter_state_key() {
            let mut doc = shipped();
            *matcher(&mut doc, "/matcher_tree/input/typed_config/key") = json!("wasm.other_key");
            let f = one_error(&doc);
            assert!(
                f.starts_with("static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.inline_cluster_specifier_plugin.extension.typed_config.cluster_matcher.matcher_tree.input.typed_config.key: the matcher reads filter state `wasm.other_key`, but the filter names each retry's cluster in `wasm.llm_fallback_cluster`"),
                "{f}"
            );
            assert!(
                f.contains("set key: wasm.llm_fallback_cluster, or set fallback.providers.filter_state_key: other_key"),
                "{f}"
            );
            // The old route shape cannot switch inside a request.
            let mut doc = shipped();
            let action = route(&mut doc).as_object_mut().unwrap();
            action.remove("inline_cluster_specifier_plugin");
            action.insert("cluster_header".into(), json!("x-llm-cluster"));
            let f = one_error(&doc);
            assert!(
                f.contains(": fallback.providers.switch: in_request needs a route whose cluster is picked by a matcher cluster specifier"),
                "{f}"
            );
            assert!(
                f.contains("the `cluster_header` route at static_resources.listeners[0]"),
                "{f}"
            );
            assert!(f.contains("or set providers.switch: next_request"), "{f}");
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn in_request_needs_refresh_cluster_on_retry() {
            let mut doc = shipped();
            route(&mut doc)["retry_policy"]
                .as_object_mut()
                .unwrap()
                .remove("refresh_cluster_on_retry");
            let f = one_error(&doc);
            assert!(
                f.starts_with("static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.retry_policy.refresh_cluster_on_retry: must be true"),
                "{f}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn in_request_maps_name_every_provider_cluster() {
            // YAML anchors load as copies: each map is edited alone.
            let mut doc = shipped();
            matcher(&mut doc, "/matcher_tree/exact_match_map/map")
                .as_object_mut()
                .unwrap()
                .remove("llm_b");
            let f = one_error(&doc);
            assert!(
                f.starts_with("static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.inline_cluster_specifier_plugin.extension.typed_config.cluster_matcher.matcher_tree.exact_match_map.map: misses cluster `llm_b` (models `claude-sonnet-4-5`, `claude-haiku-4-5`)"),
                "{f}"
            );
            assert!(f.contains("falls through to the header's cluster"), "{f}");
            let mut doc = shipped();
            *matcher(
                &mut doc,
                "/on_no_match/matcher/matcher_tree/exact_match_map/map/llm/action/typed_config/cluster",
            ) = json!("llm_b");
            let f = one_error(&doc);
            assert!(
                f.contains("cluster_matcher.on_no_match.matcher.matcher_tree.exact_match_map.map: misses cluster `llm` (models `gpt-4o`, `llama-3.1-8b`, `gpt-4o-mini`) (sent to `llm_b`)"),
                "{f}"
            );
            // The header level must read fallback.cluster_header.
            let mut doc = shipped();
            *matcher(
                &mut doc,
                "/on_no_match/matcher/matcher_tree/input/typed_config/header_name",
            ) = json!("x-cluster");
            let f = one_error(&doc);
            assert!(
                f.contains("cluster_matcher: no level reads the routing header `x-llm-cluster` (fallback.cluster_header) (it reads `x-cluster` instead)"),
                "{f}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn in_request_matcher_falls_through_to_the_default_cluster() {
            let mut doc = shipped();
            *matcher(
                &mut doc,
                "/on_no_match/matcher/on_no_match/action/typed_config/cluster",
            ) = json!("llm_b");
            let f = one_error(&doc);
            assert!(
                f.contains("cluster_matcher.on_no_match.matcher.on_no_match.action: sends what no map matches to `llm_b`: it must be a ClusterAction for `llm` (fallback.default_cluster)"),
                "{f}"
            );
            matcher(&mut doc, "/on_no_match/matcher")
                .as_object_mut()
                .unwrap()
                .remove("on_no_match");
            assert!(one_error(&doc).contains("names no cluster"));
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn provider_clusters_run_the_upstream_filter_first() {
            let mut doc = shipped();
            upstream_filters(&mut clusters(&mut doc)[1]).swap(0, 1);
            let f = one_error(&doc);
            assert!(
                f.starts_with("static_resources.clusters[1].typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.http_filters[0]: cluster `llm_b` (models `claude-sonnet-4-5`, `claude-haiku-4-5`) runs `envoy.filters.http.credential_injector` first"),
                "{f}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn provider_clusters_without_a_credential_injector_warn() {
            let mut doc = shipped();
            upstream_filters(&mut clusters(&mut doc)[1]).remove(1);
            let f = one_warning(&doc);
            assert!(
                f.starts_with("warning: static_resources.clusters[1].typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.http_filters: cluster `llm_b` (models `claude-sonnet-4-5`, `claude-haiku-4-5`) has no envoy.filters.http.credential_injector upstream filter"),
                "{f}"
            );
            assert!(f.contains("this provider gets no key"), "{f}");
            // Forwarding the client's key is a choice: no warning then.
            edit_configs(&mut doc, &|c| {
                c["fallback"]["providers"]["forward_client_credentials"] = json!(true);
            });
            assert_eq!(check(&doc).findings, vec![]);
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn in_request_provider_clusters_share_their_retry_breakers() {
            let mut doc = shipped();
            clusters(&mut doc)[1]["circuit_breakers"]["thresholds"][0]["max_retries"] = json!(16);
            let f = one_error(&doc);
            assert!(
                f.starts_with("static_resources.clusters: LLM clusters set different retry circuit breakers (`llm` max_retries 1024, `llm_b` max_retries 16)"),
                "{f}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn zero_max_retries_warns() {
            let mut doc = shipped();
            for cluster in clusters(&mut doc) {
                cluster["circuit_breakers"]["thresholds"][0]["max_retries"] = json!(0);
            }
            let (errors, warnings) = split(&doc);
            assert_eq!(errors, Vec::<String>::new());
            assert_eq!(warnings.len(), 2, "{warnings:#?}");
            assert!(
                warnings[1].starts_with("warning: static_resources.clusters[1].circuit_breakers: cluster `llm_b` (models `claude-sonnet-4-5`, `claude-haiku-4-5`) sets max_retries 0: Envoy makes no retry of a request that starts here"),
                "{warnings:?}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn the_cluster_header_route_passes_in_next_request_mode_with_a_cross_cluster_warning() {
            let mut doc = shipped();
            next_request(&mut doc);
            let action = route(&mut doc).as_object_mut().unwrap();
            action.remove("inline_cluster_specifier_plugin");
            action.insert("cluster_header".into(), json!("x-llm-cluster"));
            action["retry_policy"]
                .as_object_mut()
                .unwrap()
                .remove("refresh_cluster_on_retry");
            let f = one_warning(&doc);
            assert!(
                f.contains(": fallback.providers.switch: chains span more than one cluster (fallback.chains.claude-sonnet-4-5: `llm_b`, `llm`; fallback.chains.gpt-4o: `llm`, `llm_b`; fallback.tasks.code: `llm_b`, `llm`): on this route a fallback on another cluster is served only from the client's next request (x-should-retry + x-llm-fallback-next); set providers.switch: in_request with a matcher route (Envoy >= 1.39)"),
                "{f}"
            );
            // Chains on one cluster each: nothing to tell.
            edit_configs(&mut doc, &|c| {
                let f = c["fallback"].as_object_mut().unwrap();
                f.remove("tasks");
                f.insert("chains".into(), json!({"gpt-4o": ["gpt-4o-mini"]}));
            });
            assert_eq!(check(&doc).findings, vec![]);
            // Without the routing header on any route, the client filter cannot route.
            route(&mut doc)["cluster_header"] = json!("x-other");
            assert!(one_error(&doc).contains("no route uses `cluster_header: x-llm-cluster`"));
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn a_matcher_route_in_next_request_mode_warns() {
            let mut doc = shipped();
            next_request(&mut doc);
            let (errors, warnings) = split(&doc);
            assert_eq!(errors, Vec::<String>::new());
            assert_eq!(warnings.len(), 2, "{warnings:#?}");
            assert!(
                warnings[0].starts_with("warning: static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.inline_cluster_specifier_plugin: a matcher cluster specifier route works best with fallback.providers.switch: in_request"),
                "{warnings:?}"
            );
            assert!(
                warnings[1].contains("chains span more than one cluster"),
                "{warnings:?}"
            );
            // The matcher's header level routes too: without it, nothing does.
            *matcher(
                &mut doc,
                "/on_no_match/matcher/matcher_tree/input/typed_config/header_name",
            ) = json!("x-cluster");
            let (errors, _) = split(&doc);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains("no route uses `cluster_header: x-llm-cluster` (or a matcher cluster specifier reading that header)"),
                "{errors:?}"
            );
        }

        #[wasm_bindgen_test(unsupported = test)]
        fn chains_mixing_api_families_warn() {
            let mut doc = shipped();
            edit_configs(&mut doc, &|c| {
                c["models"][4]["api"] = json!("anthropic");
            });
            let f = one_warning(&doc);
            assert!(
                f.contains(": fallback.chains.claude-sonnet-4-5: the chain mixes API families (`claude-sonnet-4-5` openai, `claude-haiku-4-5` anthropic, `gpt-4o` openai): the filter rewrites only `model`"),
                "{f}"
            );
            // A bare plugin configuration is checked for it too.
            let bare = json!({"models": [{"name": "a"}, {"name": "b", "api": "gemini"}],
                              "fallback": {"tasks": {"t": ["a", "b"]}}});
            let report = check(&bare);
            assert!(!report.has_errors());
            assert_eq!(report.findings.len(), 1);
            assert!(
                report.findings[0]
                    .to_string()
                    .starts_with("warning: (plugin configuration): fallback.tasks.t: the chain mixes API families (`a` openai, `b` gemini)"),
                "{:?}",
                report.findings
            );
        }
    }
}
