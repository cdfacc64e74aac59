#!/usr/bin/env bash
# Portkey gateway arm (open-source @portkey-ai/gateway, Node server).
#
#   bench/arms/portkey.sh start <port> <mock_port>   # listens on 127.0.0.1:<port>
#   bench/arms/portkey.sh stop
#   bench/arms/portkey.sh status
#
# Needs bench/arms/install.sh first. State under .bench/portkey-run/:
#   portkey.pid, portkey.log
# The gateway itself has no upstream configuration: every request names its
# provider/target in x-portkey-* headers (see portkey-headers.json). <mock_port>
# is only used for the readiness/warm-up request.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PKG="$ROOT/.bench/portkey/node_modules/@portkey-ai/gateway"
STATE="$ROOT/.bench/portkey-run"
PIDFILE="$STATE/portkey.pid"
LOG="$STATE/portkey.log"
READY_TIMEOUT="${READY_TIMEOUT:-60}"

usage() { echo "usage: $0 start <port> <mock_port> | stop | status" >&2; exit 2; }

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && { echo "$pid"; return 0; }
  return 1
}

start() {
  local port="${1:-}" mock_port="${2:-}"
  [[ "$port" =~ ^[0-9]+$ && "$mock_port" =~ ^[0-9]+$ ]] || usage
  [ -f "$PKG/build/start-server.js" ] || { echo "portkey not installed: run bench/arms/install.sh" >&2; exit 1; }
  if pid="$(running_pid)"; then echo "portkey already running (pid $pid)" >&2; exit 1; fi
  mkdir -p "$STATE"

  # Clean environment (see README.md): production mode + --headless turn off
  # the bundled web UI and its /log/stream endpoint; no HTTP(S)_PROXY, no
  # REDIS_CONNECTION_STRING (no cache backend); TRUSTED_CUSTOM_HOSTS left at
  # its default (localhost, 127.0.0.1, ::1, host.docker.internal) so
  # x-portkey-custom-host may point at the loopback mock.
  env -i \
    PATH="/usr/local/bin:/usr/bin:/bin" \
    HOME="$STATE" \
    LANG=C.UTF-8 \
    NODE_ENV=production \
    BIND_HOST=127.0.0.1 \
    setsid node "$HERE/portkey-serve.mjs" "$PKG/build/start-server.js" \
      --port="$port" --headless \
      </dev/null >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"

  local deadline=$((SECONDS + READY_TIMEOUT))
  until curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/" 2>/dev/null; do
    if ! running_pid >/dev/null; then
      echo "portkey exited during start-up; log: $LOG" >&2; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "portkey not ready after ${READY_TIMEOUT}s; log: $LOG" >&2; stop; exit 1
    fi
    sleep 0.1
  done
  # Warm-up: one pass-through chat completion to the mock.
  curl -fsS -o /dev/null --max-time 10 "http://127.0.0.1:$port/v1/chat/completions" \
    -H 'content-type: application/json' \
    -H 'x-portkey-provider: openai' \
    -H "x-portkey-custom-host: http://127.0.0.1:$mock_port/v1" \
    -H 'authorization: Bearer sk-bench-dummy' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"warm-up"}]}' \
    || { echo "portkey up but warm-up request failed; log: $LOG" >&2; stop; exit 1; }
  echo "portkey ready on 127.0.0.1:$port (pid $(cat "$PIDFILE"), mock 127.0.0.1:$mock_port)"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then rm -f "$PIDFILE"; echo "portkey not running"; return 0; fi
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$PIDFILE"
  echo "portkey stopped (pid $pid)"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  status) if pid="$(running_pid)"; then echo "running (pid $pid)"; else echo "not running"; exit 1; fi ;;
  *) usage ;;
esac
