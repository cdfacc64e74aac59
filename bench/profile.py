"""Where does Envoy's CPU go with the filter? `python bench/profile.py [config.yaml [rate [content bytes]]]`

Runs Envoy (`--concurrency 1`, core 0) with the given config (default: the shipped one) in
front of the mock, drives it at a constant rate with the load generator (core 1), records
Envoy with `perf record -e cpu-clock` (software clock: no hardware counters are needed) and
prints the hottest symbols and libraries. V8's JIT-compiled wasm has no symbols for perf; it
shows as `[unknown]` / `perf-<pid>.map` and is reported as one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/e2e"))
from harness import Envoy, Mock  # noqa: E402


def main() -> int:
    config = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "envoy/envoy.yaml"
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 900
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-profile-"))
    body = workdir / "body.json"
    body.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * size}], "model": "gpt-4o"}))
    mock = Mock(workdir, extra_args=["--threads", "1", "--record-limit", "0"], prefix=["taskset", "-c", "1"])
    envoy = Envoy(workdir, mock.port, config_path=config, concurrency=1, prefix=["taskset", "-c", "0"], cwd=ROOT)
    try:
        load = subprocess.Popen(["taskset", "-c", "1", str(ROOT / "target/release/loadgen"), "--url",
                                 envoy.url + "/v1/chat/completions", "--body-file", str(body), "--mode", "open",
                                 "--rate", str(rate), "--connections", "32", "--duration", "12", "--warmup", "1"],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(2)
        data = workdir / "perf.data"
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", *(["--call-graph", "dwarf,16384"] if os.environ.get("DWARF") else ["-g"]), "-o", str(data),
                        "-p", str(envoy.proc.pid), "--", "sleep", os.environ.get("PERF_SECONDS", "8")], check=True, capture_output=True)
        out, _ = load.communicate(timeout=60)
        print("load:", out.strip())
        report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso",
                                 "--percent-limit", "1"], capture_output=True, text=True).stdout
        print("\n".join(l for l in report.splitlines() if l.strip() and not l.startswith("#"))[:3000])
        report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "sym",
                                 "--percent-limit", "0.8", "-g", "none"], capture_output=True, text=True).stdout
        print("\n".join(l for l in report.splitlines() if l.strip() and not l.startswith("#"))[:6000])
    finally:
        envoy.stop()
        mock.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
