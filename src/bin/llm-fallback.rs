//! `llm-fallback`: native command-line tools built on the filter's own core.

use llm_fallback::classify::learned::Basis;
use llm_fallback::classify::{classify_with, rules::Rules, tie_break_input, Answer};
use llm_fallback::config::Config;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;

const HELP: &str = "\
llm-fallback: command-line tools for the llm-fallback Envoy filter

USAGE:
    llm-fallback check <file>
        Validate a configuration with the filter's own validation. <file> is an Envoy config
        (YAML or JSON; every llm-fallback plugin in it is checked, plus the roles, clusters,
        route settings and stats tags they need) or a bare plugin configuration (YAML, JSON,
        or a serialized google.protobuf.Struct). Prints each problem with where it is and how
        to fix it (warnings start with `warning: `), then `ok` when none is an error; exits 1
        on errors only.

    llm-fallback classify [--config <file>]
        Ask what the filter would make of upstream answers. Reads JSON lines on stdin:
          {\"status\": 429, \"headers\": {\"retry-after\": \"3\"}, \"body\": \"...\",
           \"code_details\": null}
        and prints one JSON line per input:
          {\"class\": \"rate_limited\", \"retry_after_ms\": 3000, \"reason\": \"...\"}
        With --config, the configuration's classifier rules are applied first.

    llm-fallback features
        For the learned tie-breaker's trainer (scripts/train_tiebreaker.py): reads the same
        JSON lines as classify and prints each answer's tokens and, when only weak signals
        (a generic code, the status) decide it, the rules' class and which signal:
          {\"tokens\": [...], \"prior\": \"overloaded\", \"basis\": \"status\",
           \"rules_only\": \"overloaded\"}

    llm-fallback --help
        Show this help.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["check", file] => check(file),
        ["classify"] => classify(None),
        ["classify", "--config", file] => classify(Some(file)),
        ["features"] => features(),
        ["--help" | "-h" | "help"] | [] => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        _ => {
            eprint!("{HELP}");
            ExitCode::from(2)
        }
    }
}

fn load(file: &str) -> Result<Config, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let value: serde_json::Value =
        parse_yaml(&text).map_err(|e| format!("{file}: not YAML or JSON: {e}"))?;
    Config::from_value(value).map_err(|e| format!("{file}: {e}"))
}

fn check(file: &str) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::from(2);
        }
    };
    let document = match std::str::from_utf8(&bytes) {
        Ok(text) => match parse_yaml(text) {
            Ok(value) => value,
            Err(e) => {
                eprintln!("{file}: not YAML or JSON: {e}");
                return ExitCode::FAILURE;
            }
        },
        // Not text: a serialized google.protobuf.Struct, as Envoy hands it to the plugin.
        Err(_) => match Config::from_bytes(&bytes) {
            Ok(_) => {
                println!("{file}: ok (protobuf Struct plugin configuration)");
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                eprintln!("{file}: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let report = llm_fallback::check::check(&document);
    // Warnings (`warning: ` in front) are told either way; only errors fail the check.
    for finding in &report.findings {
        eprintln!("{file}: {finding}");
    }
    if !report.has_errors() {
        let roles: Vec<&str> = report
            .plugins
            .iter()
            .map(|(_, r)| r.as_str())
            .filter(|r| !r.is_empty())
            .collect();
        if roles.is_empty() {
            println!("{file}: ok");
        } else {
            println!(
                "{file}: ok ({} llm-fallback filter(s): {})",
                roles.len(),
                roles.join(", ")
            );
        }
        return ExitCode::SUCCESS;
    }
    ExitCode::FAILURE
}

/// One input line of `classify`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    code_details: Option<String>,
}

fn classify(config: Option<&str>) -> ExitCode {
    let rules = match config.map(load).transpose() {
        Ok(config) => config.map_or_else(Rules::default, |c| c.classifier.rules()),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    each_answer(|answer| serde_json::to_value(classify_with(answer, &rules)))
}

/// What the learned tie-breaker's trainer reads of each answer.
fn features() -> ExitCode {
    each_answer(|answer| {
        let input = tie_break_input(answer);
        let (prior, basis) = match input.weak {
            Some((class, Basis::Status)) => (Some(class.as_str()), Some("status")),
            Some((class, Basis::GenericCode)) => (Some(class.as_str()), Some("generic_code")),
            None => (None, None),
        };
        Ok(serde_json::json!({
            "tokens": input.tokens,
            "prior": prior,
            "basis": basis,
            "rules_only": input.rules_only.class,
        }))
    })
}

/// Reads answers as JSON lines on stdin and prints one JSON line per answer.
fn each_answer(
    mut judge: impl FnMut(&Answer) -> serde_json::Result<serde_json::Value>,
) -> ExitCode {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let result = match serde_json::from_str::<Input>(&line) {
            Ok(input) => {
                let headers: Vec<(String, String)> = input
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
                    .collect();
                let headers: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                judge(&Answer {
                    status: input.status,
                    headers: &headers,
                    body: input.body.as_bytes(),
                    code_details: input.code_details.as_deref(),
                    now_unix_ms: now,
                })
                .and_then(|value| serde_json::to_string(&value))
            }
            Err(e) => serde_json::to_string(&serde_json::json!({"error": e.to_string()})),
        };
        let Ok(text) = result else { continue };
        if writeln!(out, "{text}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// YAML (JSON is YAML too). Built for wasm32 only as a bench's dependency, where JSON is read.
#[cfg(not(target_arch = "wasm32"))]
fn parse_yaml(text: &str) -> Result<serde_json::Value, String> {
    serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
}

#[cfg(target_arch = "wasm32")]
fn parse_yaml(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}
