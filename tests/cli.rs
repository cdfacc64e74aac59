//! The native CLI, run as a user would: `classify` over the whole fixture table, and `check`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_llm-fallback");
const FIXTURES: &str = include_str!("fixtures/provider_errors.jsonl");

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn classify_answers_one_line_per_input_line() {
    let mut input = String::new();
    let mut expected = Vec::new();
    for line in FIXTURES.lines() {
        let f: serde_json::Value = serde_json::from_str(line).unwrap();
        // Reset times relative to "now" differ from the fixed clock of the unit test; compare
        // classes here, waits in the unit test.
        let row = serde_json::json!({
            "status": f["status"], "headers": f["headers"], "body": f["body"],
            "code_details": f["code_details"],
        });
        input.push_str(&row.to_string());
        input.push('\n');
        expected.push((
            f["expect"]["class"].as_str().unwrap().to_owned(),
            f["expect"]["scope"].as_str().map(str::to_owned),
        ));
    }
    input.push_str("this is not json\n");
    let (code, stdout, _) = run(&["classify"], &input);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), expected.len() + 1);
    for (got, (class, scope)) in lines.iter().zip(&expected) {
        assert_eq!(got["class"], *class.as_str(), "{got}");
        assert!(got["reason"].as_str().is_some_and(|r| !r.is_empty()));
        // Every verdict has a scope (`model` outside quota stops) and a wait hint.
        let want_scope = match (class.as_str(), scope) {
            ("quota_exhausted", Some(scope)) => Some(scope.as_str()),
            ("quota_exhausted", None) => None,
            _ => Some("model"),
        };
        assert!(
            matches!(got["scope"].as_str(), Some("account" | "model")),
            "{got}"
        );
        if let Some(want) = want_scope {
            assert_eq!(got["scope"], want, "{got}");
        }
        assert!(
            matches!(
                got["wait_hint"].as_str(),
                Some("absent" | "used" | "ignored")
            ),
            "{got}"
        );
    }
    assert!(lines.last().unwrap()["error"].is_string());
}

#[test]
fn classify_normalizes_waits() {
    let (_, stdout, _) = run(
        &["classify"],
        r#"{"status": 429, "headers": {"retry-after": "3"}, "body": ""}"#,
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"class": "rate_limited", "retry_after_ms": 3000, "reason": "status=429",
                           "scope": "model", "wait_hint": "used"})
    );
    // A wait of over a year is nonsense: ignored, not clamped, and not a quota stop.
    let (_, stdout, _) = run(
        &["classify"],
        r#"{"status": 429, "headers": {"Retry-After": "1000000000000"}, "body": ""}"#,
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"class": "rate_limited", "retry_after_ms": null, "reason": "status=429",
                           "scope": "model", "wait_hint": "ignored"})
    );
}

#[test]
fn classify_reports_the_scope_of_quota_stops() {
    let input = [
        r#"{"status": 429, "body": "{\"error\":{\"code\":\"insufficient_quota\"}}"}"#,
        r#"{"status": 429, "body": "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"violations\":[{\"quotaId\":\"GenerateRequestsPerDayPerProjectPerModel-FreeTier\"}]}]}}"}"#,
        // A body cut at the inspection cap still gives its code.
        r#"{"status": 429, "body": "{\"error\":{\"type\":\"insufficient_quota\",\"message\":\"You exceeded your cur"}"#,
        r#"{"status": 404, "body": "{\"error\":{\"message\":\"Not found\",\"code\":\"not_found\"}}"}"#,
    ]
    .join("\n");
    let (code, stdout, _) = run(&["classify"], &input);
    assert_eq!(code, 0);
    let got: Vec<(String, String)> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["class"].as_str().unwrap().to_owned(),
                v["scope"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want = [
        ("quota_exhausted", "account"),
        ("quota_exhausted", "model"),
        ("quota_exhausted", "account"),
        ("bad_request", "model"),
    ];
    assert_eq!(
        got,
        want.map(|(c, s)| (c.to_owned(), s.to_owned())),
        "{stdout}"
    );
}

#[test]
fn classify_applies_the_configured_rules_first() {
    let dir = std::env::temp_dir().join(format!("llmfb-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        r#"{"classifier": {"rules": [{"name": "acme", "status": [500], "message": "credits gone", "class": "quota_exhausted"}]}}"#,
    )
    .unwrap();
    let input = r#"{"status": 500, "body": "{\"message\": \"Sorry: credits gone.\"}"}"#;
    let (_, stdout, _) = run(&["classify", "--config", config.to_str().unwrap()], input);
    assert!(
        stdout.contains(r#""class":"quota_exhausted""#) && stdout.contains("rule=acme"),
        "{stdout}"
    );
    let (_, stdout, _) = run(&["classify"], input);
    assert!(stdout.contains(r#""class":"overloaded""#), "{stdout}");
}

#[test]
fn check_names_the_bad_field() {
    let dir = std::env::temp_dir().join(format!("llmfb-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    std::fs::write(&good, r#"{"models": [{"name": "gpt-4o"}]}"#).unwrap();
    assert_eq!(run(&["check", good.to_str().unwrap()], "").0, 0);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"models": [{"name": "gpt 4o"}]}"#).unwrap();
    let (code, _, stderr) = run(&["check", bad.to_str().unwrap()], "");
    assert_eq!(code, 1);
    assert!(stderr.contains("field `models[0].name`"), "{stderr}");
    let (code, stdout, _) = run(&["--help"], "");
    assert_eq!(code, 0);
    assert!(stdout.contains("classify") && stdout.contains("check"));
}

fn check_file(name: &str, text: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("llmfb-envoy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let (code, stdout, stderr) = run(&["check", path.to_str().unwrap()], "");
    (code, stdout + &stderr)
}

#[test]
fn check_accepts_every_shipped_configuration() {
    let root = env!("CARGO_MANIFEST_DIR");
    for file in ["envoy/envoy.yaml", "examples/plugin-config.yaml"] {
        let (code, stdout, stderr) = run(&["check", &format!("{root}/{file}")], "");
        assert_eq!(code, 0, "{file}: {stdout}{stderr}");
        assert!(stdout.contains("ok"), "{stdout}");
    }
}

#[test]
fn check_rejects_broken_envoy_configs_with_the_field_and_the_fix() {
    let shipped = include_str!("../envoy/envoy.yaml");
    let cases = [
        (
            "root_id: upstream",
            "root_id: upstrem",
            "`upstrem` is not a role",
        ),
        (
            "allow_on_headers_stop_iteration: true\n              failure_policy",
            "failure_policy",
            "allow_on_headers_stop_iteration: must be true",
        ),
        (
            "status_path: /llm-fallback/status",
            "status_pathh: /x",
            "unknown field `status_pathh`",
        ),
        (
            "gpt-4o-mini: [llama-3.1-8b]",
            "gpt-4o-mini: [llama-9]",
            "field `fallback.chains.gpt-4o-mini[0]`: `llama-9` is not in `models`",
        ),
        (
            "cluster: llm_b, context_window: 200000}",
            "cluster: llm_c, context_window: 200000}",
            "cluster `llm_c` of model `claude-sonnet-4-5` is not defined",
        ),
        (
            "name: x-llm-retry\n",
            "name: x-llm-retry-please\n",
            "no `retriable_headers` entry for `x-llm-retry`",
        ),
        (
            "cluster_header: x-llm-cluster",
            "cluster: llm",
            "no route uses `cluster_header: x-llm-cluster`",
        ),
        (
            "  - {tag_name: model, regex: \"(;model=([^;]*))\"}\n",
            "",
            "no tag for `;model=`",
        ),
        (
            "base_cooldown_ms: 10000",
            "base_cooldown_ms: 900000",
            "field `fallback.base_cooldown_ms`",
        ),
        (
            "{name: gpt-4o, tier: flagship,",
            "{name: gpt-4o, tier: premium,",
            "field `models[0].tier`: `premium` is not one of fallback.tiers",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(
            shipped.contains(from),
            "the shipped config changed: {from:?}"
        );
        let (code, output) = check_file("broken.yaml", &shipped.replacen(from, to, 1));
        assert_eq!(code, 1, "{expected}: {output}");
        assert!(
            output.contains(expected),
            "expected {expected:?} in:\n{output}"
        );
    }
}
