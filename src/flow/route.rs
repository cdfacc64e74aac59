//! The client position's decisions: where a request goes first, what it gets when nothing can
//! serve it, and what the final answer says about how it was served.

use super::attempt::{self, RETRY_AFTER_MARKER, RETRY_MARKER};
use super::request::{StandIn, StandInKind};
use super::{Cx, Effects, Request, Safety};
use crate::classify::ErrorClass;
use crate::config::ModelConfig;
use crate::health::Admission;
use crate::plan::{self, Features, Priority};
use crate::stats::{Counter, ModelSlot};

/// What the client asked for, as far as routing is concerned.
pub struct Ask<'a> {
    /// The `model` field of the body.
    pub model: &'a str,
    pub task: Option<&'a str>,
    pub priority: Priority,
    /// The decoded request body; kept in the request's state when its chain has a fallback.
    pub body: Vec<u8>,
    pub safety: Safety,
    /// The value of the requested model's canary `sticky_header`, if the request has it.
    pub conversation: Option<&'a [u8]>,
}

/// What the client filter does with a request.
#[derive(Debug)]
pub enum Start {
    /// Route to this cluster (the first model's); keep the request's state for its attempts.
    Route {
        cluster: String,
        request: Box<Request>,
    },
    /// Answered locally (the effects hold the reply): nothing goes upstream.
    Refused,
    /// Not a configured model: pass through to the default cluster, untouched.
    Unmanaged,
}

/// Picks the first model of the request's chain that can serve now. A probe lease is taken
/// through the health store (one request probes a model whose cooldown ended).
pub fn start(cx: &Cx<'_>, id: &str, ask: Ask<'_>, out: &mut Effects) -> Start {
    let config = cx.config;
    let requested = ask.model;
    let Some(primary) = config.model(requested) else {
        return Start::Unmanaged;
    };
    let priority = ask.priority;
    let mut chain = plan::chain(config, requested, ask.task);
    if priority == Priority::Batch {
        chain.truncate(1);
    }
    let mut features: Option<Features> = None;
    let mut chosen: Option<(&ModelConfig, bool)> = None;
    let mut first_clean = None;
    let mut soonest: Option<u64> = None;
    let mut outs: Vec<plan::Out> = Vec::new();
    for (i, candidate) in chain.iter().enumerate() {
        if i > 0 && features.is_none() {
            features = Some(Features::of_body(&ask.body));
        }
        if let Err(pass) = plan::fits(config, candidate, primary, priority, features.as_ref()) {
            log::debug!("request {id}: {} passed over ({pass:?})", candidate.name);
            if pass == plan::Pass::Drained {
                outs.push(plan::Out::Drained);
            }
            continue;
        }
        let slot = cx.counters.slot(Some(&candidate.name));
        let health = cx.health.read(&candidate.name);
        match cx.admission(&health) {
            Admission::Healthy => {
                if health.is_clean() {
                    first_clean = Some(candidate.name.clone());
                }
                chosen = Some((candidate, false));
                break;
            }
            Admission::Probe => {
                let now = cx.now();
                if take_probe_lease(cx, &candidate.name) {
                    out.count(Counter::Probes(slot));
                    log::info!(
                        "request {id}: probing {} after its cooldown",
                        candidate.name
                    );
                    chosen = Some((candidate, true));
                    break;
                }
                out.count(Counter::Skipped(slot));
                // Another request is probing it: a transient reason.
                outs.push(plan::Out::Cooling {
                    reason: None,
                    until_ms: now,
                });
            }
            Admission::Cooling { until_ms } => {
                let now = cx.now();
                out.count(Counter::Skipped(slot));
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
            refuse_batch(requested, soonest, cx.now(), out);
            log::info!("request {id}: batch request refused, {requested} is cooling down");
            return Start::Refused;
        }
        None => match plan::when_exhausted(&outs, cx.now()) {
            plan::Exhausted::Answer {
                status,
                class,
                retry_after_ms,
            } => {
                answer_exhausted(cx, requested, status, class, retry_after_ms, out);
                return Start::Refused;
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
    let (mut model, mut probe) = (model, probe);
    let mut stand_in = None;
    if !probe && model.name == requested && priority != Priority::Batch {
        let canary = pick_canary(cx, &ask, primary, &mut features).map(|(index, taken, p)| {
            out.count(Counter::Canary(index, crate::stats::CanaryEvent::Routed));
            (taken, p, StandInKind::Canary)
        });
        let backup = || {
            let taken = pick_backup(cx, id, &ask, &chain, &mut features)?;
            out.count(Counter::Backups(cx.counters.slot(Some(&taken.name))));
            Some((taken, false, StandInKind::Backup))
        };
        if let Some((taken, taken_probe, kind)) = canary.or_else(backup) {
            log::debug!(
                "request {id}: {} stands in for {requested} ({kind:?})",
                taken.name
            );
            first_clean = (!taken_probe && cx.health.read(&taken.name).is_clean())
                .then(|| taken.name.clone());
            model = taken;
            probe = taken_probe;
            stand_in = Some(StandIn {
                model: taken.name.clone(),
                kind,
            });
        }
    }
    let cluster = model
        .cluster_or(&config.fallback.default_cluster)
        .to_owned();
    let mut request = Request::new(requested, &model.name, &cluster);
    request.task = ask.task.map(str::to_owned);
    request.priority = priority;
    request.probe = probe;
    request.features = features;
    request.body = (chain.len() > 1 || stand_in.is_some()).then_some(ask.body);
    request.stand_in = stand_in;
    request.first_clean = first_clean;
    request.safety = ask.safety;
    Start::Route {
        cluster,
        request: Box::new(request),
    }
}

/// Takes the probe lease of a model whose cooldown ended (a CAS write; one request wins).
fn take_probe_lease(cx: &Cx<'_>, model: &str) -> bool {
    let now = cx.now();
    let (_, won) = cx.health.update(model, &mut |h| {
        if h.admission(now) != Admission::Probe {
            return false;
        }
        h.take_probe(now);
        true
    });
    won
}

/// The canary a request goes to instead of its (healthy) requested model: the requested model
/// has one, the request's conversation falls in its share, it fits the request, and it is not
/// halted or cooling down (after its cooldown, one request probes it). Returns the canary's
/// index, its model and whether the request probes it.
fn pick_canary<'c>(
    cx: &Cx<'c>,
    ask: &Ask<'_>,
    primary: &ModelConfig,
    features: &mut Option<Features>,
) -> Option<(usize, &'c ModelConfig, bool)> {
    let config = cx.config;
    let (index, c) = config.canary_of(ask.model)?;
    let key = ask
        .conversation
        .unwrap_or_else(|| super::canary::conversation(&ask.body));
    if !super::canary::takes(c, super::canary::bucket(key)) {
        return None;
    }
    let model = config.model(&c.model)?;
    let features = features.get_or_insert_with(|| Features::of_body(&ask.body));
    plan::fits(config, model, primary, ask.priority, Some(features)).ok()?;
    match cx.admission_of(&model.name) {
        Admission::Healthy => Some((index, model, false)),
        Admission::Probe => take_probe_lease(cx, &model.name).then_some((index, model, true)),
        Admission::Cooling { .. } => None,
    }
}

/// The fallback a safe request is sent to instead of its (healthy) requested model, so that the
/// chain's fallbacks keep answering and a broken one is seen before the primary fails:
/// `fallback.backup_share` of safe, normal-priority requests (by a hash of the request id), each
/// to one of the chain's fallbacks in turn, when it fits and is healthy.
fn pick_backup<'c>(
    cx: &Cx<'c>,
    id: &str,
    ask: &Ask<'_>,
    chain: &[&'c ModelConfig],
    features: &mut Option<Features>,
) -> Option<&'c ModelConfig> {
    let share = cx.config.fallback.backup_share;
    if share <= 0.0 || ask.safety != Safety::Safe || ask.priority != Priority::Normal {
        return None;
    }
    let fallbacks = chain.get(1..).filter(|f| !f.is_empty())?;
    let hash = super::canary::hash(id.as_bytes());
    if (hash % 10_000) as f64 >= share * 10_000.0 {
        return None;
    }
    let index = usize::try_from((hash / 10_000) % fallbacks.len() as u64).unwrap_or(0);
    let model = *fallbacks.get(index)?;
    let primary = *chain.first()?;
    let features = features.get_or_insert_with(|| Features::of_body(&ask.body));
    plan::fits(cx.config, model, primary, ask.priority, Some(features)).ok()?;
    (cx.admission_of(&model.name) == Admission::Healthy).then_some(model)
}

/// A batch request whose model is cooling down: refused at once with the time to come back
/// (batch never falls back; the caller defers it).
fn refuse_batch(requested: &str, soonest: Option<u64>, now: u64, out: &mut Effects) {
    let wait_s = soonest.map_or(1, |s| s.saturating_sub(now).div_ceil(1000).max(1));
    let body = format!(
        r#"{{"error":{{"type":"model_cooling_down","message":"{requested} is cooling down; retry after {wait_s} s (batch requests never fall back)"}}}}"#
    );
    out.reply(
        503,
        vec![
            ("content-type", "application/json".into()),
            ("retry-after", wait_s.to_string()),
            ("x-llm-error-class", "overloaded".into()),
            (
                "x-llm-error-reason",
                "batch request, model cooling down".into(),
            ),
        ],
        body,
    );
}

/// Answers a request locally when every model of its chain is out for a reason a request now
/// cannot change (quota, long rate limits, missing or drained models): no upstream call.
fn answer_exhausted(
    cx: &Cx<'_>,
    requested: &str,
    status: u16,
    class: ErrorClass,
    retry_after_ms: Option<u64>,
    out: &mut Effects,
) {
    let slot = cx.counters.slot(Some(requested));
    out.count(Counter::ChainUnavailable(slot));
    let wait_s = retry_after_ms.map(|ms| ms.div_ceil(1000).max(1));
    // A wait the SDK may sit out is worth a retry; anything longer is not.
    let retry = retry_after_ms.is_some_and(|ms| ms <= cx.config.fallback.max_wait_ms);
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
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("x-llm-error-class", class.as_str().to_owned()),
        (
            "x-llm-error-reason",
            "every model of the chain is unavailable".to_owned(),
        ),
        ("x-llm-model", requested.to_owned()),
        ("x-llm-attempts", "0".to_owned()),
        (
            "x-should-retry",
            if retry { "true" } else { "false" }.to_owned(),
        ),
    ];
    if let Some(wait) = wait_s {
        headers.push(("retry-after", wait.to_string()));
    }
    out.reply(status, headers, body);
}

/// The final answer's headers: which model served, after how many attempts, and why it is not
/// the one asked for.
pub fn explain(cx: &Cx<'_>, request: &Request, status: u16, out: &mut Effects) {
    let model = request.model_shown();
    let attempts = request.tried.len();
    // A retry marker is only ever set on a failed attempt's answer, which then reached the
    // client because no other attempt followed: the client never sees it.
    if attempts > 1 || status >= 400 {
        out.remove_header(RETRY_MARKER);
        out.remove_header(RETRY_AFTER_MARKER);
    }
    out.set_header("x-llm-model", model);
    out.set_header("x-llm-attempts", attempts.to_string());
    if let Some(served) = cx.config.model(model) {
        out.set_header("x-llm-provider", cx.config.cluster_of(served));
    }
    // A stand-in (a canary, a backup) takes the requested model's place: a switch is a move
    // away from it.
    let origin = request
        .stand_in
        .as_ref()
        .map_or(request.requested.as_str(), |s| s.model.as_str());
    if let Some(stand_in) = &request.stand_in {
        out.set_header(stand_in.header(), stand_in.model.as_str());
    }
    if model != origin {
        out.set_header("x-llm-fallback-from", origin);
        // Switched inside this request: the class that caused it; skipped from the start: the
        // class that opened the requested model's cooldown.
        let reason = match request.fallback_reason {
            Some(class) => class.as_str(),
            None if request.downgraded => "downgraded",
            None => cx
                .health
                .read(&request.requested)
                .reason
                .map_or("cooling_down", ErrorClass::as_str),
        };
        out.set_header("x-llm-fallback-reason", reason);
    }
    // Served by another model than asked, or switched on the way: did the switch end well?
    let switched = model != origin || request.tried.iter().any(|m| m != origin);
    if switched {
        let slot = cx.counters.slot(Some(&request.requested));
        out.count(Counter::FallbackOutcomes(slot, status < 400));
    }
    if request.priority == Priority::Batch && status >= 400 {
        let wait = request
            .retry_after_ms
            .or_else(|| {
                let until = cx.health.read(&request.requested).cooldown_until_ms;
                until.checked_sub(cx.now())
            })
            .unwrap_or(1000);
        out.set_header("retry-after", wait.div_ceil(1000).max(1).to_string());
    }
}

/// Whether the final answer to a request that may act must tell the client not to send it
/// again: a failure that may have happened after the upstream acted (5xx, 408, 429) and that
/// the last attempt's answer does not prove was a rejection.
pub fn client_retry_blocked(safety: Safety, status: u16) -> bool {
    safety.is_unsafe()
        && (status >= 500 || status == 408 || status == 429)
        && !safety.proven_rejection()
}

/// The final answer to an unsafe request: the block headers and counter, when it applies.
pub fn block_client_retry(safety: Safety, slot: ModelSlot, status: u16, out: &mut Effects) {
    if client_retry_blocked(safety, status) {
        attempt::mark_blocked(out);
        out.count(Counter::RetriesBlocked(slot));
    }
}

/// Client retry headers dropped from unsafe requests (the route's policy stays in charge).
pub const CLIENT_RETRY_HEADERS: [&str; 4] = [
    "x-envoy-retry-on",
    "x-envoy-retry-grpc-on",
    "x-envoy-max-retries",
    "x-envoy-hedge-on-per-try-timeout",
];

/// The router's retry policy for a judged request: a safe one also retries resets and
/// per-try timeouts (`x-envoy-retry-on: reset`, added to the route's policy); an unsafe one
/// keeps only the route's policy, which retries nothing that may have reached the upstream, and
/// loses any retry headers the client sent.
pub fn retry_policy(safety: Safety, slot: ModelSlot, out: &mut Effects) {
    match safety {
        Safety::Safe => out.set_header("x-envoy-retry-on", "reset"),
        Safety::Unsafe { .. } => {
            for name in CLIENT_RETRY_HEADERS {
                out.remove_header(name);
            }
            out.count(Counter::UnsafeRequests(slot));
        }
    }
}

/// Rewrites a request's chain to its first model of a lower tier than the one it was routed to
/// (traffic shaping's `at_limit: downgrade`): the first of its chain that ranks lower, fits the
/// request and is not cooling down. Returns the new first model's cluster; `None` when the chain
/// has no such model (the caller rejects instead). Never for a `critical` request.
pub fn downgrade(cx: &Cx<'_>, request: &mut Request) -> Option<String> {
    let config = cx.config;
    if request.priority == Priority::Critical {
        return None;
    }
    let primary = config.model(&request.requested)?;
    let routed = config.model(&request.next).unwrap_or(primary);
    let floor = plan::tier_rank(config, routed);
    if request.features.is_none() {
        request.features = request.body.as_deref().map(Features::of_body);
    }
    let chain = request.chain(config);
    let model = chain.into_iter().find(|m| {
        plan::tier_rank(config, m) > floor
            && plan::fits(
                config,
                m,
                primary,
                Priority::Normal,
                request.features.as_ref(),
            )
            .is_ok()
            && cx.admission_of(&m.name) == Admission::Healthy
    })?;
    request.next = model.name.clone();
    request.first_clean = None;
    request.downgraded = true;
    request.cluster = config.cluster_of(model).to_owned();
    Some(request.cluster.clone())
}
