//! Micro-benchmarks of the hot paths: `cargo bench --bench hot_paths`.
//!
//! A small self-timed harness (no extra dependencies, so it also builds for wasm32-wasip1):
//! each case runs for about a second after a warm-up and reports ns/op and throughput.

use llm_fallback::classify::{classify, Answer};
use llm_fallback::model_field::{find_model, rewrite};
use llm_fallback::sse::SseScanner;
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

fn main() {
    println!("llm-fallback hot paths ({})", std::env::consts::ARCH);
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
