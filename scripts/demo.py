"""`make demo`: the filter in a real Envoy, in front of the mock LLM, with traffic and counters.

Starts the project's mock LLM upstream and Envoy 1.40 with the shipped envoy/envoy.yaml (only
ports and the .wasm path substituted), sends a few requests through it, and shows what the
client got, what the upstream received, and the filter's own counters.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests/e2e"))
from harness import Envoy, Mock, chat_body  # noqa: E402

BOLD, DIM, RESET = "\033[1m", "\033[2m", "\033[0m"


def say(text: str) -> None:
    print(f"\n{BOLD}{text}{RESET}", flush=True)


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-demo-"))
    mock = Mock(workdir)
    envoy = Envoy(workdir, mock.port)
    try:
        say(f"Envoy 1.40 on {envoy.url} (admin {envoy.admin}) -> filter -> mock LLM on {mock.url}")

        say("1. A chat completion: client -> Envoy -> llm-fallback (client + upstream) -> mock")
        r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"),
                          headers={"content-type": "application/json"}, timeout=10)
        print(f"   client got {r.status_code}: {r.json()['choices'][0]['message']['content']!r}")
        seen = mock.requests()[-1]
        print(f"   upstream saw {seen['method']} {seen['path']} model={seen['model']} "
              f"attempt={seen['headers'].get('x-envoy-attempt-count')}")

        say("2. A stream: frames reach the client as the model writes them (no buffering)")
        mock.script("claude-sonnet-4-5", default={"chunk_delay_ms": 250, "chunks": 4})
        start = time.monotonic()
        with requests.post(envoy.url + "/v1/chat/completions", data=chat_body("claude-sonnet-4-5", stream=True),
                           headers={"content-type": "application/json"}, stream=True, timeout=10) as r:
            for line in r.iter_lines():
                if line:
                    print(f"   {DIM}+{time.monotonic() - start:4.2f}s{RESET} {line.decode()[:90]}")

        say("3. The model key after 200 KB of messages, and a model the config does not list")
        for model, filler in [("gpt-4o-mini", 200_000), ("my-finetune-v2", 0)]:
            r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body(model, filler=filler),
                              headers={"content-type": "application/json"}, timeout=10)
            print(f"   {model}: {r.status_code}, body {len(chat_body(model, filler=filler))} bytes")

        say("4. gpt-4o runs out of quota: the request is served by its fallback, nothing retries gpt-4o")
        mock.script("gpt-4o", default={"status": 429, "body": json.dumps({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}})})
        for i in range(3):
            r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"),
                              headers={"content-type": "application/json"}, timeout=10)
            print(f"   request {i + 1}: {r.status_code} served by {r.headers.get('x-llm-model')} "
                  f"(asked gpt-4o, reason {r.headers.get('x-llm-fallback-reason')}, attempts {r.headers.get('x-llm-attempts')})")
        asked = [x["model"] for x in mock.requests()[-4:]]
        print(f"   the upstream saw: {asked}")

        time.sleep(1.2)  # shared counters are folded in once a second
        say(f"5. The filter's counters ({envoy.admin}/stats/prometheus)")
        for line in envoy.prometheus().splitlines():
            if line.startswith("llm_fallback_") and not line.endswith(" 0"):
                print("   " + line)
        say(f"6. Shared-data counters ({envoy.internal}/llm-fallback/status, internal listener)")
        counters = envoy.status()["counters"]
        for name, value in counters.items():
            if value:
                print(f"   {name} = {value}")
        print(f"\n{DIM}Envoy log: {envoy.log_path}{RESET}")
    finally:
        envoy.stop()
        mock.stop()


if __name__ == "__main__":
    main()
