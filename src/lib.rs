//! llm-fallback: an Envoy filter that keeps LLM-backed products up when model providers are not.
//!
//! The crate is a pure core (no host calls; tested natively and compiled to wasm) and a thin
//! proxy-wasm shell ([`filter`], only on `wasm32-wasi*`) that moves bytes and state between
//! Envoy and the core.

pub mod check;
pub mod classify;
pub mod config;
pub mod health;
pub mod model_field;
pub mod plan;
pub mod safety;
pub mod sse;
pub mod stats;
pub mod usage;

#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
mod filter;
