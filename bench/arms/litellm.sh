#!/usr/bin/env bash
# LiteLLM proxy arm.
#
#   bench/arms/litellm.sh start <port> <mock_port>   # listens on 127.0.0.1:<port>
#   bench/arms/litellm.sh stop
#   bench/arms/litellm.sh status
#
# Needs bench/arms/install.sh first. State under .bench/litellm/:
#   config.yaml (litellm.yaml with MOCK_PORT filled in), litellm.pid, litellm.log
# Env: READY_TIMEOUT (s, default 90), LITELLM_CONFIG_TEMPLATE (default litellm.yaml)
# Clients send plain OpenAI requests: POST /v1/chat/completions, no auth header.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$ROOT/.bench/litellm-venv"
STATE="$ROOT/.bench/litellm"
PIDFILE="$STATE/litellm.pid"
LOG="$STATE/litellm.log"
READY_TIMEOUT="${READY_TIMEOUT:-90}"
TEMPLATE="${LITELLM_CONFIG_TEMPLATE:-$HERE/litellm.yaml}"   # override for variants

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
  [ -x "$VENV/bin/litellm" ] || { echo "litellm not installed: run bench/arms/install.sh" >&2; exit 1; }
  if pid="$(running_pid)"; then echo "litellm already running (pid $pid)" >&2; exit 1; fi
  mkdir -p "$STATE"
  sed "s/\${MOCK_PORT}/$mock_port/g" "$TEMPLATE" >"$STATE/config.yaml"

  # Environment: start from a clean slate so nothing from the caller's env
  # (a DATABASE_URL, a callback key, proxy settings) switches features on.
  # Every variable is documented in README.md.
  env -i \
    PATH="$VENV/bin:/usr/local/bin:/usr/bin:/bin" \
    HOME="$STATE" \
    LANG=C.UTF-8 \
    NO_PROXY='127.0.0.1,localhost' no_proxy='127.0.0.1,localhost' \
    LITELLM_LOG=ERROR \
    JSON_LOGS=False \
    LITELLM_MODE=PRODUCTION \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS=True \
    LITELLM_LOCAL_AUTOROUTER_PRESETS=True \
    LITELLM_LOCAL_BLOG_POSTS=True \
    LITELLM_LOCAL_POLICY_TEMPLATES=True \
    LITELLM_DONT_SHOW_FEEDBACK_BOX=True \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    DISABLE_ADMIN_UI=True \
    NO_DOCS=True \
    NO_REDOC=True \
    STORE_MODEL_IN_DB=False \
    DISABLE_SCHEMA_UPDATE=True \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    setsid "$VENV/bin/litellm" \
      --config "$STATE/config.yaml" \
      --host 127.0.0.1 --port "$port" \
      --num_workers 1 \
      </dev/null >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"

  local deadline=$((SECONDS + READY_TIMEOUT))
  until curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/liveliness" 2>/dev/null; do
    if ! running_pid >/dev/null; then
      echo "litellm exited during start-up; log: $LOG" >&2; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "litellm not ready after ${READY_TIMEOUT}s; log: $LOG" >&2; stop; exit 1
    fi
    sleep 0.2
  done
  # Liveliness comes up with the app; also make sure the router answers.
  curl -fsS -o /dev/null --max-time 10 "http://127.0.0.1:$port/v1/chat/completions" \
    -H 'content-type: application/json' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"warm-up"}]}' \
    || { echo "litellm up but warm-up request failed; log: $LOG" >&2; stop; exit 1; }
  echo "litellm ready on 127.0.0.1:$port (pid $(cat "$PIDFILE"), mock 127.0.0.1:$mock_port)"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then rm -f "$PIDFILE"; echo "litellm not running"; return 0; fi
  # setsid made the proxy a process-group leader: signal its group only.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$PIDFILE"
  echo "litellm stopped (pid $pid)"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  status) if pid="$(running_pid)"; then echo "running (pid $pid)"; else echo "not running"; exit 1; fi ;;
  *) usage ;;
esac
