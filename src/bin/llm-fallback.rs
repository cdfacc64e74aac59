//! `llm-fallback`: native command-line tools built on the filter's own core.

use llm_fallback::config::Config;
use std::process::ExitCode;

const HELP: &str = "\
llm-fallback: command-line tools for the llm-fallback Envoy filter

USAGE:
    llm-fallback check <file>    Validate a plugin configuration (JSON) with the filter's own
                                 validation; prints `ok` or the field that is wrong and why.
    llm-fallback --help          Show this help.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["check", file] => check(file),
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

fn check(file: &str) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::from(2);
        }
    };
    match Config::from_bytes(&bytes) {
        Ok(config) => {
            println!("ok: {} model(s) configured", config.models.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{file}: {e}");
            ExitCode::FAILURE
        }
    }
}
