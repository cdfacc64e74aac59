//! Who a request is, and what it may ask for: both decided by the filter, never by the client.
//!
//! **Identity.** The client filter mints an id for each stream (a per-worker counter: all
//! attempts of a request run on the worker that owns it) and keeps it in the stream's filter
//! state (`wasm.llm_fallback_request`), where the upstream filter of every attempt reads it.
//! Clients cannot write filter state and nothing of it reaches the provider, so two requests
//! that share an `x-request-id` (a mesh propagates one id to every call of a trace) never share
//! state, and no header can point one request at another's.
//!
//! **Policy.** The client's policy headers count only as far as the listener's `trust` allows;
//! the route's metadata (`filter_metadata.llm_fallback`) is the operator's and always counts.
//! The policy headers are removed once read: they are for this filter, not for providers.

use super::headers::RequestHeaders;
use super::{host, Plugin};
use crate::config::trust::{policy_from_pairs, Policy};
use proxy_wasm::types::MapType;
use std::cell::Cell;

/// The filter-state key that carries the request id from the client to the upstream position.
const STATE_KEY: &str = "llm_fallback_request";

thread_local! {
    static NEXT: Cell<u64> = const { Cell::new(1) };
    /// This VM's start, so that a VM that replaced a crashed one never mints an id the old one
    /// gave to a request whose retries are still running.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
}

/// Client position: a fresh id for this request, stored in its filter state.
pub fn mint() -> Option<String> {
    let epoch = EPOCH.with(|epoch| {
        if epoch.get() == 0 {
            epoch.set(host::now_unix_ms().max(1));
        }
        epoch.get()
    });
    let n = NEXT.with(|next| {
        let n = next.get();
        next.set(n.wrapping_add(1));
        n
    });
    let id = format!("{epoch:x}-{n}");
    host::set_property(STATE_KEY, id.as_bytes()).then_some(id)
}

/// Upstream position: the id the client filter minted for this attempt's request.
pub fn of_attempt() -> Option<String> {
    host::property(vec![STATE_KEY]).and_then(|v| String::from_utf8(v).ok())
}

/// Replaces the client's policy values with those this listener trusts (and the route's), and
/// removes the policy headers from the request.
pub fn apply_trust(plugin: &Plugin, request: &mut RequestHeaders) {
    let config = &plugin.config;
    let client = Policy {
        priority: request.priority.take(),
        task: request.task.take(),
        retry_safety: request.declared_safety.take(),
    };
    let headers = MapType::HttpRequestHeaders;
    for (present, name) in [
        (client.priority.is_some(), &config.fallback.priority_header),
        (client.task.is_some(), &config.fallback.task_header),
        (client.retry_safety.is_some(), &config.retry_safety.header),
    ] {
        if present {
            host::remove_header(headers, name);
        }
    }
    let route = if config.trust.route_metadata {
        host::property(vec![
            "xds",
            "route_metadata",
            "filter_metadata",
            "llm_fallback",
        ])
        .map(|bytes| policy_from_pairs(&bytes))
        .unwrap_or_default()
    } else {
        Policy::default()
    };
    let lower = |value: &str| match &config.shaping {
        Some(shaping) => crate::shaping::lowers(shaping, value),
        None => value.eq_ignore_ascii_case("normal") || value.eq_ignore_ascii_case("batch"),
    };
    let decided = config.trust.decide(client, route, &lower);
    if !decided.ignored.is_empty() {
        log::info!(
            "client policy not trusted on this listener, ignored: {}",
            decided.ignored.join(", ")
        );
    }
    request.priority = decided.policy.priority;
    request.task = decided.policy.task;
    request.declared_safety = decided.policy.retry_safety;
}
