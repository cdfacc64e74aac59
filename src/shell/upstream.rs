//! The upstream position (`root_id: upstream`, an upstream filter of each LLM cluster, inside
//! the router's retry loop): once per attempt, asks the attempt's model, judges the answer
//! (error answers: headers held while at most `classifier.max_body_bytes` of the body are read;
//! 2xx: untouched, streams observed with their start held until the first event, a short JSON
//! body held whole and read for an error inside, anything longer unbuffered),
//! tells the model's health, and marks the answer for retry when another attempt can help.

use super::apply::{apply, coarse_now_ms, HostClock};
use super::count::{self, Position, Streaming};
use super::observe::{ErrorEvent, JsonObserver, StreamObserver};
use super::{holds, host, identity, meter, raw, requests, Plugin};
use crate::attempt::{EndFacts, Ending};
use crate::classify::{Answer, ErrorClass, Verdict};
use crate::flow::answer::{
    self, BodySeen, BodyStep, Head, Holds, Kind, Plan, StartSeen, StartStep,
};
use crate::flow::attempt::{self, Seen, RETRY_AFTER_MARKER, RETRY_MARKER};
use crate::flow::{Cx, Effects};
use crate::inflate::{self, Encoding};
use crate::sse::Usage;
use crate::stats::{BodySkip, Counter, Direction, ModelSlot};
use proxy_wasm::traits::{Context, HttpContext};
use proxy_wasm::types::{Action, BufferType, MapType};
use std::borrow::Cow;
use std::rc::Rc;

/// Most bytes a compressed request body is inflated to (the listener's buffer limit).
const MAX_DECODED_REQUEST: usize = 32 * 1024 * 1024;

/// A held answer's bytes as the classifier reads them: inflated (up to `cap`) when the upstream
/// compressed them anyway, else as they are.
fn decoded(encoding: Encoding, body: &[u8], cap: usize) -> Cow<'_, [u8]> {
    let inflated = match encoding {
        Encoding::Identity | Encoding::Other => None,
        encoding => inflate::inflate_prefix(encoding, body, cap),
    };
    inflated.map_or(Cow::Borrowed(body), Cow::Owned)
}

/// Reads the response bytes buffered beyond `body`, up to `upto` in all (paused: a body
/// callback's size is everything buffered so far).
fn read_held(body: &mut Vec<u8>, upto: usize) {
    let want = upto.saturating_sub(body.len());
    if want > 0 {
        if let Some(chunk) = host::buffer(BufferType::HttpResponseBody, body.len(), want) {
            body.extend_from_slice(&chunk);
        }
    }
}

/// Where the attempt's request is.
enum Sending {
    /// Streaming through; counted under the model its body names (no models configured).
    Counting(Box<Streaming>),
    /// Headers held until the whole body is read (it may be rewritten).
    AwaitingBody,
    /// Gone upstream as it is, or rewritten.
    Sent,
}

/// What the filter does with the answer.
enum Answering {
    /// No answer yet (or nothing to do with it).
    Awaiting,
    /// An error answer: headers held, body being read up to the cap (still encoded).
    Holding {
        body: Vec<u8>,
        encoding: Encoding,
        headers: Vec<(String, String)>,
    },
    /// A 200 event stream whose headers are held until its first event shows whether it really
    /// started (`held`: body bytes read so far).
    StreamStart {
        observer: Box<StreamObserver>,
        held: usize,
    },
    /// A 200 event stream, observed for error events and usage.
    Stream(Box<StreamObserver>),
    /// A 200 JSON answer whose headers are held while its body is read whole, if short (still
    /// encoded).
    JsonBody {
        body: Vec<u8>,
        encoding: Encoding,
        headers: Vec<(String, String)>,
    },
    /// A 200 JSON answer, observed for usage (`tail_only`: plain bytes, of which only each
    /// chunk's tail is read).
    Json {
        observer: Box<JsonObserver>,
        tail_only: bool,
    },
    /// Judged; the rest streams through.
    Judged,
}

pub struct UpstreamContext {
    plugin: Rc<Plugin>,
    /// This stream's context id (the hold timer releases streams by it).
    context_id: u32,
    /// The request this attempt belongs to (fallback mode).
    id: Option<String>,
    /// The model this attempt asks.
    model: Option<String>,
    /// Its place among the request's attempts (0 until it has started).
    number: usize,
    slot: ModelSlot,
    sending: Sending,
    answering: Answering,
    /// The client's body encoding.
    encoding: Encoding,
    /// The answer's status.
    status: u16,
    /// Whether an answer (or its absence) was already judged.
    answered: bool,
    /// The answer's body reached its end.
    complete: bool,
    /// A 200 stream's first event was timed.
    first_event_seen: bool,
    /// When this attempt started, for a model with a latency condition.
    started_ms: Option<u64>,
    /// The answer is JSON (its latency may be judged per output token at its end).
    json_answer: bool,
    /// When this attempt started, kept for its JSON answer's time per output token.
    per_token_from_ms: Option<u64>,
}

impl UpstreamContext {
    pub fn new(plugin: Rc<Plugin>, context_id: u32) -> Self {
        Self {
            plugin,
            context_id,
            id: None,
            model: None,
            number: 0,
            slot: ModelSlot::default(),
            sending: Sending::Sent,
            answering: Answering::Awaiting,
            encoding: Encoding::Identity,
            status: 0,
            answered: false,
            complete: false,
            first_event_seen: false,
            started_ms: None,
            json_answer: false,
            per_token_from_ms: None,
        }
    }

    fn count(&mut self, model: Option<&str>) {
        self.slot = count::count(&self.plugin, Position::Upstream, model, None);
    }

    fn seed(&self) -> &str {
        self.id
            .as_deref()
            .or(self.model.as_deref())
            .unwrap_or_default()
    }

    /// Whole body read: ask this attempt's model (rewritten, `max_tokens` clamped).
    fn body_complete(&mut self, body: Vec<u8>, body_size: usize) {
        self.sending = Sending::Sent;
        // A compressed body is rewritten from its decoded bytes and sent plain (the
        // `content-encoding` goes with it); one that does not decode is sent as it came.
        let (body, decoded) = match self.encoding {
            Encoding::Identity => (body, false),
            encoding => match inflate::inflate_complete(encoding, &body, MAX_DECODED_REQUEST) {
                Some(plain) => (plain, true),
                None => (body, false),
            },
        };
        let Some(id) = self.id.clone() else { return };
        let clock = HostClock::default();
        let plugin = Rc::clone(&self.plugin);
        let cx = plugin.cx(&clock);
        let rewrite = requests::with(&id, |r| attempt::rewrite(&cx, r, &body, decoded)).flatten();
        let Some(rewrite) = rewrite else {
            self.count(None);
            return;
        };
        if let Some(bytes) = &rewrite.body {
            let request = MapType::HttpRequestHeaders;
            if host::set_body(BufferType::HttpRequestBody, body_size, bytes) {
                host::set_header(request, "content-length", &bytes.len().to_string());
                if decoded {
                    host::remove_header(request, "content-encoding");
                }
                log::debug!("attempt asks {}", rewrite.target);
            }
        }
        self.count(Some(&rewrite.target));
        self.model = Some(rewrite.target);
        self.number = rewrite.number;
    }

    /// Applies a step's effects. A cluster the host would not let it name stays unnamed in
    /// the request's state too: the router's next pick goes where the route still points.
    fn apply(&self, plugin: &Plugin, map: MapType, out: Effects) {
        let applied = apply(plugin, map, out);
        if let (Some(kept), Some(id)) = (applied.unnamed, self.id.as_deref()) {
            requests::with(id, |r| attempt::not_named(r, kept));
        }
    }

    /// Judges an answer and decides what follows; `seen` says whether its headers can be
    /// written.
    fn judged(&mut self, cx: &Cx<'_>, verdict: &Verdict, seen: Seen, out: &mut Effects) {
        self.answered = true;
        let (Some(id), Some(model)) = (self.id.clone(), self.model.clone()) else {
            return;
        };
        if verdict.class == ErrorClass::Ok {
            if requests::with(&id, |r| attempt::succeeded(cx, Some(r), &id, &model, out)).is_none()
            {
                attempt::succeeded(cx, None, &id, &model, out);
            }
            return;
        }
        let status = self.status;
        let planned = requests::with(&id, |r| {
            let attempt = attempt::Tried {
                model: &model,
                number: self.number,
            };
            attempt::after_failure(cx, r, &id, attempt, status, verdict, seen, out)
        });
        if let (None, Some(config)) = (planned, cx.config.model(&model)) {
            // The request's state is gone (evicted): the model's health still learns.
            attempt::record_failure(cx, &id, config, verdict, out);
        }
    }

    /// A 2xx answer: counted, and the model's health told.
    fn succeeded(&mut self) {
        self.plugin
            .metrics
            .increment(Counter::Responses(self.slot, ErrorClass::Ok));
        let plugin = Rc::clone(&self.plugin);
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        // Read before the success is judged (only for a timed attempt).
        let probe = self.started_ms.is_some() && self.probing();
        let mut out = Effects::default();
        self.judged(&cx, &Verdict::ok(), Seen::Answer, &mut out);
        self.timed_answer(&cx, probe, &mut out);
        self.apply(&plugin, MapType::HttpResponseHeaders, out);
    }

    /// Whether this attempt probes its model's half-open circuit.
    fn probing(&self) -> bool {
        self.id
            .as_deref()
            .and_then(|id| requests::with(id, |r| r.probe))
            .unwrap_or(false)
    }

    /// A success of a timed model: its answer time goes to its canary's comparison, and into
    /// the model's shared record when it has a latency condition (its circuit opens when the
    /// condition holds).
    fn timed_answer(&mut self, cx: &Cx<'_>, probe: bool, out: &mut Effects) {
        let (Some(started), Some(model)) = (self.started_ms.take(), self.model.as_deref()) else {
            return;
        };
        let now = host::now_unix_ms();
        let time = now.saturating_sub(started);
        if !cx.config.fallback.canaries.is_empty() {
            attempt::canary_time(cx, model, time, out);
        }
        let Some(rule) = cx.config.switch_rule(model).latency else {
            return;
        };
        if self.json_answer && rule.per_token().is_some() {
            // Judged per output token once its `usage` is read, at the body's end.
            self.per_token_from_ms = Some(started);
            return;
        }
        let kind = crate::flow::latency::Kind::Head;
        if let Some(ms) = self.read_latency(&rule, kind, now, time, probe) {
            let what = format!(
                "answer time {ms} ms (P95, or a probe's) above {} ms",
                rule.threshold_ms()
            );
            attempt::open_for_latency(cx, self.seed(), model, &what, out);
        }
    }

    /// Counts a latency sample into the model's shared record; `Some` when its circuit opens.
    fn read_latency(
        &self,
        rule: &crate::config::switch::LatencyRule,
        kind: crate::flow::latency::Kind,
        now: u64,
        value: u64,
        probe: bool,
    ) -> Option<u64> {
        let model = self.model.as_deref()?;
        let mut slow = None;
        host::cas_update(&crate::flow::latency::key(model, kind), |current| {
            let mut record = crate::flow::latency::LatencyRecord::decode(current);
            slow = attempt::latency_reading(rule, kind, &mut record, now, value, probe);
            Some(record.encode())
        });
        slow
    }

    /// A JSON answer of a model judged per output token: its whole time over its output tokens.
    fn per_token_latency(&mut self, output_tokens: Option<u64>) {
        let (Some(started), Some(tokens)) = (self.per_token_from_ms.take(), output_tokens) else {
            return;
        };
        let plugin = Rc::clone(&self.plugin);
        let Some(model) = self.model.clone() else {
            return;
        };
        let Some(rule) = plugin
            .config
            .switch_rule(&model)
            .latency
            .and_then(|l| l.per_token())
        else {
            return;
        };
        let now = host::now_unix_ms();
        let us_per_token = now.saturating_sub(started).saturating_mul(1000) / tokens.max(1);
        let kind = crate::flow::latency::Kind::PerToken;
        if let Some(us) = self.read_latency(&rule, kind, now, us_per_token, self.probing()) {
            let clock = HostClock::default();
            let cx = plugin.cx(&clock);
            let mut out = Effects::default();
            let what = format!(
                "{us} µs per output token (P95, or a probe's) above {} µs",
                rule.threshold_ms()
            );
            attempt::open_for_latency(&cx, self.seed(), &model, &what, &mut out);
            self.apply(&plugin, MapType::HttpResponseHeaders, out);
        }
    }

    /// A whole error answer (or as much as the cap allows): judged, then what follows.
    fn judge_error(&mut self, body: &[u8], headers: &[(String, String)]) {
        let plugin = Rc::clone(&self.plugin);
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        let headers = host::borrowed(headers);
        let answer = Answer {
            status: self.status,
            headers: &headers,
            body,
            code_details: None,
            now_unix_ms: cx.now(),
        };
        let mut out = Effects::default();
        let verdict = attempt::judge(&cx, self.slot, &answer, &mut out);
        self.judged(&cx, &verdict, Seen::Answer, &mut out);
        self.apply(&plugin, MapType::HttpResponseHeaders, out);
    }

    /// An error event inside a stream whose start already reached the client: counted and fed
    /// to the model's health, never retried.
    fn stream_error(&self, event: &ErrorEvent) {
        let plugin = &self.plugin;
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        let verdict = attempt::stream_verdict(&cx, &event.payload, event.exception.as_deref());
        plugin
            .metrics
            .increment(Counter::StreamErrors(self.slot, verdict.class));
        log::warn!(
            "error event inside a 200 stream for model {}: {} ({}); not retried, bytes reached the client",
            plugin.metrics.set.label(self.slot),
            verdict.class.as_str(),
            verdict.reason
        );
        self.record_model_failure(&cx, &verdict);
    }

    /// A failure seen after the answer started (a stream error, a cut): the model's health
    /// learns it; no other attempt is planned.
    fn record_model_failure(&self, cx: &Cx<'_>, verdict: &Verdict) {
        let Some(model) = self.model.as_deref().and_then(|m| cx.config.model(m)) else {
            return;
        };
        let mut out = Effects::default();
        attempt::record_failure(cx, self.seed(), model, verdict, &mut out);
        self.apply(&self.plugin, MapType::HttpResponseHeaders, out);
    }

    fn count_tokens(&self, tokens: Usage) {
        let plugin = &self.plugin;
        let metrics = &plugin.metrics;
        let input = tokens.input_tokens.unwrap_or(0);
        metrics.add(Counter::Tokens(self.slot, Direction::Input), input);
        let output = tokens.output_tokens.unwrap_or(0);
        metrics.add(Counter::Tokens(self.slot, Direction::Output), output);
        let price = self
            .model
            .as_deref()
            .and_then(|m| plugin.config.metering.prices.get(m));
        let (task, key) = self
            .id
            .as_deref()
            .and_then(|id| {
                requests::with(id, |r| {
                    r.metered.spend.add(&tokens, price);
                    r.metered.output_tokens = output;
                    r.metered.usage_seen |=
                        tokens.input_tokens.is_some() || tokens.output_tokens.is_some();
                    (metrics.set.task_slot(r.task.as_deref()), r.metered.key)
                })
            })
            .unwrap_or_else(|| {
                let metering = &plugin.config.metering;
                (
                    metrics.set.task_slot(None),
                    crate::meter::key_slot(metering, None),
                )
            });
        metrics.add(Counter::TaskTokens(task, Direction::Input), input);
        metrics.add(Counter::TaskTokens(task, Direction::Output), output);
        metrics.add(Counter::KeyTokens(key, Direction::Input), input);
        metrics.add(Counter::KeyTokens(key, Direction::Output), output);
        if let Some(price) = price {
            let cost = crate::meter::cost_nanos(price, &tokens);
            metrics.add(Counter::Cost(self.slot, task, key), cost);
        }
        meter::record_tokens(plugin, self.slot, &tokens);
    }

    /// A stream's first event reached the client: its time to first token (once per attempt,
    /// when latency is measured).
    fn first_event(&mut self) {
        if self.first_event_seen {
            return;
        }
        self.first_event_seen = true;
        if !self.plugin.config.metering.latency {
            return;
        }
        if let Some(id) = self.id.as_deref() {
            let now = host::now_unix_ms();
            requests::with(id, |r| r.metered.first_byte_ms = Some(now));
        }
    }

    /// Tokens of an answer that ended or was cut short, as far as they were seen.
    fn count_usage(&mut self) {
        let usage = match std::mem::replace(&mut self.answering, Answering::Judged) {
            Answering::Stream(observer) | Answering::StreamStart { observer, .. } => {
                observer.usage()
            }
            Answering::Json { observer, .. } => observer.usage(),
            Answering::Holding { .. }
            | Answering::JsonBody { .. }
            | Answering::Awaiting
            | Answering::Judged => return,
        };
        self.count_tokens(usage);
    }

    /// Ends whatever the answer was observed for (end of body, or trailers).
    fn finish_answer(&mut self) {
        self.complete = true;
        match std::mem::replace(&mut self.answering, Answering::Judged) {
            Answering::Holding {
                body,
                encoding,
                headers,
            } => {
                let cap = self.plugin.config.classifier.max_body_bytes;
                self.judge_error(&decoded(encoding, &body, cap), &headers);
            }
            Answering::Stream(mut observer) => {
                for event in observer.feed(&[], true) {
                    self.stream_error(&event);
                }
                self.count_tokens(observer.usage());
            }
            Answering::StreamStart { mut observer, .. } => {
                // Trailers while the start was held: release what there is.
                holds::forget(self.context_id);
                self.succeeded();
                for event in observer.feed(&[], true) {
                    self.stream_error(&event);
                }
                self.count_tokens(observer.usage());
            }
            Answering::Json { observer, .. } => {
                let usage = observer.usage();
                self.count_tokens(usage);
                self.per_token_latency(usage.output_tokens);
            }
            Answering::JsonBody {
                body,
                encoding,
                headers,
            } => {
                holds::forget(self.context_id);
                self.judge_json_body(body, encoding, &headers);
            }
            Answering::Awaiting | Answering::Judged => {}
        }
    }

    /// A short 200 JSON answer, whole, its headers still held: an error inside it is judged like
    /// the same error answer (retried, fallen back); otherwise it is the success it says, its
    /// usage counted.
    fn judge_json_body(&mut self, body: Vec<u8>, encoding: Encoding, headers: &[(String, String)]) {
        let plugin = Rc::clone(&self.plugin);
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        let plain = decoded(encoding, &body, plugin.config.classifier.max_body_bytes);
        let headers = host::borrowed(headers);
        let answer = Answer {
            status: self.status,
            headers: &headers,
            body: &plain,
            code_details: None,
            // Coarse (a timer period old at most): a success reads no clock.
            now_unix_ms: coarse_now_ms(),
        };
        let mut out = Effects::default();
        if let Some(verdict) = attempt::judge_success_body(&cx, self.slot, &answer, &mut out) {
            self.judged(&cx, &verdict, Seen::Answer, &mut out);
            self.apply(&plugin, MapType::HttpResponseHeaders, out);
            return;
        }
        self.json_answer = true;
        self.succeeded();
        let mut observer = JsonObserver::new(encoding);
        observer.feed(&body);
        self.answering = Answering::Json {
            observer: Box::new(observer),
            tail_only: false,
        };
        self.finish_answer();
    }

    /// A held JSON body longer than an error body (or whose headers the timer let go): a
    /// success, observed for usage from what was held on.
    fn release_json_body(&mut self, body_size: usize, released: bool) {
        let Answering::JsonBody { body, encoding, .. } =
            std::mem::replace(&mut self.answering, Answering::Judged)
        else {
            return;
        };
        if !released {
            holds::forget(self.context_id);
        }
        self.json_answer = true;
        self.succeeded();
        let tail_only = encoding == Encoding::Identity;
        let mut observer = JsonObserver::new(encoding);
        if released {
            // The timer let the held bytes go: they were read; this callback's are new.
            observer.feed(&body);
        }
        // Paused until now, `body_size` is everything buffered; after the timer's release, what
        // came since. Of plain bytes only the tail is read, as for any JSON answer.
        let start = if tail_only && !released {
            body_size.saturating_sub(crate::usage::TAIL)
        } else {
            0
        };
        if let Some(chunk) = host::buffer(BufferType::HttpResponseBody, start, body_size - start) {
            observer.feed(&chunk);
        }
        self.answering = Answering::Json {
            observer: Box::new(observer),
            tail_only,
        };
    }

    /// A 200 event stream's start: holds its headers until the first event that is not a
    /// prelude arrives, the hold's bytes or time run out, or the stream ends. An error as that
    /// first event is judged exactly like an error answer (retry, fall back), since the client
    /// has seen nothing yet.
    fn stream_start(&mut self, body_size: usize, end: bool) -> Action {
        let max_bytes = self.plugin.config.fallback.stream_start.max_bytes;
        let Answering::StreamStart { observer, held } = &mut self.answering else {
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
        let seen = StartSeen {
            released,
            opened_with_error: !errors.is_empty() && observer.opened_with_error(),
            started: observer.content_events() > 0,
            full: *held >= max_bytes,
            end,
        };
        match answer::start_step(seen) {
            StartStep::Hold => return Action::Pause,
            StartStep::Release => self.release_to_stream(!released),
            StartStep::JudgeOpeningError => {
                holds::forget(self.context_id);
                if let Some(event) = errors.first() {
                    self.judge_opening_error(event);
                }
                return Action::Continue;
            }
        }
        for event in &errors {
            self.stream_error(event);
        }
        Action::Continue
    }

    /// A held stream whose first event is an error: judged like an error answer. If Envoy
    /// re-sends, this attempt's end is not a cut; if it cannot, the client gets the stream as
    /// the upstream sent it, still observed for usage.
    fn judge_opening_error(&mut self, event: &ErrorEvent) {
        let plugin = Rc::clone(&self.plugin);
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        let verdict = attempt::stream_verdict(&cx, &event.payload, event.exception.as_deref());
        plugin
            .metrics
            .increment(Counter::Responses(self.slot, verdict.class));
        log::info!(
            "upstream 200 stream for model {} opened with an error event: {} ({})",
            plugin.metrics.set.label(self.slot),
            verdict.class.as_str(),
            verdict.reason
        );
        let mut out = Effects::default();
        attempt::annotate(&verdict, &mut out);
        self.complete = true;
        if let Answering::StreamStart { observer, .. } =
            std::mem::replace(&mut self.answering, Answering::Judged)
        {
            self.answering = Answering::Stream(observer);
        }
        self.judged(&cx, &verdict, Seen::Answer, &mut out);
        self.apply(&plugin, MapType::HttpResponseHeaders, out);
    }

    /// The held stream turned out fine (or the hold ran out): a success; the rest is observed
    /// as it flows.
    fn release_to_stream(&mut self, by_callback: bool) {
        if by_callback {
            holds::forget(self.context_id);
        }
        if let Answering::StreamStart { observer, .. } =
            std::mem::replace(&mut self.answering, Answering::Judged)
        {
            self.answering = Answering::Stream(observer);
            self.succeeded();
            self.first_event();
        }
    }

    /// Attempt over without a complete answer: told apart by what Envoy recorded ([`Ending`]).
    fn ended(&mut self) {
        // Headers held and never released: the client saw nothing of this answer.
        let unreleased = matches!(
            self.answering,
            Answering::StreamStart { .. } | Answering::JsonBody { .. }
        ) && holds::is_held(self.context_id);
        holds::forget(self.context_id);
        if self.model.is_none() || (self.answered && self.complete) {
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
        let plugin = Rc::clone(&self.plugin);
        let label = plugin.metrics.set.label(self.slot).to_owned();
        let clock = HostClock::default();
        let cx = plugin.cx(&clock);
        match ending {
            Ending::ClientGone => {
                plugin.metrics.increment(Counter::ClientCancels(self.slot));
                log::info!("the client left before {label} finished: not counted against it");
                self.count_usage();
            }
            Ending::CutShort => {
                plugin.metrics.increment(Counter::AnswersCut(self.slot));
                self.count_usage();
                if let Some(verdict) = ending.verdict() {
                    log::warn!(
                        "{label}: {} (not retried: bytes reached the client)",
                        verdict.reason
                    );
                    self.record_model_failure(&cx, &verdict);
                }
            }
            Ending::ConnectFailure | Ending::NoAnswer => {
                if self.answered {
                    return;
                }
                if let Some(verdict) = ending.verdict() {
                    plugin
                        .metrics
                        .increment(Counter::Responses(self.slot, verdict.class));
                    // No answer: the SDK panics on header calls outside a header phase, so
                    // only the state for the next attempt is written.
                    // The flow writes no header for `Seen::Nothing` (there is no answer).
                    let mut out = Effects::default();
                    self.judged(&cx, &verdict, Seen::Nothing, &mut out);
                    self.apply(&plugin, MapType::HttpResponseHeaders, out);
                }
            }
        }
    }
}

impl Context for UpstreamContext {
    fn on_done(&mut self) -> bool {
        match std::mem::replace(&mut self.sending, Sending::Sent) {
            Sending::Counting(scanner) => {
                // A body with trailers never signals its end to the body callback.
                let model = scanner.found().map(str::to_owned);
                self.count(model.as_deref());
            }
            // Ended before its body was complete: still an attempt.
            Sending::AwaitingBody => self.count(None),
            Sending::Sent => {}
        }
        self.ended();
        true
    }
}

impl HttpContext for UpstreamContext {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        let config = &self.plugin.config;
        let headers = MapType::HttpRequestHeaders;
        // The answers this filter judges must be readable: ask for plain bytes. The client gets
        // the same bytes the filter read (see `inflate` for upstreams that compress anyway).
        host::set_header(headers, "accept-encoding", "identity");
        // The routing header is internal: it never reaches a provider.
        host::remove_header(headers, &config.fallback.cluster_header);
        let fallback = !config.models.is_empty();
        if fallback {
            self.id = identity::of_attempt();
        }
        // The client's encoding, as the client filter recorded it: an earlier attempt may have
        // removed the header while the router replays the original bytes. Then the attempt's
        // plan: which model, and whether the body must be read for it.
        let clock = HostClock::default();
        let plugin = Rc::clone(&self.plugin);
        let cx = plugin.cx(&clock);
        let landed =
            || host::property(vec!["xds", "cluster_name"]).and_then(|c| String::from_utf8(c).ok());
        let mut out = Effects::default();
        let planned = self.id.as_deref().and_then(|id| {
            requests::with(id, |r| {
                (r.body_encoding, attempt::plan(&cx, r, &landed, &mut out))
            })
        });
        self.apply(&plugin, headers, out);
        // A model with a latency condition, or a canary and its base: its answer time is
        // measured from here.
        let timed = planned.as_ref().is_some_and(|(_, p)| {
            (!config.fallback.switch_on.is_empty()
                && config.switch_rule(&p.target).latency.is_some())
                || (!config.fallback.canaries.is_empty()
                    && attempt::canary_times(config, &p.target))
        });
        if timed {
            self.started_ms = Some(host::now_unix_ms());
        }
        if planned.as_ref().is_some_and(|(_, p)| p.strip_credentials) {
            // Another provider than the last attempt's: its key goes (this cluster's
            // credential injector, after this filter, adds this provider's own).
            for name in &config.fallback.providers.credential_headers {
                host::remove_header(headers, name);
            }
        }
        self.encoding = match &planned {
            Some((encoding, _)) => *encoding,
            None => Encoding::of_header(host::header(headers, "content-encoding").as_deref()),
        };
        if end_of_stream || !self.encoding.readable() {
            self.count(planned.as_ref().map(|(_, p)| p.target.as_str()));
            if !end_of_stream {
                log::debug!("attempt body not read: {}", BodySkip::Encoded.as_str());
            }
            self.number = planned.as_ref().map_or(0, |(_, p)| p.number);
            self.model = planned.map(|(_, p)| p.target);
            return Action::Continue;
        }
        match planned {
            Some((_, plan)) if plan.needs_body => {
                // Held until the body is read: it may be rewritten (and its content-length).
                self.sending = Sending::AwaitingBody;
                Action::Pause
            }
            Some((_, plan)) => {
                // The body already asks this model under its own name: nothing to read.
                self.count(Some(&plan.target));
                self.number = plan.number;
                self.model = Some(plan.target);
                Action::Continue
            }
            None if self.encoding == Encoding::Identity => {
                self.sending = Sending::Counting(Box::new(Streaming::new()));
                Action::Continue
            }
            None => {
                self.count(None);
                Action::Continue
            }
        }
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        match &mut self.sending {
            Sending::Counting(scanner) => {
                match scanner.feed(body_size) {
                    Err(_) => {
                        self.sending = Sending::Sent;
                        self.count(None);
                    }
                    Ok(()) if end_of_stream => {
                        if let Sending::Counting(scanner) =
                            std::mem::replace(&mut self.sending, Sending::Sent)
                        {
                            let model = scanner.finish().ok();
                            self.count(model.as_deref());
                        }
                    }
                    Ok(()) => {}
                }
                Action::Continue
            }
            // Envoy buffers the body until its end (the router keeps it for retries anyway).
            Sending::AwaitingBody if !end_of_stream => Action::Pause,
            Sending::AwaitingBody => {
                let body =
                    host::buffer(BufferType::HttpRequestBody, 0, body_size).unwrap_or_default();
                self.body_complete(body, body_size);
                Action::Continue
            }
            Sending::Sent => Action::Continue,
        }
    }

    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        if let Sending::AwaitingBody = self.sending {
            // A body with trailers: its end is signalled here, not by the body callback.
            let body =
                host::buffer(BufferType::HttpRequestBody, 0, usize::MAX >> 1).unwrap_or_default();
            let len = body.len();
            self.body_complete(body, len);
        }
        Action::Continue
    }

    fn on_http_response_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        // One read of the whole map: the status, the content's type and encoding, and whether
        // an upstream sent the retry markers.
        let pairs = raw::headers(MapType::HttpResponseHeaders).unwrap_or_default();
        let head = Head::read(pairs.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        self.status = head.status;
        super::shaping::observe_attempt(&self.plugin, self.model.as_deref(), self.status);
        if head.markers {
            // Only this filter tells Envoy to retry: the same headers from an upstream (another
            // proxy, a provider) go before anything else looks at the answer.
            host::remove_header(MapType::HttpResponseHeaders, RETRY_MARKER);
            host::remove_header(MapType::HttpResponseHeaders, RETRY_AFTER_MARKER);
        }
        let fallback = &self.plugin.config.fallback;
        let hold = &fallback.stream_start;
        let holds = Holds {
            stream_start: hold,
            json_body: &fallback.json_body,
        };
        let encoding = head.encoding;
        match answer::plan(&head, end_of_stream, holds, self.model.is_some()) {
            Plan::Succeeded => {
                self.complete = true;
                self.succeeded();
                Action::Continue
            }
            Plan::HoldStreamStart => {
                self.answered = true;
                let deadline = host::now_unix_ms().saturating_add(hold.max_hold_ms);
                holds::hold(self.context_id, deadline);
                self.answering = Answering::StreamStart {
                    observer: Box::new(StreamObserver::new(encoding)),
                    held: 0,
                };
                Action::Pause
            }
            Plan::HoldJsonBody => {
                self.answered = true;
                // The coarse clock (a timer period old at most): no host call per answer.
                let deadline = coarse_now_ms().saturating_add(fallback.json_body.max_hold_ms);
                holds::hold(self.context_id, deadline);
                self.answering = Answering::JsonBody {
                    body: Vec::new(),
                    encoding,
                    headers: host::lossy(pairs),
                };
                Action::Pause
            }
            Plan::Observe(kind) => {
                self.json_answer = kind == Kind::Json;
                self.succeeded();
                self.answering = match kind {
                    Kind::EventStream => Answering::Stream(Box::new(StreamObserver::new(encoding))),
                    Kind::Json => Answering::Json {
                        observer: Box::new(JsonObserver::new(encoding)),
                        tail_only: encoding == Encoding::Identity,
                    },
                    Kind::Other => Answering::Judged,
                };
                Action::Continue
            }
            Plan::JudgeNow => {
                self.complete = true;
                self.judge_error(b"", &host::lossy(pairs));
                Action::Continue
            }
            Plan::HoldError => {
                self.answering = Answering::Holding {
                    body: Vec::new(),
                    encoding,
                    headers: host::lossy(pairs),
                };
                Action::Pause
            }
        }
    }

    fn on_http_response_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        let cap = self.plugin.config.classifier.max_body_bytes;
        match &mut self.answering {
            Answering::Awaiting | Answering::Judged => Action::Continue,
            Answering::Holding { body, .. } => {
                read_held(body, body_size.min(cap));
                if end_of_stream || body_size >= cap {
                    self.finish_answer();
                    Action::Continue
                } else {
                    Action::Pause
                }
            }
            Answering::JsonBody { body, .. } => {
                let max_bytes = self.plugin.config.fallback.json_body.max_bytes;
                let released = holds::take_released(self.context_id);
                let seen = BodySeen {
                    released,
                    held: body_size,
                    end: end_of_stream,
                };
                let step = answer::body_step(seen, max_bytes);
                if step != BodyStep::Release {
                    read_held(body, body_size);
                }
                match step {
                    BodyStep::Hold => Action::Pause,
                    BodyStep::Judge => {
                        self.finish_answer();
                        Action::Continue
                    }
                    BodyStep::Release => {
                        self.release_json_body(body_size, released);
                        if end_of_stream {
                            self.finish_answer();
                        }
                        Action::Continue
                    }
                }
            }
            Answering::StreamStart { .. } => {
                let action = self.stream_start(body_size, end_of_stream);
                if end_of_stream {
                    self.complete = true;
                    if let Answering::Stream(_) = self.answering {
                        self.count_usage();
                    }
                }
                action
            }
            Answering::Stream(_) if !self.first_event_seen && body_size > 0 => {
                self.first_event();
                self.on_http_response_body(body_size, end_of_stream)
            }
            Answering::Stream(observer) => {
                let chunk =
                    host::buffer(BufferType::HttpResponseBody, 0, body_size).unwrap_or_default();
                for event in observer.feed(&chunk, end_of_stream) {
                    self.stream_error(&event);
                }
                if end_of_stream {
                    self.complete = true;
                    self.count_usage();
                }
                Action::Continue
            }
            Answering::Json {
                observer,
                tail_only,
            } => {
                // `usage` sits at the end: of plain bytes only each chunk's tail is needed.
                let start = if *tail_only {
                    body_size.saturating_sub(crate::usage::TAIL)
                } else {
                    0
                };
                if let Some(chunk) =
                    host::buffer(BufferType::HttpResponseBody, start, body_size - start)
                {
                    observer.feed(&chunk);
                }
                if end_of_stream {
                    self.finish_answer();
                }
                Action::Continue
            }
        }
    }

    fn on_http_response_trailers(&mut self, _num_trailers: usize) -> Action {
        self.finish_answer();
        Action::Continue
    }
}
