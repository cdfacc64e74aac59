# The two commands of the README:
#   make demo   build the filter, start the mock LLM and Envoy with the shipped config, show traffic
#   make test   everything CI runs: lint, unit tests (native and wasm), end-to-end tests in Envoy,
#               the classifier gate on real answers
.PHONY: demo test rules trap-wasm bench bench-cpu e2e-native bench-queue eval eval-gate train-tiebreaker soak setup build lint unit unit-wasm e2e clean

WASM := target/wasm32-wasip1/release/llm_fallback.wasm
NATIVE := target/native/libllm_fallback.so
PY := .venv/bin/python

demo: build
	$(PY) scripts/demo.py

test: build lint unit unit-wasm rules e2e e2e-native eval-gate

setup:
	@scripts/setup.sh

build: setup
	cargo build --release --lib --target wasm32-wasip1
	cargo build --release -p mock-llm --bin mock-llm
	cargo build --release --bin llm-fallback
	cargo build --profile native --lib --features native
	@ls -l $(WASM) | awk '{print "llm_fallback.wasm: " $$5 " bytes"}'
	@ls -l $(NATIVE) | awk '{print "libllm_fallback.so: " $$5 " bytes"}'

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy --lib --target wasm32-wasip1 -- -D warnings
	cargo clippy --lib --features native -- -D warnings

unit:
	cargo test --workspace
	cargo test --lib --features native

# The pure core's tests, compiled to wasm and run by wasm-bindgen-test in Node.js.
unit-wasm: setup
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=$(CURDIR)/.tools/bin/wasm-bindgen-test-runner \
	  cargo test --lib --target wasm32-unknown-unknown

e2e: build trap-wasm
	$(PY) -m pytest -q tests/e2e

# The same suite against the native build (the filter as an Envoy dynamic module); what that
# build cannot do is skipped with its reason.
e2e-native: build trap-wasm
	LLM_FALLBACK_SHELL=native $(PY) -m pytest -q -rs tests/e2e

# The shipped Prometheus alerting rules: syntax, then their unit tests (Debian's promtool).
rules: setup
	python3 docker/rules/genai.py --check
	promtool check rules docker/rules/llm-fallback.rules.yml docker/rules/llm-fallback.genai.rules.yml
	cd docker/rules && promtool test rules llm-fallback.rules.test.yml

# The test bed's build whose VM traps on request (`x-llm-test-trap`): what survives a VM reload.
trap-wasm:
	CARGO_TARGET_DIR=target/trap cargo build --release --lib --target wasm32-wasip1 --features test-trap

# The classifier on real answers it was not written from (held-out corpus, split by source).
eval: build
	$(PY) scripts/eval_classifier.py

# The classifier on real answers, in CI: the development part must stay at 95 % strict with no
# quota stop read as retryable (a ratchet); the held-out test part is printed, never required.
eval-gate: build
	$(PY) scripts/eval_classifier.py --require 95
	$(PY) scripts/train_tiebreaker.py --check

# The classifier's learned tie-breaker, retrained on the development part (offline; CI never
# retrains): writes src/classify/learned/weights.rs with its cross-validation figures.
train-tiebreaker: build
	$(PY) scripts/train_tiebreaker.py

# The chaos soak (about 3.5 minutes for 100 000 requests here).
soak: build
	$(PY) scripts/soak.py --requests 100000

# Side-by-side benchmark (about 15 minutes): installs LiteLLM and Portkey into .bench/, writes
# bench/results/<date>/.
bench: build
	cargo build --release -p loadgen
	cargo build --release --target wasm32-wasip1 --manifest-path bench/empty-filter/Cargo.toml
	bash bench/arms/install.sh
	.venv/bin/pip install --quiet --disable-pip-version-check -r bench/requirements.txt
	$(PY) scripts/bench.py
	$(PY) bench/cpu.py
	$(PY) bench/cpu.py --arms plain,no-shaping,shipped --out bench/results/$$(date +%F)/shaping-idle
	$(PY) bench/cross_provider.py
	$(PY) bench/queue_release.py

# Envoy CPU per request with and without the filter, same route (about 4 minutes): writes
# bench/results/<date>/cpu.{md,json}.
bench-cpu: build
	cargo build --release -p loadgen
	cargo build --release --target wasm32-wasip1 --manifest-path bench/empty-filter/Cargo.toml
	$(PY) bench/cpu.py

# How fast a queued request leaves its queue when a slot frees (about 1 minute).
bench-queue: build
	$(PY) bench/queue_release.py

clean:
	cargo clean
