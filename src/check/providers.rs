//! The provider clusters' upstream HTTP filters (the llm-fallback filter first, a credential
//! injector of their own) and the configured chains (crossing clusters, mixing API families).

use super::{
    defined_cluster, finding, has_upstream_filter, type_name, warning, Report, Scope,
    HTTP_PROTOCOL_OPTIONS, WASM_FILTER,
};
use crate::config::Config;
use crate::plan;
use serde_json::Value;

const CREDENTIAL_INJECTOR: &str = "envoy.filters.http.credential_injector";
const CREDENTIAL_INJECTOR_TYPE: &str =
    "envoy.extensions.filters.http.credential_injector.v3.CredentialInjector";

/// A cluster's upstream HTTP filters (its HTTP protocol options' `http_filters`).
pub(super) fn upstream_http_filters(cluster: &Value) -> Vec<&Value> {
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
pub(super) fn is_upstream_wasm(filter: &Value) -> bool {
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
pub(super) fn check_provider_filters(scope: &Scope<'_>, report: &mut Report) {
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

/// `next_request`: chains that span clusters fall back across them only between requests.
pub(super) fn check_cross_cluster_chains(scope: &Scope<'_>, report: &mut Report) {
    let config = scope.config;
    let spanning: Vec<String> = plan::every_chain(config)
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
pub(super) fn check_api_families(at: &str, config: &Config, report: &mut Report) {
    for (field, models) in plan::every_chain(config) {
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
