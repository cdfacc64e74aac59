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
use super::observe::{JsonObserver, StreamObserver};
use super::{fallback, guard, holds, host, identity, requests, Plugin, Role};
use crate::attempt::{EndFacts, Ending};
use crate::classify::{classify_with, Answer, ErrorClass, Verdict};
use crate::config::MaxTokensPolicy;
use crate::inflate::{self, Encoding};
use crate::model_field::{ModelScanner, Skip};
use crate::sse::Usage;
use crate::stats::{BodySkip, Counter, Direction, ModelSlot};
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, BufferType, MapType};
use std::rc::Rc;

/// Most bytes a compressed request body is inflated to (the listener's buffer limit).
const MAX_DECODED_REQUEST: usize = 32 * 1024 * 1024;

/// Response header the upstream filter sets to have the router retry (`retriable_headers`).
pub const RETRY_MARKER: &str = "x-llm-retry";
/// Seconds to wait before that retry (`rate_limited_retry_back_off.reset_headers`).
pub const RETRY_AFTER_MARKER: &str = "x-llm-retry-after-s";

/// What the filter is doing with the answer.
enum Response {
    /// Nothing to do (no answer yet, or done).
    Idle,
    /// An error answer: headers held, body being read up to the cap (still encoded).
    Holding {
        status: u16,
        body: Vec<u8>,
        encoding: Encoding,
    },
    /// A 200 event stream whose headers are held until its first event shows whether it
    /// really started (`held`: body bytes read so far).
    StreamStart {
        observer: Box<StreamObserver>,
        held: usize,
    },
    /// A 200 event stream, observed for error events and usage.
    Stream(Box<StreamObserver>),
    /// A 200 JSON answer, observed for usage.
    Json(Box<JsonObserver>),
}

pub struct Stream {
    pub(super) plugin: Option<Rc<Plugin>>,
    /// This stream's context id (the hold timer releases streams by it).
    context_id: u32,
    /// Upstream position: the answer's body reached its end.
    complete: bool,
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
    /// The request body's `content-encoding`.
    request_encoding: Encoding,
    /// Client position: this filter answered the request itself (its reply is not judged).
    local_reply: bool,
}

impl Stream {
    pub fn new(plugin: Option<Rc<Plugin>>, context_id: u32) -> Self {
        Self {
            plugin,
            context_id,
            complete: false,
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
            request_encoding: Encoding::Identity,
            local_reply: false,
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
        let mut verdict = classify_with(&answer, &plugin.rules);
        let max_wait = plugin.config.fallback.max_stated_wait_ms;
        if let Some(outcome) = crate::plan::bound_wait(&mut verdict, max_wait) {
            plugin.metrics.increment(Counter::WaitHints(outcome));
            log::info!("stated wait {outcome:?} (at most {max_wait} ms is honoured)");
        }
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

    /// Feeds a chunk of a released 200 stream to its observer: error events after the start
    /// are counted and feed the model's health (they are never retried: the client has bytes).
    fn observe_stream(&mut self, chunk: &[u8], end: bool) {
        let Response::Stream(observer) = &mut self.response else {
            return;
        };
        let errors = observer.feed(chunk, end);
        let usage = end.then(|| observer.usage());
        for payload in errors {
            self.stream_error(&payload);
        }
        if let Some(usage) = usage {
            self.count_tokens(usage);
        }
    }

    /// An error event inside a stream whose start already reached the client.
    fn stream_error(&self, payload: &[u8]) {
        let Some(plugin) = &self.plugin else { return };
        let slot = self.slot();
        let verdict = self.stream_verdict(plugin, payload);
        plugin
            .metrics
            .increment(Counter::StreamErrors(slot, verdict.class));
        log::warn!(
            "error event inside a 200 stream for model {}: {} ({}); not retried, bytes reached the client",
            plugin.metrics.set.label(slot),
            verdict.class.as_str(),
            verdict.reason
        );
        self.record_model_failure(plugin, &verdict);
    }

    fn stream_verdict(&self, plugin: &Plugin, payload: &[u8]) -> Verdict {
        let answer = Answer {
            status: 200,
            headers: &[],
            body: payload,
            code_details: None,
            now_unix_ms: host::now_unix_ms(),
        };
        let mut verdict = classify_with(&answer, &plugin.rules);
        crate::plan::bound_wait(&mut verdict, plugin.config.fallback.max_stated_wait_ms);
        verdict
    }

    /// Feeds a failure seen after the answer started (a stream error, a cut) into the model's
    /// health without planning another attempt.
    fn record_model_failure(&self, plugin: &Plugin, verdict: &Verdict) {
        let Some(model) = self
            .attempt_model
            .as_deref()
            .and_then(|m| plugin.config.model(m))
        else {
            return;
        };
        let seed = self.request_id.as_deref().unwrap_or(&model.name);
        fallback::record_failure(plugin, seed, model, verdict, host::now_unix_ms());
    }

    /// A 200 event stream's start: holds its headers until the first event that is not a
    /// prelude arrives, the hold's bytes or time run out, or the stream ends. An error as that
    /// first event is judged exactly like an error answer (retry, fall back), since the client
    /// has seen nothing yet.
    fn stream_start(&mut self, body_size: usize, end: bool) -> Action {
        let Some(plugin) = self.plugin.clone() else {
            return Action::Continue;
        };
        let Response::StreamStart { observer, held } = &mut self.response else {
            return Action::Continue;
        };
        let released = holds::take_released(self.context_id);
        // Paused: `body_size` is everything buffered so far; read only what is new.
        let fresh = if released {
            host::buffer(BufferType::HttpResponseBody, 0, body_size).unwrap_or_default()
        } else {
            let new = body_size.saturating_sub(*held);
            let chunk = host::buffer(BufferType::HttpResponseBody, *held, new).unwrap_or_default();
            *held = body_size;
            chunk
        };
        let errors = observer.feed(&fresh, end);
        let started = observer.content_events() > 0;
        let opened_with_error = observer.opened_with_error();
        let full = *held >= plugin.config.fallback.stream_start.max_bytes;
        if released {
            // The timer already sent the headers: this is an ordinary stream now.
            self.release_stream(false);
            for payload in errors {
                self.stream_error(&payload);
            }
            return Action::Continue;
        }
        if let (Some(payload), true) = (errors.first(), opened_with_error) {
            holds::forget(self.context_id);
            let verdict = self.stream_verdict(&plugin, payload);
            let slot = self.slot();
            plugin
                .metrics
                .increment(Counter::Responses(slot, verdict.class));
            log::info!(
                "upstream 200 stream for model {} opened with an error event: {} ({})",
                plugin.metrics.set.label(slot),
                verdict.class.as_str(),
                verdict.reason
            );
            annotate(&verdict);
            // Judged in full: if Envoy re-sends, this attempt's end is not a cut; if it cannot,
            // the client gets the stream as the upstream sent it, still observed for usage.
            self.complete = true;
            self.response = match std::mem::replace(&mut self.response, Response::Idle) {
                Response::StreamStart { observer, .. } => Response::Stream(observer),
                other => other,
            };
            self.after_answer(&verdict, true);
            return Action::Continue;
        }
        if started || full || end {
            // Content came first: any error after it is an error inside the stream.
            self.release_stream(true);
            for payload in errors {
                self.stream_error(&payload);
            }
            return Action::Continue;
        }
        Action::Pause
    }

    /// The held stream turned out fine (or the hold ran out): count it a success and observe
    /// the rest as it flows.
    fn release_stream(&mut self, by_callback: bool) {
        if by_callback {
            holds::forget(self.context_id);
        }
        if let Response::StreamStart { .. } = self.response {
            if let Response::StreamStart { observer, .. } =
                std::mem::replace(&mut self.response, Response::Idle)
            {
                self.response = Response::Stream(observer);
            }
            self.succeeded();
        }
    }

    /// A 2xx answer: counted, and the model's health told.
    fn succeeded(&mut self) {
        let Some(plugin) = self.plugin.clone() else {
            return;
        };
        plugin
            .metrics
            .increment(Counter::Responses(self.slot(), ErrorClass::Ok));
        self.answered = true;
        if let (Some(id), Some(model)) = (&self.request_id, &self.attempt_model) {
            fallback::succeeded(&plugin, id, model);
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
        self.complete = true;
        match std::mem::replace(&mut self.response, Response::Idle) {
            Response::Holding {
                status,
                body,
                encoding,
            } => {
                let decoded = match encoding {
                    Encoding::Identity | Encoding::Other => None,
                    encoding => inflate::inflate_prefix(encoding, &body, self.max_body()),
                };
                let plain = decoded.as_deref().unwrap_or(&body);
                if let Some(verdict) = self.judge(status, plain, None) {
                    self.after_answer(&verdict, true);
                }
            }
            Response::Stream(observer) => {
                self.response = Response::Stream(observer);
                self.observe_stream(&[], true);
                self.response = Response::Idle;
            }
            start @ Response::StreamStart { .. } => {
                // Trailers while the start was held: release what there is.
                self.response = start;
                self.release_stream(true);
                self.observe_stream(&[], true);
                self.response = Response::Idle;
            }
            Response::Json(observer) => self.count_tokens(observer.usage()),
            Response::Idle => {}
        }
    }

    /// Tokens of an answer cut short, as far as they were seen.
    fn count_partial_usage(&mut self) {
        let usage = match std::mem::replace(&mut self.response, Response::Idle) {
            Response::Stream(observer) | Response::StreamStart { observer, .. } => observer.usage(),
            Response::Json(observer) => observer.usage(),
            Response::Holding { .. } | Response::Idle => return,
        };
        self.count_tokens(usage);
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
        let body = match self.request_encoding {
            Encoding::Identity => body,
            encoding => match inflate::inflate_complete(encoding, &body, MAX_DECODED_REQUEST) {
                Some(decoded) => decoded,
                None => {
                    // Unreadable: judged from method, path and headers alone, routed to the
                    // default cluster.
                    return self.client_unreadable_body();
                }
            },
        };
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
                self.local_reply = true;
                return Action::Pause;
            }
            self.idempotency = Some((index, hash));
        }
        // Every cluster the request's chain can reach: a key makes a re-send harmless only if
        // each of them deduplicates by it.
        let default_cluster = plugin.config.fallback.default_cluster.as_str();
        let clusters: Vec<&str> = match &field {
            Ok(f) => crate::plan::chain(&plugin.config, &f.value, self.request.task.as_deref())
                .into_iter()
                .map(|m| m.cluster_or(default_cluster))
                .collect(),
            Err(_) => Vec::new(),
        };
        let judgement = guard::judge_request(&plugin, slot, &body, &self.request, &clusters);
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
                fallback::Start::Route { cluster: c } => {
                    cluster = c;
                    let encoding = self.request_encoding;
                    requests::with(&id, |s| s.body_encoding = encoding);
                }
                fallback::Start::Refuse => {
                    // Answered locally, nothing was sent: the key is free again.
                    if let Some((index, hash)) = self.idempotency.take() {
                        guard::release(index, hash);
                    }
                    self.local_reply = true;
                    return Action::Pause;
                }
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

    /// Client position, a body that cannot be read (an encoding the filter does not decode, or
    /// one that does not decode): judged from method, path and headers alone (a body-dependent
    /// path counts as unsafe), routed to the default cluster, counted.
    fn client_unreadable_body(&mut self) -> Action {
        self.scanner = None;
        self.count_request(None, Some(BodySkip::Encoded));
        let Some(plugin) = self.plugin.clone() else {
            return Action::Continue;
        };
        // Duplicates are refused whatever the body's encoding.
        if let Some((index, hash)) = guard::idempotency(&plugin, &self.request) {
            if let Err(why) = guard::claim(&plugin, index, hash) {
                guard::refuse_duplicate(&plugin, self.slot(), why);
                self.local_reply = true;
                return Action::Pause;
            }
            self.idempotency = Some((index, hash));
        }
        let judgement = guard::judge_request(&plugin, self.slot(), b"", &self.request, &[]);
        if !judgement.safe {
            self.unsafe_reason = Some(judgement.reason);
        }
        host::set_header(
            MapType::HttpRequestHeaders,
            &plugin.config.fallback.cluster_header,
            &plugin.config.fallback.default_cluster,
        );
        Action::Continue
    }

    /// Upstream position, whole body read: ask this attempt's model.
    fn upstream_body_complete(&mut self, body: Vec<u8>, body_size: usize) {
        self.scanner = None;
        let Some(plugin) = self.plugin.clone() else {
            return;
        };
        // A compressed body is rewritten from its decoded bytes and sent plain (the
        // `content-encoding` goes with it); one that does not decode is sent as it came.
        let (body, decoded) = match self.request_encoding {
            Encoding::Identity => (body, false),
            encoding => match inflate::inflate_complete(encoding, &body, MAX_DECODED_REQUEST) {
                Some(plain) => (plain, true),
                None => (body, false),
            },
        };
        let Some(id) = self.request_id.clone() else {
            return;
        };
        let field = crate::model_field::find_model(&body);
        let target = requests::with(&id, |state| {
            state.tried.push(state.next.clone());
            state.proven_rejection = false;
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
        // A compressed original goes out plain on every attempt, rewritten or not: the headers
        // (no content-encoding, this content-length) carry over to the next attempt.
        if decoded && out.is_none() {
            out = Some(body.clone());
        }
        if let Some(rewritten) = out {
            if host::set_body(BufferType::HttpRequestBody, body_size, &rewritten) {
                host::set_header(
                    MapType::HttpRequestHeaders,
                    "content-length",
                    &rewritten.len().to_string(),
                );
                if decoded {
                    host::remove_header(MapType::HttpRequestHeaders, "content-encoding");
                }
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

impl Stream {
    /// Upstream position, attempt over: an attempt that did not end with a complete answer is
    /// told apart by what Envoy recorded ([`Ending`]).
    fn upstream_done(&mut self, plugin: &Plugin) {
        // Headers held and never released: the client saw nothing of this answer.
        let unreleased = matches!(self.response, Response::StreamStart { .. })
            && holds::is_held(self.context_id);
        holds::forget(self.context_id);
        if self.attempt_model.is_none() || (self.answered && self.complete) {
            return;
        }
        if unreleased {
            self.answered = false;
        }
        let flags = host::property(vec!["response", "flags"])
            .map_or(0, |b| crate::attempt::flags_from_property(&b));
        let details = host::property(vec!["response", "code_details"])
            .and_then(|d| String::from_utf8(d).ok());
        let transport = host::property(vec!["upstream", "transport_failure_reason"])
            .and_then(|d| String::from_utf8(d).ok());
        let facts = EndFacts {
            flags,
            code_details: details.as_deref(),
            transport_failure: transport.as_deref(),
            answered: self.answered,
            complete: self.complete,
        };
        let Some(ending) = Ending::of(&facts) else {
            return;
        };
        let slot = self.slot();
        let label = plugin.metrics.set.label(slot).to_owned();
        match ending {
            Ending::ClientGone => {
                plugin.metrics.increment(Counter::ClientCancels(slot));
                log::info!("the client left before {label} finished: not counted against it");
                self.count_partial_usage();
            }
            Ending::CutShort => {
                plugin.metrics.increment(Counter::AnswersCut(slot));
                self.count_partial_usage();
                if let Some(verdict) = ending.verdict() {
                    log::warn!(
                        "{label}: {} (not retried: bytes reached the client)",
                        verdict.reason
                    );
                    self.record_model_failure(plugin, &verdict);
                }
            }
            Ending::ConnectFailure | Ending::NoAnswer => {
                if self.answered {
                    return;
                }
                if let Some(verdict) = ending.verdict() {
                    plugin
                        .metrics
                        .increment(Counter::Responses(slot, verdict.class));
                    self.after_answer(&verdict, false);
                }
            }
        }
    }
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
            Role::Upstream => self.upstream_done(&plugin),
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
        let request_headers = MapType::HttpRequestHeaders;
        let encoding = match plugin.role {
            Role::Upstream => {
                // The answers this filter judges must be readable: ask for plain bytes. The
                // client gets the same bytes the filter read (see `inflate` for upstreams that
                // compress anyway).
                host::set_header(request_headers, "accept-encoding", "identity");
                // The routing header is internal: it never reaches a provider.
                host::remove_header(request_headers, &plugin.config.fallback.cluster_header);
                if fallback {
                    self.request_id = identity::of_attempt();
                }
                // The client's encoding, as the client filter recorded it: an earlier attempt
                // may have removed the header while the router replays the original bytes.
                let recorded = self
                    .request_id
                    .as_deref()
                    .and_then(|id| requests::with(id, |s| s.body_encoding));
                match recorded {
                    Some(Encoding::Identity) => None,
                    Some(Encoding::Gzip) => Some(b"gzip".to_vec()),
                    Some(Encoding::Deflate) => Some(b"deflate".to_vec()),
                    Some(Encoding::Other) | None => {
                        host::header(request_headers, "content-encoding")
                    }
                }
            }
            Role::Client if fallback => {
                self.request = RequestHeaders::read(&plugin.config);
                identity::apply_trust(&plugin, &mut self.request);
                self.request_id = identity::mint();
                self.request.content_encoding.clone()
            }
            Role::Client | Role::Status => {
                // Nothing to route: a client's copy of the routing header must not steer Envoy,
                // and the filter's policy headers are not for providers.
                let config = &plugin.config;
                for name in [
                    &config.fallback.cluster_header,
                    &config.fallback.priority_header,
                    &config.fallback.task_header,
                    &config.retry_safety.header,
                ] {
                    host::remove_header(request_headers, name);
                }
                host::header(request_headers, "content-encoding")
            }
        };
        let encoding = Encoding::of_header(encoding.as_deref());
        if end_of_stream {
            if fallback && plugin.role == Role::Client {
                // No body: judge and route now.
                return self.client_body_complete(Vec::new());
            }
            self.scanner = None;
            self.count_request(None, None);
            return Action::Continue;
        }
        if encoding != Encoding::Identity {
            self.request_encoding = encoding;
        }
        let readable = encoding.readable() && (fallback || encoding == Encoding::Identity);
        if !readable {
            if fallback && plugin.role == Role::Client {
                return self.client_unreadable_body();
            }
            self.scanner = None;
            self.count_request(None, Some(BodySkip::Encoded));
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
            if self.request_encoding == Encoding::Identity {
                self.scan_request_chunk(body_size, end_of_stream);
            } else if end_of_stream && self.scanner.take().is_some() {
                // A compressed body that is not held (another model is not needed): counted,
                // not read.
                self.count_request(None, Some(BodySkip::Encoded));
            }
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
        if plugin.role != Role::Upstream && self.local_reply {
            // The filter's own answer (a duplicate, a batch refusal, an exhausted chain) says
            // what it is already: nothing to judge or explain.
            return Action::Continue;
        }
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
        // Only this filter tells Envoy to retry: the same headers from an upstream (another
        // proxy, a provider) are removed before anything else looks at the answer.
        let answer = MapType::HttpResponseHeaders;
        host::remove_header(answer, RETRY_MARKER);
        host::remove_header(answer, RETRY_AFTER_MARKER);
        if (200..300).contains(&status) {
            if end_of_stream {
                self.complete = true;
                self.succeeded();
                return Action::Continue;
            }
            let content_type = host::header(MapType::HttpResponseHeaders, "content-type")
                .unwrap_or_default()
                .to_ascii_lowercase();
            let is_stream = content_type.starts_with(b"text/event-stream");
            let is_json = content_type.starts_with(b"application/json");
            let encoding = if is_stream || is_json {
                Encoding::of_header(
                    host::header(MapType::HttpResponseHeaders, "content-encoding").as_deref(),
                )
            } else {
                Encoding::Identity
            };
            let hold = &plugin.config.fallback.stream_start;
            if is_stream && hold.enabled && self.attempt_model.is_some() && encoding.readable() {
                // Held until the first event shows how the stream started.
                self.answered = true;
                holds::hold(
                    self.context_id,
                    host::now_unix_ms().saturating_add(hold.max_hold_ms),
                );
                self.response = Response::StreamStart {
                    observer: Box::new(StreamObserver::new(encoding)),
                    held: 0,
                };
                return Action::Pause;
            }
            self.succeeded();
            if is_stream && encoding.readable() {
                self.response = Response::Stream(Box::new(StreamObserver::new(encoding)));
            } else if is_json && encoding.readable() {
                self.response = Response::Json(Box::new(JsonObserver::new(encoding)));
            }
            return Action::Continue;
        }
        if end_of_stream {
            self.complete = true;
            if let Some(verdict) = self.judge(status, b"", None) {
                self.after_answer(&verdict, true);
            }
            return Action::Continue;
        }
        let encoding = Encoding::of_header(
            host::header(MapType::HttpResponseHeaders, "content-encoding").as_deref(),
        );
        self.response = Response::Holding {
            status,
            body: Vec::new(),
            encoding,
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
            Response::StreamStart { .. } => {
                let action = self.stream_start(body_size, end_of_stream);
                if end_of_stream {
                    self.complete = true;
                    if let Response::Stream(_) = self.response {
                        self.count_partial_usage();
                    }
                }
                action
            }
            Response::Stream(_) => {
                let chunk =
                    host::buffer(BufferType::HttpResponseBody, 0, body_size).unwrap_or_default();
                self.observe_stream(&chunk, end_of_stream);
                if end_of_stream {
                    self.complete = true;
                    self.response = Response::Idle;
                }
                Action::Continue
            }
            Response::Json(observer) => {
                if let Some(chunk) = host::buffer(BufferType::HttpResponseBody, 0, body_size) {
                    observer.feed(&chunk);
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
