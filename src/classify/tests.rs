//! The classifier against real provider answers (tests/fixtures/provider_errors.jsonl) and
//! against the traps that fool status-code and substring classifiers.

use super::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use wasm_bindgen_test::wasm_bindgen_test;

const FIXTURES: &str = include_str!("../../tests/fixtures/provider_errors.jsonl");

#[derive(Deserialize)]
struct Fixture {
    id: String,
    provider: String,
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
    code_details: Option<String>,
    expect: Expected,
    source: String,
}

#[derive(Deserialize)]
struct Expected {
    class: ErrorClass,
    retry_after_ms: Option<u64>,
}

fn fixtures() -> Vec<Fixture> {
    FIXTURES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A fixed "now" for HTTP-date and reset-time hints: 2025-01-01T00:00:00Z.
const NOW: u64 = 1_735_689_600_000;

fn run(f: &Fixture) -> Verdict {
    let headers: Vec<(&str, &str)> = f
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    classify(&Answer {
        status: f.status,
        headers: &headers,
        body: f.body.as_bytes(),
        code_details: f.code_details.as_deref(),
        now_unix_ms: NOW,
    })
}

#[wasm_bindgen_test(unsupported = test)]
fn real_provider_answers_are_classified() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    for f in &fixtures {
        assert!(!f.source.is_empty(), "{}: no source", f.id);
        let v = run(f);
        if v.class != f.expect.class || v.retry_after_ms != f.expect.retry_after_ms {
            failures.push(format!(
                "{} [{}]: got {} {:?} ({}), want {} {:?}",
                f.id,
                f.provider,
                v.class.as_str(),
                v.retry_after_ms,
                v.reason,
                f.expect.class.as_str(),
                f.expect.retry_after_ms
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures misclassified:\n{}",
        failures.len(),
        fixtures.len(),
        failures.join("\n")
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn fixture_table_is_broad() {
    let fixtures = fixtures();
    let providers: std::collections::BTreeSet<&str> =
        fixtures.iter().map(|f| f.provider.as_str()).collect();
    assert!(fixtures.len() >= 100, "{} fixtures", fixtures.len());
    assert!(providers.len() >= 15, "{} providers", providers.len());
    for class in ErrorClass::ALL {
        assert!(
            fixtures.iter().any(|f| f.expect.class == class),
            "no fixture for {}",
            class.as_str()
        );
    }
    let quota_429 = fixtures
        .iter()
        .filter(|f| f.status == 429 && f.expect.class == ErrorClass::QuotaExhausted)
        .count();
    let overload_429 = fixtures
        .iter()
        .filter(|f| f.status == 429 && f.expect.class == ErrorClass::Overloaded)
        .count();
    let in_stream = fixtures
        .iter()
        .filter(|f| f.status == 200 && f.body.contains("data:") && f.expect.class != ErrorClass::Ok)
        .count();
    assert!(
        quota_429 >= 3 && overload_429 >= 2 && in_stream >= 3,
        "{quota_429} {overload_429} {in_stream}"
    );
}

fn answer<'a>(status: u16, headers: &'a [(&'a str, &'a str)], body: &'a str) -> Verdict {
    classify(&Answer {
        status,
        headers,
        body: body.as_bytes(),
        code_details: None,
        now_unix_ms: NOW,
    })
}

#[wasm_bindgen_test(unsupported = test)]
fn numbers_in_messages_are_never_status_codes() {
    // A substring classifier once read "retry in 18.403s" as a 403.
    let v = answer(
        429,
        &[],
        r#"{"error":{"code":429,"message":"Please retry in 18.403s.","status":"RESOURCE_EXHAUSTED"}}"#,
    );
    assert_eq!(
        (v.class, v.retry_after_ms),
        (ErrorClass::RateLimited, Some(18_403))
    );
    let v = answer(
        500,
        &[],
        r#"{"error":{"message":"upstream said 429 and 402: quota exceeded"}}"#,
    );
    assert_eq!(v.class, ErrorClass::QuotaExhausted, "{v:?}"); // the phrase decides, not the numbers
    let v = answer(
        500,
        &[],
        r#"{"error":{"message":"backend returned 429 then 402"}}"#,
    );
    assert_eq!(v.class, ErrorClass::Overloaded, "{v:?}");
    let v = answer(
        503,
        &[],
        r#"{"error":{"message":"error 401 from backend 402"}}"#,
    );
    assert_eq!(v.class, ErrorClass::Overloaded, "{v:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn the_same_429_means_three_different_things() {
    let quota = answer(
        429,
        &[],
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    );
    let rate = answer(
        429,
        &[("retry-after", "3")],
        r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
    );
    let busy = answer(
        429,
        &[],
        r#"{"object":"error","message":"Service tier capacity exceeded for this model.","type":"invalid_request_error","code":"3505"}"#,
    );
    assert_eq!(quota.class, ErrorClass::QuotaExhausted);
    assert_eq!(
        (rate.class, rate.retry_after_ms),
        (ErrorClass::RateLimited, Some(3000))
    );
    assert_eq!(busy.class, ErrorClass::Overloaded, "{busy:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn quota_windows_decide_between_quota_and_rate() {
    let body = |id: &str| {
        format!(
            r#"{{"error":{{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{{"quotaId":"{id}"}}]}}]}}}}"#
        )
    };
    assert_eq!(
        answer(
            429,
            &[],
            &body("GenerateRequestsPerDayPerProjectPerModel-FreeTier")
        )
        .class,
        ErrorClass::QuotaExhausted
    );
    assert_eq!(
        answer(
            429,
            &[],
            &body("GenerateRequestsPerMinutePerProjectPerModel")
        )
        .class,
        ErrorClass::RateLimited
    );
    let long_wait = answer(
        429,
        &[("retry-after", "7200")],
        r#"{"error":{"code":"rate_limit_exceeded"}}"#,
    );
    assert_eq!(long_wait.class, ErrorClass::QuotaExhausted, "{long_wait:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn envoy_local_replies_use_code_details() {
    let local = |details: &str, status: u16, body: &str| {
        classify(&Answer {
            status,
            headers: &[],
            body: body.as_bytes(),
            code_details: Some(details),
            now_unix_ms: NOW,
        })
        .class
    };
    assert_eq!(
        local("upstream_response_timeout", 504, "upstream request timeout"),
        ErrorClass::Timeout
    );
    assert_eq!(
        local("upstream_per_try_timeout", 504, ""),
        ErrorClass::Timeout
    );
    assert_eq!(
        local("no_healthy_upstream", 503, "no healthy upstream"),
        ErrorClass::Overloaded
    );
    assert_eq!(
        local(
            "upstream_reset_before_response_started{connection_failure}",
            503,
            "upstream connect error"
        ),
        ErrorClass::Overloaded
    );
    // A real upstream 504 with a JSON body is read like any answer.
    assert_eq!(
        local("via_upstream", 504, r#"{"error":{"message":"Rate limit"}}"#),
        ErrorClass::RateLimited
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn successes_are_ok_and_garbage_is_not_a_crash() {
    assert_eq!(answer(200, &[], r#"{"choices":[]}"#).class, ErrorClass::Ok);
    assert_eq!(
        answer(200, &[("retry-after", "3")], "").retry_after_ms,
        None
    );
    for body in [
        "",
        "\u{0}\u{1}",
        "{",
        "[[[[",
        "<html>",
        "data: {\"error\"",
        "💥",
    ] {
        let _ = answer(500, &[], body);
        let _ = answer(200, &[], body);
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn wait_hints_follow_the_documented_priority() {
    let v = answer(
        429,
        &[("retry-after", "5"), ("retry-after-ms", "1500")],
        r#"{"error":{"message":"Please try again in 20s."}}"#,
    );
    assert_eq!(v.retry_after_ms, Some(1500));
    let v = answer(
        429,
        &[("retry-after", "5")],
        r#"{"error":{"message":"Please try again in 20s."}}"#,
    );
    assert_eq!(v.retry_after_ms, Some(5000));
    let v = answer(
        429,
        &[],
        r#"{"error":{"message":"Please try again in 20s."}}"#,
    );
    assert_eq!(v.retry_after_ms, Some(20_000));
    let reset = [
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "6m0s"),
        ("x-ratelimit-remaining-tokens", "100"),
        ("x-ratelimit-reset-tokens", "1s"),
    ];
    let v = answer(429, &reset, r#"{"error":{"code":"rate_limit_exceeded"}}"#);
    assert_eq!(v.retry_after_ms, Some(360_000));
    // Reset headers on an answer that is not a limit say nothing about waiting.
    assert_eq!(
        answer(400, &reset, r#"{"error":{"code":"invalid_prompt"}}"#).retry_after_ms,
        None
    );
}

use crate::test_support::Rng;

/// Mutates real answers (truncation, byte flips, splices, random headers and statuses) and feeds
/// them to the classifier and the SSE scanner: nothing may panic. Set `LLMFB_FUZZ_ITERS` for a
/// longer run.
#[wasm_bindgen_test(unsupported = test)]
fn fuzz_classifier_and_sse_scanner_never_panic() {
    let iterations: usize = option_env!("LLMFB_FUZZ_ITERS")
        .and_then(|n| n.parse().ok())
        .unwrap_or(3000);
    let fixtures = fixtures();
    let header_names = [
        "retry-after",
        "retry-after-ms",
        "x-ms-retry-after-ms",
        "x-ratelimit-reset-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-tokens",
        "x-ratelimit-remaining-tokens",
        "anthropic-ratelimit-requests-reset",
        "anthropic-ratelimit-requests-remaining",
        "x-amzn-errortype",
        "x-ratelimit-reset",
        "x-ratelimit-remaining",
    ];
    let values = [
        "0",
        "-1",
        "1e308",
        "99999999999999999999",
        "",
        "6m0s",
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "2024-11-04T19:10:00Z",
        "NaN",
        "1.5",
        "💥",
        "\u{0}",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..iterations {
        let base = &fixtures[rng.below(fixtures.len())];
        let mut body = base.body.as_bytes().to_vec();
        match rng.below(5) {
            0 => body.truncate(rng.below(body.len() + 1)),
            1 => {
                for _ in 0..=rng.below(8) {
                    let i = rng.below(body.len());
                    if let Some(b) = body.get_mut(i) {
                        *b = rng.next() as u8;
                    }
                }
            }
            2 => {
                let other = fixtures[rng.below(fixtures.len())].body.as_bytes();
                let cut = rng.below(body.len() + 1);
                body.truncate(cut);
                body.extend_from_slice(&other[rng.below(other.len() + 1)..]);
            }
            3 => body = (0..rng.below(512)).map(|_| rng.next() as u8).collect(),
            _ => {}
        }
        let headers: Vec<(&str, &str)> = (0..rng.below(6))
            .map(|_| {
                (
                    header_names[rng.below(header_names.len())],
                    values[rng.below(values.len())],
                )
            })
            .collect();
        let status = [0u16, 200, 400, 402, 429, 500, 529, 999, base.status][rng.below(9)];
        let _ = classify(&Answer {
            status,
            headers: &headers,
            body: &body,
            code_details: [
                None,
                Some("via_upstream"),
                Some("response_timeout"),
                Some(""),
            ][rng.below(4)],
            now_unix_ms: rng.next(),
        });
        let mut scanner = crate::sse::SseScanner::new(1 + rng.below(4096));
        let mut sink = |_| {};
        let mut rest = body.as_slice();
        while !rest.is_empty() {
            let n = 1 + rng.below(rest.len());
            scanner.feed(&rest[..n], &mut sink);
            rest = &rest[n..];
        }
        scanner.finish(&mut sink);
    }
}
