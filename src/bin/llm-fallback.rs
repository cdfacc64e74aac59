//! `llm-fallback`: native command-line tools built on the filter's own core.

use llm_fallback::classify::{classify_with, rules::Rules, Answer};
use llm_fallback::config::Config;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;

const HELP: &str = "\
llm-fallback: command-line tools for the llm-fallback Envoy filter

USAGE:
    llm-fallback check <file>
        Validate a plugin configuration (JSON) with the filter's own validation.
        Prints `ok` or the field that is wrong and why; exits 1 when invalid.

    llm-fallback classify [--config <file>]
        Ask what the filter would make of upstream answers. Reads JSON lines on stdin:
          {\"status\": 429, \"headers\": {\"retry-after\": \"3\"}, \"body\": \"...\",
           \"code_details\": null}
        and prints one JSON line per input:
          {\"class\": \"rate_limited\", \"retry_after_ms\": 3000, \"reason\": \"...\"}
        With --config, the configuration's classifier rules are applied first.

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
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    Config::from_bytes(&bytes).map_err(|e| format!("{file}: {e}"))
}

fn check(file: &str) -> ExitCode {
    match load(file) {
        Ok(config) => {
            println!("ok: {} model(s) configured", config.models.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
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
                let verdict = classify_with(
                    &Answer {
                        status: input.status,
                        headers: &headers,
                        body: input.body.as_bytes(),
                        code_details: input.code_details.as_deref(),
                        now_unix_ms: now,
                    },
                    &rules,
                );
                serde_json::to_string(&verdict)
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
