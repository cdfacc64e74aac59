use std::io::Write;
use std::process::ExitCode;

use loadgen::args::{parse_args, resolve, USAGE};

fn main() -> ExitCode {
    let cfg = match parse_args(std::env::args().skip(1)) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            eprint!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("loadgen: {msg}\n");
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let addr = match resolve(&cfg) {
        Ok(addr) => addr,
        Err(msg) => {
            eprintln!("loadgen: {msg}");
            return ExitCode::from(2);
        }
    };
    let report = match loadgen::run::run(&cfg, addr) {
        Ok(report) => report,
        Err(msg) => {
            eprintln!("loadgen: {msg}");
            return ExitCode::from(1);
        }
    };
    let json = match serde_json::to_string(&report) {
        Ok(json) => json,
        Err(e) => {
            eprintln!("loadgen: cannot encode report: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{json}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
