//! Micro-benchmarks of the hot paths: `cargo bench --bench hot_paths`.
//!
//! A small self-timed harness (no extra dependencies, so it also builds for wasm32-wasip1):
//! each case runs for about a second after a warm-up and reports ns/op and throughput.

use llm_fallback::classify::{classify, Answer};
use llm_fallback::config::Config;
use llm_fallback::flow::route::{self, Ask, Start};
use llm_fallback::flow::{attempt, Cx, Effects, FixedClock, MemoryHealth, RequestStore, Safety};
use llm_fallback::health::ErrorWindow;
use llm_fallback::model_field::{find_model, rewrite};
use llm_fallback::plan::Priority;
use llm_fallback::sse::SseScanner;
use llm_fallback::stats::CounterSet;
use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn bench(name: &str, bytes: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..10 {
        f();
    }
    let mut iterations = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1000) {
        for _ in 0..16 {
            f();
        }
        iterations += 16;
    }
    let ns = start.elapsed().as_nanos() as f64 / iterations as f64;
    let gbps = if bytes > 0 { bytes as f64 / ns } else { 0.0 };
    if bytes > 0 {
        println!("{name:<44} {ns:>12.0} ns/op {gbps:>8.2} GB/s");
    } else {
        println!("{name:<44} {ns:>12.0} ns/op");
    }
    gbps
}

/// An OpenAI chat body of about `size` bytes with the `model` key after `messages`.
fn body(size: usize) -> Vec<u8> {
    let filler = "Summarize this: the quick brown fox \\\"jumps\\\" over the lazy dog. ";
    let mut content = String::new();
    while content.len() < size {
        content.push_str(filler);
    }
    format!(
        r#"{{"messages":[{{"role":"system","content":"You are helpful."}},{{"role":"user","content":"{content}"}}],"temperature":0.2,"stream":false,"model":"gpt-4o"}}"#
    )
    .into_bytes()
}

/// The decisions of one healthy request, as the shell runs them: route, keep its state, plan
/// the first attempt, take the success, explain the answer, forget the request.
fn healthy_request_flow() {
    let config = match Config::from_bytes(
        br#"{"models": [{"name": "gpt-4o", "cluster": "a"}, {"name": "gpt-4o-mini", "cluster": "a"}],
             "fallback": {"default_cluster": "a", "chains": {"gpt-4o": ["gpt-4o-mini"]}}}"#,
    ) {
        Ok(config) => config,
        Err(e) => return println!("flow bench skipped: {e}"),
    };
    let rules = config.classifier.rules();
    let counters = CounterSet::new(&config);
    let health = MemoryHealth::default();
    let windows = RefCell::new(vec![ErrorWindow::default(); config.models.len()]);
    let canaries = RefCell::new(Vec::new());
    let clock = FixedClock(1_700_000_000_000);
    let cx = Cx {
        config: &config,
        rules: &rules,
        counters: &counters,
        health: &health,
        windows: &windows,
        canaries: &canaries,
        clock: &clock,
    };
    let b = body(1_000);
    let mut store = RequestStore::default();
    let mut n = 0u64;
    bench("flow: one healthy request, 1 KB", 0, || {
        n += 1;
        let id = n.to_string();
        let mut out = Effects::default();
        let ask = Ask {
            model: "gpt-4o",
            task: None,
            priority: Priority::Normal,
            body: b.clone(),
            safety: Safety::Safe,
            conversation: None,
        };
        if let Start::Route { request, .. } = route::start(&cx, &id, ask, &mut out) {
            store.insert(&id, *request);
        }
        if let Some(request) = store.get_mut(&id) {
            let plan = attempt::plan(&cx, request, &|| None, &mut out);
            attempt::succeeded(&cx, Some(request), &id, &plan.target, &mut out);
            route::explain(&cx, request, 200, &mut out);
        }
        black_box(store.remove(&id));
        let _ = black_box(out);
    });
}

fn main() {
    println!("llm-fallback hot paths ({})", std::env::consts::ARCH);
    healthy_request_flow();
    for size in [1_000, 10_000, 100_000] {
        let b = body(size);
        bench(&format!("find_model {} B", b.len()), b.len(), || {
            black_box(find_model(black_box(&b)).ok());
        });
        let field = find_model(&b).ok();
        bench(
            &format!("find_model + rewrite {} B", b.len()),
            b.len(),
            || {
                if let Some(field) = find_model(black_box(&b)).ok().or(field.clone()) {
                    black_box(rewrite(&b, &field, "claude-sonnet-4-5"));
                }
            },
        );
    }
    let quota = br#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let headers = [("content-type", "application/json"), ("retry-after", "20")];
    bench("classify OpenAI 429 insufficient_quota", 0, || {
        black_box(classify(&Answer {
            status: 429,
            headers: &headers,
            body: black_box(quota),
            code_details: None,
            now_unix_ms: 0,
        }));
    });
    // Only weak signals (a 400, an unlisted code): the learned tie-breaker reads the words.
    let weak = br#"{"error": {"code": "OperationNotSupported", "message": "The chatCompletion operation does not work with the specified model, gpt-4o-mini. Please choose different model and try again."}}"#;
    bench("classify 400 by the learned tie-breaker", 0, || {
        black_box(classify(&Answer {
            status: 400,
            headers: &[],
            body: black_box(weak),
            code_details: None,
            now_unix_ms: 0,
        }));
    });
    // A short 200 JSON answer is read whole before its headers go (`fallback.json_body`).
    let completion = format!(
        r#"{{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{{"index":0,"message":{{"role":"assistant","content":"{}","refusal":null,"annotations":[]}},"logprobs":null,"finish_reason":"stop"}}],"usage":{{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{{"cached_tokens":0,"audio_tokens":0}},"completion_tokens_details":{{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}},"service_tier":"default"}}"#,
        "The capital of France is Paris, and the rate limit of my patience is high. ".repeat(12)
    );
    let json_headers = [("content-type", "application/json")];
    bench(
        &format!("classify a 200 chat completion {} B", completion.len()),
        completion.len(),
        || {
            black_box(classify(&Answer {
                status: 200,
                headers: &json_headers,
                body: black_box(completion.as_bytes()),
                code_details: None,
                now_unix_ms: 0,
            }));
        },
    );
    let mut stream = Vec::new();
    for i in 0..2000 {
        stream.extend_from_slice(format!("data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}}}}],\"usage\":null}}\n\n").as_bytes());
    }
    bench(
        &format!("sse scan {} B in 4 KiB chunks", stream.len()),
        stream.len(),
        || {
            let mut scanner = SseScanner::default();
            for chunk in stream.chunks(4096) {
                scanner.feed(black_box(chunk), &mut |f| {
                    black_box(f);
                });
            }
        },
    );
}
