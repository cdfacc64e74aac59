#!/usr/bin/env bash
# Functional check of both arms against a running mock-llm.
#
#   bench/arms/verify.sh <mock_port> [litellm_port] [portkey_port]
#
# Pass 0 (or omit) for an arm that is not running. The mock must record
# requests (any --record-limit > 0; the default is fine). This RESETS the
# mock's scripts and records. Needs curl and jq.
# Per arm: plain completion (200, "Hello from gpt-4o"); gpt-4o scripted to 429
# insufficient_quota -> answer from llama-3.1-8b, mock saw exactly one gpt-4o
# and one llama-3.1-8b request; streaming pass-through and streaming fallback
# (SSE frames ending in [DONE]).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MP="${1:?usage: $0 <mock_port> [litellm_port] [portkey_port]}"
LP="${2:-0}"
PP="${3:-0}"
M="http://127.0.0.1:$MP"
fails=0; passes=0

ok()   { passes=$((passes + 1)); echo "  ok   $*"; }
bad()  { fails=$((fails + 1)); echo "  FAIL $*"; }
reset_mock() { curl -fsS -o /dev/null -X POST "$M/_mock/reset"; }
quota_gpt4o() {
  curl -fsS -o /dev/null -X POST "$M/_mock/script" \
    -d '{"model":"gpt-4o","default":{"status":429,"body":"{\"error\":{\"type\":\"insufficient_quota\",\"code\":\"insufficient_quota\",\"message\":\"quota\"}}"}}'
}
seen() { curl -fsS "$M/_mock/requests" | jq -c '[.[] | .model]'; }

# check_arm NAME URL PLAIN_HEADERS_JSON FALLBACK_HEADERS_JSON
check_arm() {
  local name="$1" url="$2" plain_h="$3" fb_h="$4"
  local -a PH FH
  mapfile -t PH < <(jq -r 'to_entries[] | "-H", "\(.key): \(.value)"' <<<"$plain_h")
  mapfile -t FH < <(jq -r 'to_entries[] | "-H", "\(.key): \(.value)"' <<<"$fb_h")
  local body='{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}'
  local sbody='{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}'
  local out code

  echo "== $name ($url)"
  reset_mock
  out="$(curl -sS -w '\n%{http_code}' "$url/v1/chat/completions" "${PH[@]}" -d "$body")"
  code="${out##*$'\n'}"; out="${out%$'\n'*}"
  if [ "$code" = 200 ] && grep -q 'Hello from gpt-4o' <<<"$out"; then ok "plain: 200, $(jq -r '.choices[0].message.content' <<<"$out")"
  else bad "plain: $code $out"; fi

  out="$(curl -sS -N "$url/v1/chat/completions" "${PH[@]}" -d "$sbody")"
  if grep -q '^data: \[DONE\]' <<<"$out" && [ "$(grep -c '^data: ' <<<"$out")" -ge 4 ]; then
    ok "stream: $(grep -c '^data: ' <<<"$out") SSE data frames, text '$(grep '^data: {' <<<"$out" | sed 's/^data: //' | jq -j '.choices[0].delta.content // ""')'"
  else bad "stream: $out"; fi

  reset_mock; quota_gpt4o
  out="$(curl -sS -w '\n%{http_code}' "$url/v1/chat/completions" "${FH[@]}" -d "$body")"
  code="${out##*$'\n'}"; out="${out%$'\n'*}"
  local s; s="$(seen)"
  if [ "$code" = 200 ] && grep -q 'Hello from llama-3.1-8b' <<<"$out" && [ "$s" = '["gpt-4o","llama-3.1-8b"]' ]; then
    ok "fallback: 200, $(jq -r '.choices[0].message.content' <<<"$out"); mock saw $s"
  else bad "fallback: $code $out; mock saw $s"; fi

  reset_mock; quota_gpt4o
  out="$(curl -sS -N "$url/v1/chat/completions" "${FH[@]}" -d "$sbody")"
  s="$(seen)"
  if grep -q '^data: \[DONE\]' <<<"$out" && grep -q 'llama-3.1-8b' <<<"$out" && [ "$s" = '["gpt-4o","llama-3.1-8b"]' ]; then
    ok "stream fallback: $(grep -c '^data: ' <<<"$out") SSE data frames from llama-3.1-8b; mock saw $s"
  else bad "stream fallback: $out; mock saw $s"; fi
  reset_mock
}

curl -fsS -o /dev/null "$M/_mock/health" || { echo "no mock on $M" >&2; exit 1; }

if [ "$LP" != 0 ]; then
  # LiteLLM: plain OpenAI requests; the fallback lives in litellm.yaml.
  check_arm litellm "http://127.0.0.1:$LP" '{"content-type":"application/json"}' '{"content-type":"application/json"}'
fi
if [ "$PP" != 0 ]; then
  hdr() { jq -c --arg p "$MP" ".$1.headers | map_values(gsub(\"MOCK_PORT\"; \$p))" "$HERE/portkey-headers.json"; }
  check_arm portkey "http://127.0.0.1:$PP" "$(hdr passthrough)" "$(hdr fallback)"
fi

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
