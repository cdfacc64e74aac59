//! Fallback glue: reads health and request state, asks the pure planner, writes the outcome.

use super::headers::RequestHeaders;
use super::http::{header_safe, RETRY_AFTER_MARKER, RETRY_MARKER};
use super::{health_store, host, requests, Plugin};
use crate::classify::{ErrorClass, Scope, Verdict};
use crate::config::ModelConfig;
use crate::health::Admission;
use crate::plan::{self, Features, Next, Priority};
use crate::stats::Counter;
use proxy_wasm::types::MapType;

/// What the client filter does with a request.
pub enum Start {
    /// Route to this cluster (the first model's).
    Route { cluster: String },
    /// Refused locally (a batch request whose model is cooling down).
    Refuse,
    /// Not a configured model: pass through.
    Unmanaged,
}

/// A cheap pseudo-random number for cooldown jitter (no randomness source in the VM).
fn jitter(seed: &str, now: u64) -> u64 {
    seed.bytes().fold(now ^ 0x9e37_79b9_7f4a_7c15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Client position: picks the first model of the request's chain that can serve now.
pub fn start(
    plugin: &Plugin,
    id: &str,
    requested: &str,
    body: Vec<u8>,
    unsafe_: bool,
    request: &RequestHeaders,
) -> Start {
    let config = &plugin.config;
    let Some(primary) = config.model(requested) else {
        return Start::Unmanaged;
    };
    let task = request.task.clone();
    let priority = Priority::from_header(request.priority.as_deref());
    let mut chain = plan::chain(config, requested, task.as_deref());
    if priority == Priority::Batch {
        chain.truncate(1);
    }
    let now = host::now_unix_ms();
    let mut features: Option<Features> = None;
    let mut chosen: Option<(&ModelConfig, bool)> = None;
    let mut clean_at_start = None;
    let mut soonest: Option<u64> = None;
    let mut outs: Vec<plan::Out> = Vec::new();
    for (i, candidate) in chain.iter().enumerate() {
        if i > 0 && features.is_none() {
            features = Some(Features::of_body(&body));
        }
        if let Err(pass) = plan::fits(config, candidate, primary, priority, features.as_ref()) {
            log::debug!("request {id}: {} passed over ({pass:?})", candidate.name);
            if pass == plan::Pass::Drained {
                outs.push(plan::Out::Drained);
            }
            continue;
        }
        let slot = plugin.metrics.set.slot(Some(&candidate.name));
        let health = health_store::read(&candidate.name);
        match health.admission(now) {
            Admission::Healthy => {
                if health.is_clean() {
                    clean_at_start = Some(candidate.name.clone());
                }
                chosen = Some((candidate, false));
                break;
            }
            Admission::Probe => {
                let (_, won) = health_store::update(&candidate.name, |h| {
                    if h.admission(now) != Admission::Probe {
                        return false;
                    }
                    h.take_probe(now);
                    true
                });
                if won {
                    plugin.metrics.increment(Counter::Probes(slot));
                    log::info!(
                        "request {id}: probing {} after its cooldown",
                        candidate.name
                    );
                    chosen = Some((candidate, true));
                    break;
                }
                plugin.metrics.increment(Counter::Skipped(slot));
                // Another request is probing it: a transient reason.
                outs.push(plan::Out::Cooling {
                    reason: None,
                    until_ms: now,
                });
            }
            Admission::Cooling { until_ms } => {
                plugin.metrics.increment(Counter::Skipped(slot));
                soonest = Some(soonest.map_or(until_ms, |s| s.min(until_ms)));
                let probing = now >= health.cooldown_until_ms;
                outs.push(plan::Out::Cooling {
                    reason: if probing { None } else { health.reason },
                    until_ms,
                });
                log::debug!(
                    "request {id}: {} is cooling down for {} ms more",
                    candidate.name,
                    until_ms.saturating_sub(now)
                );
            }
        }
    }
    let (model, probe) = match chosen {
        Some(choice) => choice,
        None if priority == Priority::Batch => {
            let wait_s = soonest.map_or(1, |s| s.saturating_sub(now).div_ceil(1000).max(1));
            log::info!("request {id}: batch request refused, {requested} is cooling down");
            let body = format!(
                r#"{{"error":{{"type":"model_cooling_down","message":"{requested} is cooling down; retry after {wait_s} s (batch requests never fall back)"}}}}"#
            );
            host::send_response(
                503,
                vec![
                    ("content-type", "application/json"),
                    ("retry-after", &wait_s.to_string()),
                    ("x-llm-error-class", "overloaded"),
                    ("x-llm-error-reason", "batch request, model cooling down"),
                ],
                body.as_bytes(),
            );
            return Start::Refuse;
        }
        None => match plan::when_exhausted(&outs, now) {
            plan::Exhausted::Answer {
                status,
                class,
                retry_after_ms,
            } => {
                answer_exhausted(plugin, requested, status, class, retry_after_ms);
                return Start::Refuse;
            }
            plan::Exhausted::Probe => {
                // Out for a transient reason: one attempt at the requested model beats
                // refusing outright.
                log::warn!(
                    "request {id}: every model of the chain is cooling down; asking {requested}"
                );
                (primary, false)
            }
        },
    };
    if model.name != requested {
        log::info!(
            "request {id}: {requested} is cooling down, starting with {}",
            model.name
        );
    }
    let cluster = model
        .cluster
        .clone()
        .unwrap_or_else(|| config.fallback.default_cluster.clone());
    requests::insert(
        id,
        requests::RequestState {
            requested: requested.to_owned(),
            task,
            priority,
            cluster: cluster.clone(),
            next: model.name.clone(),
            tried: Vec::new(),
            served: None,
            fallback_reason: None,
            probe,
            features,
            body: (chain.len() > 1).then_some(body),
            clean_at_start,
            retry_after_ms: None,
            unsafe_,
            proven_rejection: false,
            body_encoding: crate::inflate::Encoding::Identity,
        },
    );
    Start::Route { cluster }
}

/// Answers a request locally when every model of its chain is out for a reason a request now
/// cannot change (quota, long rate limits, missing or drained models): no upstream call.
fn answer_exhausted(
    plugin: &Plugin,
    requested: &str,
    status: u16,
    class: ErrorClass,
    retry_after_ms: Option<u64>,
) {
    let config = &plugin.config;
    let slot = plugin.metrics.set.slot(Some(requested));
    plugin.metrics.increment(Counter::ChainUnavailable(slot));
    let wait_s = retry_after_ms.map(|ms| ms.div_ceil(1000).max(1));
    // A wait the SDK may sit out is worth a retry; anything longer is not.
    let retry = retry_after_ms.is_some_and(|ms| ms <= config.fallback.max_wait_ms);
    let message = match wait_s {
        Some(s) => format!(
            "every model that can serve {requested} is unavailable ({}); the soonest is back in {s} s",
            class.as_str()
        ),
        None => format!(
            "every model that can serve {requested} is unavailable ({})",
            class.as_str()
        ),
    };
    log::warn!("{message}: answered {status} without calling the upstream");
    let body = serde_json::json!({"error": {
        "message": message,
        "type": class.as_str(),
        "code": "all_models_unavailable",
        "param": null,
    }})
    .to_string();
    let wait = wait_s.map(|s| s.to_string());
    let mut headers = vec![
        ("content-type", "application/json"),
        ("x-llm-error-class", class.as_str()),
        (
            "x-llm-error-reason",
            "every model of the chain is unavailable",
        ),
        ("x-llm-model", requested),
        ("x-llm-attempts", "0"),
        ("x-should-retry", if retry { "true" } else { "false" }),
    ];
    if let Some(wait) = wait.as_deref() {
        headers.push(("retry-after", wait));
    }
    host::send_response(u32::from(status), headers, body.as_bytes());
}

/// Records an answer in the model's error-rate window; true when the rate crossed the
/// threshold.
fn error_rate_crossed(plugin: &Plugin, model: &str, is_error: bool, now: u64) -> bool {
    let Some(index) = plugin.config.models.iter().position(|m| m.name == model) else {
        return false;
    };
    let Ok(mut windows) = plugin.windows.try_borrow_mut() else {
        return false;
    };
    windows
        .get_mut(index)
        .is_some_and(|w| w.record(now, is_error, &plugin.config.fallback))
}

/// Upstream position, at an attempt's request headers: the model this attempt asks, and
/// whether the body must be held and rewritten (another model, another upstream name, or a
/// fallback whose output limit may need `max_tokens` clamped). When it need not, the attempt
/// is recorded now and the body streams through unread.
pub fn attempt_needs_body(plugin: &Plugin, id: &str) -> Option<(String, bool)> {
    requests::with(id, |state| {
        let target = state.next.clone();
        let upstream = plugin
            .config
            .model(&target)
            .map_or(target.as_str(), |m| m.upstream());
        let rewrite = target != state.requested
            || upstream != target
            || state.body_encoding.readable_compressed();
        if !rewrite {
            state.tried.push(target.clone());
            // A new attempt: an earlier one's proven rejection says nothing about it.
            state.proven_rejection = false;
        }
        (target, rewrite)
    })
}

/// Upstream position: a 2xx answer from `model`.
pub fn succeeded(plugin: &Plugin, id: &str, model: &str) {
    let now = host::now_unix_ms();
    if error_rate_crossed(plugin, model, false, now) {
        // The window filled up with errors still above the threshold.
        health_store::update(model, |h| {
            h.open_for_error_rate(now, &plugin.config.fallback, jitter(id, now));
            true
        });
        let slot = plugin.metrics.set.slot(Some(model));
        plugin
            .metrics
            .increment(Counter::CooldownsOpened(slot, ErrorClass::Overloaded));
        log::warn!("{model}: error rate above the threshold: circuit opened");
        return;
    }
    let (probe, known_clean) = requests::with(id, |s| {
        s.served = Some(model.to_owned());
        s.proven_rejection = false;
        let known_clean = s.clean_at_start.as_deref() == Some(model);
        (std::mem::take(&mut s.probe), known_clean)
    })
    .unwrap_or((false, false));
    // The client read this model's health a moment ago and it was clean: a success changes
    // nothing, so the shared record is not read again.
    if known_clean || health_store::read(model).is_clean() {
        return;
    }
    let (_, wrote) = health_store::update(model, |h| {
        if h.is_clean() {
            return false;
        }
        h.on_success();
        true
    });
    if wrote {
        let slot = plugin.metrics.set.slot(Some(model));
        if probe {
            plugin.metrics.increment(Counter::SwitchBacks(slot));
        }
        log::info!("{model} answered again: circuit closed, traffic switches back to it");
    }
}

/// Records a failure of `model` in its shared health (and, for an account-wide quota stop, in
/// the health of every model of the account) and in its error-rate window. Returns the new
/// cooldown deadline when this failure opened or extended the model's circuit.
pub fn record_failure(
    plugin: &Plugin,
    seed: &str,
    model: &ModelConfig,
    verdict: &Verdict,
    now: u64,
) -> Option<u64> {
    let config = &plugin.config;
    let jitter = jitter(seed, now);
    let fail = |name: &str| {
        let mut opened = None;
        health_store::update(name, |h| {
            let before = *h;
            opened = h.on_failure(
                verdict.class,
                verdict.retry_after_ms,
                now,
                &config.fallback,
                jitter,
            );
            *h != before
        });
        opened
    };
    let mut opened = fail(&model.name);
    let is_error = matches!(verdict.class, ErrorClass::Overloaded | ErrorClass::Timeout);
    if is_error && error_rate_crossed(plugin, &model.name, true, now) && opened.is_none() {
        let (h, _) = health_store::update(&model.name, |h| {
            h.open_for_error_rate(now, &config.fallback, jitter);
            true
        });
        log::warn!(
            "{}: error rate above {} over {} ms: circuit opened",
            model.name,
            config.fallback.error_rate_threshold,
            config.fallback.window_ms
        );
        opened = Some(h.cooldown_until_ms);
    }
    let slot = plugin.metrics.set.slot(Some(&model.name));
    if let Some(until) = opened {
        plugin
            .metrics
            .increment(Counter::CooldownsOpened(slot, verdict.class));
        log::warn!(
            "{} cooling down for {} ms after {}",
            model.name,
            until.saturating_sub(now),
            verdict.class.as_str()
        );
    }
    if verdict.class == ErrorClass::QuotaExhausted && verdict.scope == Scope::Account {
        let account = config.account_of(model);
        let mut cooled = Vec::new();
        for other in config
            .models_of_account(account)
            .filter(|m| m.name != model.name)
        {
            if let Some(until) = fail(&other.name) {
                let other_slot = plugin.metrics.set.slot(Some(&other.name));
                plugin
                    .metrics
                    .increment(Counter::CooldownsOpened(other_slot, verdict.class));
                cooled.push(format!("{} ({} ms)", other.name, until.saturating_sub(now)));
            }
        }
        if let Some(account_slot) = plugin.metrics.set.account_slot(account) {
            plugin
                .metrics
                .increment(Counter::AccountQuotaStops(account_slot));
        }
        log::warn!(
            "account {account} is out of quota ({}): every model of it cools down; also {}",
            verdict.reason,
            if cooled.is_empty() {
                "none".to_owned()
            } else {
                cooled.join(", ")
            }
        );
    }
    opened
}

/// Upstream position: after a failed answer from `model`, updates its health and decides the
/// next attempt. `answer_headers` is false when there is no answer to mark (a per-try timeout
/// or a reset, seen only when the attempt ends): the SDK panics on header calls outside a
/// header phase, so then only the state for the next attempt is written.
pub fn after_answer(
    plugin: &Plugin,
    id: &str,
    model: &str,
    status: u16,
    verdict: &Verdict,
    body: &[u8],
    answer_headers: bool,
) {
    if verdict.class == ErrorClass::Ok {
        succeeded(plugin, id, model);
        return;
    }
    let config = &plugin.config;
    let Some(current) = config.model(model) else {
        return;
    };
    let now = host::now_unix_ms();
    let opened = record_failure(plugin, id, current, verdict, now);
    let slot = plugin.metrics.set.slot(Some(model));
    // A request that may act is re-sent only when the answer proves it was rejected before any
    // processing: an explicit 429/529 rejection with a provider error body.
    let proven = matches!(status, 429 | 529)
        && matches!(
            verdict.class,
            ErrorClass::RateLimited | ErrorClass::Overloaded | ErrorClass::QuotaExhausted
        )
        && !verdict.reason.starts_with("status=");
    let blocked = requests::with(id, |state| {
        state.proven_rejection = proven;
        state.unsafe_ && !proven
    })
    .unwrap_or(false);
    if blocked {
        // Counted once, by the client filter, on the final answer.
        if answer_headers {
            host::set_header(MapType::HttpResponseHeaders, "x-should-retry", "false");
            host::set_header(
                MapType::HttpResponseHeaders,
                "x-llm-retry-blocked",
                super::guard::BLOCKED,
            );
        }
        log::info!(
            "{model} answered {} to a request that may act: not re-sent",
            verdict.class.as_str()
        );
        return;
    }
    let decision = requests::with(id, |state| {
        if state.features.is_none() {
            let source = state.body.as_deref().unwrap_or(body);
            state.features = Some(Features::of_body(source));
        }
        let chain: Vec<&ModelConfig> = plan::chain(config, &state.requested, state.task.as_deref())
            .into_iter()
            .filter(|m| {
                // Attempts stay on the cluster the request was routed to.
                m.cluster
                    .as_deref()
                    .unwrap_or(&config.fallback.default_cluster)
                    == state.cluster
            })
            .collect();
        let admission = |m: &ModelConfig| health_store::read(&m.name).admission(now);
        let decide = |chain: &[&ModelConfig]| {
            plan::after_failure(
                config,
                chain,
                current,
                &state.tried,
                verdict,
                opened.is_some(),
                state.priority,
                state.features.as_ref(),
                &admission,
            )
        };
        let next = decide(&chain);
        // A fallback on another cluster cannot be asked inside this request (Envoy retries
        // stay on the routed cluster); the client's next request will be routed to it.
        // Only when this model is now cooling down: otherwise the retry would come back here.
        let cooling = matches!(admission(current), Admission::Cooling { .. });
        let elsewhere = match next {
            Next::Stop if cooling => {
                let all = plan::chain(config, &state.requested, state.task.as_deref());
                match decide(&all) {
                    Next::Switch(to) => Some(to),
                    _ => None,
                }
            }
            _ => None,
        };
        match &next {
            Next::Retry => state.next = model.to_owned(),
            Next::Switch(to) => {
                state.next = to.clone();
                state.fallback_reason.get_or_insert(verdict.class);
            }
            Next::Stop => {
                if state.priority == Priority::Batch {
                    state.retry_after_ms = verdict
                        .retry_after_ms
                        .or_else(|| opened.map(|until| until.saturating_sub(now)));
                }
            }
        }
        (next, state.tried.len(), elsewhere)
    });
    let Some((next, attempt, elsewhere)) = decision else {
        return;
    };
    let headers = MapType::HttpResponseHeaders;
    if !answer_headers {
        log::info!(
            "attempt {attempt}: {model} gave no answer ({}); next attempt, if any: {next:?}",
            verdict.reason
        );
        return;
    }
    match next {
        Next::Stop => match elsewhere {
            Some(to) => {
                host::set_header(headers, "x-should-retry", "true");
                host::set_header(headers, "x-llm-fallback-next", &to);
                log::info!(
                    "attempt {attempt}: {model} answered {}; {to} serves on another cluster, \
                     the client's retry will be routed there",
                    verdict.class.as_str()
                );
            }
            None => log::info!(
                "attempt {attempt}: {model} answered {} ({}); no other attempt can help",
                verdict.class.as_str(),
                header_safe(&verdict.reason)
            ),
        },
        Next::Retry => {
            host::set_header(headers, RETRY_MARKER, "true");
            if let Some(wait) = verdict.retry_after_ms {
                host::set_header(
                    headers,
                    RETRY_AFTER_MARKER,
                    &wait.div_ceil(1000).to_string(),
                );
            }
            log::info!(
                "attempt {attempt}: {model} answered {}; retrying it{}",
                verdict.class.as_str(),
                verdict
                    .retry_after_ms
                    .map_or(String::new(), |w| format!(" after {w} ms"))
            );
        }
        Next::Switch(to) => {
            host::set_header(headers, RETRY_MARKER, "true");
            let to_slot = plugin.metrics.set.slot(Some(&to));
            plugin.metrics.increment(Counter::Fallbacks {
                from: slot,
                to: to_slot,
                class: verdict.class,
            });
            log::info!(
                "attempt {attempt}: {model} answered {}; falling back to {to}",
                verdict.class.as_str()
            );
        }
    }
}

/// Client position: the final answer's headers say which model served and why.
pub fn explain(id: &str, status: u16) {
    let headers = MapType::HttpResponseHeaders;
    // Only what the headers need (the state also holds the request body).
    let Some((model, attempts, requested, reason, batch, retry_after_ms)) =
        requests::with(id, |s| {
            let model = s
                .served
                .clone()
                .or_else(|| s.tried.last().cloned())
                .unwrap_or_else(|| s.next.clone());
            (
                model,
                s.tried.len(),
                s.requested.clone(),
                s.fallback_reason,
                s.priority == Priority::Batch,
                s.retry_after_ms,
            )
        })
    else {
        return;
    };
    // A retry marker is only ever set on a failed attempt's answer, which then reached the
    // client because no other attempt followed: remove it from what the client sees.
    if attempts > 1 || status >= 400 {
        host::remove_header(headers, RETRY_MARKER);
        host::remove_header(headers, RETRY_AFTER_MARKER);
    }
    host::set_header(headers, "x-llm-model", &model);
    host::set_header(headers, "x-llm-attempts", &attempts.to_string());
    if model != requested {
        host::set_header(headers, "x-llm-fallback-from", &requested);
        // Switched inside this request: the class that caused it; skipped from the start: the
        // class that opened the requested model's cooldown.
        let reason = reason
            .or_else(|| health_store::read(&requested).reason)
            .map_or("cooling_down", ErrorClass::as_str);
        host::set_header(headers, "x-llm-fallback-reason", reason);
    }
    if batch && status >= 400 {
        let wait = retry_after_ms
            .or_else(|| {
                let until = health_store::read(&requested).cooldown_until_ms;
                until.checked_sub(host::now_unix_ms())
            })
            .unwrap_or(1000);
        host::set_header(
            headers,
            "retry-after",
            &wait.div_ceil(1000).max(1).to_string(),
        );
    }
}
