#!/usr/bin/env bash
# Runs the hot-path micro-benchmarks (benches/hot_paths.rs) compiled to wasm32-wasip1 in
# Node.js's WASI (V8), the same engine family Envoy runs the filter in.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release --target wasm32-wasip1 --bench hot_paths 2>/dev/null \
  || cargo build --release --target wasm32-wasip1 --bench hot_paths
wasm=$(ls -t target/wasm32-wasip1/release/deps/hot_paths-*.wasm | head -n 1)
node --no-warnings bench/wasi-run.mjs "$wasm"
