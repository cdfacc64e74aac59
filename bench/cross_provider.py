"""The 429 -> fallback case across providers: in-request switching against next-request mode.

Provider A (cluster `llm`) answers every request with OpenAI's account-wide
`insufficient_quota`; gpt-4o's only fallback is claude-sonnet-4-5 on provider B (cluster
`llm_b`). Each round starts a fresh Envoy per arm (fresh health, so the first request meets the
quota stop), sends one request by hand, then runs the load generator's closed loop (one
connection, no client retries: what curl or a plain HTTP client does). Arms, interleaved:

  in_request    the shipped envoy/envoy.yaml (matcher route, `providers.switch: in_request`)
  next_request  the same with a `cluster_header` route and `providers.switch: next_request`

Reports per arm: the first request's status and attempts, the share of 200s, upstream
attempts per request on A and on B, latency p50/p99. Writes bench/results/<date>/cross-provider.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/e2e"))
from harness import Envoy, Mock, chat_body, next_request_mode  # noqa: E402

LOADGEN = ROOT / "target/release/loadgen"
ENVOY_CORE, CLIENT_CORE = "0", "1"


def chain_to_b(text: str) -> str:
    line = "                        gpt-4o: [llama-3.1-8b, gpt-4o-mini, claude-sonnet-4-5]"
    if line not in text:
        raise ValueError("the shipped chain changed")
    return text.replace(line, "                        gpt-4o: [claude-sonnet-4-5]", 1)


ARMS = {
    "in_request": chain_to_b,
    "next_request": lambda t: next_request_mode(chain_to_b(t)),
}


def loadgen(url: str, body: Path, seconds: float) -> dict:
    cmd = ["taskset", "-c", CLIENT_CORE, str(LOADGEN), "--url", url + "/v1/chat/completions", "--body-file", str(body),
           "--mode", "closed", "--connections", "1", "--duration", str(seconds), "--warmup", "0",
           "--header", "content-type: application/json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--out", default=str(ROOT / "bench/results" / dt.date.today().isoformat()))
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-xp-"))
    body = workdir / "body.json"
    body.write_bytes(chat_body("gpt-4o", filler=900))
    a, b = Mock(workdir, prefix=["taskset", "-c", CLIENT_CORE]), Mock(workdir, prefix=["taskset", "-c", CLIENT_CORE])
    results: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    try:
        for rnd in range(args.rounds):
            for arm, edit in ARMS.items():
                a.reset()
                b.reset()
                a.script(None, account="*", default={"preset": "openai_insufficient_quota"})
                envoy = Envoy(workdir, a.port, second_upstream_port=b.port, edit=edit, concurrency=1,
                              prefix=["taskset", "-c", ENVOY_CORE], log_level="info")
                try:
                    first = requests.post(envoy.url + "/v1/chat/completions", data=body.read_bytes(),
                                          headers={"content-type": "application/json"}, timeout=30)
                    out = loadgen(envoy.url, body, args.seconds)
                finally:
                    envoy.stop()
                n = out["requests"] + 1
                row = {
                    "first_status": first.status_code,
                    "first_attempts": first.headers.get("x-llm-attempts"),
                    "first_provider": first.headers.get("x-llm-provider"),
                    "ok_share": (out["ok"] + (first.status_code == 200)) / n,
                    "a_per_request": len(a.requests()) / n,
                    "b_per_request": len(b.requests()) / n,
                    "p50_us": out["latency_us"]["p50"],
                    "p99_us": out["latency_us"]["p99"],
                    "requests": n,
                }
                results[arm].append(row)
                print(f"round {rnd + 1} {arm:<13} first {row['first_status']} ({row['first_attempts']} attempts, "
                      f"{row['first_provider']}), ok {row['ok_share']:.4f}, A/req {row['a_per_request']:.4f}, "
                      f"B/req {row['b_per_request']:.4f}, p50 {row['p50_us']:.0f} us", file=sys.stderr, flush=True)
    finally:
        a.stop()
        b.stop()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    med = lambda arm, key: statistics.median(r[key] for r in results[arm])  # noqa: E731
    lines = [f"# 429 -> fallback across providers ({dt.datetime.now():%Y-%m-%dT%H:%M:%S})", "",
             f"Command: `bench/cross_provider.py --rounds {args.rounds} --seconds {args.seconds}`. Envoy "
             "`--concurrency 1` on core 0, mocks and load generator on core 1; provider A answers "
             "`insufficient_quota` to everything, gpt-4o's fallback is claude-sonnet-4-5 on provider B; "
             "a fresh Envoy per arm and round; one connection, closed loop, no client retries. Medians of rounds.", "",
             "| arm | first request | 200 share | A attempts / request | B attempts / request | p50 | p99 |",
             "|---|---|---|---|---|---|---|"]
    for arm, rows in results.items():
        first = rows[0]
        lines.append(f"| {arm} | {first['first_status']}, {first['first_attempts']} attempt(s), {first['first_provider']} | "
                     f"{med(arm, 'ok_share'):.4f} | {med(arm, 'a_per_request'):.4f} | {med(arm, 'b_per_request'):.4f} | "
                     f"{med(arm, 'p50_us'):.0f} us | {med(arm, 'p99_us'):.0f} us |")
    (out_dir / "cross-provider.md").write_text("\n".join(lines) + "\n")
    (out_dir / "cross-provider.json").write_text(json.dumps(results, indent=2))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
