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
            "cluster: llm_b, context_window: 200000, provider: anthropic}",
            "cluster: llm_c, context_window: 200000, provider: anthropic}",
            "cluster `llm_c` of model `claude-sonnet-4-5` is not defined",
        ),
        (
            "name: x-llm-retry\n",
            "name: x-llm-retry-please\n",
            "no `retriable_headers` entry for `x-llm-retry`",
        ),
        (
            "header_name: x-llm-cluster",
            "header_name: x-other",
            "no level reads the routing header `x-llm-cluster`",
        ),
        (
            "refresh_cluster_on_retry: true",
            "refresh_cluster_on_retry: false",
            "refresh_cluster_on_retry",
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

/// A small Envoy config of its own: two providers, one VM, the upstream filter and the same
/// retry breakers on both clusters.
const TWO_PROVIDERS: &str = r#"
stats_config:
  stats_tags:
  - {tag_name: model, regex: "(;model=([^;]*))"}
static_resources:
  listeners:
  - name: llm
    address: {socket_address: {address: 0.0.0.0, port_value: 10000}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: llm
          route_config:
            virtual_hosts:
            - name: llm
              domains: ["*"]
              routes:
              - match: {prefix: "/"}
                route:
                  cluster_header: x-llm-cluster
                  retry_policy:
                    retry_on: retriable-headers
                    retriable_headers: [{name: x-llm-retry}]
          http_filters:
          - name: llm_fallback
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm
              config:
                root_id: client
                allow_on_headers_stop_iteration: true
                failure_policy: FAIL_RELOAD
                vm_config: &vm
                  vm_id: llm_fallback
                  runtime: envoy.wasm.runtime.v8
                  code: {local: {filename: llm_fallback.wasm}}
                configuration:
                  "@type": type.googleapis.com/google.protobuf.Struct
                  value: &config
                    models:
                    - {name: gpt-4o, cluster: openai}
                    - {name: claude-sonnet-4-5, cluster: anthropic}
                    fallback:
                      default_cluster: openai
                      chains: {gpt-4o: [claude-sonnet-4-5]}
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  clusters:
  - name: openai
    circuit_breakers: &breakers
      thresholds: [{priority: DEFAULT, max_retries: 1024}]
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions: &options
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config: {http_protocol_options: {}}
        http_filters:
        - name: llm_fallback_upstream
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm
            config:
              root_id: upstream
              allow_on_headers_stop_iteration: true
              failure_policy: FAIL_RELOAD
              vm_config: *vm
              configuration:
                "@type": type.googleapis.com/google.protobuf.Struct
                value: *config
        - name: envoy.filters.http.upstream_codec
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.upstream_codec.v3.UpstreamCodec
  - name: anthropic
    circuit_breakers: *breakers
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions: *options
"#;

#[test]
fn check_finds_clusters_without_the_upstream_filter_one_vm_or_retry_breakers() {
    let (code, output) = check_file("two-providers.yaml", TWO_PROVIDERS);
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("ok (3 llm-fallback filter(s)"), "{output}");
    let cases = [
        (
            "    circuit_breakers: *breakers\n",
            "",
            "static_resources.clusters[1].circuit_breakers: cluster `anthropic` (models `claude-sonnet-4-5`) sets no retry circuit breaker (max_retries or retry_budget at priority DEFAULT): Envoy's default of 3 concurrent retries",
        ),
        (
            "thresholds: [{priority: DEFAULT, max_retries: 1024}]",
            "thresholds: [{priority: DEFAULT, max_requests: 1024}]",
            "cluster `openai` (models `gpt-4o`) sets no retry circuit breaker",
        ),
        (
            "    circuit_breakers: *breakers\n",
            "    circuit_breakers: {thresholds: [{max_retries: 3}]}\n",
            "static_resources.clusters: LLM clusters set different retry circuit breakers (`openai` max_retries 1024, `anthropic` max_retries 3)",
        ),
        (
            "      envoy.extensions.upstreams.http.v3.HttpProtocolOptions: *options\n",
            "      envoy.extensions.upstreams.http.v3.HttpProtocolOptions: {explicit_http_config: {http_protocol_options: {}}}\n",
            "static_resources.clusters[1].typed_extension_protocol_options: cluster `anthropic` (models `claude-sonnet-4-5`) has no llm-fallback upstream filter",
        ),
        (
            "              vm_config: *vm\n",
            "              vm_config: {vm_id: llm_fallback, runtime: envoy.wasm.runtime.v8, code: {local: {filename: old.wasm}}}\n",
            "vm_config: the upstream filter runs in another VM than the client filter at static_resources.listeners[0]",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(TWO_PROVIDERS.contains(from), "{from:?}");
        let (code, output) = check_file(
            "two-providers-broken.yaml",
            &TWO_PROVIDERS.replacen(from, to, 1),
        );
        assert_eq!(code, 1, "{expected}: {output}");
        assert!(
            output.contains(expected),
            "expected {expected:?} in:\n{output}"
        );
    }
}
