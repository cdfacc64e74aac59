"""What holding a 200 event stream's start costs in time to first byte.

The filter holds a `200 text/event-stream` answer's headers (upstream position) until the stream's
first non-prelude event has arrived, so that an error as the first event can still be retried or
fallen back inside Envoy's retry loop (`fallback.stream_start`). This measures what that hold adds
to the client's time to first body byte when the first event is ordinary content.

Arms, all in front of one native mock LLM (tests/e2e/harness.py `Mock`), interleaved round by round
(order alternating; hold and no-hold always next to each other), closed loop, one connection,
streaming chat requests (~1 KB, gpt-4o). Runs are short and rounds many so that the two runs of a
pair are seconds apart: on a shared VM the background load drifts over tens of seconds.
  hold      Envoy with the shipped envoy/envoy.yaml as is (stream_start enabled by default)
  no-hold   the same with `stream_start: {enabled: false}` under the plugin's `fallback:`
  envoy     Envoy without the filter (bench/envoy-plain.yaml), for scale
Envoys run on core 0 (`--concurrency 1`), the mock and the load generator on core 1.

Two cases: the mock streams at once (`chunks: 10`), and the mock waits `ttft_ms` before the first
event (headers first), where the hold should cost nothing beyond the wait itself.

Before measuring, a check that the arms differ: a stream whose first event is an error is retried
by "hold" and passed through by "no-hold".

Writes bench/results/<date>/stream-start.md (and .json next to it) and prints the Markdown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/e2e"))
from harness import ENVOY_BIN, MOCK_BIN, WASM, Envoy, Mock  # noqa: E402

LOADGEN = ROOT / "target/release/loadgen"
GATEWAY_CORE, CLIENT_CORE = "0", "1"
# The line of the shipped config's plugin `fallback:` block after which the edit goes.
ANCHOR = "                      max_wait_ms: 30000\n"
NO_HOLD = "                      stream_start: {enabled: false}\n"


def log(message: str) -> None:
    print(f"[{dt.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def no_hold(text: str) -> str:
    if text.count(ANCHOR) != 1:
        raise ValueError("envoy/envoy.yaml changed shape: `max_wait_ms: 30000` not found once in `fallback:`")
    return text.replace(ANCHOR, ANCHOR + NO_HOLD)


def stream_body(size: int = 1_000) -> bytes:
    text = ("The quick brown fox jumps over the lazy dog. " * (size // 45 + 1))[: max(0, size - 100)]
    return json.dumps({"messages": [{"role": "user", "content": text}], "max_tokens": 64,
                       "stream": True, "model": "gpt-4o"}).encode()


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def busy_cores(seconds: float = 0.5) -> float:
    """Cores' worth of CPU in use (all processes) over `seconds`, from /proc/stat."""
    def read():
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(f), f[3] + f[4]  # total, idle + iowait
    t0, i0 = read()
    time.sleep(seconds)
    t1, i1 = read()
    return (os.cpu_count() or 1) * (1 - (i1 - i0) / max(1, t1 - t0))


class Quiet:
    """Waits before each round until the machine is nearly idle (other jobs share it), within a budget."""

    def __init__(self, threshold: float, budget_s: float):
        self.threshold, self.budget, self.rounds = threshold, budget_s, []

    def wait(self) -> None:
        deadline = time.monotonic() + self.budget
        busy = busy_cores()
        while busy > self.threshold and time.monotonic() < deadline:
            busy = busy_cores(1.0)
        self.budget = max(0.0, deadline - time.monotonic())
        self.rounds.append(round(busy, 2))
        if busy > self.threshold:
            log(f"starting a round with {busy:.2f} cores busy (quiet-wait budget used up)")


def loadgen_cmd(url: str, body: Path, seconds: float, warmup: float) -> list[str]:
    return ["taskset", "-c", CLIENT_CORE, str(LOADGEN), "--url", url + "/v1/chat/completions",
            "--body-file", str(body), "--header", "content-type: application/json",
            "--mode", "closed", "--connections", "1", "--duration", str(seconds), "--warmup", str(warmup),
            "--stream"]


def run(arm: dict, body: Path, seconds: float, warmup: float) -> dict:
    pid = arm["envoy"].proc.pid
    cpu0 = cpu_seconds(pid)
    cmd = loadgen_cmd(arm["envoy"].url, body, seconds, warmup)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + warmup + 60)
    if result.returncode != 0:
        raise RuntimeError(f"loadgen failed: {result.stderr}")
    out = json.loads(result.stdout)
    total = out["requests"] * (out["warmup_s"] + out["duration_s"]) / max(out["duration_s"], 1e-9)
    out["envoy_cpu_ms_per_1000"] = (cpu_seconds(pid) - cpu0) * 1e6 / max(1.0, total)
    if out["errors"] or out["non_2xx"] or "ttfb_us" not in out:
        raise RuntimeError(f"{arm['name']}: errors {out['error_kinds']}, non-2xx {out['non_2xx']}")
    return out


def check_arms_differ(mock: Mock, arms: dict, body: bytes) -> dict:
    """A first event that is an error: "hold" retries it, "no-hold" passes it to the client."""
    seen = {}
    for name in ("hold", "no-hold"):
        mock.reset()
        mock.script("gpt-4o", steps=[{"stream_error": {"after": 0}}], default={"chunks": 3})
        r = requests.post(arms[name]["envoy"].url + "/v1/chat/completions", data=body,
                          headers={"content-type": "application/json"}, timeout=30)
        upstream = requests.get(mock.url + "/_mock/stats", timeout=5).json()["requests"]
        seen[name] = {"status": r.status_code, "error_to_client": '"error"' in r.text,
                      "upstream_requests": upstream}
    mock.reset()
    ok = (not seen["hold"]["error_to_client"] and seen["hold"]["upstream_requests"] >= 2
          and seen["no-hold"]["error_to_client"] and seen["no-hold"]["upstream_requests"] == 1)
    if not ok:
        raise RuntimeError(f"the arms do not behave as configured: {seen}")
    return seen


def versions(run_started: float) -> dict:
    def first_line(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unavailable"

    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "examples/mock-llm"],
                           capture_output=True, text=True, cwd=ROOT).stdout.split("\n")
    return {
        "envoy": first_line([str(ENVOY_BIN), "--version"]).split("version:")[-1].strip(),
        "rustc": first_line(["rustc", "--version"]),
        "python": platform.python_version(),
        "git_head": first_line(["git", "log", "-1", "--format=%h %s"])[:90],
        "dirty_files_src_mock": len([l for l in dirty if l.strip()]),
        "wasm_sha256": hashlib.sha256(WASM.read_bytes()).hexdigest()[:16],
        "wasm_mtime": dt.datetime.fromtimestamp(WASM.stat().st_mtime).isoformat(timespec="seconds"),
        "mock_mtime": dt.datetime.fromtimestamp(MOCK_BIN.stat().st_mtime).isoformat(timespec="seconds"),
    }


def machine() -> dict:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "unknown")
    mem = int(Path("/proc/meminfo").read_text().splitlines()[0].split()[1])
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem / 1024 / 1024, 1),
            "kernel": platform.release(), "load_before": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds, immediate first event")
    parser.add_argument("--seconds", type=float, default=1.0, help="measured seconds per arm and round")
    parser.add_argument("--warmup", type=float, default=0.3, help="warm-up seconds per arm and round")
    parser.add_argument("--ttft-ms", type=int, default=20, help="mock wait before the first event (0: skip)")
    parser.add_argument("--ttft-rounds", type=int, default=8)
    parser.add_argument("--ttft-seconds", type=float, default=3.0)
    parser.add_argument("--quiet-cores", type=float, default=0.3,
                        help="before each round, wait until fewer cores than this are busy (other jobs)")
    parser.add_argument("--quiet-budget", type=float, default=60.0, help="seconds of such waiting per case, at most")
    parser.add_argument("--no-plain", action="store_true", help="skip the Envoy-without-filter arm")
    parser.add_argument("--out", default=str(ROOT / "bench/results" / dt.date.today().isoformat() / "stream-start.md"))
    parser.add_argument("--from-json", help="only render the Markdown again from a results .json of this script")
    args = parser.parse_args()
    if args.from_json:
        print(report(json.loads(Path(args.from_json).read_text())))
        return 0
    started = time.monotonic()
    out_md = Path(args.out)
    out_md.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-stream-start-"))
    body = workdir / "body-stream.json"
    body.write_bytes(stream_body())

    results: dict = {"date": dt.datetime.now().isoformat(timespec="seconds"), "machine": machine(),
                     "command": "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
                     "loadgen": " ".join(f"'{a}'" if " " in a else a for a in
                                         loadgen_cmd("http://127.0.0.1:PORT", Path("BODY.json"), args.seconds, args.warmup)
                                         ).replace(str(ROOT) + "/", ""),
                     "body_bytes": body.stat().st_size, "quiet_cores": args.quiet_cores, "cases": {}}
    results["versions"] = versions(started)

    mock = Mock(workdir, extra_args=["--threads", "1", "--record-limit", "0"], prefix=["taskset", "-c", CLIENT_CORE])
    envoy = lambda **kw: Envoy(workdir, mock.port, concurrency=1, prefix=["taskset", "-c", GATEWAY_CORE], cwd=ROOT, **kw)  # noqa: E731
    arms: dict[str, dict] = {}
    try:
        arms["hold"] = {"name": "hold", "envoy": envoy()}
        arms["no-hold"] = {"name": "no-hold", "envoy": envoy(edit=no_hold)}
        if not args.no_plain:
            arms["envoy"] = {"name": "envoy", "envoy": envoy(config_path=ROOT / "bench/envoy-plain.yaml")}
        results["arms"] = list(arms)
        # Another build may replace the .wasm at any time: the Envoys loaded the file they found.
        if hashlib.sha256(WASM.read_bytes()).hexdigest()[:16] != results["versions"]["wasm_sha256"]:
            raise RuntimeError("the .wasm changed while the Envoys started; run again")
        results["check"] = check_arms_differ(mock, arms, body.read_bytes())
        log(f"arms differ as configured: {results['check']}")

        cases = [("immediate", 0, args.rounds, args.seconds)]
        if args.ttft_ms > 0:
            cases.append((f"ttft {args.ttft_ms} ms", args.ttft_ms, args.ttft_rounds, args.ttft_seconds))
        for case, ttft, rounds, seconds in cases:
            step = {"chunks": 10, **({"ttft_ms": ttft} if ttft else {})}
            mock.reset()
            mock.script("gpt-4o", default=step)
            quiet = Quiet(args.quiet_cores, args.quiet_budget)
            results["cases"][case] = {"mock_step": step, "busy_cores_at_start": quiet.rounds,
                                      "runs": {a: [] for a in arms}}
            per_arm = results["cases"][case]["runs"]
            names = list(arms)
            for rnd in range(rounds):
                quiet.wait()
                for name in (names if rnd % 2 == 0 else names[::-1]):
                    out = run(arms[name], body, seconds, args.warmup)
                    per_arm[name].append(out)
                    log(f"{case:<12} round {rnd + 1} {name:<8} ttfb p50 {out['ttfb_us']['p50']:8.1f} "
                        f"p99 {out['ttfb_us']['p99']:8.1f} total p50 {out['latency_us']['p50']:8.1f} us "
                        f"({out['requests']} req)")
        mock.reset()
    finally:
        for arm in arms.values():
            arm["envoy"].stop()
        mock.stop()

    results["elapsed_s"] = round(time.monotonic() - started)
    results["machine"]["load_after"] = os.getloadavg()
    out_md.with_suffix(".json").write_text(json.dumps(results, indent=1))
    out_md.write_text(report(results))
    log(f"done in {results['elapsed_s']} s: {out_md}")
    print(out_md.read_text())
    return 0


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def med(runs: list[dict], key: str, pct: str) -> float:
    return statistics.median(r[key][pct] for r in runs)


def paired(runs: dict, a: str, b: str, key: str, pct: str) -> list[float]:
    return [x[key][pct] - y[key][pct] for x, y in zip(runs[a], runs[b])]


def fmt_diff(values: list[float]) -> str:
    """Median, interquartile range and full range of per-round differences."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else (values[0],) * 3
    return f"{statistics.median(values):+.0f} [{q1:+.0f}..{q3:+.0f}] ({min(values):+.0f}..{max(values):+.0f})"


def report(r: dict) -> str:
    m, v = r["machine"], r["versions"]
    lines = [f"# Stream-start hold: added time to first byte ({r['date']})", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, Linux {m['kernel']} "
             f"(1-minute load average {m['load_before'][0]:.2f} before the run, {m['load_after'][0]:.2f} after; "
             f"the VM is shared with other jobs).",
             f"Versions: Envoy {v['envoy']}; {v['rustc']}; Python {v['python']}; git `{v['git_head']}` "
             f"({v['dirty_files_src_mock']} uncommitted files under src/ and examples/mock-llm/ at the start). "
             f"This script builds nothing: it ran the .wasm and mock-llm binaries it found, which other "
             f"engineers build from their working trees.",
             f"Filter: target/wasm32-wasip1/release/llm_fallback.wasm sha256 {v['wasm_sha256']}… "
             f"(built {v['wasm_mtime']}); mock-llm built {v['mock_mtime']}.",
             f"Command: `{r['command']}` ({r['elapsed_s']} s).",
             f"Load generator per arm and round: `{r['loadgen']}` "
             f"(closed loop, 1 connection; {r['body_bytes']} B streaming chat body, model gpt-4o).",
             f"Envoys on core {GATEWAY_CORE} (`--concurrency 1`, harness log settings), "
             f"mock (`--threads 1`) and loadgen on core {CLIENT_CORE}.", "",
             "Arms: **hold** = shipped `envoy/envoy.yaml` (stream_start enabled, default 2000 ms / 16384 B); "
             "**no-hold** = the same plus `stream_start: {enabled: false}` under the plugin's `fallback:`; "
             "**envoy** = Envoy without the filter (`bench/envoy-plain.yaml`), for scale. "
             "Arms interleaved round by round, order alternating (hold and no-hold always adjacent).", "",
             "Check before measuring (first event an error, `stream_error: {after: 0}`): "
             + "; ".join(f"{a}: status {c['status']}, error reached the client: {c['error_to_client']}, "
                         f"upstream requests {c['upstream_requests']}" for a, c in r["check"].items()) + ".", "",
             "TTFB = loadgen's time from send to the first body byte (first chunk's data); total = to the last byte. "
             "Percentiles are loadgen histogram midpoints (128 sub-buckets per power of two: 2 us wide at "
             "256-512 us, 128 us wide at 16-32 ms, so in the ttft case p50/p90/p99 move in 128 us steps); "
             "means are exact.", ""]
    first = next(iter(r["cases"].values()))["runs"]
    d50, d99 = (statistics.median(paired(first, "hold", "no-hold", "ttfb_us", p)) for p in ("p50", "p99"))
    lines += [f"**Headline** ({next(iter(r['cases']))} first event): the hold adds **{d50:+.0f} us** to ttfb p50 and "
              f"**{d99:+.0f} us** to ttfb p99 (hold − no-hold, median of {len(first['hold'])} paired rounds)."]
    for case, data in list(r["cases"].items())[1:]:
        runs = data["runs"]
        e50, emean = (statistics.median(paired(runs, "hold", "no-hold", "ttfb_us", p)) for p in ("p50", "mean"))
        lines[-1] += (f" With the first event after a wait ({case}): hold − no-hold ttfb p50 {e50:+.0f} us "
                      f"(128 us resolution there), mean {emean:+.0f} us (median of {len(runs['hold'])} paired rounds).")
    lines.append("")
    for case, data in r["cases"].items():
        runs = data["runs"]
        n = len(next(iter(runs.values())))
        busy = data.get("busy_cores_at_start", [])
        calm = sum(b <= r.get("quiet_cores", 0.3) for b in busy)
        lines += [f"## {case}: mock step `{json.dumps(data['mock_step'])}`, {n} rounds", "",
                  f"Cores busy (all processes, 0.5-1 s sample) just before each round: median "
                  f"{statistics.median(busy) if busy else 0:.2f}, max {max(busy, default=0):.2f}; "
                  f"{calm} of {len(busy)} rounds started with at most {r.get('quiet_cores', 0.3)} cores busy.", "",
                  "Per arm, the median over rounds of each round's percentile, microseconds.", "",
                  "| arm | requests per round | ttfb p50 | ttfb p90 | ttfb p99 | ttfb mean | total p50 | Envoy CPU ms per 1000 req |",
                  "|---|---|---|---|---|---|---|---|"]
        for arm, xs in runs.items():
            lines.append(f"| {arm} | {statistics.median(x['requests'] for x in xs):.0f} | "
                         f"{med(xs, 'ttfb_us', 'p50'):.0f} | {med(xs, 'ttfb_us', 'p90'):.0f} | "
                         f"{med(xs, 'ttfb_us', 'p99'):.0f} | {med(xs, 'ttfb_us', 'mean'):.0f} | "
                         f"{med(xs, 'latency_us', 'p50'):.0f} | "
                         f"{statistics.median(x['envoy_cpu_ms_per_1000'] for x in xs):.0f} |")
        lines += ["", "Differences paired round by round (each round's percentile of one arm minus the other's "
                  "in the same round): median over rounds, [interquartile range], (full range), microseconds:", "",
                  "| difference | ttfb p50 | ttfb p99 | ttfb mean | total p50 |", "|---|---|---|---|---|"]
        pairs = [("hold", "no-hold")] + ([("no-hold", "envoy"), ("hold", "envoy")] if "envoy" in runs else [])
        cols = (("ttfb_us", "p50"), ("ttfb_us", "p99"), ("ttfb_us", "mean"), ("latency_us", "p50"))
        for a, b in pairs:
            lines.append(f"| {a} − {b} | " + " | ".join(fmt_diff(paired(runs, a, b, k, p)) for k, p in cols) + " |")
        quiet = [i for i, b in enumerate(busy) if b <= r.get("quiet_cores", 0.3)]
        if 1 < len(quiet) < len(busy):
            only = {arm: [xs[i] for i in quiet] for arm, xs in runs.items()}
            lines.append(f"| hold − no-hold, the {len(quiet)} rounds that started quiet | " + " | ".join(
                fmt_diff(paired(only, "hold", "no-hold", k, p)) for k, p in cols) + " |")
        cpu = [x["envoy_cpu_ms_per_1000"] - y["envoy_cpu_ms_per_1000"] for x, y in zip(runs["hold"], runs["no-hold"])]
        tick_us = 1e6 / os.sysconf("SC_CLK_TCK") / statistics.median(x["requests"] for x in runs["hold"])
        lines += ["", f"Envoy CPU per request, hold − no-hold (paired; median [IQR] (range)): {fmt_diff(cpu)} us; "
                  f"/proc counts CPU in {1000 / os.sysconf('SC_CLK_TCK'):.0f} ms ticks, about {tick_us:.0f} us per "
                  f"request of one run here. With the hold enabled the upstream root context's timer ticks every 50 ms "
                  f"instead of every second (it releases holds that exceed `max_hold_ms`); that CPU is counted "
                  f"here, spread over the requests.", ""]
        if data["mock_step"].get("ttft_ms"):
            lines += [f"In this case the hold sends the response headers together with the first event, "
                      f"{data['mock_step']['ttft_ms']} ms after the upstream sent them: Envoy's response-header "
                      f"processing (both filter instances' header callbacks, header encoding) then runs in the "
                      f"path to the first byte, after an idle wait, instead of while the client waits anyway "
                      f"(a likely source of a difference beyond the wait; not profiled).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
