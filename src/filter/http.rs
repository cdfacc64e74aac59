//! Per-request work in both positions.
//!
//! Client position (HTTP connection manager): reads the request's model, picks the first
//! healthy model of its chain and the cluster that serves it, answers the status path, judges
//! Envoy's own local replies, and writes the headers that explain the outcome.
//!
//! Upstream position (inside the router's retry loop): rewrites the `model` field for this
//! attempt, judges the upstream's answer (error answers: headers held while at most
//! `classifier.max_body_bytes` of the body are read; 2xx: untouched and unbuffered, streams only
//! observed), updates the model's health, and marks the answer for retry when another attempt
//! can help, saying which model the next attempt must ask.

use super::headers::RequestHeaders;
use super::{fallback, guard, host, requests, Plugin, Role};
use crate::classify::{classify_with, Answer, ErrorClass, Verdict};
use crate::config::MaxTokensPolicy;
use crate::model_field::{ModelScanner, Skip};
use crate::sse::{SseFinding, SseScanner, Usage};
use crate::stats::{BodySkip, Counter, Direction, ModelSlot};
use crate::usage::UsageTail;
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, BufferType, MapType};
use std::rc::Rc;

/// Response header the upstream filter sets to have the router retry (`retriable_headers`).
pub const RETRY_MARKER: &str = "x-llm-retry";
/// Seconds to wait before that retry (`rate_limited_retry_back_off.reset_headers`).
pub const RETRY_AFTER_MARKER: &str = "x-llm-retry-after-s";

/// What the filter is doing with the answer.
enum Response {
    /// Nothing to do (no answer yet, or done).
    Idle,
    /// An error answer: headers held, body being read up to the cap.
    Holding { status: u16, body: Vec<u8> },
    /// A 200 event stream, observed for error events and usage.
    Stream(Box<SseScanner>),
    /// A 200 JSON answer, observed for usage.
    Json(UsageTail),
}

pub struct Stream {
    pub(super) plugin: Option<Rc<Plugin>>,
    /// The scanner while the request body is still being read; `None` once counted.
    scanner: Option<ModelScanner>,
    /// The request's (or attempt's) model label slot, once known.
    pub(super) slot: Option<ModelSlot>,
    response: Response,
    /// `x-request-id`, when this request takes part in fallback.
    pub(super) request_id: Option<String>,
    /// Whether the request headers are held until the body has been read (fallback mode).
    holding_request: bool,
    /// Upstream position: the model this attempt asks, and the request body it sent.
    pub(super) attempt_model: Option<String>,
    pub(super) attempt_body: Vec<u8>,
    /// Upstream position: whether an answer (or its absence) was already judged.
    pub(super) answered: bool,
    /// Upstream position: the status of the answer being judged.
    status: u16,
    /// Client position: why the request must not be sent twice, when it must not.
    unsafe_reason: Option<String>,
    /// Client position: the `Idempotency-Key` slot this request holds.
    idempotency: Option<(u64, u64)>,
    /// Client position: the request headers it consults, read once.
    request: RequestHeaders,
}

impl Stream {
    pub fn new(plugin: Option<Rc<Plugin>>) -> Self {
        Self {
            plugin,
            scanner: Some(ModelScanner::new()),
            slot: None,
            response: Response::Idle,
            request_id: None,
            holding_request: false,
            attempt_model: None,
            attempt_body: Vec::new(),
            answered: false,
            status: 0,
            unsafe_reason: None,
            idempotency: None,
            request: RequestHeaders::default(),
        }
    }

    pub(super) fn slot(&self) -> ModelSlot {
        match (&self.plugin, self.slot) {
            (_, Some(slot)) => slot,
            (Some(plugin), None) => plugin.metrics.set.slot(None),
            (None, None) => ModelSlot::default(),
        }
    }

    /// Counts this request (or attempt) for `model`; a `skip` says why it is unknown.
    pub(super) fn count_request(&mut self, model: Option<&str>, skip: Option<BodySkip>) {
        let Some(plugin) = &self.plugin else { return };
        let metrics = &plugin.metrics;
        let slot = metrics.set.slot(model);
        self.slot = Some(slot);
        metrics.increment(match plugin.role {
            Role::Upstream => Counter::Attempts(slot),
            Role::Client | Role::Status => Counter::Requests(slot),
        });
        // Bodies are the same on every attempt: count them once, in the client position.
        if let (Some(skip), Role::Client) = (skip, plugin.role) {
            metrics.increment(Counter::BodySkipped(skip));
            log::debug!("model not read from request body: {}", skip.as_str());
        }
    }

    /// Classifies an answer, counts it, and says what it was in the response headers.
    fn judge(&self, status: u16, body: &[u8], code_details: Option<&str>) -> Option<Verdict> {
        let plugin = self.plugin.as_ref()?;
        let owned = host::headers(MapType::HttpResponseHeaders);
        let headers: Vec<(&str, &str)> = owned
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let answer = Answer {
            status,
            headers: &headers,
            body,
            code_details,
            now_unix_ms: host::now_unix_ms(),
        };
        let verdict = classify_with(&answer, &plugin.rules);
        let slot = self.slot();
        plugin
            .metrics
            .increment(Counter::Responses(slot, verdict.class));
        log::info!(
            "{} answer {status} for model {}: {} ({}){}",
            if code_details.is_some() {
                "envoy"
            } else {
                "upstream"
            },
            plugin.metrics.set.label(slot),
            verdict.class.as_str(),
            verdict.reason,
            verdict
                .retry_after_ms
                .map_or(String::new(), |ms| format!(", retry after {ms} ms"))
        );
        annotate(&verdict);
        Some(verdict)
    }

    fn observe_stream(&mut self, chunk: &[u8], end: bool) {
        let Response::Stream(scanner) = &mut self.response else {
            return;
        };
        let mut errors = Vec::new();
        let mut collect = |finding: SseFinding| match finding {
            SseFinding::Error { payload, .. } => errors.push(payload),
        };
        scanner.feed(chunk, &mut collect);
        if end {
            scanner.finish(&mut collect);
        }
        let usage = end.then(|| scanner.usage());
        let Some(plugin) = &self.plugin else { return };
        let slot = self.slot();
        for payload in errors {
            let answer = Answer {
                status: 200,
                headers: &[],
                body: &payload,
                code_details: None,
                now_unix_ms: host::now_unix_ms(),
            };
            let verdict = classify_with(&answer, &plugin.rules);
            plugin
                .metrics
                .increment(Counter::StreamErrors(slot, verdict.class));
            log::warn!(
                "error event inside a 200 stream for model {}: {} ({})",
                plugin.metrics.set.label(slot),
                verdict.class.as_str(),
                verdict.reason
            );
        }
        if let Some(usage) = usage {
            self.count_tokens(usage);
        }
    }

    fn count_tokens(&self, tokens: Usage) {
        let Some(plugin) = &self.plugin else { return };
        let slot = self.slot();
        let metrics = &plugin.metrics;
        metrics.add(
            Counter::Tokens(slot, Direction::Input),
            tokens.input_tokens.unwrap_or(0),
        );
        metrics.add(
            Counter::Tokens(slot, Direction::Output),
            tokens.output_tokens.unwrap_or(0),
        );
    }

    /// Ends whatever the answer was being observed for (end of body, or trailers).
    fn finish_response(&mut self) {
        match std::mem::replace(&mut self.response, Response::Idle) {
            Response::Holding { status, body } => {
                if let Some(verdict) = self.judge(status, &body, None) {
                    self.after_answer(&verdict, true);
                }
            }
            Response::Stream(scanner) => {
                self.response = Response::Stream(scanner);
                self.observe_stream(&[], true);
                self.response = Response::Idle;
            }
            Response::Json(tail) => self.count_tokens(tail.finish()),
            Response::Idle => {}
        }
    }

    /// Client position: an unsafe request that failed in a way that does not prove rejection
    /// tells the client (and its SDK) not to retry.
    fn block_client_retry(&self, plugin: &Plugin, status: u16) {
        if self.unsafe_reason.is_none() || !(status >= 500 || status == 408 || status == 429) {
            return;
        }
        let proven = self
            .request_id
            .as_deref()
            .and_then(|id| requests::with(id, |s| s.proven_rejection))
            .unwrap_or(false);
        if proven {
            return;
        }
        let headers = MapType::HttpResponseHeaders;
        host::set_header(headers, "x-should-retry", "false");
        host::set_header(headers, "x-llm-retry-blocked", guard::BLOCKED);
        plugin
            .metrics
            .increment(Counter::RetriesBlocked(self.slot()));
    }

    fn max_body(&self) -> usize {
        self.plugin
            .as_ref()
            .map_or(0, |p| p.config.classifier.max_body_bytes)
    }

    /// Whether this plugin routes between models (any model configured).
    fn fallback_enabled(&self) -> bool {
        self.plugin
            .as_ref()
            .is_some_and(|p| !p.config.models.is_empty())
    }

    /// Reads the streaming request body for its model, without holding anything.
    fn scan_request_chunk(&mut self, body_size: usize, end_of_stream: bool) {
        let Some(mut scanner) = self.scanner.take() else {
            return;
        };
        if let Some(chunk) = host::buffer(BufferType::HttpRequestBody, 0, body_size) {
            scanner.feed(&chunk);
        }
        // Scan to the end even once the model is known: a second top-level `model` makes the
        // body ambiguous (parsers disagree on which wins), and it must be counted as such.
        if scanner.is_invalid() {
            self.count_request(None, Some(BodySkip::Scan(Skip::NotJson)));
        } else if end_of_stream {
            match scanner.finish() {
                Ok(field) => self.count_request(Some(&field.value), None),
                Err(skip) => self.count_request(None, Some(BodySkip::Scan(skip))),
            }
        } else {
            self.scanner = Some(scanner);
        }
    }

    /// Client position, whole request read: count it, refuse a duplicate, judge whether it may
    /// be sent twice, choose the first model and its cluster.
    fn client_body_complete(&mut self, body: Vec<u8>) -> Action {
        self.scanner = None;
        let field = crate::model_field::find_model(&body);
        match &field {
            Ok(field) => self.count_request(Some(&field.value), None),
            Err(_) if body.is_empty() => self.count_request(None, None),
            Err(skip) => self.count_request(None, Some(BodySkip::Scan(*skip))),
        }
        let Some(plugin) = self.plugin.clone() else {
            return Action::Continue;
        };
        let slot = self.slot();
        if let Some((index, hash)) = guard::idempotency(&plugin, &self.request) {
            if let Err(why) = guard::claim(&plugin, index, hash) {
                guard::refuse_duplicate(&plugin, slot, why);
                return Action::Pause;
            }
            self.idempotency = Some((index, hash));
        }
        let judgement = guard::judge_request(&plugin, slot, &body, &self.request);
        if !judgement.safe {
            self.unsafe_reason = Some(judgement.reason);
        }
        let mut cluster = plugin.config.fallback.default_cluster.clone();
        if let (Ok(field), Some(id)) = (&field, self.request_id.clone()) {
            match fallback::start(
                &plugin,
                &id,
                &field.value,
                body,
                !judgement.safe,
                &self.request,
            ) {
                fallback::Start::Route { cluster: c } => cluster = c,
                fallback::Start::Refuse => return Action::Pause,
                fallback::Start::Unmanaged => {}
            }
        }
        host::set_header(
            MapType::HttpRequestHeaders,
            &plugin.config.fallback.cluster_header,
            &cluster,
        );
        Action::Continue
    }

    /// Upstream position, whole body read: ask this attempt's model.
    fn upstream_body_complete(&mut self, body: Vec<u8>, body_size: usize) {
        self.scanner = None;
        let Some(plugin) = self.plugin.clone() else {
            return;
        };
        let Some(id) = self.request_id.clone() else {
            return;
        };
        let field = crate::model_field::find_model(&body);
        let target = requests::with(&id, |state| {
            state.tried.push(state.next.clone());
            state.next.clone()
        });
        let (Ok(field), Some(target)) = (field, target) else {
            self.count_request(None, None);
            return;
        };
        let model = plugin.config.model(&target);
        let upstream_name = model.map_or(target.as_str(), |m| m.upstream());
        let mut out = None;
        if field.value != upstream_name {
            out = Some(crate::model_field::rewrite(&body, &field, upstream_name));
        }
        // A fallback with a smaller output limit: lower `max_tokens` to it (policy `clamp`).
        let limit = model.and_then(|m| m.max_output_tokens);
        let requested = requests::with(&id, |s| s.requested.clone()).unwrap_or_default();
        if let (Some(limit), MaxTokensPolicy::Clamp, true) = (
            limit,
            plugin.config.fallback.max_tokens,
            target != requested,
        ) {
            let current = out.as_deref().unwrap_or(&body);
            for key in ["max_tokens", "max_completion_tokens", "max_output_tokens"] {
                if let Some((asked, span)) = crate::model_field::find_top_level_u64(current, key) {
                    if asked > limit {
                        log::info!("{key} {asked} clamped to {limit} for {target}");
                        out = Some(crate::model_field::splice(
                            current,
                            &span,
                            limit.to_string().as_bytes(),
                        ));
                    }
                    break;
                }
            }
        }
        if let Some(rewritten) = out {
            if host::set_body(BufferType::HttpRequestBody, body_size, &rewritten) {
                host::set_header(
                    MapType::HttpRequestHeaders,
                    "content-length",
                    &rewritten.len().to_string(),
                );
                log::debug!("attempt asks {target} (sent as {upstream_name})");
            }
        }
        self.count_request(Some(&target), None);
        self.attempt_model = Some(target);
        self.attempt_body = body;
    }

    /// Upstream position: after judging an answer, update health and decide the next attempt.
    fn after_answer(&mut self, verdict: &Verdict, answer_headers: bool) {
        self.answered = true;
        if let (Some(plugin), Some(id), Some(model)) = (
            self.plugin.clone(),
            self.request_id.clone(),
            self.attempt_model.clone(),
        ) {
            fallback::after_answer(
                &plugin,
                &id,
                &model,
                self.status,
                verdict,
                &self.attempt_body,
                answer_headers,
            );
        }
    }
}

/// Adds the headers that say what an answer was; never touches the body.
fn annotate(verdict: &Verdict) {
    let map = MapType::HttpResponseHeaders;
    host::set_header(map, "x-llm-error-class", verdict.class.as_str());
    host::set_header(map, "x-llm-error-reason", &header_safe(&verdict.reason));
    if let Some(ms) = verdict.retry_after_ms {
        host::set_header(map, "x-llm-retry-after-ms", &ms.to_string());
    }
    if verdict.class != ErrorClass::Ok && !verdict.class.same_model_retry_helps() {
        // The OpenAI and Anthropic SDKs obey this before their own status-based rules.
        host::set_header(map, "x-should-retry", "false");
    }
}

/// Header values must be visible ASCII; reasons can quote non-ASCII messages.
pub(super) fn header_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(200)
        .collect()
}

impl Context for Stream {
    fn on_done(&mut self) -> bool {
        // A body with trailers never signals end_of_stream to the body callback.
        if let Some(scanner) = self.scanner.take() {
            let model = scanner.found().map(|f| f.value.clone());
            self.count_request(model.as_deref(), None);
        }
        let Some(plugin) = self.plugin.clone() else {
            return true;
        };
        match plugin.role {
            Role::Client => {
                if let Some((index, hash)) = self.idempotency.take() {
                    let proven = self
                        .request_id
                        .as_deref()
                        .and_then(|id| requests::with(id, |s| s.proven_rejection))
                        .unwrap_or(false);
                    guard::finish(index, hash, self.status, proven);
                }
                if let Some(id) = &self.request_id {
                    requests::remove(id);
                }
            }
            Role::Status => {}
            Role::Upstream => {
                // No answer at all: a per-try timeout or a reset. It counts against the model,
                // and the next attempt (if Envoy makes one) asks whatever that decides.
                if !self.answered && self.attempt_model.is_some() {
                    let verdict = Verdict {
                        class: ErrorClass::Timeout,
                        retry_after_ms: None,
                        reason: "no answer (per-try timeout or reset)".into(),
                        scope: crate::classify::Scope::Model,
                        wait_hint: crate::classify::WaitHint::Absent,
                    };
                    plugin
                        .metrics
                        .increment(Counter::Responses(self.slot(), ErrorClass::Timeout));
                    self.after_answer(&verdict, false);
                }
            }
        }
        true
    }
}

impl HttpContext for Stream {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        let Some(plugin) = self.plugin.clone() else {
            self.scanner = None;
            return Action::Continue;
        };
        let fallback = self.fallback_enabled();
        let encoding = if fallback && plugin.role == Role::Client {
            self.request = RequestHeaders::read(&plugin.config);
            self.request_id = self.request.request_id.clone();
            self.request.content_encoding.clone()
        } else {
            if fallback {
                self.request_id = host::header(MapType::HttpRequestHeaders, "x-request-id")
                    .and_then(|v| String::from_utf8(v).ok());
            }
            host::header(MapType::HttpRequestHeaders, "content-encoding")
        };
        if end_of_stream {
            if fallback && plugin.role == Role::Client {
                // No body: judge and route now.
                return self.client_body_complete(Vec::new());
            }
            self.scanner = None;
            self.count_request(None, None);
            return Action::Continue;
        }
        if encoding.is_some_and(|e| !e.eq_ignore_ascii_case(b"identity")) {
            self.scanner = None;
            self.count_request(None, Some(BodySkip::Encoded));
            if fallback && plugin.role == Role::Client {
                // Unread body: judged from method, path and headers alone (a body-dependent
                // path counts as unsafe), routed to the default cluster.
                let judgement = guard::judge_request(&plugin, self.slot(), b"", &self.request);
                if !judgement.safe {
                    self.unsafe_reason = Some(judgement.reason);
                }
                host::set_header(
                    MapType::HttpRequestHeaders,
                    &plugin.config.fallback.cluster_header,
                    &plugin.config.fallback.default_cluster,
                );
            }
            return Action::Continue;
        }
        let managed = match plugin.role {
            Role::Client | Role::Status => fallback,
            Role::Upstream => match self.request_id.clone() {
                Some(id) => match fallback::attempt_needs_body(&plugin, &id) {
                    Some((_, true)) => true,
                    Some((target, false)) => {
                        // The body already asks this model under its own name: nothing to read.
                        self.scanner = None;
                        self.count_request(Some(&target), None);
                        self.attempt_model = Some(target);
                        false
                    }
                    None => false,
                },
                None => false,
            },
        };
        if managed {
            // Hold the headers until the body is read: the client filter picks the cluster
            // from the model, the upstream filter may rewrite the body (and content-length).
            self.holding_request = true;
            return Action::Pause;
        }
        Action::Continue
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        if !self.holding_request {
            self.scan_request_chunk(body_size, end_of_stream);
            return Action::Continue;
        }
        if !end_of_stream {
            // Envoy buffers the body until the end (the router buffers it for retries anyway).
            return Action::Pause;
        }
        self.holding_request = false;
        let body = host::buffer(BufferType::HttpRequestBody, 0, body_size).unwrap_or_default();
        match self.plugin.as_ref().map(|p| p.role) {
            Some(Role::Client) => self.client_body_complete(body),
            Some(Role::Upstream) => {
                self.upstream_body_complete(body, body_size);
                Action::Continue
            }
            Some(Role::Status) | None => Action::Continue,
        }
    }

    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        if self.holding_request {
            // A body with trailers: its end is signalled here, not by the body callback.
            self.holding_request = false;
            let size = usize::MAX >> 1;
            let body = host::buffer(BufferType::HttpRequestBody, 0, size).unwrap_or_default();
            let len = body.len();
            return match self.plugin.as_ref().map(|p| p.role) {
                Some(Role::Client) => self.client_body_complete(body),
                Some(Role::Upstream) => {
                    self.upstream_body_complete(body, len);
                    Action::Continue
                }
                Some(Role::Status) | None => Action::Continue,
            };
        }
        Action::Continue
    }

    fn on_http_response_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        let Some(plugin) = self.plugin.clone() else {
            return Action::Continue;
        };
        let status = host::header(MapType::HttpResponseHeaders, ":status")
            .and_then(|s| std::str::from_utf8(&s).ok()?.parse::<u16>().ok())
            .unwrap_or(0);
        self.status = status;
        if plugin.role != Role::Upstream {
            // Upstream answers were judged by the upstream filter; only Envoy's own replies
            // (timeouts, connect failures, no healthy upstream) are left to judge here.
            if status >= 400 {
                let details = host::property(vec!["response", "code_details"])
                    .and_then(|d| String::from_utf8(d).ok());
                if let Some(details) = details.filter(|d| d != "via_upstream") {
                    self.judge(status, b"", Some(&details));
                }
            }
            if let Some(id) = self.request_id.clone() {
                fallback::explain(&id, status);
            }
            self.block_client_retry(&plugin, status);
            return Action::Continue;
        }
        if (200..300).contains(&status) {
            plugin
                .metrics
                .increment(Counter::Responses(self.slot(), ErrorClass::Ok));
            self.answered = true;
            if let (Some(id), Some(model)) = (&self.request_id, &self.attempt_model) {
                fallback::succeeded(&plugin, id, model);
            }
            let content_type = host::header(MapType::HttpResponseHeaders, "content-type")
                .unwrap_or_default()
                .to_ascii_lowercase();
            if !end_of_stream {
                if content_type.starts_with(b"text/event-stream") {
                    self.response = Response::Stream(Box::default());
                } else if content_type.starts_with(b"application/json") {
                    self.response = Response::Json(UsageTail::default());
                }
            }
            return Action::Continue;
        }
        if end_of_stream {
            if let Some(verdict) = self.judge(status, b"", None) {
                self.after_answer(&verdict, true);
            }
            return Action::Continue;
        }
        self.response = Response::Holding {
            status,
            body: Vec::new(),
        };
        Action::Pause
    }

    fn on_http_response_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        let cap = self.max_body();
        match &mut self.response {
            Response::Idle => Action::Continue,
            Response::Holding { body, .. } => {
                // Paused: `body_size` is everything buffered so far; read only what is new.
                let want = body_size.min(cap).saturating_sub(body.len());
                if want > 0 {
                    if let Some(chunk) =
                        host::buffer(BufferType::HttpResponseBody, body.len(), want)
                    {
                        body.extend_from_slice(&chunk);
                    }
                }
                if end_of_stream || body_size >= cap {
                    self.finish_response();
                    Action::Continue
                } else {
                    Action::Pause
                }
            }
            Response::Stream(_) => {
                let chunk =
                    host::buffer(BufferType::HttpResponseBody, 0, body_size).unwrap_or_default();
                self.observe_stream(&chunk, end_of_stream);
                if end_of_stream {
                    self.response = Response::Idle;
                }
                Action::Continue
            }
            Response::Json(tail) => {
                if let Some(chunk) = host::buffer(BufferType::HttpResponseBody, 0, body_size) {
                    tail.feed(&chunk);
                }
                if end_of_stream {
                    self.finish_response();
                }
                Action::Continue
            }
        }
    }

    fn on_http_response_trailers(&mut self, _num_trailers: usize) -> Action {
        self.finish_response();
        Action::Continue
    }
}
