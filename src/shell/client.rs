//! The client position (`root_id: client`, in the HTTP connection manager): once per request,
//! reads its model, judges whether it may be sent twice, routes it to the cluster of the first
//! model that can serve, and writes the headers that explain the final answer.

use super::apply::{apply, HostClock};
use super::count::{self, Position, Streaming};
use super::headers::RequestHeaders;
use super::shaping::{self, Arrival};
use super::{host, idempotency, identity, meter, requests, Plugin};
use crate::classify::Answer;
use crate::flow::route::{self, Start};
use crate::flow::{attempt, Effects, Safety};
use crate::inflate::{self, Encoding};
use crate::model_field::find_model;
use crate::plan::{self, Priority};
use crate::shaping::{refuse, Ask, Lane};
use crate::stats::{BodySkip, ModelSlot};
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, BufferType, MapType};
use std::rc::Rc;

/// Most bytes a compressed request body is inflated to (the listener's buffer limit).
const MAX_DECODED_REQUEST: usize = 32 * 1024 * 1024;

/// Where the request is.
enum Step {
    /// Request headers not seen yet.
    Start,
    /// No models configured: counted under the model its body names, as it streams by.
    Counting(Box<Streaming>),
    /// Request headers held until the whole body has been read.
    AwaitingBody,
    /// Routed (or passed through): the final answer is awaited.
    Routed,
    /// Routed, and held in the traffic-shaping queue until a slot frees (the timer resumes it,
    /// downgrades it or answers it).
    Queued,
    /// This filter answered the request itself; its reply's callbacks come back here.
    Responded,
    /// Counted; nothing more to do with the request.
    Done,
}

pub struct ClientContext {
    plugin: Rc<Plugin>,
    context_id: u32,
    /// Its priority class and lane, when traffic shaping is on.
    shaped: Option<Ask>,
    /// When it was routed, and the model it was routed to (for the load trigger's P95).
    timed: Option<(u64, String)>,
    step: Step,
    /// The request's model label slot, once counted.
    slot: ModelSlot,
    /// The id minted for this request (fallback mode).
    id: Option<String>,
    /// The request headers it consults, read once.
    request: RequestHeaders,
    encoding: Encoding,
    /// Whether the request may be sent twice (also kept in its state, with the proof of the
    /// last attempt's rejection).
    safety: Safety,
    /// The `Idempotency-Key` slot this request holds.
    idempotency: Option<(u64, u64)>,
    /// The final answer's status.
    status: u16,
    /// Hex SHA-256 of its credential, when a key mapping needs it (empty: it has one, and no
    /// mapping needs the hash; `None`: it has none).
    key_hash: Option<String>,
    /// What the request may use (budgets configured).
    estimate: Option<crate::meter::Estimate>,
}

impl ClientContext {
    pub fn new(plugin: Rc<Plugin>, context_id: u32) -> Self {
        Self {
            plugin,
            context_id,
            shaped: None,
            timed: None,
            step: Step::Start,
            slot: ModelSlot::default(),
            id: None,
            request: RequestHeaders::default(),
            encoding: Encoding::Identity,
            safety: Safety::Safe,
            idempotency: None,
            status: 0,
            key_hash: None,
            estimate: None,
        }
    }

    fn count(&mut self, model: Option<&str>, skip: Option<BodySkip>) {
        self.slot = count::count(&self.plugin, Position::Client, model, skip);
    }

    /// No models configured: the policy headers and the routing header are not for anyone
    /// downstream of here, and the request is only counted.
    fn observe_only(&mut self, end_of_stream: bool) -> Action {
        let config = &self.plugin.config;
        for name in [
            &config.fallback.cluster_header,
            &config.fallback.priority_header,
            &config.fallback.task_header,
            &config.retry_safety.header,
        ] {
            host::remove_header(MapType::HttpRequestHeaders, name);
        }
        let encoding = host::header(MapType::HttpRequestHeaders, "content-encoding");
        self.step = Step::Done;
        if end_of_stream {
            self.count(None, None);
        } else if encoding.is_some() {
            self.count(None, Some(BodySkip::Encoded));
        } else {
            self.step = Step::Counting(Box::new(Streaming::new()));
        }
        Action::Continue
    }

    /// Whole request read: count it, refuse a duplicate, judge whether it may be sent twice,
    /// choose the first model and its cluster.
    fn body_complete(&mut self, body: Vec<u8>) -> Action {
        let body = match self.encoding {
            Encoding::Identity => body,
            encoding => match inflate::inflate_complete(encoding, &body, MAX_DECODED_REQUEST) {
                Some(decoded) => decoded,
                None => return self.unreadable_body(),
            },
        };
        let field = find_model(&body);
        match &field {
            Ok(field) => self.count(Some(&field.value), None),
            Err(_) if body.is_empty() => self.count(None, None),
            Err(skip) => self.count(None, Some(BodySkip::Scan(*skip))),
        }
        if self.refused_duplicate() {
            return Action::Pause;
        }
        let plugin = Rc::clone(&self.plugin);
        let config = &plugin.config;
        // Every cluster the request's chain can reach: a key makes a re-send harmless only if
        // each of them deduplicates by it.
        let clusters: Vec<&str> = match &field {
            Ok(f) => plan::chain(config, &f.value, self.request.task.as_deref())
                .into_iter()
                .map(|m| m.cluster_or(&config.fallback.default_cluster))
                .collect(),
            Err(_) => Vec::new(),
        };
        self.judge_safety(&body, &clusters);
        let mut cluster = config.fallback.default_cluster.clone();
        let mut queued = false;
        if let (Ok(field), Some(id)) = (&field, self.id.as_deref()) {
            let clock = HostClock::default();
            let cx = plugin.cx(&clock);
            // One scan of the body for its output limit, shared by long tasks and budgets.
            let stated = std::cell::OnceCell::new();
            let stated = || *stated.get_or_init(|| crate::shaping::stated_max_tokens(&body));
            self.shaped = self.shaping_ask(&body, stated);
            let priority = match (&config.shaping, self.shaped) {
                (Some(s), Some(ask)) => s
                    .classes
                    .get(ask.class)
                    .map_or(Priority::Normal, |c| c.fallback.priority()),
                _ => Priority::from_header(self.request.priority.as_deref()),
            };
            // What budgets reserve is estimated from the body before it moves into the request.
            let estimate = (!plugin.meter.budgets.is_empty()).then(|| {
                let out_max = config.model(&field.value).and_then(|m| m.max_output_tokens);
                let default = config.metering.default_output_tokens;
                crate::meter::Estimate::of(&body, stated(), out_max, default)
            });
            self.estimate = estimate;
            let sticky = config
                .canary_of(&field.value)
                .and_then(|(_, c)| c.sticky_header.as_deref());
            let conversation = sticky.and_then(|header| {
                let found = self.request.sticky.iter().find(|(n, _)| n == header);
                found.map(|(_, value)| value.as_slice())
            });
            let ask = route::Ask {
                model: &field.value,
                task: self.request.task.as_deref(),
                priority,
                body,
                safety: self.safety,
                conversation,
            };
            let mut out = Effects::default();
            match route::start(&cx, id, ask, &mut out) {
                Start::Route {
                    cluster: mut first,
                    mut request,
                } => {
                    request.body_encoding = self.encoding;
                    if let Err(refusal) = self.meter_start(&cx, &mut request, &field.value) {
                        return self.refused(out, refusal);
                    }
                    if let Some(ask) = self.shaped {
                        match shaping::arrive(&plugin, self.context_id, Some(id), ask, id) {
                            Arrival::Go => {}
                            Arrival::Wait => queued = true,
                            Arrival::Downgrade(reason) => {
                                match route::downgrade(&cx, &mut request) {
                                    Some(lower) => {
                                        shaping::downgraded(
                                            &plugin,
                                            self.context_id,
                                            ask.class,
                                            reason,
                                        );
                                        first = lower;
                                    }
                                    None => {
                                        let refusal = shaping::rejection(&plugin, ask, reason, id);
                                        meter::give_back(&plugin, &request.metered);
                                        return self.refused(out, refusal);
                                    }
                                }
                            }
                            Arrival::Refused(refusal) => {
                                meter::give_back(&plugin, &request.metered);
                                return self.refused(out, refusal);
                            }
                        }
                    }
                    if let Some(s) = config.shaping.as_ref().and_then(|s| s.load.as_ref()) {
                        if s.engage_p95_ms.is_some() && request.next == s.model {
                            self.timed = Some((cx.now(), request.next.clone()));
                        }
                    }
                    requests::insert(id, *request);
                    cluster = first;
                }
                Start::Refused => return self.refused(out, Effects::default()),
                Start::Unmanaged => {}
            }
            apply(&plugin, MapType::HttpRequestHeaders, out);
        }
        host::set_header(
            MapType::HttpRequestHeaders,
            &config.fallback.cluster_header,
            &cluster,
        );
        if queued {
            // Routed, and held until a slot frees: the timer or a wake-up resumes it.
            self.step = Step::Queued;
            return Action::Pause;
        }
        self.step = Step::Routed;
        Action::Continue
    }

    /// Usage accounting of a routed request: its key label and arrival time; its budgets'
    /// reservations, or the refusal of the first budget it would cross.
    fn meter_start(
        &self,
        cx: &crate::flow::Cx<'_>,
        request: &mut crate::flow::Request,
        asked: &str,
    ) -> Result<(), Effects> {
        let metering = &self.plugin.config.metering;
        let metered = &mut request.metered;
        metered.key = crate::meter::key_slot(metering, self.key_hash.as_deref());
        if metering.latency {
            metered.arrived_ms = Some(cx.now());
        }
        let Some(estimate) = self.estimate else {
            return Ok(());
        };
        let scope = crate::meter::budget::Scope {
            key: metered.key,
            task: request.task.as_deref(),
            model: asked,
        };
        match meter::admit(&self.plugin, scope, estimate, &request.next, cx.now()) {
            meter::Admission::Go {
                reservations,
                shadow,
            } => {
                request.metered.reservations = reservations;
                request.metered.shadow_over = shadow;
                Ok(())
            }
            meter::Admission::Refused(reply) => Err(reply),
        }
    }

    /// The request's priority class and lane (traffic shaping on, the model configured).
    fn shaping_ask(&self, body: &[u8], stated: impl FnOnce() -> Option<u64>) -> Option<Ask> {
        let config = self.plugin.config.shaping.as_ref()?;
        let key = self.key_hash.as_deref().filter(|_| !config.keys.is_empty());
        let class = crate::shaping::class_for(config, self.request.priority.as_deref(), key);
        let lane = match &config.long_tasks {
            Some(long) if crate::shaping::is_long(long, body, stated) => Lane::Long,
            _ => Lane::Class,
        };
        Some(Ask { class, lane })
    }

    /// Answered locally (a chain with nothing to serve, or traffic shaping): nothing was sent,
    /// the key is free again. `routed`: the routing decision's effects (its counters, or its own
    /// reply); `reply`: traffic shaping's answer, if it refused.
    fn refused(&mut self, routed: Effects, reply: Effects) -> Action {
        if let Some((index, hash)) = self.idempotency.take() {
            idempotency::release(index, hash);
        }
        apply(&self.plugin, MapType::HttpRequestHeaders, routed);
        apply(&self.plugin, MapType::HttpRequestHeaders, reply);
        self.step = Step::Responded;
        Action::Pause
    }

    /// A body that cannot be read (an encoding the filter does not decode, or one that does not
    /// decode): judged from method, path and headers alone (a body-dependent path counts as
    /// unsafe), routed to the default cluster.
    fn unreadable_body(&mut self) -> Action {
        self.count(None, Some(BodySkip::Encoded));
        if self.refused_duplicate() {
            return Action::Pause;
        }
        self.judge_safety(b"", &[]);
        host::set_header(
            MapType::HttpRequestHeaders,
            &self.plugin.config.fallback.cluster_header,
            &self.plugin.config.fallback.default_cluster,
        );
        self.step = Step::Routed;
        Action::Continue
    }

    /// Claims the request's `Idempotency-Key`; a duplicate is answered 409 here.
    fn refused_duplicate(&mut self) -> bool {
        let Some((index, hash)) = idempotency::slot_of(&self.plugin, &self.request) else {
            return false;
        };
        if let Err(why) = idempotency::claim(&self.plugin, index, hash) {
            idempotency::refuse_duplicate(&self.plugin, self.slot, why);
            self.step = Step::Responded;
            return true;
        }
        self.idempotency = Some((index, hash));
        false
    }

    /// Judges retry safety and sets the router's retry policy for the request.
    fn judge_safety(&mut self, body: &[u8], clusters: &[&str]) {
        let judgement = idempotency::judge_request(&self.plugin, body, &self.request, clusters);
        self.safety = if judgement.safe {
            Safety::Safe
        } else {
            Safety::Unsafe {
                proven_rejection: false,
            }
        };
        let mut out = Effects::default();
        route::retry_policy(self.safety, self.slot, &mut out);
        apply(&self.plugin, MapType::HttpRequestHeaders, out);
    }

    /// The whole body, once its end is known.
    fn read_body(&mut self, size: usize) -> Action {
        let body = host::buffer(BufferType::HttpRequestBody, 0, size).unwrap_or_default();
        self.body_complete(body)
    }
}

impl ClientContext {
    /// A request's end: its budgets settled from what its attempts used, its latencies
    /// recorded under the model that answered.
    fn meter_end(&self, request: &crate::flow::Request) {
        let metered = &request.metered;
        if metered.reservations.is_empty()
            && (metered.arrived_ms.is_none() || request.tried.is_empty())
        {
            return;
        }
        let now = host::now_unix_ms();
        let served = request.served.is_some();
        meter::settle(&self.plugin, metered, served, now);
        if !request.tried.is_empty() {
            let slot = self.plugin.metrics.set.slot(Some(request.model_shown()));
            meter::record_latency(&self.plugin, slot, metered, served, now);
        }
    }
}

impl Context for ClientContext {
    fn on_done(&mut self) -> bool {
        match std::mem::replace(&mut self.step, Step::Done) {
            Step::Counting(scanner) => {
                // A body with trailers never signals its end to the body callback.
                let model = scanner.found().map(str::to_owned);
                self.count(model.as_deref(), None);
            }
            // The client left before its body was complete: still a request.
            Step::AwaitingBody => self.count(None, None),
            Step::Start | Step::Routed | Step::Queued | Step::Responded | Step::Done => {}
        }
        let request = self.id.as_deref().and_then(requests::remove);
        if let Some(request) = &request {
            self.meter_end(request);
        }
        // Answered by the shaping timer while queued: nothing was sent.
        let never_sent = self.shaped.is_some() && shaping::was_replied(self.context_id);
        if self.shaped.is_some() {
            shaping::finish(&self.plugin, self.context_id);
        }
        if let Some((index, hash)) = self.idempotency.take() {
            if never_sent {
                idempotency::release(index, hash);
            } else {
                let proven = request
                    .as_ref()
                    .is_some_and(|r| r.safety.proven_rejection());
                idempotency::finish(index, hash, self.status, proven);
            }
        }
        true
    }
}

impl HttpContext for ClientContext {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        if self.plugin.config.models.is_empty() {
            return self.observe_only(end_of_stream);
        }
        #[cfg(all(feature = "test-trap", target_arch = "wasm32"))]
        if host::header(MapType::HttpRequestHeaders, "x-llm-test-trap").is_some() {
            core::arch::wasm32::unreachable();
        }
        self.request = RequestHeaders::read(&self.plugin.config);
        // Each provider cluster brings its own key: the client's never goes upstream.
        for name in std::mem::take(&mut self.request.credentials_to_remove) {
            host::remove_header(MapType::HttpRequestHeaders, &name);
        }
        identity::apply_trust(&self.plugin, &mut self.request);
        let config = &self.plugin.config;
        let mapped = !config.metering.keys.is_empty()
            || config.shaping.as_ref().is_some_and(|s| !s.keys.is_empty());
        self.key_hash = self.request.credential.as_deref().map(|credential| {
            if mapped {
                crate::meter::sha256_hex(credential)
            } else {
                String::new()
            }
        });
        self.id = identity::mint();
        self.encoding = Encoding::of_header(self.request.content_encoding.as_deref());
        if end_of_stream {
            // No body: judge and route now.
            return self.body_complete(Vec::new());
        }
        if !self.encoding.readable() {
            return self.unreadable_body();
        }
        // Hold the headers until the body is read: the cluster comes from the model.
        self.step = Step::AwaitingBody;
        Action::Pause
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        match &mut self.step {
            Step::Counting(scanner) => {
                let outcome = match scanner.feed(body_size) {
                    Err(skip) => Some((None, Some(skip))),
                    Ok(()) if end_of_stream => {
                        let Step::Counting(scanner) = std::mem::replace(&mut self.step, Step::Done)
                        else {
                            return Action::Continue;
                        };
                        Some(match scanner.finish() {
                            Ok(model) => (Some(model), None),
                            Err(skip) => (None, Some(skip)),
                        })
                    }
                    Ok(()) => None,
                };
                if let Some((model, skip)) = outcome {
                    self.step = Step::Done;
                    self.count(model.as_deref(), skip);
                }
                Action::Continue
            }
            // Envoy buffers the body until its end (the router keeps it for retries anyway).
            Step::AwaitingBody if !end_of_stream => Action::Pause,
            Step::AwaitingBody => self.read_body(body_size),
            Step::Start | Step::Routed | Step::Queued | Step::Responded | Step::Done => {
                Action::Continue
            }
        }
    }

    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        match self.step {
            // A body with trailers: its end is signalled here, not by the body callback.
            Step::AwaitingBody => self.read_body(usize::MAX >> 1),
            Step::Start
            | Step::Counting(_)
            | Step::Routed
            | Step::Queued
            | Step::Responded
            | Step::Done => Action::Continue,
        }
    }

    fn on_http_response_headers(&mut self, _num_headers: usize, _end_of_stream: bool) -> Action {
        self.status = host::header(MapType::HttpResponseHeaders, ":status")
            .and_then(|s| std::str::from_utf8(&s).ok()?.parse::<u16>().ok())
            .unwrap_or(0);
        // The filter's own answer (a duplicate, a batch refusal, an exhausted chain) says what
        // it is already: nothing to judge or explain.
        if matches!(self.step, Step::Responded)
            || (self.shaped.is_some() && shaping::was_replied(self.context_id))
        {
            return Action::Continue;
        }
        let plugin = Rc::clone(&self.plugin);
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        let mut out = Effects::default();
        // Upstream answers were judged by the upstream filter; only Envoy's own replies
        // (timeouts, connect failures, no healthy upstream) are left to judge here.
        if self.status >= 400 {
            let details = host::property(vec!["response", "code_details"])
                .and_then(|d| String::from_utf8(d).ok());
            if let Some(details) = details.filter(|d| d != "via_upstream") {
                let owned = host::headers(MapType::HttpResponseHeaders);
                let headers = host::borrowed(&owned);
                let answer = Answer {
                    status: self.status,
                    headers: &headers,
                    body: b"",
                    code_details: Some(&details),
                    now_unix_ms: cx.now(),
                };
                let _ = attempt::judge(&cx, self.slot, &answer, &mut out);
            }
        }
        let safety = match self.id.as_deref() {
            Some(id) => requests::with(id, |request| {
                route::explain(&cx, request, self.status, &mut out);
                let shadow = request.metered.shadow_over;
                if let Some(b) = shadow.and_then(|i| plugin.meter.budgets.get(i)) {
                    out.set_header(
                        crate::meter::budget::BUDGET_HEADER,
                        format!("shadow-over {}", b.name),
                    );
                }
                request.safety
            })
            .unwrap_or(self.safety),
            None => self.safety,
        };
        route::block_client_retry(safety, self.slot, self.status, &mut out);
        if let (Some(config), Some(ask)) = (&plugin.config.shaping, self.shaped) {
            let treatment = shaping::treatment(self.context_id).unwrap_or(refuse::Treatment {
                class: ask.class,
                ..refuse::Treatment::default()
            });
            refuse::explain(config, &treatment, &mut out);
            if let Some((routed, model)) = self.timed.take() {
                let queued = treatment.waited_ms.unwrap_or(0);
                let time = cx.now().saturating_sub(routed).saturating_sub(queued);
                shaping::observe_time(&plugin, &model, time);
            }
        }
        apply(&plugin, MapType::HttpResponseHeaders, out);
        Action::Continue
    }
}
