//! `loadgen`: the load generator behind every arm of the llm-fallback latency
//! benchmark. A hand-written HTTP/1.1 keep-alive client on tokio, closed-loop
//! and open-loop (constant rate, coordinated-omission corrected) modes, and a
//! log-bucketed latency histogram. See `README.md`.

pub mod args;
pub mod hist;
pub mod http;
pub mod report;
pub mod run;
