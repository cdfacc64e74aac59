//! The request flow, driven natively: events in (what a callback saw), effects and state out.

use super::attempt::{self, After, Seen, BLOCKED, RETRY_AFTER_MARKER, RETRY_MARKER};
use super::route::{self, Ask, Start};
use super::*;
use crate::classify::{Answer, ErrorClass, Verdict};
use crate::health::{Admission, ErrorWindow};
use crate::plan::{Next, Priority};
use crate::stats::Counter;
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

const QUOTA: &str = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
const RATE: &str = r#"{"error":{"message":"Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500. Please try again in 120ms.","type":"requests","code":"rate_limit_exceeded"}}"#;
const T0: u64 = 1_700_000_000_000;

/// A configuration, its counters and an in-memory health store, at a settable time.
struct Bed {
    config: Config,
    rules: Rules,
    counters: CounterSet,
    health: MemoryHealth,
    windows: RefCell<Vec<ErrorWindow>>,
    canaries: RefCell<Vec<crate::flow::canary::CanaryWindow>>,
    clock: FixedClock,
}

impl Bed {
    fn new(extra: serde_json::Value) -> Self {
        let mut value = json!({
            "models": [
                {"name": "gpt-4o", "tier": "flagship", "cluster": "a", "context_window": 128000},
                {"name": "gpt-4o-mini", "tier": "general", "cluster": "a", "max_output_tokens": 2048},
                {"name": "claude", "tier": "flagship", "cluster": "b", "upstream_name": "claude-sonnet-4-5"}
            ],
            "fallback": {"default_cluster": "a", "chains": {"gpt-4o": ["gpt-4o-mini", "claude"]},
                         "failure_threshold": 2, "base_cooldown_ms": 10000}
        });
        if let (Some(base), serde_json::Value::Object(more)) = (value.as_object_mut(), extra) {
            for (k, v) in more {
                base.insert(k, v);
            }
        }
        let config = Config::from_value(value).unwrap();
        Self {
            rules: config.classifier.rules(),
            counters: CounterSet::new(&config),
            windows: RefCell::new(vec![ErrorWindow::default(); config.models.len()]),
            canaries: RefCell::new(vec![Default::default(); config.fallback.canaries.len()]),
            health: MemoryHealth::default(),
            config,
            clock: FixedClock(T0),
        }
    }

    fn cx(&self) -> Cx<'_> {
        Cx {
            config: &self.config,
            rules: &self.rules,
            counters: &self.counters,
            health: &self.health,
            windows: &self.windows,
            canaries: &self.canaries,
            clock: &self.clock,
        }
    }

    fn slot(&self, model: &str) -> crate::stats::ModelSlot {
        self.counters.slot(Some(model))
    }

    /// The client filter routes a chat request for `model`.
    fn route(&self, model: &str, safety: Safety, priority: Priority) -> (Start, Effects) {
        self.route_as("r1", model, safety, priority)
    }

    /// [`Self::route`] for the request minted `id`.
    fn route_as(
        &self,
        id: &str,
        model: &str,
        safety: Safety,
        priority: Priority,
    ) -> (Start, Effects) {
        let mut out = Effects::default();
        let body = chat(model, None);
        let ask = Ask {
            model,
            task: None,
            priority,
            body,
            safety,
            conversation: None,
        };
        let start = route::start(&self.cx(), id, ask, &mut out);
        (start, out)
    }

    fn routed(&self, model: &str, safety: Safety) -> Request {
        match self.route(model, safety, Priority::Normal).0 {
            Start::Route { request, .. } => *request,
            other => panic!("not routed: {other:?}"),
        }
    }

    /// An upstream answer, judged as the upstream filter judges it.
    fn judge(&self, model: &str, status: u16, body: &str) -> (Verdict, Effects) {
        let mut out = Effects::default();
        let answer = Answer {
            status,
            headers: &[("content-type", "application/json")],
            body: body.as_bytes(),
            code_details: None,
            now_unix_ms: self.clock.0,
        };
        let verdict = attempt::judge(&self.cx(), self.slot(model), &answer, &mut out);
        (verdict, out)
    }

    /// An attempt on `model` that ended without an answer (`ending`), as the upstream filter
    /// judges it when the attempt is done.
    fn ended(
        &self,
        request: &mut Request,
        model: &str,
        ending: crate::attempt::Ending,
    ) -> (After, Effects) {
        let number = request.attempts;
        self.ended_late(request, model, number, ending)
    }

    /// The same, judged as attempt `number` (a later one may have started meanwhile).
    fn ended_late(
        &self,
        request: &mut Request,
        model: &str,
        number: usize,
        ending: crate::attempt::Ending,
    ) -> (After, Effects) {
        let verdict = ending.verdict().unwrap();
        let mut out = Effects::default();
        let after = attempt::after_failure(
            &self.cx(),
            request,
            "r1",
            attempt::Tried { model, number },
            0,
            &verdict,
            Seen::Nothing,
            &mut out,
        );
        (after, out)
    }

    /// The judgement of an answer to an attempt already planned, and what follows.
    fn judge_after(
        &self,
        request: &mut Request,
        model: &str,
        status: u16,
        body: &str,
    ) -> (After, Effects) {
        let (verdict, mut out) = self.judge(model, status, body);
        let number = request.attempts;
        let after = attempt::after_failure(
            &self.cx(),
            request,
            "r1",
            attempt::Tried { model, number },
            status,
            &verdict,
            Seen::Answer,
            &mut out,
        );
        (after, out)
    }

    /// An attempt's plan, on a route that sends each attempt where the filter named.
    fn plan(&self, request: &mut Request) -> attempt::Plan {
        attempt::plan(&self.cx(), request, &|| None, &mut Effects::default())
    }

    /// One attempt of `request` that got `status` / `body`: the plan, the judgement and what
    /// follows, as the upstream filter runs them.
    fn attempt(&self, request: &mut Request, status: u16, body: &str) -> (After, Effects) {
        let plan = self.plan(request);
        if plan.needs_body {
            attempt::rewrite(&self.cx(), request, &chat(&request.requested, None), false);
        }
        let model = plan.target;
        let (verdict, mut out) = self.judge(&model, status, body);
        let number = request.attempts;
        let after = attempt::after_failure(
            &self.cx(),
            request,
            "r1",
            attempt::Tried {
                model: &model,
                number,
            },
            status,
            &verdict,
            Seen::Answer,
            &mut out,
        );
        (after, out)
    }
}

fn chat(model: &str, max_tokens: Option<u64>) -> Vec<u8> {
    let mut body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    if let Some(n) = max_tokens {
        body["max_tokens"] = json!(n);
    }
    serde_json::to_vec(&body).unwrap()
}

const UNSAFE: Safety = Safety::Unsafe {
    proven_rejection: false,
};

// ---- routing -------------------------------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn a_healthy_request_goes_to_its_models_cluster_and_keeps_its_body_for_fallbacks() {
    let bed = Bed::new(json!({}));
    let (start, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    let Start::Route { cluster, request } = start else {
        panic!("not routed")
    };
    assert_eq!(cluster, "a");
    assert_eq!(request.next, "gpt-4o");
    assert_eq!(request.first_clean.as_deref(), Some("gpt-4o"));
    assert!(request.body.is_some(), "the chain has fallbacks");
    assert!(
        out.is_empty(),
        "nothing to say on the healthy path: {out:?}"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn an_unknown_model_passes_through_untouched() {
    let bed = Bed::new(json!({}));
    let (start, out) = bed.route("some-other-model", Safety::Safe, Priority::Normal);
    assert!(matches!(start, Start::Unmanaged));
    assert!(out.is_empty());
}

#[wasm_bindgen_test(unsupported = test)]
fn a_cooling_model_costs_no_attempt_the_request_starts_with_its_fallback() {
    let bed = Bed::new(json!({}));
    bed.health.update("gpt-4o", &mut |h| {
        h.cooldown_until_ms = T0 + 5_000;
        h.reason = Some(ErrorClass::Overloaded);
        true
    });
    let request = bed.routed("gpt-4o", Safety::Safe);
    assert_eq!(request.next, "gpt-4o-mini");
    let (_, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    assert_eq!(out.counted(Counter::Skipped(bed.slot("gpt-4o"))), 1);
    // The final answer says why another model served.
    let mut served = request;
    served.start_attempt();
    let mut out = Effects::default();
    route::explain(&bed.cx(), &served, 200, &mut out);
    assert_eq!(out.header("x-llm-model"), Some("gpt-4o-mini"));
    assert_eq!(out.header("x-llm-fallback-from"), Some("gpt-4o"));
    assert_eq!(out.header("x-llm-fallback-reason"), Some("overloaded"));
    assert_eq!(out.header("x-llm-attempts"), Some("1"));
    // A switch that ended in a success (the fallback success rate's numerator).
    let asked = bed.slot("gpt-4o");
    assert_eq!(out.counted(Counter::FallbackOutcomes(asked, true)), 1);
    let mut out = Effects::default();
    route::explain(&bed.cx(), &served, 503, &mut out);
    assert_eq!(out.counted(Counter::FallbackOutcomes(asked, false)), 1);
    // Served by the model asked, first time: no switch to count.
    let mut direct = bed.routed("gpt-4o-mini", Safety::Safe);
    direct.start_attempt();
    let mut out = Effects::default();
    route::explain(&bed.cx(), &direct, 200, &mut out);
    let mini = bed.slot("gpt-4o-mini");
    assert_eq!(out.counted(Counter::FallbackOutcomes(mini, true)), 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn one_request_probes_a_model_whose_cooldown_ended_the_next_one_passes_it_over() {
    let bed = Bed::new(json!({}));
    bed.health.update("gpt-4o", &mut |h| {
        h.cooldown_until_ms = T0 - 1;
        h.reason = Some(ErrorClass::Overloaded);
        true
    });
    let (first, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    let Start::Route { request, .. } = first else {
        panic!()
    };
    assert!(request.probe && request.next == "gpt-4o");
    assert_eq!(out.counted(Counter::Probes(bed.slot("gpt-4o"))), 1);
    // Lost the probe race: the lease is held, so the next request goes elsewhere.
    let second = bed.routed("gpt-4o", Safety::Safe);
    assert!(!second.probe);
    assert_eq!(second.next, "gpt-4o-mini");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_chain_out_of_quota_is_answered_locally_with_when_to_come_back() {
    let bed = Bed::new(json!({}));
    for (model, wait) in [
        ("gpt-4o", 60_000),
        ("gpt-4o-mini", 20_000),
        ("claude", 90_000),
    ] {
        bed.health.update(model, &mut |h| {
            h.cooldown_until_ms = T0 + wait;
            h.reason = Some(ErrorClass::QuotaExhausted);
            true
        });
    }
    let (start, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    assert!(matches!(start, Start::Refused));
    let (status, _, body) = out.local_reply().unwrap();
    assert_eq!(status, 429);
    let header = |n: &str| out.reply_header(n);
    assert_eq!(header("retry-after"), Some("20"));
    assert_eq!(
        header("x-should-retry"),
        Some("true"),
        "20 s is within max_wait_ms"
    );
    assert_eq!(header("x-llm-attempts"), Some("0"));
    assert!(body.contains("all_models_unavailable"));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_batch_request_never_falls_back_it_is_refused_with_a_retry_after() {
    let bed = Bed::new(json!({}));
    bed.health.update("gpt-4o", &mut |h| {
        h.cooldown_until_ms = T0 + 7_500;
        true
    });
    let (start, out) = bed.route("gpt-4o", Safety::Safe, Priority::Batch);
    assert!(matches!(start, Start::Refused));
    let (status, headers, _) = out.local_reply().unwrap();
    assert_eq!(status, 503);
    assert!(headers.contains(&("retry-after", "8".to_owned())));
}

// ---- attempts ------------------------------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn the_first_attempt_of_a_healthy_request_reads_no_body() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let plan = bed.plan(&mut request);
    assert_eq!(plan.target, "gpt-4o");
    assert!(!plan.needs_body);
    assert_eq!(request.tried, ["gpt-4o"], "recorded at its headers");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_fallback_attempt_rewrites_the_model_to_its_upstream_name() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    request.next = "claude".into();
    let plan = bed.plan(&mut request);
    assert!(plan.needs_body && request.tried.is_empty());
    let rewrite = attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", None), false).unwrap();
    assert_eq!(rewrite.target, "claude");
    let body: serde_json::Value = serde_json::from_slice(&rewrite.body.unwrap()).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(request.tried, ["claude"]);
}

#[wasm_bindgen_test(unsupported = test)]
fn max_tokens_is_clamped_for_a_fallback_with_a_smaller_limit_and_only_then() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    request.next = "gpt-4o-mini".into();
    let rewrite =
        attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", Some(8000)), false).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&rewrite.body.unwrap()).unwrap();
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("gpt-4o-mini"), Some(2048))
    );
    // Within the limit: only the model changes.
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    request.next = "gpt-4o-mini".into();
    let rewrite =
        attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", Some(100)), false).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&rewrite.body.unwrap()).unwrap();
    assert_eq!(body["max_tokens"], 100);
    // The requested model itself is never clamped (the client asked it for that many).
    let bed = Bed::new(
        json!({"models": [{"name": "gpt-4o-mini", "max_output_tokens": 2048}],
                              "fallback": {}}),
    );
    let mut request = bed.routed("gpt-4o-mini", Safety::Safe);
    let rewrite = attempt::rewrite(
        &bed.cx(),
        &mut request,
        &chat("gpt-4o-mini", Some(8000)),
        false,
    );
    assert_eq!(rewrite.unwrap().body, None);
    // Policy `skip`: a fallback whose limit is too small is not chosen, the body is left alone.
    let bed = Bed::new(
        json!({"fallback": {"max_tokens": "skip", "chains": {"gpt-4o": ["gpt-4o-mini"]}}}),
    );
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    request.next = "gpt-4o-mini".into();
    let rewrite =
        attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", Some(8000)), false).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&rewrite.body.unwrap()).unwrap();
    assert_eq!(body["max_tokens"], 8000);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_compressed_body_goes_out_plain_even_when_nothing_is_rewritten() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let body = chat("gpt-4o", None);
    let rewrite = attempt::rewrite(&bed.cx(), &mut request, &body, true).unwrap();
    assert_eq!(rewrite.body.as_deref(), Some(body.as_slice()));
}

#[wasm_bindgen_test(unsupported = test)]
fn quota_exhausted_switches_within_the_cluster_and_cools_the_model() {
    // Two accounts on one cluster: the first account's quota stop leaves the second's model.
    let bed = Bed::new(json!({"models": [
        {"name": "gpt-4o", "tier": "flagship", "cluster": "a", "account": "team-1"},
        {"name": "gpt-4o-mini", "tier": "general", "cluster": "a", "account": "team-2"},
        {"name": "claude", "tier": "flagship", "cluster": "b"}
    ]}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (after, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(after, After::Next(Next::Switch("gpt-4o-mini".into())));
    assert_eq!(out.header(RETRY_MARKER), Some("true"));
    assert_eq!(out.header("x-llm-error-class"), Some("quota_exhausted"));
    assert_eq!(
        out.header("x-should-retry"),
        Some("false"),
        "the same model will not help"
    );
    assert_eq!(request.next, "gpt-4o-mini");
    assert_eq!(request.fallback_reason, Some(ErrorClass::QuotaExhausted));
    assert!(matches!(
        bed.health.read("gpt-4o").admission(T0),
        Admission::Cooling { .. }
    ));
    let fell = Counter::Fallbacks {
        from: bed.slot("gpt-4o"),
        to: bed.slot("gpt-4o-mini"),
        class: ErrorClass::QuotaExhausted,
    };
    assert_eq!(out.counted(fell), 1);
    // The second attempt succeeds: the final answer says so.
    let plan = bed.plan(&mut request);
    attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", None), false);
    let mut out = Effects::default();
    attempt::succeeded(&bed.cx(), Some(&mut request), "r1", &plan.target, &mut out);
    let mut out = Effects::default();
    route::explain(&bed.cx(), &request, 200, &mut out);
    assert_eq!(out.header("x-llm-model"), Some("gpt-4o-mini"));
    assert_eq!(out.header("x-llm-attempts"), Some("2"));
    assert_eq!(out.header("x-llm-fallback-reason"), Some("quota_exhausted"));
    assert!(out.removes(RETRY_MARKER) && out.removes(RETRY_AFTER_MARKER));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_short_rate_limit_retries_the_same_model_after_the_stated_wait() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (after, out) = bed.attempt(&mut request, 429, RATE);
    assert_eq!(after, After::Next(Next::Retry));
    assert_eq!(out.header(RETRY_MARKER), Some("true"));
    assert_eq!(
        out.header(RETRY_AFTER_MARKER),
        Some("1"),
        "120 ms, in whole seconds"
    );
    assert_eq!(request.next, "gpt-4o");
    assert_eq!(bed.health.read("gpt-4o").admission(T0), Admission::Healthy);
}

#[wasm_bindgen_test(unsupported = test)]
fn an_unsafe_request_is_resent_only_after_a_proven_rejection() {
    let bed = Bed::new(json!({}));
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    // A 429 with a provider's error body: rejected before processing, re-sent.
    let mut request = bed.routed("gpt-4o", UNSAFE);
    let (after, out) = bed.attempt(&mut request, 529, overloaded);
    assert_eq!(after, After::Next(Next::Retry));
    assert!(request.safety.proven_rejection());
    assert_eq!(out.header("x-llm-retry-blocked"), None);
    // The next attempt starts: the earlier proof says nothing about it.
    bed.plan(&mut request);
    assert!(!request.safety.proven_rejection());
    // A 500: it may have acted. Not re-sent, and the client is told not to either.
    let mut request = bed.routed("gpt-4o", UNSAFE);
    let (after, out) = bed.attempt(&mut request, 500, r#"{"error":{"message":"internal"}}"#);
    assert_eq!(after, After::Blocked);
    assert_eq!(out.header(RETRY_MARKER), None);
    assert_eq!(out.header("x-should-retry"), Some("false"));
    assert_eq!(out.header("x-llm-retry-blocked"), Some(BLOCKED));
    // A bare 429 proves nothing: the status alone could come from anything in between.
    let verdict = bed.judge("gpt-4o", 429, "").0;
    assert!(!attempt::proven_rejection(429, &verdict));
    assert!(attempt::proven_rejection(
        429,
        &bed.judge("gpt-4o", 429, QUOTA).0
    ));
}

#[wasm_bindgen_test(unsupported = test)]
fn the_final_answer_to_an_unsafe_request_blocks_client_retries_unless_proven() {
    let slot = crate::stats::ModelSlot::default();
    for (status, blocked) in [
        (500, true),
        (503, true),
        (408, true),
        (429, true),
        (400, false),
        (200, false),
    ] {
        let mut out = Effects::default();
        route::block_client_retry(UNSAFE, slot, status, &mut out);
        assert_eq!(
            out.header("x-should-retry") == Some("false"),
            blocked,
            "{status}"
        );
        assert_eq!(
            out.counted(Counter::RetriesBlocked(slot)),
            u64::from(blocked)
        );
    }
    let proven = Safety::Unsafe {
        proven_rejection: true,
    };
    assert!(!route::client_retry_blocked(proven, 429));
    assert!(!route::client_retry_blocked(Safety::Safe, 500));
}

#[wasm_bindgen_test(unsupported = test)]
fn an_attempt_without_an_answer_writes_no_header_but_still_plans_the_retry() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    bed.plan(&mut request);
    let (after, out) = bed.ended(&mut request, "gpt-4o", crate::attempt::Ending::NoAnswer);
    assert_eq!(after, After::Next(Next::Retry));
    assert!(
        out.iter().all(|e| matches!(e, Effect::Count(..))),
        "no header outside a header phase: {out:?}"
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_fallback_on_another_cluster_is_named_for_the_clients_next_request() {
    let bed =
        Bed::new(json!({"fallback": {"default_cluster": "a", "chains": {"gpt-4o": ["claude"]}}}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (after, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(after, After::Elsewhere("claude".into()));
    assert_eq!(out.header("x-should-retry"), Some("true"));
    assert_eq!(out.header("x-llm-fallback-next"), Some("claude"));
    assert_eq!(
        out.header(RETRY_MARKER),
        None,
        "Envoy's retries stay on the cluster"
    );
    // That next request is routed straight to it.
    assert_eq!(bed.routed("gpt-4o", Safety::Safe).cluster, "b");
}

#[wasm_bindgen_test(unsupported = test)]
fn an_account_wide_quota_stop_cools_every_model_of_the_account() {
    let bed = Bed::new(json!({}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let _ = bed.attempt(&mut request, 429, QUOTA);
    for model in ["gpt-4o", "gpt-4o-mini"] {
        assert!(
            matches!(
                bed.health.read(model).admission(T0),
                Admission::Cooling { .. }
            ),
            "{model}"
        );
    }
    assert_eq!(bed.health.read("claude").admission(T0), Admission::Healthy);
}

#[wasm_bindgen_test(unsupported = test)]
fn overload_opens_the_circuit_at_the_threshold_and_a_probe_success_closes_it() {
    let mut bed = Bed::new(json!({}));
    let overloaded = r#"{"error":{"message":"The server is overloaded","type":"server_error"}}"#;
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    assert_eq!(
        bed.attempt(&mut request, 503, overloaded).0,
        After::Next(Next::Retry)
    );
    let (after, out) = bed.attempt(&mut request, 503, overloaded);
    assert_eq!(after, After::Next(Next::Switch("gpt-4o-mini".into())));
    assert_eq!(
        out.counted(Counter::CooldownsOpened(
            bed.slot("gpt-4o"),
            ErrorClass::Overloaded
        )),
        1
    );
    // After the cooldown one request probes, succeeds and closes the circuit.
    bed.clock = FixedClock(bed.health.read("gpt-4o").cooldown_until_ms + 1);
    let mut probe = bed.routed("gpt-4o", Safety::Safe);
    assert!(probe.probe);
    let mut out = Effects::default();
    attempt::succeeded(&bed.cx(), Some(&mut probe), "r2", "gpt-4o", &mut out);
    assert!(bed.health.read("gpt-4o").is_clean());
    assert_eq!(out.counted(Counter::SwitchBacks(bed.slot("gpt-4o"))), 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_batch_request_that_fails_tells_the_caller_when_to_come_back() {
    let bed = Bed::new(json!({}));
    let mut request = match bed.route("gpt-4o", Safety::Safe, Priority::Batch).0 {
        Start::Route { request, .. } => *request,
        other => panic!("{other:?}"),
    };
    let (after, _) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(after, After::Next(Next::Stop));
    let mut out = Effects::default();
    route::explain(&bed.cx(), &request, 429, &mut out);
    let wait: u64 = out.header("retry-after").unwrap().parse().unwrap();
    assert!(wait >= 60, "the quota cooldown, not a default: {wait}");
}

// ---- the request store ---------------------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn the_store_refuses_a_second_request_under_a_live_id_and_forgets_removed_ones() {
    let mut store = RequestStore::default();
    assert!(store.insert("a", Request::new("m", "m", "c")));
    assert!(!store.insert("a", Request::new("x", "x", "c")));
    assert_eq!(store.get("a").map(|r| r.requested.as_str()), Some("m"));
    assert!(store.remove("a").is_some() && store.is_empty());
    assert!(store.remove("a").is_none());
}

#[wasm_bindgen_test(unsupported = test)]
fn the_store_stays_bounded_in_entries_bodies_and_order() {
    let mut store = RequestStore::default();
    for i in 0..request::MAX_REQUESTS + 10 {
        store.insert(&i.to_string(), Request::new("m", "m", "c"));
    }
    assert_eq!(store.len(), request::MAX_REQUESTS);
    assert!(store.get("0").is_none(), "the oldest went first");
    // Bodies: past the byte bound the oldest bodies are dropped, the entries stay.
    let mut store = RequestStore::default();
    let big = request::MAX_BODY_BYTES / 4;
    for i in 0..6 {
        let mut r = Request::new("m", "m", "c");
        r.body = Some(vec![b'x'; big]);
        store.insert(&format!("b{i}"), r);
    }
    assert!(store.body_bytes() <= request::MAX_BODY_BYTES);
    assert_eq!(store.len(), 6);
    assert!(store.get("b0").unwrap().body.is_none());
    assert!(store.get("b5").unwrap().body.is_some());
    // Removals compact the eviction order.
    let mut store = RequestStore::default();
    for i in 0..1000 {
        store.insert(&i.to_string(), Request::new("m", "m", "c"));
        store.remove(&i.to_string());
    }
    assert!(store.order_len() <= 65, "{}", store.order_len());
}

/// Counts how often the flow reads the precise clock.
struct CountingClock(u64, std::cell::Cell<u32>);

impl Clock for CountingClock {
    fn now_ms(&self) -> u64 {
        self.1.set(self.1.get() + 1);
        self.0
    }

    fn coarse_ms(&self) -> u64 {
        self.0
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn a_healthy_request_never_reads_the_clock() {
    let bed = Bed::new(json!({}));
    let clock = CountingClock(T0, Default::default());
    let cx = Cx {
        clock: &clock,
        ..bed.cx()
    };
    let mut out = Effects::default();
    let ask = Ask {
        model: "gpt-4o",
        task: None,
        priority: Priority::Normal,
        body: chat("gpt-4o", None),
        safety: Safety::Safe,
        conversation: None,
    };
    let Start::Route { mut request, .. } = route::start(&cx, "r1", ask, &mut out) else {
        panic!()
    };
    let plan = attempt::plan(&cx, &mut request, &|| None, &mut out);
    attempt::succeeded(&cx, Some(&mut request), "r1", &plan.target, &mut out);
    route::explain(&cx, &request, 200, &mut out);
    assert_eq!(clock.1.get(), 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_safe_request_also_retries_resets_an_unsafe_one_loses_the_clients_retry_headers() {
    let slot = crate::stats::ModelSlot::default();
    let mut out = Effects::default();
    route::retry_policy(Safety::Safe, slot, &mut out);
    assert_eq!(out.header("x-envoy-retry-on"), Some("reset"));
    let mut out = Effects::default();
    route::retry_policy(UNSAFE, slot, &mut out);
    for name in route::CLIENT_RETRY_HEADERS {
        assert!(out.removes(name), "{name}");
    }
    assert_eq!(out.counted(Counter::UnsafeRequests(slot)), 1);
}

// ---- another provider inside the same request (`providers.switch: in_request`) -------------

/// gpt-4o (cluster a, the default) falls back to claude (cluster b), inside the request.
fn in_request() -> Bed {
    Bed::new(json!({"fallback": {
        "default_cluster": "a",
        "chains": {"gpt-4o": ["claude"], "claude": ["gpt-4o-mini"]},
        "failure_threshold": 2,
        "providers": {"switch": "in_request"}
    }}))
}

fn plan_landing(bed: &Bed, request: &mut Request, landed: &str) -> (attempt::Plan, Effects) {
    let mut out = Effects::default();
    let landed = landed.to_owned();
    let plan = attempt::plan(&bed.cx(), request, &|| Some(landed.clone()), &mut out);
    (plan, out)
}

#[wasm_bindgen_test(unsupported = test)]
fn an_account_quota_stop_names_the_other_providers_cluster_for_the_retry() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (after, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(after, After::Next(Next::Switch("claude".into())));
    assert_eq!(
        out.routed_next(),
        Some("b"),
        "the retry goes to claude's cluster"
    );
    assert_eq!(out.header(RETRY_MARKER), Some("true"));
    assert_eq!(
        out.header("x-llm-fallback-next"),
        None,
        "no next-request hint"
    );
    let from = bed.slot("gpt-4o");
    let to = bed.slot("claude");
    let class = ErrorClass::QuotaExhausted;
    assert_eq!(out.counted(Counter::Fallbacks { from, to, class }), 1);
    // The retry reaches b: the last provider's credentials go, and it asks claude.
    let (plan, out) = plan_landing(&bed, &mut request, "b");
    assert_eq!(plan.target, "claude");
    assert!(plan.strip_credentials && plan.needs_body);
    assert_eq!(request.cluster, "b");
    assert_eq!(out.routed_next(), None, "b is named already");
    // It fails too: the chain goes back to cluster a, named again.
    let (after, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(
        after,
        After::Next(Next::Stop),
        "gpt-4o-mini shares gpt-4o's account"
    );
    assert_eq!(out.routed_next(), None);
}

#[wasm_bindgen_test(unsupported = test)]
fn next_request_mode_keeps_attempts_on_the_routed_cluster_and_names_nothing() {
    let bed =
        Bed::new(json!({"fallback": {"default_cluster": "a", "chains": {"gpt-4o": ["claude"]}}}));
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (after, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(after, After::Elsewhere("claude".into()));
    assert_eq!(out.routed_next(), None);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_healthy_request_on_the_default_cluster_names_no_cluster_one_elsewhere_names_its_own() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (plan, out) = plan_landing(&bed, &mut request, "a");
    assert!(!plan.strip_credentials);
    assert!(out.is_empty(), "no host call beyond the plan: {out:?}");
    // A request routed to b names b at once: a retry Envoy makes after a reset, before any
    // judgement, would otherwise fall through to the default cluster.
    let mut request = bed.routed("claude", Safety::Safe);
    let (plan, out) = plan_landing(&bed, &mut request, "b");
    assert!(
        !plan.strip_credentials,
        "the first attempt keeps what the client filter left"
    );
    assert_eq!(out.routed_next(), Some("b"));
    // Its retry on the same cluster names nothing more.
    let overloaded = r#"{"error":{"message":"The server is overloaded","type":"server_error"}}"#;
    let (after, out) = bed.attempt(&mut request, 503, overloaded);
    assert_eq!(after, After::Next(Next::Retry));
    assert_eq!(out.routed_next(), None);
}

#[wasm_bindgen_test(unsupported = test)]
fn an_attempt_that_lands_on_another_cluster_asks_a_model_served_there() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let (_, out) = bed.attempt(&mut request, 429, QUOTA);
    assert_eq!(out.routed_next(), Some("b"));
    // The route does not list b: the retry falls through to a.
    let (plan, out) = plan_landing(&bed, &mut request, "a");
    assert_eq!(out.counted(Counter::Misrouted(bed.slot("claude"))), 1);
    assert_eq!(request.cluster, "a");
    assert!(!plan.strip_credentials, "still the same provider");
    // Every model of a is out (account quota): the first of them is asked rather than
    // sending claude to a provider that does not serve it.
    assert_eq!(plan.target, "gpt-4o");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_switch_decided_without_an_answer_names_the_cluster_and_writes_no_header() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    for expected in [Next::Retry, Next::Switch("claude".into())] {
        bed.plan(&mut request);
        let (after, out) = bed.ended(
            &mut request,
            "gpt-4o",
            crate::attempt::Ending::ConnectFailure,
        );
        assert_eq!(after, After::Next(expected.clone()));
        assert!(
            out.iter()
                .all(|e| matches!(e, Effect::Count(..) | Effect::RouteNext { .. })),
            "no header outside a header phase: {out:?}"
        );
        // Named for the router by the time the retry is picked: when the attempt started
        // (predicted) or when it ended.
        let named = (expected != Next::Retry).then_some("b");
        assert_eq!(request.named_cluster.as_deref(), named);
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn the_final_answer_names_the_provider_that_served() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let _ = bed.attempt(&mut request, 429, QUOTA);
    let (plan, _) = plan_landing(&bed, &mut request, "b");
    let mut out = Effects::default();
    attempt::rewrite(&bed.cx(), &mut request, &chat("gpt-4o", None), false);
    attempt::succeeded(&bed.cx(), Some(&mut request), "r1", &plan.target, &mut out);
    route::explain(&bed.cx(), &request, 200, &mut out);
    assert_eq!(out.header("x-llm-model"), Some("claude"));
    assert_eq!(out.header("x-llm-provider"), Some("b"));
    assert_eq!(out.header("x-llm-attempts"), Some("2"));
}

#[wasm_bindgen_test(unsupported = test)]
fn client_credentials_go_only_where_the_mode_expects_the_clients_key() {
    let next = Bed::new(json!({})).config.fallback.providers.clone();
    assert!(next.forwards_client_credentials());
    let in_req = in_request().config.fallback.providers.clone();
    assert!(!in_req.forwards_client_credentials());
    let forced = Bed::new(
        json!({"fallback": {"providers": {"switch": "in_request", "forward_client_credentials": true}}}),
    );
    assert!(forced
        .config
        .fallback
        .providers
        .forwards_client_credentials());
}

#[wasm_bindgen_test(unsupported = test)]
fn an_attempt_whose_failure_would_open_the_circuit_names_the_next_provider_before_it_starts() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    // Attempt 1 on a clean model: one failure opens nothing, nothing named, nothing read.
    let (_, out) = plan_landing(&bed, &mut request, "a");
    assert!(out.is_empty());
    // It ends without an answer (connect failure): a retry on gpt-4o is planned.
    let (after, _) = bed.ended(
        &mut request,
        "gpt-4o",
        crate::attempt::Ending::ConnectFailure,
    );
    assert_eq!(after, After::Next(Next::Retry));
    // Attempt 2 starts on gpt-4o: one more failure opens its circuit, so the router's retry is
    // pointed at claude's cluster now, in case that failure's ending comes too late.
    let (plan, out) = plan_landing(&bed, &mut request, "a");
    assert_eq!(plan.target, "gpt-4o");
    assert_eq!(out.routed_next(), Some("b"));
    // It answers a short rate limit instead: the retry stays on a, named again.
    let (after, out) = bed.judge_after(&mut request, "gpt-4o", 429, RATE);
    assert_eq!(after, After::Next(Next::Retry));
    assert_eq!(out.routed_next(), Some("a"));
}

/// Another request (`r2`) reaches gpt-4o on a and gets no answer: one failure on its health.
fn another_request_fails_on_gpt_4o(bed: &Bed) {
    let Start::Route {
        request: mut other, ..
    } = bed
        .route_as("r2", "gpt-4o", Safety::Safe, Priority::Normal)
        .0
    else {
        panic!()
    };
    let _ = plan_landing(bed, &mut other, "a");
    let _ = bed.ended(&mut other, "gpt-4o", crate::attempt::Ending::ConnectFailure);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_retry_picked_before_a_switch_without_an_answer_was_named_is_a_race_not_a_misroute() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    // Attempt 1 on a clean model: nothing named (a is the route's default).
    let (_, out) = plan_landing(&bed, &mut request, "a");
    assert!(out.is_empty());
    // Meanwhile another request's attempt on gpt-4o fails: this one's failure opens its circuit.
    another_request_fails_on_gpt_4o(&bed);
    // Attempt 1 ends without an answer: claude on b is named, but Envoy may already have
    // picked the retry's cluster (a, the default, where nothing named sent it).
    let (after, out) = bed.ended(
        &mut request,
        "gpt-4o",
        crate::attempt::Ending::ConnectFailure,
    );
    assert_eq!(after, After::Next(Next::Switch("claude".into())));
    assert_eq!(out.routed_next(), Some("b"));
    let (plan, out) = plan_landing(&bed, &mut request, "a");
    assert_eq!(
        plan.target, "gpt-4o",
        "the model a serves that can take it (cooling, rather than claude on a provider that \
         does not serve it)"
    );
    assert_eq!(out.counted(Counter::Misrouted(bed.slot("claude"))), 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_cluster_the_host_could_not_name_leaves_retries_where_the_route_points_not_misrouted() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    // Another request's failure leaves gpt-4o one failure from an open circuit.
    another_request_fails_on_gpt_4o(&bed);
    let _ = plan_landing(&bed, &mut request, "a");
    // Attempt 1 ends without an answer: claude on b is planned and named, but the host has
    // no stream left to write the name on (Envoy's dynamic-module ABI).
    let (after, out) = bed.ended(
        &mut request,
        "gpt-4o",
        crate::attempt::Ending::ConnectFailure,
    );
    assert_eq!(after, After::Next(Next::Switch("claude".into())));
    let named = |out: &Effects| {
        out.iter().find_map(|e| match e {
            Effect::RouteNext { cluster, replacing } => Some((cluster.clone(), replacing.clone())),
            _ => None,
        })
    };
    assert_eq!(named(&out), Some(("b".to_owned(), None)));
    attempt::not_named(&mut request, None);
    // The retry goes where the route still points (a): the request asks a model served
    // there, and the route is not blamed.
    let (plan, out) = plan_landing(&bed, &mut request, "a");
    assert_eq!(plan.target, "gpt-4o");
    assert_eq!(out.counted(Counter::Misrouted(bed.slot("claude"))), 0);
    // Attempt 2 answers an account quota stop: claude on b again. The request knows b was
    // never named, so it names it now (believing it named would send attempt 3 to a, and
    // blame the route).
    let (after, out) = bed.judge_after(&mut request, "gpt-4o", 429, QUOTA);
    assert_eq!(after, After::Next(Next::Switch("claude".into())));
    assert_eq!(named(&out), Some(("b".to_owned(), None)));
    let (plan, out) = plan_landing(&bed, &mut request, "b");
    assert_eq!(plan.target, "claude");
    assert_eq!(out.counted(Counter::Misrouted(bed.slot("claude"))), 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_retry_that_goes_where_the_prediction_named_before_the_judgement_asks_a_model_served_there() {
    let bed = in_request();
    let mut request = bed.routed("gpt-4o", Safety::Safe);
    let _ = plan_landing(&bed, &mut request, "a");
    let _ = bed.ended(
        &mut request,
        "gpt-4o",
        crate::attempt::Ending::ConnectFailure,
    );
    // Attempt 2 on gpt-4o: one more failure opens its circuit, so b is named for the retry.
    let (_, out) = plan_landing(&bed, &mut request, "a");
    assert_eq!(out.routed_next(), Some("b"));
    // It is reset, and Envoy starts the retry before the filter has judged the reset: the
    // retry reaches b while the request still plans gpt-4o on a. It must ask claude (served
    // on b), never send gpt-4o to a provider that does not serve it.
    let (plan, out) = plan_landing(&bed, &mut request, "b");
    assert_eq!(plan.target, "claude");
    assert!(plan.strip_credentials, "a's credentials go");
    assert_eq!(request.cluster, "b");
    assert_eq!(
        out.counted(Counter::Misrouted(bed.slot("gpt-4o"))),
        0,
        "the route did what it was told: not a misroute"
    );
    // The late judgement of attempt 2 still teaches gpt-4o's health, but does not move the
    // request, whose attempt 3 is already on claude.
    let (after, out) = bed.ended_late(&mut request, "gpt-4o", 2, crate::attempt::Ending::NoAnswer);
    assert_eq!(after, After::Stale);
    assert_eq!(out.routed_next(), None);
    assert_eq!(request.next, "claude");
    assert!(matches!(
        bed.cx().admission_of("gpt-4o"),
        crate::health::Admission::Cooling { .. }
    ));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_canary_takes_its_share_of_the_base_and_is_halted_when_it_answers_worse() {
    use crate::stats::CanaryEvent::{Halted, Routed};
    let bed = Bed::new(json!({"fallback": {
        "default_cluster": "a", "chains": {"gpt-4o": ["gpt-4o-mini"]},
        "switch_on": {"claude": {"consecutive_failures": 100}},
        "canaries": [{"model": "claude", "of": "gpt-4o", "share": 1.0,
                      "halt": {"min_requests": 3, "error_rate_margin": 0.1, "cooldown_ms": 60000}}]}}));
    let (start, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    let Start::Route { cluster, request } = start else {
        panic!("routed")
    };
    assert_eq!((request.next.as_str(), cluster.as_str()), ("claude", "b"));
    let canary = request
        .stand_in
        .as_ref()
        .map(|s| (s.model.as_str(), s.kind));
    assert_eq!(
        canary,
        Some(("claude", crate::flow::request::StandInKind::Canary))
    );
    assert_eq!(
        request
            .chain(&bed.config)
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        ["claude", "gpt-4o", "gpt-4o-mini"],
        "a failing canary falls back to its base"
    );
    assert!(
        request.body.is_some(),
        "kept: a failing canary falls back to its base"
    );
    assert_eq!(out.counted(Counter::Canary(0, Routed)), 1);
    // Batch work never goes to a canary (it could not fall back to the base).
    let (start, _) = bed.route("gpt-4o", Safety::Safe, Priority::Batch);
    let Start::Route { request, .. } = start else {
        panic!("routed")
    };
    assert_eq!(request.next, "gpt-4o");
    // The base answers well; the canary fails twice in three: halted.
    let cx = bed.cx();
    let mut out = Effects::default();
    for _ in 0..5 {
        attempt::succeeded(&cx, None, "s", "gpt-4o", &mut out);
    }
    let claude = bed.config.model("claude").unwrap();
    let overloaded = Verdict {
        class: ErrorClass::Overloaded,
        retry_after_ms: None,
        reason: "529".into(),
        scope: crate::classify::Scope::Model,
        wait_hint: crate::classify::WaitHint::Absent,
    };
    attempt::record_failure(&cx, "s", claude, &overloaded, &mut out);
    attempt::succeeded(&cx, None, "s", "claude", &mut out);
    assert_eq!(out.counted(Counter::Canary(0, Halted)), 0);
    attempt::record_failure(&cx, "s", claude, &overloaded, &mut out);
    assert_eq!(out.counted(Counter::Canary(0, Halted)), 1);
    assert!(bed.health.read("claude").cooldown_until_ms >= T0 + 60_000);
    // Halted: the base serves every conversation again.
    let (start, out) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    let Start::Route { request, .. } = start else {
        panic!("routed")
    };
    assert_eq!(request.next, "gpt-4o");
    assert_eq!(request.stand_in, None);
    assert_eq!(out.counted(Counter::Canary(0, Routed)), 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_share_of_safe_requests_keeps_the_fallbacks_known_good() {
    let bed = Bed::new(json!({"fallback": {
        "default_cluster": "a", "chains": {"gpt-4o": ["gpt-4o-mini", "claude"]},
        "backup_share": 0.2}}));
    let mut by_model = std::collections::BTreeMap::new();
    for i in 0..2000 {
        let (start, _) = bed.route_as(&format!("id-{i}"), "gpt-4o", Safety::Safe, Priority::Normal);
        let Start::Route { request, .. } = start else {
            panic!("routed")
        };
        if let Some(stand_in) = &request.stand_in {
            assert_eq!(stand_in.kind, crate::flow::request::StandInKind::Backup);
            assert_eq!(
                request.chain(&bed.config)[1].name,
                "gpt-4o",
                "then the primary"
            );
        }
        *by_model.entry(request.next.clone()).or_insert(0) += 1;
    }
    // 20 % to the fallbacks, split between both.
    let (mini, claude) = (by_model["gpt-4o-mini"], by_model["claude"]);
    assert!((320..480).contains(&(mini + claude)), "{by_model:?}");
    assert!(mini > 120 && claude > 120, "{by_model:?}");
    // Unsafe requests never serve as backup traffic.
    let unsafe_ = Safety::Unsafe {
        proven_rejection: false,
    };
    let unsafe_backups = (0..200)
        .filter(|i| {
            let (start, _) = bed.route_as(&format!("u-{i}"), "gpt-4o", unsafe_, Priority::Normal);
            matches!(start, Start::Route { request, .. } if request.stand_in.is_some())
        })
        .count();
    assert_eq!(unsafe_backups, 0);
}

#[wasm_bindgen_test(unsupported = test)]
fn an_attempt_back_on_the_requested_model_after_a_rewritten_one_sends_its_own_body() {
    let bed = Bed::new(json!({"fallback": {
        "default_cluster": "a", "chains": {"gpt-4o": ["gpt-4o-mini"]},
        "canaries": [{"model": "gpt-4o-mini", "of": "gpt-4o", "share": 1.0}]}}));
    let (start, _) = bed.route("gpt-4o", Safety::Safe, Priority::Normal);
    let Start::Route { mut request, .. } = start else {
        panic!("routed")
    };
    let cx = bed.cx();
    let body = chat("gpt-4o", None);
    let mut out = Effects::default();
    let first = attempt::plan(&cx, &mut request, &|| None, &mut out);
    assert!(first.needs_body);
    let rewrite = attempt::rewrite(&cx, &mut request, &body, false).unwrap();
    assert!(rewrite.body.is_some(), "the canary's name written in");
    // The canary failed; the base is asked: the router replays the client's bytes, but the
    // canary's content-length would carry over, so the body is set again with its own.
    request.next = "gpt-4o".into();
    let second = attempt::plan(&cx, &mut request, &|| None, &mut out);
    assert!(second.needs_body);
    let rewrite = attempt::rewrite(&cx, &mut request, &body, false).unwrap();
    assert_eq!(rewrite.body.as_deref(), Some(body.as_slice()));
}
