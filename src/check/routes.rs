//! The routes a routing configuration needs: `cluster_header` routes, and matcher cluster
//! specifiers reading the filter's filter state and the routing header (their maps and their
//! default cluster), for `fallback.providers.switch: in_request` and `next_request`.

use super::providers::{check_api_families, check_cross_cluster_chains, check_provider_filters};
use super::{finding, type_name, warning, Finding, LlmCluster, Report, Scope, WASM_FILTER};
use serde_json::{Map, Value};

const MATCHER_SPECIFIER: &str =
    "envoy.extensions.router.cluster_specifiers.matcher.v3.MatcherClusterSpecifier";
const CLUSTER_ACTION: &str = "envoy.extensions.router.cluster_specifiers.matcher.v3.ClusterAction";
const FILTER_STATE_INPUT: &str =
    "envoy.extensions.matching.common_inputs.network.v3.FilterStateInput";
const HEADER_INPUT: &str = "envoy.type.matcher.v3.HttpRequestHeaderMatchInput";

/// The route and provider checks of one routing configuration with models.
pub(super) fn check_routing(scope: &Scope<'_>, report: &mut Report) {
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
pub(super) struct Route<'a> {
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
pub(super) fn find_routes<'a>(value: &'a Value, path: &str, out: &mut Vec<Route<'a>>) {
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
pub(super) struct Matcher<'a> {
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
pub(super) fn matcher_of<'a>(route: &Route<'a>) -> Option<Matcher<'a>> {
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
