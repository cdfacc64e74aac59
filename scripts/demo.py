"""`make demo`: a launch-day drill through a real Envoy 1.40 with the shipped envoy/envoy.yaml.

Starts two mock LLM providers (the `llm` and `llm_b` clusters) and Envoy with the shipped config
(only ports and the .wasm path substituted), then plays a bad day: normal traffic; the flagship
overloads and traffic falls back; provider A's account runs out of quota (a gzipped
`insufficient_quota`), every model of that account cools down at once and the same request is
served by provider B (with B's key, never A's nor the client's); a short rate limit is waited out; a call that may act is not retried; the quota
resets and traffic switches back; a 429 storm engages the load trigger (critical flat, batch deferred, internal queued). It ends with a table read from the filter's own counters, checked against what the mock
providers recorded.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests/e2e"))
from harness import Envoy, Mock, chat_body, wait_for  # noqa: E402

BOLD, DIM, GREEN, YELLOW, RED, RESET = "\033[1m", "\033[2m", "\033[32m", "\033[33m", "\033[31m", "\033[0m"
JSON = {"content-type": "application/json"}
OVERLOADED = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
RATE = json.dumps({"error": {"message": "Rate limit reached for requests per min (RPM).", "type": "requests", "code": "rate_limit_exceeded"}})
START = time.monotonic()
# The shipped config maps this key to the `critical` class (shaping.keys): clients cannot name it.
CRITICAL = {"authorization": "Bearer demo-critical-key"}


def say(text: str) -> None:
    print(f"\n{BOLD}[{time.monotonic() - START:5.1f}s] {text}{RESET}", flush=True)


def ask(envoy: Envoy, n: int, model: str, path: str = "/v1/chat/completions", body: bytes | None = None,
        headers: dict | None = None) -> requests.Response:
    r = requests.post(envoy.url + path, data=body or chat_body(model), headers={**JSON, **(headers or {})}, timeout=60)
    served = r.headers.get("x-llm-model", "-")
    color = GREEN if r.status_code == 200 and served == model else YELLOW if r.status_code == 200 else RED
    why = []
    if r.headers.get("x-llm-provider"):
        why.append(f"provider {r.headers['x-llm-provider']}")
    if r.headers.get("x-llm-fallback-from"):
        why.append(f"fallback from {r.headers['x-llm-fallback-from']}: {r.headers.get('x-llm-fallback-reason')}")
    if r.headers.get("x-llm-error-class"):
        why.append(f"error {r.headers['x-llm-error-class']}")
    if r.headers.get("x-llm-fallback-next"):
        why.append(f"x-should-retry: {r.headers.get('x-should-retry')}, next: {r.headers['x-llm-fallback-next']}")
    if r.headers.get("x-llm-shaping"):
        why.append(f"{r.headers.get('x-llm-class')}: {r.headers['x-llm-shaping']}"
                   + (f", Retry-After {r.headers['retry-after']} s" if r.status_code == 429 else ""))
    if r.headers.get("x-llm-retry-blocked"):
        why.append(f"retry blocked: {r.headers['x-llm-retry-blocked']}, x-should-retry: {r.headers.get('x-should-retry')}")
    print(f"   {DIM}#{n:<3}{RESET} {model:<18} -> {color}{r.status_code} {served:<18}{RESET} "
          f"attempts {r.headers.get('x-llm-attempts', '-'):<2} {DIM}{'; '.join(why)}{RESET}", flush=True)
    return r


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-drill-"))
    mock, mock_b = Mock(workdir), Mock(workdir)
    envoy = Envoy(workdir, mock.port, second_upstream_port=mock_b.port)
    n = 0
    matches = False
    try:
        say(f"Envoy 1.40 on {envoy.url}: client -> Envoy -> llm-fallback -> provider A {mock.url} / provider B {mock_b.url}")
        print(f"   {DIM}chains (envoy/envoy.yaml): gpt-4o -> llama-3.1-8b -> gpt-4o-mini -> claude-sonnet-4-5; "
              f"claude-sonnet-4-5 -> claude-haiku-4-5 -> gpt-4o{RESET}")
        print(f"   {DIM}accounts: llm (provider A: gpt-4o, llama-3.1-8b, gpt-4o-mini), llm_b (provider B: claude-*){RESET}")

        say("1. Normal traffic: the flagship gpt-4o serves everything")
        for _ in range(5):
            n += 1
            ask(envoy, n, "gpt-4o")
        first = mock.requests()[0]
        print(f"   {DIM}provider A saw: {first['method']} {first['path']} model={first['model']} "
              f"attempt={first['headers'].get('x-envoy-attempt-count')}{RESET}")

        say("2. Launch day: gpt-4o answers 529 overloaded. Two quick retries, then its circuit opens and traffic falls back")
        mock.script("gpt-4o", default={"status": 529, "body": OVERLOADED})
        for _ in range(6):
            n += 1
            ask(envoy, n, "gpt-4o")
        print(f"   {DIM}(after the circuit opened, no attempt is wasted on gpt-4o){RESET}")

        say("3. gpt-4o's cooldown ends (~10 s); one probe finds provider A's account out of quota (gzipped, resets in 15 s):\n"
            "   every model of account A cools down at once, and the same request is served by provider B")
        mock.script(None, account="*", default={"preset": "openai_insufficient_quota", "compress": "gzip",
                                                "headers": {"retry-after": "15"}})
        wait_for(lambda: envoy.status()["models"]["gpt-4o"]["state"] != "cooling_down", 30, "circuit cooldown")
        for _ in range(5):
            n += 1
            ask(envoy, n, "gpt-4o")
        quota_at = time.monotonic()
        switched = mock_b.requests()[0]
        print(f"   {DIM}provider B saw: model={switched['model']} attempt={switched['headers'].get('x-envoy-attempt-count')} "
              f"authorization={switched['headers'].get('authorization')} (B's own key, injected by Envoy){RESET}")
        accounts = envoy.status()["accounts"]
        print(f"   {DIM}accounts: " + ", ".join(f"{name} {a['state']}" for name, a in accounts.items()) + RESET)

        say("4. Provider B rate-limits claude-sonnet-4-5 for 1 s: the wait is short, so the same model is asked again")
        mock_b.script("claude-sonnet-4-5", steps=[{"status": 429, "headers": {"retry-after": "1"}, "body": RATE}])
        n += 1
        t = time.monotonic()
        ask(envoy, n, "claude-sonnet-4-5")
        print(f"   {DIM}(served after {time.monotonic() - t:.1f}s on the same model){RESET}")

        say("5. A call that acts (an assistant run) meets a 500: it is not re-sent, and the SDK is told not to retry")
        mock_b.script("claude-haiku-4-5", steps=[{"status": 500}])
        n += 1
        ask(envoy, n, "claude-haiku-4-5", "/v1/threads/thread_1/runs", json.dumps({"assistant_id": "asst_1", "model": "claude-haiku-4-5"}).encode())

        say("6. Account A's quota resets: the next request probes gpt-4o, it answers, and traffic switches back")
        mock.script(None, account="*")
        mock.script("gpt-4o", default={})
        time.sleep(max(0.0, 15.5 - (time.monotonic() - quota_at)))
        for _ in range(5):
            n += 1
            ask(envoy, n, "gpt-4o")

        say("7. A 429 storm on gpt-4o: its 429 rate crosses the load trigger (20 %). Critical traffic stays flat,\n"
            "   batch work is deferred, internal traffic waits for a slot (or is downgraded after 10 s)")
        mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "0"}, "body": RATE}, {}] * 12)
        for _ in range(12):
            n += 1
            ask(envoy, n, "gpt-4o", headers=CRITICAL)
        wait_for(lambda: envoy.status()["shaping"]["load_engaged"], 5, "load trigger engaged")
        print(f"   {DIM}load trigger engaged (status: shaping.load_engaged); gpt-4o now answers in 1.5 s{RESET}")
        mock.script("gpt-4o", default={"delay_ms": 1500})
        n += 1
        ask(envoy, n, "gpt-4o", headers={"x-llm-priority": "batch"})
        with ThreadPoolExecutor(max_workers=24) as pool:
            started = time.monotonic()
            internal = [pool.submit(requests.post, envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"),
                                    headers=JSON, timeout=60) for _ in range(26)]
            time.sleep(0.2)
            critical = [pool.submit(ask, envoy, n + 1 + i, "gpt-4o", headers=CRITICAL)
                        for i in range(3)]
            crit_times = [c.result().elapsed.total_seconds() for c in critical]
            answers = [f.result() for f in internal]
        n += 3
        shaped = [a.headers.get("x-llm-shaping", "") for a in answers]
        waited = [s for s in shaped if "queued" in s]
        borrowed = [s for s in shaped if s == "pool batch"]
        print(f"   {DIM}critical: {', '.join(f'{t:.1f}s' for t in crit_times)} (gpt-4o takes 1.5 s; no queue in front of them){RESET}")
        print(f"   {DIM}internal: {len(answers) - len(waited) - len(borrowed)} took internal's slots (16), {len(borrowed)} borrowed "
              f"batch's idle ones, {len(waited)} waited ({', '.join(waited[:3])}, ...); "
              f"{sum(a.status_code == 200 for a in answers)} of 26 served{RESET}")
        pools = {p["pool"]: p for p in envoy.status()["shaping"]["pools"]}
        print(f"   {DIM}pools now: " + ", ".join(f"{k} {v['in_use']}/{v['max_concurrency'] or '-'}" for k, v in pools.items()) + RESET)

        time.sleep(1.2)  # shared counters are folded in once a second
        matches = report(envoy, [mock, mock_b])
        print(f"\n{BOLD}Where to look next{RESET}")
        print(f"   Prometheus metrics: {envoy.admin}/stats/prometheus  (llm_fallback_* series)")
        print(f"   Status (internal listener): {envoy.internal}/llm-fallback/status")
        print(f"   Envoy log (every decision is one line): {envoy.log_path}")
        print("   The same stack with Prometheus and Grafana: docker compose up (see README)")
        if sys.stdin.isatty() and sys.stdout.isatty():
            # Run from a terminal: keep the stack up so that the links above work.
            print(f"\n{BOLD}The stack stays up; Ctrl-C stops it.{RESET}", flush=True)
            try:
                while envoy.proc.poll() is None:
                    time.sleep(1)
            except KeyboardInterrupt:
                print()
    finally:
        envoy.stop()
        mock.stop()
        mock_b.stop()
    return 0 if matches else 1


def report(envoy: Envoy, mocks: list[Mock]) -> bool:
    doc = envoy.status()
    counters = doc["counters"]
    seen = Counter(r["model"] for m in mocks for r in m.requests())
    say("What happened, from the filter's own counters (status endpoint)")
    header = f"   {'model':<18} {'requests':>8} {'attempts':>8} {'upstream saw':>12} {'ok':>4} {'overl.':>6} {'quota':>5} {'rate':>4} {'fallbacks from':>14} {'blocked':>7}"
    print(header)
    print("   " + "-" * (len(header) - 3))
    all_match = True
    for model, info in doc["models"].items():
        answers = info["answers"]
        attempts = info["attempts"]
        match = attempts == seen.get(model, 0)
        all_match &= match
        print(f"   {model:<18} {info['requests']:>8} {attempts:>8} {seen.get(model, 0):>12}{'' if match else '!'} "
              f"{answers['ok']:>4} {answers['overloaded']:>6} {answers['quota_exhausted']:>5} {answers['rate_limited']:>4} "
              f"{info['fallbacks_from']:>14} {info['retries_blocked']:>7}")
    fallbacks = {k.split(";", 1)[1]: v for k, v in counters.items() if k.startswith("llm_fallback.fallbacks;") and v}
    for key, value in sorted(fallbacks.items()):
        print(f"   {DIM}fallback {key.replace(';', ' ')}: {value}{RESET}")
    verdict = f"{GREEN}yes{RESET}" if all_match else f"{RED}NO{RESET}"
    print(f"\n   attempts counted by the filter match what the providers recorded: {verdict}")
    usage(doc)
    return all_match


def usage(doc: dict) -> None:
    """Cost by API key and task (the shipped price table), and the budgets."""
    say("Usage: cost by API key and task (metering.prices), and the budgets")
    cost: Counter = Counter()
    for name, value in doc["counters"].items():
        if name.startswith("llm_fallback.cost_nanousd;") and value:
            labels = dict(part.split("=", 1) for part in name.split(";")[1:])
            cost[(labels["key"], labels["task"])] += value
    for (key, task), nanos in sorted(cost.items(), key=lambda kv: -kv[1]):
        print(f"   key {key:<14} task {task:<6} {nanos / 1e9:.6f} USD")
    for b in doc.get("budgets", []):
        print(f"   {DIM}budget {b['name']} ({b['state']}, per {b['window']}): {b['used_ratio']:.2e} of its cap used, "
              f"resets {b['resets_at']}{RESET}")


if __name__ == "__main__":
    sys.exit(main())
