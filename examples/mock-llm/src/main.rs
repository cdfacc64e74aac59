//! mock-llm: a fast, scriptable, fault-injecting mock LLM upstream for
//! end-to-end tests and benchmarks. See README.md and `mock-llm --help`.

mod control;
mod encoding;
mod http;
mod llm;
mod preset;
mod record;
mod script;
mod server;
mod state;

use std::ffi::OsString;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::encoding::CompressMode;
use crate::state::AppState;

const HELP: &str = "\
mock-llm: fault-injecting mock LLM upstream (OpenAI, Anthropic, Gemini shapes)

USAGE:
    mock-llm [OPTIONS]

OPTIONS:
    --listen ADDR              Address to listen on [default: 127.0.0.1:0]
                               (a bare PORT means 127.0.0.1:PORT; port 0 picks a free port)
    --port-file PATH           Write the bound port to PATH (atomically: temp file + rename)
    --threads N                Runtime worker threads [default: 1 = single-threaded runtime]
    --scenario FILE.json       Load an array of scripts at start (same format as POST /_mock/scripts)
    --record-limit N           Keep the N most recent requests [default: 100000; 0 = keep none]
    --record-body-limit BYTES  Truncate recorded bodies to BYTES [default: 1048576]
    --compress MODE            accepted|always|never [default: accepted]: gzip (or deflate) non-stream
                               JSON answers when accept-encoding allows; always gzip; never
    -h, --help                 Print this help
    -V, --version              Print the version

On start prints exactly one line to stdout: `mock-llm listening on HOST:PORT`.
Exits cleanly on SIGTERM or SIGINT.

LLM ENDPOINTS (deterministic replies, \"Hello from <model>\"):
    POST /v1/chat/completions                  OpenAI chat (stream, stream_options.include_usage)
    POST /v1/completions                       OpenAI legacy completions
    POST /v1/embeddings                        OpenAI embeddings
    POST /v1/messages                          Anthropic messages (stream)
    POST /v1beta/models/{model}:generateContent        Gemini
    POST /v1beta/models/{model}:streamGenerateContent  Gemini stream (?alt=sse for SSE)
    GET  /v1/models                            Model list (defaults + scripted models)
    anything else                              404 JSON error (still recorded)

CONTROL API (never recorded):
    POST /_mock/script     {\"model\": \"gpt-4o\"|\"*\" (or \"account\": \"<key>\"|\"*\"), \"steps\": [Step...],
                            \"default\": Step|null, \"path_prefix\": \"/v1/messages\"}
                           replaces that model's (or account's) script; account scripts come first
    POST /_mock/scripts    [script, ...]  (bulk)
    GET  /_mock/requests[?since=SEQ]      recorded requests with seq > SEQ, oldest first
    GET  /_mock/stats      {\"requests\", \"recorded\", \"by_model\", \"by_account\", \"by_outcome\", \"in_flight\", \"max_in_flight\"}
    POST /_mock/reset      clear scripts, records and counters
    GET  /_mock/health     200 ok

ACCOUNT: bearer token of authorization, else x-api-key, else x-goog-api-key, else ?key=, else \"-\"

STEP (all fields optional):
    preset NAME (real provider error: status, headers, body; other fields override),
    status, headers {name: value}, body (string verbatim, other JSON serialized),
    sse [raw frame strings], delay_ms, ttft_ms, chunk_delay_ms, chunks,
    reset \"before_headers\"|\"after_headers\"|\"mid_body\", reset_after_chunks N, close (bool),
    compress \"gzip\"|\"deflate\"|\"none\",
    stream_error {\"after\": N, \"preset\": NAME | \"payload\": error-object}

PRESETS:
    openai_insufficient_quota 429, openai_rate_limit 429, openai_tokens_per_day 429,
    openai_server_error 500, capacity 503, anthropic_credit_balance 400,
    anthropic_overloaded 529, anthropic_rate_limit 429, deepseek_insufficient_balance 402,
    google_per_model_quota 429, google_rate_limit 429, google_overloaded 503
";

#[derive(Debug, Clone, PartialEq, Eq)]
struct Config {
    listen: String,
    port_file: Option<PathBuf>,
    threads: usize,
    scenario: Option<PathBuf>,
    record_limit: usize,
    record_body_limit: usize,
    compress: CompressMode,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:0".to_string(),
            port_file: None,
            threads: 1,
            scenario: None,
            record_limit: 100_000,
            record_body_limit: 1 << 20,
            compress: CompressMode::Accepted,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Command {
    Run(Config),
    Help,
    Version,
}

fn parse_number(flag: &str, value: &str) -> Result<usize, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut cfg = Config::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("argument is not valid UTF-8: {a:?}"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--listen"
            | "--port-file"
            | "--threads"
            | "--scenario"
            | "--record-limit"
            | "--record-body-limit"
            | "--compress" => {}
            other => return Err(format!("unknown argument {other:?}")),
        }
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .ok_or_else(|| format!("{flag} needs a value"))?
                .into_string()
                .map_err(|a| format!("{flag}: value is not valid UTF-8: {a:?}"))?,
        };
        match flag.as_str() {
            "--listen" => {
                cfg.listen = if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
                    format!("127.0.0.1:{value}")
                } else {
                    value
                }
            }
            "--port-file" => cfg.port_file = Some(PathBuf::from(value)),
            "--threads" => {
                cfg.threads = parse_number(&flag, &value)?;
                if cfg.threads == 0 {
                    return Err("--threads must be at least 1".to_string());
                }
            }
            "--scenario" => cfg.scenario = Some(PathBuf::from(value)),
            "--record-limit" => cfg.record_limit = parse_number(&flag, &value)?,
            "--compress" => {
                cfg.compress = CompressMode::parse(&value).ok_or_else(|| {
                    format!("--compress: expected accepted, always or never, got {value:?}")
                })?
            }
            _ => cfg.record_body_limit = parse_number(&flag, &value)?,
        }
    }
    Ok(Command::Run(cfg))
}

/// Writes `port` to `path` via a temporary file in the same directory and a
/// rename, so readers never see a partial file.
fn write_port_file(path: &Path, port: u16) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, format!("{port}\n"))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

async fn run(cfg: Config) -> Result<(), String> {
    let state = Arc::new(AppState::new(
        cfg.record_limit,
        cfg.record_body_limit,
        cfg.compress,
    ));
    if let Some(path) = &cfg.scenario {
        let json = std::fs::read(path)
            .map_err(|e| format!("cannot read scenario {}: {e}", path.display()))?;
        let scripts = script::parse_scripts(&json)
            .map_err(|e| format!("invalid scenario {}: {e}", path.display()))?;
        let mut inner = state.lock();
        for s in scripts {
            inner.scripts.install(s);
        }
    }
    let listener = TcpListener::bind(&cfg.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    if let Some(path) = &cfg.port_file {
        write_port_file(path, addr.port())
            .map_err(|e| format!("cannot write port file {}: {e}", path.display()))?;
    }
    {
        let mut stdout = io::stdout().lock();
        // A closed stdout must not stop the server.
        let _ = writeln!(stdout, "mock-llm listening on {addr}");
        let _ = stdout.flush();
    }

    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle SIGINT: {e}"))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(server::serve_connection(stream, Arc::clone(&state)));
                }
                Err(e) => {
                    // E.g. EMFILE: back off briefly instead of spinning.
                    eprintln!("mock-llm: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cfg = match parse_args(std::env::args_os().skip(1)) {
        Ok(Command::Run(cfg)) => cfg,
        Ok(Command::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("mock-llm {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("mock-llm: {e} (see --help)");
            return ExitCode::from(2);
        }
    };
    let runtime = if cfg.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.threads)
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mock-llm: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cfg));
    // Do not wait for connections stalled in long delays.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mock-llm: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Command, String> {
        parse_args(list.iter().map(OsString::from))
    }

    #[test]
    fn cli_defaults_and_flags() {
        assert_eq!(args(&[]), Ok(Command::Run(Config::default())));
        let Ok(Command::Run(cfg)) = args(&[
            "--listen",
            "0.0.0.0:8080",
            "--port-file=/tmp/p",
            "--threads",
            "2",
            "--scenario",
            "s.json",
            "--record-limit",
            "5",
            "--record-body-limit=10",
            "--compress",
            "always",
        ]) else {
            panic!("expected Run");
        };
        assert_eq!(cfg.listen, "0.0.0.0:8080");
        assert_eq!(cfg.port_file, Some(PathBuf::from("/tmp/p")));
        assert_eq!(cfg.threads, 2);
        assert_eq!(cfg.scenario, Some(PathBuf::from("s.json")));
        assert_eq!((cfg.record_limit, cfg.record_body_limit), (5, 10));
        assert_eq!(cfg.compress, CompressMode::Always);
        assert!(args(&["--compress", "brotli"]).is_err());
        let Ok(Command::Run(cfg)) = args(&["--compress=never"]) else {
            panic!("expected Run");
        };
        assert_eq!(cfg.compress, CompressMode::Never);
        let Ok(Command::Run(cfg)) = args(&["--listen", "9000"]) else {
            panic!("expected Run");
        };
        assert_eq!(cfg.listen, "127.0.0.1:9000");
        assert_eq!(args(&["--help"]), Ok(Command::Help));
        assert!(args(&["--threads", "0"]).is_err());
        assert!(args(&["--threads"]).is_err());
        assert!(args(&["--bogus"]).is_err());
        assert!(args(&["--record-limit", "-1"]).is_err());
    }

    #[test]
    fn help_lists_every_preset() {
        for p in preset::PRESETS {
            assert!(
                HELP.contains(&format!("{} {}", p.name, p.status)),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn port_file_is_written() {
        let dir = std::env::temp_dir().join(format!("mock-llm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("port");
        write_port_file(&path, 4242).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "4242\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
