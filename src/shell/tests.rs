//! The shell against a fake Envoy ([`super::raw`] is `fake_host.rs` natively): each context's
//! callbacks driven as Envoy drives them, and what reached the host checked call by call.
//!
//! Not in the native build, whose host is Envoy itself.
#![cfg(not(feature = "native"))]

use super::raw::{self as fake, Stream};
use super::Root;
use proxy_wasm::traits::{HttpContext, RootContext};
use proxy_wasm::types::Action;

const CONFIG: &str = r#"{
  "models": [
    {"name": "gpt-4o", "cluster": "llm", "account": "team-1"},
    {"name": "gpt-4o-mini", "cluster": "llm", "account": "team-2", "max_output_tokens": 2048},
    {"name": "claude", "cluster": "llm_b"}
  ],
  "fallback": {"chains": {"gpt-4o": ["gpt-4o-mini", "claude"]}, "failure_threshold": 2},
  "status_path": "/llm-fallback/status"
}"#;
const QUOTA: &str = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
const OK_JSON: &str =
    r#"{"id":"x","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7}}"#;

fn root(root_id: &str) -> Root {
    root_with(root_id, CONFIG)
}

fn root_with(root_id: &str, config: &str) -> Root {
    fake::with(|f| {
        f.properties
            .insert("plugin_root_id".into(), root_id.as_bytes().to_vec());
        f.plugin_config = config.as_bytes().to_vec();
    });
    let mut root = Root::default();
    assert!(root.on_configure(config.len()), "configured as {root_id}");
    root
}

fn headers(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

fn chat(model: &str, max_tokens: u64) -> Vec<u8> {
    format!(r#"{{"messages":[{{"role":"user","content":"hi"}}],"max_tokens":{max_tokens},"model":"{model}"}}"#)
        .into_bytes()
}

/// A client request as Envoy hands it to the HTTP connection manager's filter.
fn client_stream(path: &str, extra: &[(&str, &str)], body: Vec<u8>) -> Stream {
    let mut pairs = vec![
        (":method", "POST"),
        (":path", path),
        ("content-type", "application/json"),
    ];
    pairs.extend_from_slice(extra);
    Stream {
        request_headers: headers(&pairs),
        request_body: body,
        ..Stream::default()
    }
}

/// A client request through the client filter's request callbacks: its context (for the final
/// answer) and the request as the router then sends it.
fn routed(client: &Root, path: &str, body: Vec<u8>) -> (Box<dyn HttpContext>, Stream) {
    fake::swap_stream(client_stream(path, &[], body));
    let mut ctx = client.create_http_context(1).unwrap();
    ctx.on_http_request_headers(3, false);
    ctx.on_http_request_body(body_len(), true);
    (ctx, fake::with(|f| f.stream.clone()))
}

fn header(map: &Option<Vec<(String, String)>>, name: &str) -> Option<String> {
    map.as_ref()?
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// The current stream's whole request body length (what Envoy passes at its end).
fn body_len() -> usize {
    fake::with(|f| f.stream.request_body.len())
}

fn calls_since(mark: usize) -> Vec<String> {
    fake::with(|f| f.calls.get(mark..).unwrap_or_default().to_vec())
}

fn mark() -> usize {
    fake::with(|f| f.calls.len())
}

/// One router attempt through the upstream filter: the request as the client filter left it
/// (headers carry over, the body is the client's original), then `answer`.
fn attempt(upstream: &Root, request: &Stream, status: u16, answer: &str) -> (Vec<Action>, Stream) {
    let mut stream = Stream {
        request_headers: request.request_headers.clone(),
        request_body: request.request_body.clone(),
        ..Stream::default()
    };
    let saved = fake::swap_stream(stream.clone());
    let mut ctx = upstream.create_http_context(7).unwrap();
    let body_len = request.request_body.len();
    let mut actions = vec![ctx.on_http_request_headers(4, false)];
    actions.push(ctx.on_http_request_body(body_len, true));
    fake::with(|f| {
        f.stream.response_headers = headers(&[
            (":status", &status.to_string()),
            ("content-type", "application/json"),
        ]);
        f.stream.response_body = answer.as_bytes().to_vec();
    });
    actions.push(ctx.on_http_response_headers(2, false));
    actions.push(ctx.on_http_response_body(answer.len(), true));
    ctx.on_done();
    stream = fake::swap_stream(saved);
    (actions, stream)
}

/// The client filter's view of the final answer (the last attempt's headers).
fn final_answer(ctx: &mut Box<dyn HttpContext>, answer: &Stream) -> Stream {
    fake::with(|f| f.stream.response_headers = answer.response_headers.clone());
    assert_eq!(ctx.on_http_response_headers(2, false), Action::Continue);
    ctx.on_done();
    fake::with(|f| f.stream.clone())
}

/// [`CONFIG`] without latency histograms (they read the clock twice per request).
fn no_latency() -> String {
    CONFIG.replacen('{', r#"{"metering": {"latency": false},"#, 1)
}

#[test]
fn a_healthy_request_is_routed_by_its_model_and_explained() {
    let config = no_latency();
    let (client, upstream) = (root_with("client", &config), root_with("upstream", &config));
    fake::swap_stream(client_stream(
        "/v1/chat/completions",
        &[],
        chat("gpt-4o", 100),
    ));
    let mut ctx = client.create_http_context(1).unwrap();
    assert_eq!(
        ctx.on_http_request_headers(3, false),
        Action::Pause,
        "held for the body"
    );
    let start = mark();
    assert_eq!(ctx.on_http_request_body(body_len(), true), Action::Continue);
    let request = fake::with(|f| f.stream.clone());
    assert_eq!(
        header(&request.request_headers, "x-llm-cluster").as_deref(),
        Some("llm")
    );
    assert_eq!(
        header(&request.request_headers, "x-envoy-retry-on").as_deref(),
        Some("reset")
    );
    assert!(
        !calls_since(start).iter().any(|c| c == "now"),
        "no clock on the healthy path"
    );

    let start = mark();
    let (actions, answer) = attempt(&upstream, &request, 200, OK_JSON);
    assert_eq!(
        actions,
        [
            Action::Continue,
            Action::Continue,
            Action::Pause,
            Action::Continue
        ],
        "nothing rewritten; a short JSON answer's headers wait for its body"
    );
    assert_eq!(
        header(&answer.response_headers, "x-llm-error-class"),
        None,
        "a success read whole is still a success"
    );
    assert_eq!(
        header(&answer.request_headers, "accept-encoding").as_deref(),
        Some("identity")
    );
    assert_eq!(
        header(&answer.request_headers, "x-llm-cluster"),
        None,
        "internal header"
    );
    let calls = calls_since(start);
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("buffer HttpRequestBody")),
        "the first attempt never reads the request body: {calls:?}"
    );

    let done = final_answer(&mut ctx, &answer);
    assert_eq!(
        header(&done.response_headers, "x-llm-model").as_deref(),
        Some("gpt-4o")
    );
    assert_eq!(
        header(&done.response_headers, "x-llm-attempts").as_deref(),
        Some("1")
    );
    let id = fake::with(|f| f.properties.get("llm_fallback_request").cloned()).unwrap();
    let id = String::from_utf8(id).unwrap();
    assert_eq!(
        super::requests::with(&id, |_| ()),
        None,
        "the request's state is gone"
    );
}

#[test]
fn quota_on_the_first_attempt_falls_back_inside_the_request() {
    let (client, upstream) = (root("client"), root("upstream"));
    let (mut ctx, request) = routed(&client, "/v1/chat/completions", chat("gpt-4o", 8000));

    let (actions, first) = attempt(&upstream, &request, 429, QUOTA);
    assert_eq!(
        actions[2],
        Action::Pause,
        "the error answer's headers wait for its body"
    );
    assert_eq!(
        header(&first.response_headers, "x-llm-retry").as_deref(),
        Some("true")
    );
    assert_eq!(
        header(&first.response_headers, "x-llm-error-class").as_deref(),
        Some("quota_exhausted")
    );
    assert_eq!(
        header(&first.response_headers, "x-should-retry").as_deref(),
        Some("false")
    );

    // Envoy retries: the headers the first attempt changed carry over; the body is replayed.
    let replay = Stream {
        request_headers: first.request_headers.clone(),
        request_body: request.request_body.clone(),
        ..Stream::default()
    };
    let (actions, second) = attempt(&upstream, &replay, 200, OK_JSON);
    assert_eq!(
        actions[0],
        Action::Pause,
        "held: the body must ask the fallback"
    );
    let sent = String::from_utf8(second.request_body.clone()).unwrap();
    assert!(sent.contains(r#""model":"gpt-4o-mini""#), "{sent}");
    assert!(
        sent.contains(r#""max_tokens":2048"#),
        "clamped to the fallback's limit: {sent}"
    );
    assert_eq!(
        header(&second.request_headers, "content-length"),
        Some(sent.len().to_string())
    );

    let done = final_answer(&mut ctx, &second);
    let h = |n| header(&done.response_headers, n);
    assert_eq!(h("x-llm-model").as_deref(), Some("gpt-4o-mini"));
    assert_eq!(h("x-llm-attempts").as_deref(), Some("2"));
    assert_eq!(h("x-llm-fallback-from").as_deref(), Some("gpt-4o"));
    assert_eq!(
        h("x-llm-fallback-reason").as_deref(),
        Some("quota_exhausted")
    );
    // The next request skips the cooling model: routed straight to the fallback.
    let (_next, skipped) = routed(&client, "/v1/chat/completions", chat("gpt-4o", 10));
    let (_, answer) = attempt(&upstream, &skipped, 200, OK_JSON);
    assert!(String::from_utf8_lossy(&answer.request_body).contains("gpt-4o-mini"));
}

#[test]
fn an_error_inside_a_short_200_json_falls_back_a_long_answer_goes_unread() {
    let (client, upstream) = (root("client"), root("upstream"));
    let (_ctx, request) = routed(&client, "/v1/chat/completions", chat("gpt-4o", 10));
    // Baidu Qianfan's daily limit, in a 200 body.
    let daily = r#"{"error_code":17,"error_msg":"Open api daily request limit reached"}"#;
    let (actions, first) = attempt(&upstream, &request, 200, daily);
    assert_eq!(actions[2], Action::Pause, "held for its body");
    assert_eq!(actions[3], Action::Continue);
    let h = |n| header(&first.response_headers, n);
    assert_eq!(h("x-llm-error-class").as_deref(), Some("quota_exhausted"));
    assert_eq!(h("x-llm-retry").as_deref(), Some("true"), "falls back");
    assert_eq!(
        h(":status").as_deref(),
        Some("200"),
        "the status is the upstream's"
    );
    assert_eq!(
        first.response_body,
        daily.as_bytes(),
        "the body is untouched"
    );

    // An answer longer than an error body is let go unread, whatever it holds.
    let (_ctx, request) = routed(&client, "/v1/chat/completions", chat("gpt-4o-mini", 10));
    let long = format!(
        r#"{{"error_code":17,"error_msg":"Open api daily request limit reached","pad":"{}"}}"#,
        "x".repeat(5000)
    );
    let (actions, answer) = attempt(&upstream, &request, 200, &long);
    assert_eq!(actions[3], Action::Continue);
    assert_eq!(header(&answer.response_headers, "x-llm-error-class"), None);
    assert_eq!(header(&answer.response_headers, "x-llm-retry"), None);
}

#[test]
fn a_duplicate_idempotency_key_is_refused_and_its_reply_is_left_alone() {
    let client = root("client");
    let key = [("idempotency-key", "k-1"), ("authorization", "Bearer sk-1")];
    fake::swap_stream(client_stream("/v1/threads/runs", &key, chat("gpt-4o", 10)));
    let mut first = client.create_http_context(1).unwrap();
    first.on_http_request_headers(5, false);
    assert_eq!(
        first.on_http_request_body(body_len(), true),
        Action::Continue
    );

    fake::swap_stream(client_stream("/v1/threads/runs", &key, chat("gpt-4o", 10)));
    let mut second = client.create_http_context(2).unwrap();
    second.on_http_request_headers(5, false);
    assert_eq!(second.on_http_request_body(body_len(), true), Action::Pause);
    let (status, reply_headers, _) = fake::with(|f| f.stream.reply.clone()).unwrap();
    assert_eq!(status, 409);
    assert!(reply_headers.contains(&("x-should-retry".into(), "false".into())));
    // The local reply comes back through the response callbacks: nothing is added to it.
    fake::with(|f| f.stream.response_headers = headers(&[(":status", "409")]));
    let start = mark();
    assert_eq!(second.on_http_response_headers(1, false), Action::Continue);
    assert!(
        !calls_since(start)
            .iter()
            .any(|c| c.starts_with("set_header")),
        "{:?}",
        calls_since(start)
    );
}

#[test]
fn an_unsafe_request_that_meets_a_500_is_not_resent_and_the_client_is_told() {
    let (client, upstream) = (root("client"), root("upstream"));
    let (mut ctx, request) = routed(&client, "/v1/threads/runs", chat("gpt-4o", 10));
    assert_eq!(header(&request.request_headers, "x-envoy-retry-on"), None);

    let (_, answer) = attempt(&upstream, &request, 500, r#"{"error":{"message":"boom"}}"#);
    assert_eq!(
        header(&answer.response_headers, "x-llm-retry"),
        None,
        "never re-sent"
    );
    let done = final_answer(&mut ctx, &answer);
    assert_eq!(
        header(&done.response_headers, "x-should-retry").as_deref(),
        Some("false")
    );
    assert_eq!(
        header(&done.response_headers, "x-llm-retry-blocked").as_deref(),
        Some("non-idempotent")
    );
}

#[test]
fn an_attempt_that_gets_no_answer_plans_the_retry_without_touching_headers() {
    let (client, upstream) = (root("client"), root("upstream"));
    let (_client_ctx, request) = routed(&client, "/v1/chat/completions", chat("gpt-4o", 10));
    // The attempt sends its request, then ends with no response headers (a per-try timeout).
    let saved = fake::swap_stream(Stream {
        request_headers: request.request_headers.clone(),
        ..Stream::default()
    });
    let mut up = upstream.create_http_context(7).unwrap();
    up.on_http_request_headers(4, false);
    fake::with(|f| f.stream.request_headers = None);
    let start = mark();
    up.on_done();
    let calls = calls_since(start);
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("set_header") || c.starts_with("remove_header")),
        "no header map outside its phase: {calls:?}"
    );
    assert!(
        calls.iter().any(|c| c == "property response.flags"),
        "{calls:?}"
    );
    fake::swap_stream(saved);
    let id = fake::with(|f| f.properties.get("llm_fallback_request").cloned()).unwrap();
    let id = String::from_utf8(id).unwrap();
    let next = super::requests::with(&id, |r| (r.next.clone(), r.tried.len()));
    assert_eq!(
        next,
        Some(("gpt-4o".to_owned(), 1)),
        "a timeout retries the same model once"
    );
}

#[test]
fn health_writes_land_through_contention() {
    let (client, upstream) = (root("client"), root("upstream"));
    let (_client_ctx, request) = routed(&client, "/v1/chat/completions", chat("gpt-4o", 10));
    fake::with(|f| f.cas_conflicts = 3);
    attempt(&upstream, &request, 429, QUOTA);
    let health = super::shared_health::read("gpt-4o");
    assert!(
        health.cooldown_until_ms > 0,
        "written after 3 conflicts: {health:?}"
    );
}

#[test]
fn the_status_filter_answers_its_path_only() {
    let status = root("status");
    fake::swap_stream(Stream {
        request_headers: headers(&[(":method", "GET"), (":path", "/v1/chat/completions")]),
        ..Stream::default()
    });
    let mut ctx = status.create_http_context(1).unwrap();
    assert_eq!(ctx.on_http_request_headers(2, true), Action::Continue);
    fake::swap_stream(Stream {
        request_headers: headers(&[(":method", "GET"), (":path", "/llm-fallback/status?x=1")]),
        ..Stream::default()
    });
    let mut ctx = status.create_http_context(2).unwrap();
    assert_eq!(ctx.on_http_request_headers(2, true), Action::Pause);
    let (code, _, body) = fake::with(|f| f.stream.reply.clone()).unwrap();
    assert_eq!(code, 200);
    assert!(String::from_utf8_lossy(&body).contains("gpt-4o"));
}

#[test]
fn a_request_whose_client_leaves_before_its_body_ends_is_still_counted() {
    let client = root("client");
    fake::swap_stream(client_stream(
        "/v1/chat/completions",
        &[],
        chat("gpt-4o", 10),
    ));
    let mut ctx = client.create_http_context(1).unwrap();
    assert_eq!(ctx.on_http_request_headers(3, false), Action::Pause);
    assert_eq!(ctx.on_http_request_body(10, false), Action::Pause);
    ctx.on_done();
    let metrics = &client.plugin.as_ref().unwrap().metrics;
    let none = metrics.set.slot(None);
    assert_eq!(metrics.pending(crate::stats::Counter::Requests(none)), 1);
}

#[test]
fn another_provider_inside_the_request_gets_its_cluster_named_and_no_other_key() {
    let config = r#"{
      "models": [{"name": "gpt-4o", "cluster": "llm"}, {"name": "claude", "cluster": "llm_b"}],
      "fallback": {"chains": {"gpt-4o": ["claude"]}, "providers": {"switch": "in_request"}}
    }"#;
    let (client, upstream) = (root_with("client", config), root_with("upstream", config));
    let keys = [
        ("authorization", "Bearer sk-client"),
        ("x-api-key", "client-2"),
    ];
    fake::swap_stream(client_stream(
        "/v1/chat/completions",
        &keys,
        chat("gpt-4o", 100),
    ));
    let mut ctx = client.create_http_context(1).unwrap();
    ctx.on_http_request_headers(5, false);
    ctx.on_http_request_body(body_len(), true);
    let mut request = fake::with(|f| f.stream.clone());
    for (name, _) in keys {
        assert_eq!(
            header(&request.request_headers, name),
            None,
            "the client's {name} goes"
        );
    }
    // Attempt 1, on the default cluster: nothing named; provider A's injector adds its key.
    fake::with(|f| {
        f.properties
            .insert("xds.cluster_name".into(), b"llm".to_vec())
    });
    let start = mark();
    let (_, answer) = attempt(&upstream, &request, 429, QUOTA);
    assert_eq!(
        fake::with(|f| f.properties.get("llm_fallback_cluster").cloned()).as_deref(),
        Some(&b"llm_b"[..]),
        "the retry's cluster is named: {:?}",
        calls_since(start)
    );
    assert_eq!(
        header(&answer.response_headers, "x-llm-retry").as_deref(),
        Some("true")
    );
    // Attempt 2 reaches llm_b carrying A's injected key (header changes carry over).
    request.request_headers = answer.request_headers.clone();
    if let Some(h) = request.request_headers.as_mut() {
        h.push(("authorization".into(), "Bearer key-of-a".into()));
    }
    fake::with(|f| {
        f.properties
            .insert("xds.cluster_name".into(), b"llm_b".to_vec())
    });
    let (_, answer) = attempt(&upstream, &request, 200, OK_JSON);
    assert_eq!(
        header(&answer.request_headers, "authorization"),
        None,
        "A's key never reaches B"
    );
    assert!(String::from_utf8_lossy(&answer.request_body).contains(r#""model":"claude""#));
    let done = final_answer(&mut ctx, &answer);
    assert_eq!(
        header(&done.response_headers, "x-llm-model").as_deref(),
        Some("claude")
    );
    assert_eq!(
        header(&done.response_headers, "x-llm-provider").as_deref(),
        Some("llm_b")
    );
    assert_eq!(
        header(&done.response_headers, "x-llm-attempts").as_deref(),
        Some("2")
    );
}

const SHAPED: &str = r#"{
  "models": [{"name": "gpt-4o", "cluster": "llm"}],
  "shaping": {"classes": [{"name": "critical", "fallback": "critical"},
                          {"name": "internal", "max_concurrency": 1, "max_queue": 1,
                           "max_queue_ms": 1000, "at_limit": "reject"}],
              "default_class": "internal"}
}"#;

/// A shaped request through the client filter's request callbacks: what the body callback
/// returned (Continue: sent; Pause: held or answered).
fn shaped_request(client: &Root, id: u32) -> (Box<dyn HttpContext>, Action) {
    fake::swap_stream(client_stream(
        "/v1/chat/completions",
        &[],
        chat("gpt-4o", 16),
    ));
    let mut ctx = client.create_http_context(id).unwrap();
    ctx.on_http_request_headers(3, false);
    let action = ctx.on_http_request_body(body_len(), true);
    (ctx, action)
}

fn ledger() -> crate::shaping::ledger::Ledger {
    let bytes = fake::with(|f| {
        f.shared
            .get(crate::shaping::ledger::KEY)
            .map(|(v, _)| v.clone())
    });
    crate::shaping::ledger::Ledger::read(bytes.as_deref())
}

#[test]
fn a_freed_slot_wakes_the_queue_and_the_waiter_is_resumed_by_the_root() {
    fake::with(|f| f.now_ms = 1_000_000);
    let mut client = root_with("client", SHAPED);
    let (mut first, action) = shaped_request(&client, 1);
    assert_eq!(action, Action::Continue, "a free slot");
    let (mut second, action) = shaped_request(&client, 2);
    assert_eq!(action, Action::Pause, "held in the queue");
    let (_, action) = shaped_request(&client, 3);
    assert_eq!(action, Action::Pause);
    let reply = fake::with(|f| f.stream.reply.clone()).unwrap();
    assert_eq!(reply.0, 429, "queue full: refused at once");
    assert!(reply
        .1
        .iter()
        .any(|(k, v)| k == "x-llm-shaping" && v == "rejected queue_full"));
    let totals = ledger().totals(0, &crate::shaping::Holdings::default());
    assert_eq!((totals.held(1), totals.queue_length()), (1, 1));
    // The first request ends: its slot is given back and this worker's queue is woken...
    let since = mark();
    first.on_done();
    assert!(calls_since(since)
        .iter()
        .any(|c| c.starts_with("enqueue_shared_queue")));
    // ... and the root's queue-ready callback resumes the waiter on its own stream.
    let since = mark();
    client.on_queue_ready(1);
    let released = calls_since(since);
    let at = released.iter().position(|c| c == "set_effective_context 2");
    assert!(at.is_some(), "{released:?}");
    assert!(
        released[at.unwrap()..]
            .iter()
            .any(|c| c == "resume_request"),
        "{released:?}"
    );
    let totals = ledger().totals(0, &crate::shaping::Holdings::default());
    assert_eq!((totals.held(1), totals.queue_length()), (1, 0));
    second.on_done();
    assert!(ledger()
        .totals(0, &crate::shaping::Holdings::default())
        .is_empty());
}

#[test]
fn a_waiter_whose_time_runs_out_is_answered_by_the_timer() {
    fake::with(|f| f.now_ms = 1_000_000);
    let mut client = root_with("client", SHAPED);
    let (_first, _) = shaped_request(&client, 1);
    let (mut second, action) = shaped_request(&client, 2);
    assert_eq!(action, Action::Pause);
    fake::with(|f| f.now_ms += 1_001);
    let since = mark();
    client.on_tick();
    let calls = calls_since(since);
    assert!(
        calls.iter().any(|c| c == "set_effective_context 2"),
        "{calls:?}"
    );
    assert!(calls.iter().any(|c| c == "send_response 429"), "{calls:?}");
    // Its place is free, and its end gives nothing back twice.
    assert_eq!(
        ledger()
            .totals(0, &crate::shaping::Holdings::default())
            .queue_length(),
        0
    );
    second.on_done();
    assert_eq!(
        ledger()
            .totals(0, &crate::shaping::Holdings::default())
            .held(1),
        1
    );
}

#[test]
fn a_downgrade_with_no_lower_tier_is_counted_as_the_rejection_it_became() {
    const NO_LOWER: &str = r#"{
      "models": [{"name": "gpt-4o", "cluster": "llm", "tier": "flagship"}],
      "shaping": {"classes": [{"name": "critical", "fallback": "critical"},
                              {"name": "internal", "max_concurrency": 0, "at_limit": "downgrade"}],
                  "default_class": "internal"}
    }"#;
    fake::with(|f| f.now_ms = 1_000_000);
    let client = root_with("client", NO_LOWER);
    let (_ctx, action) = shaped_request(&client, 1);
    assert_eq!(action, Action::Pause);
    let reply = fake::with(|f| f.stream.reply.clone()).unwrap();
    assert_eq!(reply.0, 429);
    assert!(reply
        .1
        .iter()
        .any(|(k, v)| k == "x-llm-shaping" && v == "rejected queue_full"));
    let metrics = &client.plugin.as_ref().unwrap().metrics;
    let event = |e| metrics.pending(crate::stats::Counter::Shaping(1, e));
    use crate::stats::ShapingEvent::{Downgraded, Rejected};
    assert_eq!((event(Rejected), event(Downgraded)), (1, 0));
}

/// [`CONFIG`] with a labelled key, prices and a token budget of `tokens` per day.
fn metered(tokens: u64, shadow: bool) -> String {
    let key = crate::meter::sha256_hex(b"Bearer team-a");
    let metering = format!(
        r#"{{"metering": {{"keys": [{{"sha256": "{key}", "label": "team-a"}}],
           "prices": {{"gpt-4o": {{"input": 2.5, "output": 10}}}},
           "budgets": [{{"name": "daily", "key": "team-a", "tokens": {tokens}, "window": "day", "shadow": {shadow}}}]}},"#
    );
    CONFIG.replacen('{', &metering, 1)
}

fn shared_record(key: &str) -> Option<crate::meter::budget::Record> {
    fake::with(|f| f.shared.get(key).cloned())
        .and_then(|(bytes, _)| crate::meter::budget::Record::decode(&bytes))
}

/// A histogram's last value (each root defines its own id for the name; the largest wins).
fn metric(name: &str) -> Option<i64> {
    fake::with(|f| {
        f.metrics
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .max()
    })
}

/// One request of key `team-a` through client and upstream: the final answer's view.
fn metered_request(client: &Root, upstream: &Root, id: u32, max_tokens: u64) -> Stream {
    fake::swap_stream(client_stream(
        "/v1/chat/completions",
        &[("authorization", "Bearer team-a")],
        chat("gpt-4o", max_tokens),
    ));
    let mut ctx = client.create_http_context(id).unwrap();
    ctx.on_http_request_headers(4, false);
    if ctx.on_http_request_body(body_len(), true) != Action::Continue {
        ctx.on_done();
        return fake::with(|f| f.stream.clone());
    }
    let request = fake::with(|f| f.stream.clone());
    fake::with(|f| f.now_ms += 250);
    let (_, answer) = attempt(upstream, &request, 200, OK_JSON);
    final_answer(&mut ctx, &answer)
}

#[test]
fn a_budget_reserves_then_settles_what_the_answer_used_and_refuses_what_would_cross_it() {
    // The estimate: body bytes / 4 plus its max_tokens; the cap leaves room for one.
    let estimate = (chat("gpt-4o", 100).len() as u64).div_ceil(4) + 100;
    let config = metered(estimate + 10, false);
    let (client, upstream) = (root_with("client", &config), root_with("upstream", &config));
    let first = metered_request(&client, &upstream, 1, 100);
    assert_eq!(first.reply, None);
    // Settled: the answer's 11 + 7 tokens spent, nothing left reserved.
    let record = shared_record("llm_fallback.budget.daily").unwrap();
    assert_eq!((record.spent, record.reserved), (18, 0));
    // Duration recorded under the model that answered (the fake clock moved 250 ms).
    assert_eq!(
        metric("llm_fallback.request_duration_ms;model=gpt-4o;provider=openai"),
        Some(250)
    );
    assert_eq!(
        metric("gen_ai.client.token.usage;gen_ai_request_model=gpt-4o;gen_ai_provider_name=openai;gen_ai_token_type=output"),
        Some(7)
    );
    // 18 spent + this estimate crosses the cap: refused before anything is sent.
    let second = metered_request(&client, &upstream, 2, 100);
    let (status, headers, body) = second.reply.clone().expect("refused");
    assert_eq!(status, 429);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "x-llm-budget" && v == "refused daily"));
    assert!(String::from_utf8_lossy(&body).contains("budget_exceeded"));
    let record = shared_record("llm_fallback.budget.daily").unwrap();
    assert_eq!((record.spent, record.reserved), (18, 0), "nothing reserved");
    // A smaller request still fits.
    let third = metered_request(&client, &upstream, 3, 1);
    assert_eq!(third.reply, None);
}

#[test]
fn a_shadow_budget_refuses_nothing_and_says_what_it_would_have_done() {
    let config = metered(20, true);
    let (mut client, upstream) = (root_with("client", &config), root_with("upstream", &config));
    let answer = metered_request(&client, &upstream, 1, 100);
    assert_eq!(answer.reply, None);
    assert_eq!(
        header(&answer.response_headers, "x-llm-budget").as_deref(),
        Some("shadow-over daily")
    );
    // Kept on the worker: no shared-data access per request; the timer folds it in.
    assert_eq!(shared_record("llm_fallback.budget.daily"), None);
    fake::with(|f| f.now_ms += 1000);
    client.on_tick();
    let record = shared_record("llm_fallback.budget.daily").unwrap();
    assert_eq!((record.spent, record.reserved), (18, 0));
}

#[test]
fn a_request_traffic_shaping_refuses_gives_its_budget_reservation_back() {
    const SHAPED_BUDGET: &str = r#"{
      "models": [{"name": "gpt-4o", "cluster": "llm"}],
      "shaping": {"classes": [{"name": "critical", "fallback": "critical"},
                              {"name": "internal", "max_concurrency": 0, "at_limit": "reject"}],
                  "default_class": "internal"},
      "metering": {"budgets": [{"name": "all", "tokens": 100000, "window": "day"}]}
    }"#;
    fake::with(|f| f.now_ms = 1_000_000);
    let client = root_with("client", SHAPED_BUDGET);
    let (mut ctx, action) = shaped_request(&client, 1);
    assert_eq!(action, Action::Pause);
    assert_eq!(fake::with(|f| f.stream.reply.clone()).unwrap().0, 429);
    let record = shared_record("llm_fallback.budget.all").unwrap();
    assert_eq!(
        (record.spent, record.reserved),
        (0, 0),
        "nothing left reserved"
    );
    ctx.on_done();
    let record = shared_record("llm_fallback.budget.all").unwrap();
    assert_eq!((record.spent, record.reserved), (0, 0));
}
