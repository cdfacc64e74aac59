#!/usr/bin/env bash
# Install the two comparison gateways for the side-by-side latency benchmark.
#
#   bench/arms/install.sh            # idempotent: installs only what is missing
#   FORCE=1 bench/arms/install.sh    # reinstall both
#
# LiteLLM proxy -> .bench/litellm-venv   (python3 -m venv, pip install litellm[proxy]==PIN)
# Portkey       -> .bench/portkey        (npm install --prefix, @portkey-ai/gateway@PIN)
#
# .bench/ is scratch: a .bench/.gitignore containing "*" keeps it out of git.
set -euo pipefail

# Newest litellm whose [proxy] extra resolves from PyPI here: 1.110.x needs
# litellm-proxy==1.110.x (not published); 1.108.8-1.109.x need
# litellm-proxy-extras / litellm-enterprise builds that are not published.
LITELLM_VERSION="${LITELLM_VERSION:-1.108.7}"
PORTKEY_VERSION="${PORTKEY_VERSION:-1.15.2}"
# @portkey-ai/gateway asks for @hono/node-server ^1.3.3, which now resolves to
# 1.19.x. From 1.14.2 on, its Response wrapper reuses the upstream fetch()
# response's immutable Headers for a ReadableStream body, so Portkey's header
# update fails every streamed request with 500 "Something went wrong"
# (TypeError: immutable; see Portkey-AI/gateway#1389). 1.14.1 still copies the
# headers: pin it with an npm override.
HONO_NODE_SERVER_VERSION="${HONO_NODE_SERVER_VERSION:-1.14.1}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BENCH="$ROOT/.bench"
VENV="$BENCH/litellm-venv"
PK="$BENCH/portkey"
PYTHON="${PYTHON:-python3}"

mkdir -p "$BENCH"
[ -f "$BENCH/.gitignore" ] || printf '*\n' >"$BENCH/.gitignore"

npm_version() { node -p "require('$PK/node_modules/$1/package.json').version" 2>/dev/null; }

litellm_installed() {
  [ -x "$VENV/bin/python" ] || return 1
  local v
  v="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null)" || return 1
  [ "$v" = "$LITELLM_VERSION" ] || return 1
  # the [proxy] extra must be there too
  "$VENV/bin/python" -c 'import fastapi, uvicorn, backoff, orjson' 2>/dev/null || return 1
  [ -x "$VENV/bin/litellm" ]
}

portkey_installed() {
  [ "$(npm_version @portkey-ai/gateway)" = "$PORTKEY_VERSION" ] || return 1
  [ "$(npm_version @hono/node-server)" = "$HONO_NODE_SERVER_VERSION" ] || return 1
  [ -f "$PK/node_modules/@portkey-ai/gateway/build/start-server.js" ]
}

t0=$(date +%s)

if [ "${FORCE:-0}" != 1 ] && litellm_installed; then
  echo "litellm $LITELLM_VERSION already installed in $VENV"
else
  echo "installing litellm[proxy]==$LITELLM_VERSION into $VENV"
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "litellm[proxy]==$LITELLM_VERSION"
fi
t1=$(date +%s)

if [ "${FORCE:-0}" != 1 ] && portkey_installed; then
  echo "@portkey-ai/gateway $PORTKEY_VERSION already installed in $PK"
else
  echo "installing @portkey-ai/gateway@$PORTKEY_VERSION (+ @hono/node-server@$HONO_NODE_SERVER_VERSION) into $PK"
  mkdir -p "$PK"
  printf '%s\n' \
    '{' \
    '  "private": true,' \
    "  \"dependencies\": { \"@portkey-ai/gateway\": \"$PORTKEY_VERSION\" }," \
    "  \"overrides\": { \"@hono/node-server\": \"$HONO_NODE_SERVER_VERSION\" }" \
    '}' >"$PK/package.json"
  rm -f "$PK/package-lock.json"
  # npm 11 does not run the package's own postinstall (patch-package); the
  # published tarball ships no patches, so nothing is lost.
  npm install --prefix "$PK" --no-audit --no-fund
fi
t2=$(date +%s)

echo "--- versions"
echo "python:  $("$VENV/bin/python" --version 2>&1)"
echo "litellm: $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')"
echo "node:    $(node --version)"
echo "@portkey-ai/gateway: $(npm_version @portkey-ai/gateway)"
echo "@hono/node-server:   $(npm_version @hono/node-server) (npm override)"
echo "--- time: litellm $((t1 - t0))s, portkey $((t2 - t1))s, total $((t2 - t0))s"
