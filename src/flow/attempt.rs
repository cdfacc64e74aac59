//! The upstream position's decisions, once per router attempt: which model the attempt asks
//! and how the body is rewritten for it, how its answer is judged, what the model's health
//! learns, and whether Envoy retries.

use super::{header_safe, jitter, Cx, Effects, Request, Safety};
use crate::classify::{classify_with, Answer, ErrorClass, Scope, Verdict};
use crate::config::{MaxTokensPolicy, ModelConfig};
use crate::health::{Admission, Condition};
use crate::model_field;
use crate::plan::{self, Features, Next, Priority};
use crate::stats::{CanaryEvent, Counter, ModelSlot};

/// Response header the upstream filter sets to have the router retry (`retriable_headers`).
pub const RETRY_MARKER: &str = "x-llm-retry";
/// Seconds to wait before that retry (`rate_limited_retry_back_off.reset_headers`).
pub const RETRY_AFTER_MARKER: &str = "x-llm-retry-after-s";
/// Header value the blocked answers carry.
pub const BLOCKED: &str = "non-idempotent";
/// Output-limit keys of the request APIs (chat, chat's newer name, Responses).
const MAX_TOKENS_KEYS: [&str; 3] = ["max_tokens", "max_completion_tokens", "max_output_tokens"];

/// What an attempt's request headers need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The model this attempt asks.
    pub target: String,
    /// Whether the body must be read (and maybe rewritten) before the attempt goes out: another
    /// model, another upstream name, a compressed body sent plain. When false the attempt is
    /// already recorded and the body streams through unread.
    pub needs_body: bool,
    /// The attempt goes to another cluster than the last one: every provider credential header
    /// goes (request-header changes carry over between attempts; this cluster's
    /// `credential_injector` adds its own after this filter).
    pub strip_credentials: bool,
    /// The attempt's place among the request's attempts (1 for the first).
    pub number: usize,
}

/// An attempt's request headers: the model it asks, and whether its body must be held.
/// `landed` tells which cluster the attempt actually reached (`xds.cluster_name`); it is asked
/// only when the attempt was meant to reach another cluster than the last one.
pub fn plan(
    cx: &Cx<'_>,
    request: &mut Request,
    landed: &dyn Fn() -> Option<String>,
    out: &mut Effects,
) -> Plan {
    let config = cx.config;
    request.attempts += 1;
    let strip_credentials = arrive(cx, request, landed, out);
    // A retry Envoy makes before (or without) this attempt's judgement, after a reset or a
    // connect failure, goes where the route says: to this attempt's cluster, or to the next
    // provider when one more failure would open this model's circuit.
    let retry_cluster = no_answer_cluster(cx, request);
    name_cluster(config, request, retry_cluster, out);
    let target = request.next.clone();
    let upstream = config
        .model(&target)
        .map_or(target.as_str(), ModelConfig::upstream);
    // An attempt after a rewritten one sends the client's body again with its own length:
    // header changes (content-length) carry over between the router's attempts.
    let needs_body = target != request.requested
        || upstream != target
        || request.body_encoding.readable_compressed()
        || request.rewritten;
    if !needs_body {
        request.start_attempt();
    }
    Plan {
        target,
        needs_body,
        strip_credentials,
        number: request.attempts,
    }
}

/// A retry (`in_request` mode): records the cluster it reached, re-planning when that is not
/// the planned model's, and returns whether the last provider's credentials must go.
///
/// The cluster is read, not assumed: the router picks a retry's cluster from filter state at a
/// moment the filter does not see, which may come before the last attempt's judgement (then
/// the retry goes where that attempt's start predicted) or after it. Retries are rare; the
/// read costs one host call on each.
fn arrive(
    cx: &Cx<'_>,
    request: &mut Request,
    landed: &dyn Fn() -> Option<String>,
    out: &mut Effects,
) -> bool {
    let config = cx.config;
    let providers = &config.fallback.providers;
    if !providers.in_request() || request.tried.is_empty() {
        return false;
    }
    let planned = request.next_cluster(config).to_owned();
    let cluster = match landed() {
        Some(actual) if actual != planned => {
            relanded(cx, request, &planned, &actual, out);
            actual
        }
        _ => planned,
    };
    let strip = cluster != request.cluster && !providers.forwards_client_credentials();
    request.cluster = cluster;
    strip
}

/// Where the retry goes if the attempt about to start on `request.next` ends without an answer
/// (a reset, a connect failure, a per-try timeout). The router may pick the retry's cluster
/// before that ending reaches the filter (seen under load), so it is chosen now, from the
/// model's health as one more failure would leave it: another provider's cluster when that
/// failure opens the circuit and the chain's next model lives there. A first attempt on a model
/// the client just read clean needs no read (one failure opens nothing unless the threshold
/// is 1).
fn no_answer_cluster(cx: &Cx<'_>, request: &Request) -> Option<String> {
    let config = cx.config;
    if !config.fallback.providers.in_request() {
        return None;
    }
    let target = request.next.as_str();
    let current = config.model(target)?;
    let known_clean = request.tried.is_empty() && request.first_clean.as_deref() == Some(target);
    let rule = config.switch_rule(target);
    if known_clean && rule.consecutive_failures > 1 {
        return None;
    }
    let mut health = cx.health.read(target);
    let class = ErrorClass::Timeout;
    health.on_failure(class, None, cx.now(), &config.fallback, &rule, 0)?;
    let verdict = Verdict {
        class,
        retry_after_ms: None,
        reason: "no answer (predicted)".into(),
        scope: Scope::Model,
        wait_hint: crate::classify::WaitHint::Absent,
    };
    let chain = request.chain(config);
    let mut tried = request.tried.clone();
    tried.push(target.to_owned());
    let admission = |m: &ModelConfig| {
        if m.name == target {
            Admission::Cooling { until_ms: u64::MAX }
        } else {
            cx.admission_of(&m.name)
        }
    };
    let next = plan::after_failure(
        config,
        &chain,
        current,
        &tried,
        &verdict,
        true,
        request.priority,
        request.features.as_ref(),
        &admission,
    );
    match next {
        Next::Switch(to) => config.model(&to).map(|m| config.cluster_of(m).to_owned()),
        Next::Retry | Next::Stop => None,
    }
}

/// The attempt reached `actual` instead of the `planned` cluster: it asks the first model of
/// the chain served there that can take it, so that no model is sent to a provider that does
/// not serve it. Either the router picked the retry's cluster before the last attempt's
/// judgement was written (it went where the filter had named: a race, not a fault), or the
/// route ignored what was named (its name is missing from the route's matcher maps, or the
/// route does not pick clusters again on retry: counted as misrouted).
fn relanded(cx: &Cx<'_>, request: &mut Request, planned: &str, actual: &str, out: &mut Effects) {
    let config = cx.config;
    let chain = request.chain(config);
    let requested = chain.first().copied();
    let usable = |m: &&ModelConfig| {
        config.cluster_of(m) == actual
            && requested.is_none_or(|r| {
                plan::fits(config, m, r, request.priority, request.features.as_ref()).is_ok()
            })
    };
    let on_actual: Vec<&ModelConfig> = chain.iter().copied().filter(usable).collect();
    let choice = on_actual
        .iter()
        .find(|m| !matches!(cx.admission_of(&m.name), Admission::Cooling { .. }))
        .or(on_actual.first());
    let asking = choice.map_or(request.next.as_str(), |m| m.name.as_str());
    let attempt = request.attempts;
    let default = config.fallback.default_cluster.as_str();
    let named = request.named_cluster.as_deref().unwrap_or(default);
    if actual == named || request.early_pick.as_deref() == Some(actual) {
        log::info!(
            "attempt {attempt}: the router picked {actual} before the last attempt's \
             judgement planned {} on {planned}; asking {asking} there",
            request.next
        );
    } else {
        log::warn!(
            "attempt {attempt}: meant for cluster {planned} ({}) but reached {actual} (is \
             {planned} in the route's matcher maps, and refresh_cluster_on_retry set?); asking \
             {asking} instead",
            request.next
        );
        out.count(Counter::Misrouted(cx.counters.slot(Some(&request.next))));
    }
    if let Some(model) = choice {
        request.next = model.name.clone();
    }
}

/// The body an attempt sends, when it differs from what the router replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The model this attempt asks.
    pub target: String,
    /// The bytes to send instead of the original (`None`: send it as it is).
    pub body: Option<Vec<u8>>,
    /// The attempt's place among the request's attempts (1 for the first).
    pub number: usize,
}

/// An attempt's whole (decoded) body: the attempt starts on `request.next`; the `model` field
/// asks its upstream name, and a fallback with a smaller output limit gets `max_tokens` lowered
/// to it (policy `clamp`). `decoded` says the client's bytes were compressed: they go out plain
/// whether rewritten or not. `None` when the body has no readable `model`.
pub fn rewrite(cx: &Cx<'_>, request: &mut Request, body: &[u8], decoded: bool) -> Option<Rewrite> {
    let field = model_field::find_model(body).ok()?;
    let target = request.start_attempt().to_owned();
    let model = cx.config.model(&target);
    let upstream_name = model.map_or(target.as_str(), ModelConfig::upstream);
    let mut out =
        (field.value != upstream_name).then(|| model_field::rewrite(body, &field, upstream_name));
    let limit = model.and_then(|m| m.max_output_tokens);
    if let (Some(limit), MaxTokensPolicy::Clamp, true) = (
        limit,
        cx.config.fallback.max_tokens,
        target != request.requested,
    ) {
        let current = out.as_deref().unwrap_or(body);
        if let Some((key, asked, span)) = MAX_TOKENS_KEYS
            .iter()
            .find_map(|k| model_field::find_top_level_u64(current, k).map(|(v, s)| (k, v, s)))
        {
            if asked > limit {
                log::info!("{key} {asked} clamped to {limit} for {target}");
                out = Some(model_field::splice(
                    current,
                    &span,
                    limit.to_string().as_bytes(),
                ));
            }
        }
    }
    // The state keeps no body (its chain has no fallback, or it was evicted): this attempt's
    // is read anyway, so a failure can still be matched against capabilities.
    if request.features.is_none() && request.body.is_none() {
        request.features = Some(Features::of_body(body));
    }
    if (decoded || request.rewritten) && out.is_none() {
        out = Some(body.to_vec());
    }
    request.rewritten |= out.is_some();
    Some(Rewrite {
        target,
        body: out,
        number: request.attempts,
    })
}

/// Classifies an answer, counts it, and returns the headers that say what it was.
/// `code_details` is set for Envoy's own local replies (timeouts, connect failures).
pub fn judge(cx: &Cx<'_>, slot: ModelSlot, answer: &Answer<'_>, out: &mut Effects) -> Verdict {
    let verdict = classify_with(answer, cx.rules);
    settle(cx, slot, answer, verdict, out)
}

/// A whole 2xx JSON answer, read before its headers went: `None` when it is the success its
/// status says (nothing counted: the shell's success path does that), otherwise judged like an
/// error answer (`{"code": 336501, "msg": ...}` from a relay, a failed task, a refusal).
pub fn judge_success_body(
    cx: &Cx<'_>,
    slot: ModelSlot,
    answer: &Answer<'_>,
    out: &mut Effects,
) -> Option<Verdict> {
    let verdict = classify_with(answer, cx.rules);
    (verdict.class != ErrorClass::Ok).then(|| settle(cx, slot, answer, verdict, out))
}

/// A verdict's stated wait bounded, counted, logged and told in headers.
fn settle(
    cx: &Cx<'_>,
    slot: ModelSlot,
    answer: &Answer<'_>,
    mut verdict: Verdict,
    out: &mut Effects,
) -> Verdict {
    let max_wait = cx.config.fallback.max_stated_wait_ms;
    if let Some(outcome) = plan::bound_wait(&mut verdict, max_wait) {
        out.count(Counter::WaitHints(outcome));
        log::info!("stated wait {outcome:?} (at most {max_wait} ms is honoured)");
    }
    out.count(Counter::Responses(slot, verdict.class));
    log::info!(
        "{} answer {} for model {}: {} ({}){}",
        if answer.code_details.is_some() {
            "envoy"
        } else {
            "upstream"
        },
        answer.status,
        cx.counters.label(slot),
        verdict.class.as_str(),
        verdict.reason,
        verdict
            .retry_after_ms
            .map_or(String::new(), |ms| format!(", retry after {ms} ms"))
    );
    annotate(&verdict, out);
    verdict
}

/// An error event's payload inside a 200 stream, classified (not counted). An AWS exception's
/// name (`throttlingException`) is read as its non-stream answers carry it, the
/// `x-amzn-errortype` header.
pub fn stream_verdict(cx: &Cx<'_>, payload: &[u8], exception: Option<&str>) -> Verdict {
    let named;
    let headers: &[(&str, &str)] = match exception {
        Some(name) => {
            named = [("x-amzn-errortype", name)];
            &named
        }
        None => &[],
    };
    let answer = Answer {
        status: 200,
        headers,
        body: payload,
        code_details: None,
        now_unix_ms: cx.now(),
    };
    let mut verdict = classify_with(&answer, cx.rules);
    plan::bound_wait(&mut verdict, cx.config.fallback.max_stated_wait_ms);
    verdict
}

/// The headers that say what an answer was; never the body.
pub fn annotate(verdict: &Verdict, out: &mut Effects) {
    out.set_header("x-llm-error-class", verdict.class.as_str());
    out.set_header("x-llm-error-reason", header_safe(&verdict.reason));
    if let Some(ms) = verdict.retry_after_ms {
        out.set_header("x-llm-retry-after-ms", ms.to_string());
    }
    if verdict.class != ErrorClass::Ok && !verdict.class.same_model_retry_helps() {
        // The OpenAI and Anthropic SDKs obey this before their own status-based rules.
        out.set_header("x-should-retry", "false");
    }
}

/// Records an answer in the model's error-rate window; true when the rate crossed the threshold.
fn error_rate_crossed(cx: &Cx<'_>, model: &str, is_error: bool) -> bool {
    let Some(index) = cx.config.models.iter().position(|m| m.name == model) else {
        return false;
    };
    let Ok(mut windows) = cx.windows.try_borrow_mut() else {
        return false;
    };
    let rule = cx.config.switch_rule(model);
    windows
        .get_mut(index)
        .is_some_and(|w| w.record(cx.clock.coarse_ms(), is_error, &rule))
}

/// The canary entry `model` plays a part in: its index, itself, and whether `model` is the
/// canary (else its base).
fn canary_part<'c>(
    config: &'c crate::config::Config,
    model: &str,
) -> Option<(usize, &'c crate::config::canary::CanaryConfig, bool)> {
    match (config.canary_entry(model), config.canary_of(model)) {
        (Some((i, c)), _) => Some((i, c, true)),
        (None, Some((i, c))) => Some((i, c, false)),
        (None, None) => None,
    }
}

/// Tallies an answer of a canary or of a canary's base model; halts the canary (opens its
/// circuit for the halt's cooldown) when it answers worse than its base by the margin.
fn canary_answer(cx: &Cx<'_>, model: &str, is_error: bool, out: &mut Effects) {
    canary_tally(cx, model, out, |w, halt, now, of_canary| {
        w.record(halt, now, of_canary, is_error)
    });
}

/// Whether answers of `model` are timed for a canary's latency comparison.
pub fn canary_times(config: &crate::config::Config, model: &str) -> bool {
    canary_part(config, model).is_some_and(|(_, c, _)| c.halt.latency_margin.is_some())
}

/// Counts a success's answer time of a canary or of its base; halts the canary when its P95 is
/// worse than the base's by the latency margin.
pub fn canary_time(cx: &Cx<'_>, model: &str, time_ms: u64, out: &mut Effects) {
    canary_tally(cx, model, out, |w, halt, now, of_canary| {
        w.record_time(halt, now, of_canary, time_ms)
    });
}

/// Counts something of `model` in its canary's window (`count`: the window, the halt rule, the
/// coarse time, whether `model` is the canary) and halts the canary when that says so.
fn canary_tally(
    cx: &Cx<'_>,
    model: &str,
    out: &mut Effects,
    count: impl FnOnce(
        &mut crate::flow::canary::CanaryWindow,
        &crate::config::canary::HaltConfig,
        u64,
        bool,
    ) -> Option<crate::flow::canary::Halt>,
) {
    let Some((index, canary, of_canary)) = canary_part(cx.config, model) else {
        return;
    };
    let halt = {
        let Ok(mut windows) = cx.canaries.try_borrow_mut() else {
            return;
        };
        let Some(window) = windows.get_mut(index) else {
            return;
        };
        count(window, &canary.halt, cx.clock.coarse_ms(), of_canary)
    };
    if let Some(halt) = halt {
        halt_canary(cx, index, canary, halt, out);
    }
}

fn halt_canary(
    cx: &Cx<'_>,
    index: usize,
    canary: &crate::config::canary::CanaryConfig,
    halt: crate::flow::canary::Halt,
    out: &mut Effects,
) {
    let until = cx.now().saturating_add(canary.halt.cooldown_ms);
    cx.health.update(&canary.model, &mut |h| {
        h.hold_out(until, ErrorClass::Overloaded);
        true
    });
    out.count(Counter::Canary(index, CanaryEvent::Halted));
    let why = match halt {
        crate::flow::canary::Halt::ErrorRate {
            canary_rate,
            base_rate,
        } => format!(
            "error rate {:.1} % against {:.1} %",
            canary_rate * 100.0,
            base_rate * 100.0
        ),
        crate::flow::canary::Halt::Latency {
            canary_p95_ms,
            base_p95_ms,
        } => format!("P95 answer time {canary_p95_ms} ms against {base_p95_ms} ms"),
    };
    log::warn!(
        "canary {} halted for {} ms: {why} on {}",
        canary.model,
        canary.halt.cooldown_ms,
        canary.of
    );
}

/// What a success's answer time says of its model under its latency condition: `Some(ms)` (the
/// P95, or the probe's own time) when its circuit must open, because the P95 has been above the
/// threshold for its time, or because this answer probed the half-open circuit and is still
/// slower than the release bound (hysteresis: a model still slow stays out).
pub fn latency_reading(
    rule: &crate::config::switch::LatencyRule,
    kind: crate::flow::latency::Kind,
    record: &mut crate::flow::latency::LatencyRecord,
    now_ms: u64,
    time_ms: u64,
    probe: bool,
) -> Option<u64> {
    match record.record_kind(rule, kind, now_ms, time_ms) {
        crate::flow::latency::Reading::Slow { p95_ms } => Some(p95_ms),
        crate::flow::latency::Reading::Quiet => {
            (probe && time_ms > rule.release_ms()).then_some(time_ms)
        }
    }
}

/// Opens `model`'s circuit for its answer time (a cooldown like an error-rate open, the reason
/// `timeout`); `what` says which time was over which bound.
pub fn open_for_latency(cx: &Cx<'_>, seed: &str, model: &str, what: &str, out: &mut Effects) {
    let now = cx.now();
    let jitter = jitter(seed, now);
    let (h, _) = cx.health.update(model, &mut |h| {
        h.open_for_error_rate(now, &cx.config.fallback, jitter);
        h.reason = Some(ErrorClass::Timeout);
        true
    });
    let slot = cx.counters.slot(Some(model));
    out.count(Counter::CooldownsOpened(slot, ErrorClass::Timeout));
    out.count(Counter::SwitchConditions(slot, Condition::Latency));
    log::warn!(
        "{model}: {what}: cooling down for {} ms (switch condition: latency)",
        h.cooldown_until_ms.saturating_sub(now)
    );
}

/// Opens `model`'s circuit for its error rate; returns the new deadline.
fn open_for_error_rate(cx: &Cx<'_>, seed: &str, model: &str) -> u64 {
    let now = cx.now();
    let jitter = jitter(seed, now);
    let (h, _) = cx.health.update(model, &mut |h| {
        h.open_for_error_rate(now, &cx.config.fallback, jitter);
        true
    });
    let rule = cx.config.switch_rule(model);
    log::warn!(
        "{model}: error rate above {} over {} ms: circuit opened",
        rule.error_rate,
        rule.window_ms
    );
    h.cooldown_until_ms
}

/// A 2xx answer from `model`: its health is told (closing a circuit it had open).
pub fn succeeded(
    cx: &Cx<'_>,
    request: Option<&mut Request>,
    seed: &str,
    model: &str,
    out: &mut Effects,
) {
    if !cx.config.fallback.canaries.is_empty() {
        canary_answer(cx, model, false, out);
    }
    if error_rate_crossed(cx, model, false) {
        // The window filled up with errors still above the threshold.
        open_for_error_rate(cx, seed, model);
        let slot = cx.counters.slot(Some(model));
        out.count(Counter::CooldownsOpened(slot, ErrorClass::Overloaded));
        out.count(Counter::SwitchConditions(slot, Condition::ErrorRate));
        return;
    }
    let (probe, known_clean) = match request {
        Some(r) => {
            r.served = Some(model.to_owned());
            r.safety.forget_proof();
            let known_clean = r.first_clean.as_deref() == Some(model);
            (std::mem::take(&mut r.probe), known_clean)
        }
        None => (false, false),
    };
    // The client read this model's health a moment ago and it was clean: a success changes
    // nothing, so the shared record is not read again.
    if known_clean || cx.health.read(model).is_clean() {
        return;
    }
    let (_, wrote) = cx.health.update(model, &mut |h| {
        if h.is_clean() {
            return false;
        }
        h.on_success();
        true
    });
    if wrote {
        if probe {
            out.count(Counter::SwitchBacks(cx.counters.slot(Some(model))));
        }
        log::info!("{model} answered again: circuit closed, traffic switches back to it");
    }
}

/// Records a failure of `model` in its health (and, for an account-wide quota stop, in the
/// health of every model of the account) and in its error-rate window. Returns the new
/// cooldown deadline when this failure opened or extended the model's circuit.
pub fn record_failure(
    cx: &Cx<'_>,
    seed: &str,
    model: &ModelConfig,
    verdict: &Verdict,
    out: &mut Effects,
) -> Option<u64> {
    let config = cx.config;
    let now = cx.now();
    let jitter = jitter(seed, now);
    let fail = |name: &str| {
        let mut opened = None;
        let rule = config.switch_rule(name);
        cx.health.update(name, &mut |h| {
            let before = *h;
            opened = h
                .on_failure(
                    verdict.class,
                    verdict.retry_after_ms,
                    now,
                    &config.fallback,
                    &rule,
                    jitter,
                )
                .map(|until| (until, Condition::of_failure(&before, verdict.class, now)));
            *h != before
        });
        opened
    };
    let mut opened = fail(&model.name);
    if !config.fallback.canaries.is_empty() {
        let is_error = matches!(verdict.class, ErrorClass::Overloaded | ErrorClass::Timeout);
        canary_answer(cx, &model.name, is_error, out);
    }
    let is_error = config
        .switch_rule(&model.name)
        .rate_classes
        .counts(verdict.class);
    if is_error && error_rate_crossed(cx, &model.name, true) && opened.is_none() {
        opened = Some((
            open_for_error_rate(cx, seed, &model.name),
            Condition::ErrorRate,
        ));
    }
    if let Some((until, condition)) = opened {
        let slot = cx.counters.slot(Some(&model.name));
        out.count(Counter::CooldownsOpened(slot, verdict.class));
        out.count(Counter::SwitchConditions(slot, condition));
        log::warn!(
            "{} cooling down for {} ms after {} (switch condition: {})",
            model.name,
            until.saturating_sub(now),
            verdict.class.as_str(),
            condition.as_str()
        );
    }
    if verdict.class == ErrorClass::QuotaExhausted && verdict.scope == Scope::Account {
        let account = config.account_of(model);
        let mut cooled = Vec::new();
        for other in config
            .models_of_account(account)
            .filter(|m| m.name != model.name)
        {
            if let Some((until, condition)) = fail(&other.name) {
                let other_slot = cx.counters.slot(Some(&other.name));
                out.count(Counter::CooldownsOpened(other_slot, verdict.class));
                out.count(Counter::SwitchConditions(other_slot, condition));
                cooled.push(format!("{} ({} ms)", other.name, until.saturating_sub(now)));
            }
        }
        if let Some(account_slot) = cx.counters.account_slot(account) {
            out.count(Counter::AccountQuotaStops(account_slot));
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
    opened.map(|(until, _)| until)
}

/// Whether a failed answer proves the request was rejected before any processing, so that a
/// request that may act can be sent again: an explicit 429/529 rejection of a known kind with
/// a provider error body (not judged from the status alone).
pub fn proven_rejection(status: u16, verdict: &Verdict) -> bool {
    matches!(status, 429 | 529)
        && matches!(
            verdict.class,
            ErrorClass::RateLimited | ErrorClass::Overloaded | ErrorClass::QuotaExhausted
        )
        && !verdict.reason.starts_with("status=")
}

/// Tells the client (and its SDK) not to send the request again: it may have acted.
pub fn mark_blocked(out: &mut Effects) {
    out.set_header("x-should-retry", "false");
    out.set_header("x-llm-retry-blocked", BLOCKED);
}

/// Whether the failed attempt has an answer whose headers can still be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// An answer (status and maybe body): its headers carry the retry marker and explanation.
    Answer,
    /// No answer (a per-try timeout, a reset, a connect failure), seen only when the attempt
    /// ended: only the state for the next attempt is written.
    Nothing,
}

/// What a failed attempt leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum After {
    /// The request may act and nothing proves it was not processed: not re-sent.
    Blocked,
    /// Ask again: `Next::Retry` (same model) or `Next::Switch` (another), or `Next::Stop`.
    Next(Next),
    /// Nothing more in this request; a model on another cluster could serve the client's
    /// next request (told by `x-should-retry: true` and `x-llm-fallback-next`).
    Elsewhere(String),
    /// Judged after a later attempt had started (Envoy retried before this attempt's ending
    /// reached the filter): the model's health learns it, the request's plan stands.
    Stale,
}

/// One attempt of a request, as its upstream filter knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tried<'a> {
    /// The model it asked.
    pub model: &'a str,
    /// Its place among the request's attempts (1 for the first).
    pub number: usize,
}

/// Names `cluster` for the router's next attempt, unless the route finds it anyway: it is
/// named already, or nothing is named yet and it is the default cluster (where the route's
/// matcher falls through once the routing header is gone). A route with
/// `refresh_cluster_on_retry` reads the value before each retry; a `cluster_header` route
/// ignores it.
fn name_cluster(
    config: &crate::config::Config,
    request: &mut Request,
    cluster: Option<String>,
    out: &mut Effects,
) {
    // `None`: the latest attempt's cluster (copied only when it must be written).
    let wanted = cluster.as_deref().unwrap_or(&request.cluster);
    let found = match request.named_cluster.as_deref() {
        Some(named) => named == wanted,
        None => wanted == config.fallback.default_cluster,
    };
    if !found {
        let wanted = cluster.unwrap_or_else(|| request.cluster.clone());
        let replacing = request.named_cluster.replace(wanted.clone());
        out.route_next(wanted, replacing);
    }
}

/// The host could not write the name of the next attempt's cluster (Envoy's dynamic-module
/// ABI has no stream info left once an attempt has ended): the route still holds `kept`, the
/// name the failed one was replacing. A retry that lands there went where the route said: the
/// request is moved to a model served there, and it is not counted as misrouted.
pub fn not_named(request: &mut Request, kept: Option<String>) {
    request.named_cluster = kept;
}

/// Names the cluster of `request.next` (the model the router's retry asks).
fn name_next_cluster(config: &crate::config::Config, request: &mut Request, out: &mut Effects) {
    let cluster = request.next_cluster(config).to_owned();
    name_cluster(config, request, Some(cluster), out);
}

/// After a failed answer to `attempt`: updates its model's health and decides the next
/// attempt; header effects only when `seen` is an answer.
#[allow(clippy::too_many_arguments)]
pub fn after_failure(
    cx: &Cx<'_>,
    request: &mut Request,
    seed: &str,
    attempt: Tried<'_>,
    status: u16,
    verdict: &Verdict,
    seen: Seen,
    out: &mut Effects,
) -> After {
    let config = cx.config;
    let model = attempt.model;
    let Some(current) = config.model(model) else {
        return After::Next(Next::Stop);
    };
    let now = cx.now();
    let opened = record_failure(cx, seed, current, verdict, out);
    if attempt.number != request.attempts {
        log::info!(
            "attempt {}: {model} {} ({}), judged after attempt {} had started: its health \
             learns it, the request's plan stands",
            attempt.number,
            verdict.class.as_str(),
            header_safe(&verdict.reason),
            request.attempts
        );
        return After::Stale;
    }
    let slot = cx.counters.slot(Some(model));
    let proven = proven_rejection(status, verdict);
    if let Safety::Unsafe { proven_rejection } = &mut request.safety {
        *proven_rejection = proven;
        if !proven {
            // Counted once, by the client filter, on the final answer.
            if seen == Seen::Answer {
                mark_blocked(out);
            }
            log::info!(
                "{model} answered {} to a request that may act: not re-sent",
                verdict.class.as_str()
            );
            return After::Blocked;
        }
    }
    if request.features.is_none() {
        request.features = request.body.as_deref().map(Features::of_body);
    }
    // A judgement without an answer may come after the router has picked the retry's
    // cluster: the one named until now.
    request.early_pick = (seen == Seen::Nothing).then(|| {
        let named = request.named_cluster.as_deref();
        named.unwrap_or(&config.fallback.default_cluster).to_owned()
    });
    let all = request.chain(config);
    let in_request = config.fallback.providers.in_request();
    // In `next_request` mode attempts stay on the cluster the request was routed to; in
    // `in_request` mode the whole chain is open, whatever cluster serves each model.
    let here: Vec<&ModelConfig> = all
        .iter()
        .copied()
        .filter(|m| in_request || config.cluster_of(m) == request.cluster)
        .collect();
    let admission = |m: &ModelConfig| cx.admission_of(&m.name);
    let decide = |chain: &[&ModelConfig]| {
        plan::after_failure(
            config,
            chain,
            current,
            &request.tried,
            verdict,
            opened.is_some(),
            request.priority,
            request.features.as_ref(),
            &admission,
        )
    };
    let next = decide(&here);
    // A fallback on another cluster cannot be asked inside this request (Envoy retries stay on
    // the routed cluster); the client's next request will be routed to it. Only when this model
    // is now cooling down: otherwise that request would come back here.
    let elsewhere = match next {
        Next::Stop if !in_request && matches!(admission(current), Admission::Cooling { .. }) => {
            match decide(&all) {
                Next::Switch(to) => Some(to),
                _ => None,
            }
        }
        _ => None,
    };
    match &next {
        Next::Retry => request.next = model.to_owned(),
        Next::Switch(to) => {
            request.next = to.clone();
            request.fallback_reason.get_or_insert(verdict.class);
        }
        Next::Stop => {
            if request.priority == Priority::Batch {
                request.retry_after_ms = verdict
                    .retry_after_ms
                    .or_else(|| opened.map(|until| until.saturating_sub(now)));
            }
        }
    }
    if next != Next::Stop {
        name_next_cluster(config, request, out);
    }
    let attempt = attempt.number;
    if seen == Seen::Nothing {
        log::info!(
            "attempt {attempt}: {model} gave no answer ({}); next attempt, if any: {next:?}",
            verdict.reason
        );
        return After::Next(next);
    }
    match (&next, elsewhere) {
        (Next::Stop, Some(to)) => {
            out.set_header("x-should-retry", "true");
            out.set_header("x-llm-fallback-next", to.as_str());
            log::info!(
                "attempt {attempt}: {model} answered {}; {to} serves on another cluster, \
                 the client's retry will be routed there",
                verdict.class.as_str()
            );
            return After::Elsewhere(to);
        }
        (Next::Stop, None) => log::info!(
            "attempt {attempt}: {model} answered {} ({}); no other attempt can help",
            verdict.class.as_str(),
            header_safe(&verdict.reason)
        ),
        (Next::Retry, _) => {
            out.set_header(RETRY_MARKER, "true");
            if let Some(wait) = verdict.retry_after_ms {
                out.set_header(RETRY_AFTER_MARKER, wait.div_ceil(1000).to_string());
            }
            log::info!(
                "attempt {attempt}: {model} answered {}; retrying it{}",
                verdict.class.as_str(),
                verdict
                    .retry_after_ms
                    .map_or(String::new(), |w| format!(" after {w} ms"))
            );
        }
        (Next::Switch(to), _) => {
            out.set_header(RETRY_MARKER, "true");
            out.count(Counter::Fallbacks {
                from: slot,
                to: cx.counters.slot(Some(to)),
                class: verdict.class,
            });
            log::info!(
                "attempt {attempt}: {model} answered {}; falling back to {to}",
                verdict.class.as_str()
            );
        }
    }
    After::Next(next)
}
