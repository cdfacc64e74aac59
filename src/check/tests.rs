//! Tests of `llm-fallback check`: built Envoy configs, and the shipped envoy/envoy.yaml.

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
    let c = json!({"models": [{"name": "a", "cluster": "llm"}, {"name": "b", "cluster": "llm_b"}]});
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
            .any(|f| f.contains("cluster `dflt` (models `m`) has no llm-fallback upstream filter")),
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
        all[0].contains("circuit_breakers: {thresholds: [{priority: DEFAULT, max_retries: 1024}]}"),
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
    let budget =
        json!([{"retry_budget": {"budget_percent": {"value": 25.0}, "min_retry_concurrency": 64}}]);
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
    const MATCHER: &str = "/inline_cluster_specifier_plugin/extension/typed_config/cluster_matcher";

    fn shipped() -> Value {
        serde_yaml_ng::from_str(include_str!("../../envoy/envoy.yaml")).unwrap()
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
            c["metering"]["budgets"]
                .as_array_mut()
                .unwrap()
                .retain(|b| b.get("task").is_none());
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

    #[wasm_bindgen_test(unsupported = test)]
    fn queue_times_must_fit_the_connection_managers_timeouts() {
        const HCM: &str = "/static_resources/listeners/0/filter_chains/0/filters/0/typed_config";
        let mut doc = shipped();
        doc.pointer_mut(HCM).unwrap()["stream_idle_timeout"] = json!("15s");
        let (errors, warnings) = split(&doc);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("typed_config.stream_idle_timeout: 15000 ms: a request may wait 20000 ms in a shaping queue"),
            "{errors:?}"
        );
        assert!(warnings
            .iter()
            .any(|w| w.contains("shaping.stream_idle_timeout_ms says 300000 ms")));
        let mut doc = shipped();
        doc.pointer_mut(HCM).unwrap()["request_timeout"] = json!({"seconds": 10});
        assert!(one_error(&doc).contains("request_timeout: 10000 ms: a request may wait 20000 ms"));
        let mut doc = shipped();
        doc.pointer_mut(HCM).unwrap()["stream_idle_timeout"] = json!("600s");
        assert!(one_warning(&doc).contains("600000 ms here"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn metering_needs_its_tags_its_buckets_and_prices_for_cost_budgets() {
        let text = include_str!("../../envoy/envoy.yaml");
        let untagged = text.replace("  - {tag_name: key, regex: \"(;key=([^;]*))\"}\n", "");
        let doc: Value = serde_yaml_ng::from_str(&untagged).unwrap();
        assert!(one_warning(&doc).contains("no tags for `;key=`"));
        let mut doc = shipped();
        doc.pointer_mut("/stats_config").unwrap()["histogram_bucket_settings"] = json!([]);
        let f = one_warning(&doc);
        assert!(
            f.contains("no buckets for wasmcustom.llm_fallback.request_duration_ms"),
            "{f}"
        );
        let unpriced = text.replace(
            "                        llama-3.1-8b: {input: 0.05, output: 0.08}\n",
            "",
        );
        let doc: Value = serde_yaml_ng::from_str(&unpriced).unwrap();
        let (errors, warnings) = split(&doc);
        assert_eq!(errors, Vec::<String>::new());
        // Both USD budgets of the shipped config apply to every model.
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert!(
            warnings[0].contains("budget `all-daily` counts USD, but llama-3.1-8b have no price")
        );
    }
}
