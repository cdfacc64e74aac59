"""What the filter costs in Envoy CPU per request: `make bench-cpu` (about 4 minutes).

Every arm has the same listener, route (retry policy, `retriable_headers`, cluster header),
clusters and circuit breakers, all derived from the shipped envoy/envoy.yaml so that they cannot
drift apart, and all arms run in one Envoy process (a listener, clusters and VM per arm):
  plain      the shipped config without the filter (the client sends the routing header itself)
  floor      the shipped config with bench/empty-filter (a proxy-wasm filter that does nothing)
             in both positions, same VM settings: what any two-position wasm filter costs
  shipped    the shipped config as it is
  native     the shipped config with the native build (target/native/libllm_fallback.so, an Envoy
             dynamic module) in place of the .wasm: same positions, same configuration
  native-floor the native arm with the module's do-nothing filter (`filter_name: floor`) in both
             positions: what any two-position dynamic module costs
  no-shaping the shipped config without `shaping` (`--arms plain,no-shaping,shipped`: the idle
             cost of traffic shaping)
  no-metering the shipped config without `metering` and latency histograms (`--arms
             plain,no-metering,shipped`: the cost of usage accounting and budgets)
  no-json-hold the shipped config without holding short 200 JSON answers whole (`--arms
             plain,no-json-hold,shipped`: the cost of reading them for errors inside)
  lean       the shipped config without shaping, metering and the route-metadata read: what
             fallback alone costs (`--arms plain,floor,lean,shipped`)

Envoy runs with `--concurrency 1` on core 0 (log level info, as in production; stats flushed only
when the admin endpoint is read, between bursts); the mock and the load generator share core 1.
Cases: a 1 KB chat request, a 100 KB one, and a 1 KB streaming request (the mock streams its
answer). Each burst is open-loop at a fixed rate for a fixed time,
so every arm serves the same requests at the same pace; Envoy's CPU is the run time of all its
threads (/proc/PID/task/*/schedstat) around the burst, divided by the requests Envoy counted
(`http.llm_<arm>.downstream_rq_completed`). Arms are interleaved in rotating order within each round;
the report gives, per case, the median CPU per request and the median of the per-round ratios to
`plain`.

Writes bench/results/<date>/cpu.{md,json}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/e2e"))
sys.path.insert(0, str(ROOT / "scripts"))
from harness import Envoy, Mock, edit_http_filters, free_port, native_filters  # noqa: E402

LOADGEN = ROOT / "target/release/loadgen"
EMPTY_WASM = ROOT / "bench/empty-filter/target/wasm32-wasip1/release/empty_filter.wasm"
SHIPPED = ROOT / "envoy/envoy.yaml"
GATEWAY_CORE, CLIENT_CORE = "0", "1"
WASM_TYPE = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"


def chat_body(size: int, stream: bool = False) -> bytes:
    """An OpenAI chat body of about `size` bytes, the `model` key after `messages`."""
    text = ("The quick brown fox jumps over the lazy dog. " * (size // 45 + 1))[: max(0, size - 120)]
    body = {"messages": [{"role": "user", "content": text}], "max_tokens": 64, "stream": stream, "model": "gpt-4o"}
    return json.dumps(body).encode()


def without_filter(config: dict) -> dict:
    """The shipped config with every llm-fallback filter removed, nothing else changed."""

    def keep(f: dict) -> bool:
        return f.get("typed_config", {}).get("@type") != WASM_TYPE

    return edit_http_filters(config, lambda filters: [h for h in filters if keep(h)])


def dicts(node):
    """Every mapping in a loaded YAML document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from dicts(value)


def with_wasm(config: dict, path: Path) -> dict:
    """The shipped config with every llm-fallback filter running `path` instead."""
    for node in dicts(config):
        if node.get("runtime") == "envoy.wasm.runtime.v8" and "code" in node:
            node["code"] = {"local": {"filename": str(path)}}
    return config


def wasm_filters(config: dict, root_id: str) -> list[dict]:
    """The llm-fallback plugin configs of one position (`client`, `upstream`, `status`)."""
    return [node for node in dicts(config) if node.get("root_id") == root_id and "vm_config" in node]


def only_position(config: dict, keep: str) -> dict:
    """The filter in one position; the other runs the empty filter (ablation)."""
    other = "upstream" if keep == "client" else "client"
    for plugin in wasm_filters(config, other):
        plugin["vm_config"] = dict(plugin["vm_config"], vm_id="empty", code={"local": {"filename": str(EMPTY_WASM)}})
    return config


def without_models(config: dict) -> dict:
    """The filter with no models: it only observes and counts (ablation)."""
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            value = plugin["configuration"]["value"]
            value["models"] = []
            value["fallback"] = {"cluster_header": "x-llm-unused"}  # the bench client sets the route's
    return config


def without_shaping(config: dict) -> dict:
    """The shipped config without traffic shaping (the idle cost of the feature)."""
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            plugin["configuration"]["value"].pop("shaping", None)
    return config


def without_metering(config: dict) -> dict:
    """The shipped config without usage accounting: no key labels, prices, budgets or latency
    histograms (the cost of the feature)."""
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            plugin["configuration"]["value"]["metering"] = {"latency": False}
    return config


def without_latency(config: dict) -> dict:
    """The shipped config without latency histograms (keys, prices and budgets kept)."""
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            plugin["configuration"]["value"]["metering"]["latency"] = False
    return config


def with_json_body(config: dict, **settings) -> dict:
    """The shipped config with `fallback.json_body` set to `settings`: `enabled=False` (what
    reading short 200 JSON answers for errors inside costs), or `max_bytes=64` (every answer of
    the bench let go unread: what the hold itself costs without the classifier)."""
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            value = plugin["configuration"]["value"]
            value.setdefault("fallback", {})["json_body"] = settings
    return config


def lean(config: dict) -> dict:
    """Fallback alone: the shipped config without traffic shaping, usage accounting (budgets,
    latency histograms) and the route-metadata read (what the core flow costs by itself)."""
    config = without_metering(without_shaping(config))
    for root in ("client", "upstream", "status"):
        for plugin in wasm_filters(config, root):
            plugin["configuration"]["value"].setdefault("trust", {})["route_metadata"] = False
    return config


# Ablations, for finding where the cost goes (`--arms plain,floor,shipped,client-only,...`).
ABLATIONS = {
    "client-only": lambda c: only_position(c, "client"),
    "upstream-only": lambda c: only_position(c, "upstream"),
    "no-models": without_models,
    "no-shaping": without_shaping,
    "no-metering": without_metering,
    "no-latency": without_latency,
    "no-json-hold": lambda c: with_json_body(c, enabled=False),
    "json-hold-unread": lambda c: with_json_body(c, max_bytes=64),
    "lean": lean,
}


def arm_configs(variants: dict[str, Path], native_variants: list[str]) -> dict[str, dict]:
    """Each arm's config, derived from the shipped one."""
    text = SHIPPED.read_text()
    arms = [("plain", without_filter), ("floor", lambda c: with_wasm(c, EMPTY_WASM)), ("shipped", lambda c: c),
            ("native", lambda c: c), ("native-floor", lambda c: c)]  # converted by `merged`
    arms += [(name, lambda c, p=path: with_wasm(c, p)) for name, path in variants.items()]
    arms += [(name, lambda c: c) for name in native_variants]
    return {name: transform(yaml.safe_load(text)) for name, transform in arms + list(ABLATIONS.items())}


def merged(arms: dict[str, dict], modules: dict[str, Path]) -> str:
    """One Envoy config serving every arm: per arm its own listener, HCM stat prefix, clusters
    (`llm_<arm>`, ...) and wasm VM, so that all arms run in one process (same memory, same
    threads) and differ only in their filters. The status listeners are left out."""
    first = next(iter(arms.values()))
    out = {k: v for k, v in first.items() if k != "static_resources"}
    # Stats are flushed when the admin endpoint is read (between bursts), not by a timer that
    # would land in one burst or another: with many VMs' stats a flush takes milliseconds.
    out["stats_flush_on_admin"] = True
    listeners, clusters = [], []
    for i, (arm, config) in enumerate(arms.items()):
        resources = config["static_resources"]
        names = {c["name"]: f"{c['name']}_{arm}" for c in resources["clusters"]}
        listener = resources["listeners"][0]
        listener["name"] = f"llm_{arm}"
        address = listener["address"]["socket_address"]
        address["port_value"] = 10000 if i == 0 else free_port()
        for chain in listener["filter_chains"]:
            for f in chain["filters"]:
                hcm = f.get("typed_config", {})
                if "stat_prefix" in hcm:
                    hcm["stat_prefix"] = f"llm_{arm}"
        # The route's provider map and default (matcher cluster specifier) name clusters too.
        for node in dicts(listener):
            if str(node.get("@type", "")).endswith("ClusterAction") and node.get("cluster") in names:
                node["cluster"] = names[node["cluster"]]
            if isinstance(node.get("exact_match_map"), dict):
                mapping = node["exact_match_map"]
                mapping["map"] = {names.get(k, k): v for k, v in mapping.get("map", {}).items()}
        for cluster in resources["clusters"]:
            cluster["name"] = names[cluster["name"]]
            cluster["load_assignment"]["cluster_name"] = cluster["name"]
            clusters.append(cluster)
        seen = set()  # YAML anchors: one plugin dict can appear in several places
        for root in ("client", "upstream"):
            for plugin in wasm_filters(config, root):
                if id(plugin) in seen:
                    continue
                seen.add(id(plugin))
                plugin["vm_config"] = dict(plugin["vm_config"], vm_id=f"{plugin['vm_config']['vm_id']}_{arm}")
                value = plugin["configuration"]["value"]
                for model in value.get("models", []):
                    if "cluster" in model:
                        model["cluster"] = names.get(model["cluster"], model["cluster"])
                fallback = value.setdefault("fallback", {})
                fallback["default_cluster"] = names.get(fallback.get("default_cluster", "llm"), "llm")
        if arm in ("native", "native-floor") or arm in modules:
            native = native_filters({"static_resources": {"listeners": [listener], "clusters": resources["clusters"]}},
                                    *([modules[arm]] if arm in modules else []))
            for node in dicts(native) if arm == "native-floor" else []:
                if "filter_name" in node:
                    node["filter_name"] = "floor"  # the module's do-nothing filter
        listeners.append(listener)
    # Provider keys: one set for all arms, by absolute path (Envoy runs elsewhere).
    secrets = first["static_resources"].get("secrets", [])
    for node in dicts(secrets):
        if str(node.get("filename", "")).startswith("envoy/keys/"):
            node["filename"] = str(ROOT / node["filename"])
    out["static_resources"] = {"listeners": listeners, "clusters": clusters, "secrets": secrets}
    return yaml.safe_dump(out, sort_keys=False, default_flow_style=None, width=1000)


def envoy_cpu_ns(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total


def completed(envoy: Envoy, arm: str) -> int:
    stats = requests.get(envoy.admin + f"/stats?filter=^http\\.llm_{arm}\\.downstream_rq_completed$&format=json",
                         timeout=5).json()
    return int(stats["stats"][0]["value"])


def listener_port(envoy: Envoy, arm: str) -> int:
    listeners = requests.get(envoy.admin + "/listeners?format=json", timeout=5).json()
    for listener in listeners["listener_statuses"]:
        if listener["name"] == f"llm_{arm}":
            return int(listener["local_address"]["socket_address"]["port_value"])
    raise RuntimeError(f"no listener for {arm}")


def burst(envoy: Envoy, arm: str, port: int, body: Path, rate: int, seconds: float, stream: bool) -> dict:
    cmd = ["taskset", "-c", CLIENT_CORE, str(LOADGEN), "--url", f"http://127.0.0.1:{port}/v1/chat/completions",
           "--body-file", str(body), "--mode", "open", "--rate", str(rate), "--connections", "16",
           "--duration", str(seconds), "--warmup", "0", "--header", "content-type: application/json",
           # The route's cluster header, for the arms without the filter (which sets it itself).
           "--header", f"x-llm-cluster: llm_{arm}"]
    if stream:
        cmd.append("--stream")
    n0, cpu0 = completed(envoy, arm), envoy_cpu_ns(envoy.proc.pid)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    time.sleep(0.2)  # let the last answers finish inside Envoy
    cpu1, n1 = envoy_cpu_ns(envoy.proc.pid), completed(envoy, arm)
    if result.returncode != 0:
        raise RuntimeError(f"loadgen failed: {result.stderr}")
    out = json.loads(result.stdout)
    if out["errors"] or out["non_2xx"]:
        raise RuntimeError(f"burst on {arm} had failures: {out['errors']} errors, {out['non_2xx']} non-2xx")
    served = max(1, n1 - n0)
    return {"requests": served, "cpu_us_per_request": (cpu1 - cpu0) / 1000 / served,
            "p50_us": out["latency_us"]["p50"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rate", type=int, default=800)
    parser.add_argument("--cases", default="1k,100k,stream")
    parser.add_argument("--arms", default="plain,floor,shipped,native-floor,native")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=PATH",
                        help="another build of the filter as an arm (the shipped config with that .wasm)")
    parser.add_argument("--native-variant", action="append", default=[], metavar="NAME=PATH",
                        help="another native build as an arm (the native arm with that .so)")
    parser.add_argument("--out", default=str(ROOT / "bench/results" / dt.date.today().isoformat()))
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="llm-fallback-cpu-"))
    cases = {"1k": (chat_body(1_000), False), "100k": (chat_body(100_000), False), "stream": (chat_body(1_000, True), True)}
    cases = {k: v for k, v in cases.items() if k in args.cases.split(",")}
    bodies = {}
    for name, (data, _) in cases.items():
        bodies[name] = workdir / f"{name}.json"
        bodies[name].write_bytes(data)
    variants = dict(v.split("=", 1) for v in args.variant)
    modules = {k: Path(v) for k, v in (v.split("=", 1) for v in args.native_variant)}
    configs = arm_configs({k: Path(v) for k, v in variants.items()}, list(modules))
    arms = [a for a in args.arms.split(",") if a in configs]
    config_path = workdir / "arms.yaml"
    config_path.write_text(merged({a: configs[a] for a in arms}, modules))
    mock = Mock(workdir, extra_args=["--threads", "1", "--record-limit", "0"], prefix=["taskset", "-c", CLIENT_CORE])
    envoy = None
    samples: dict[str, dict[str, list[dict]]] = {c: {a: [] for a in arms} for c in cases}
    try:
        envoy = Envoy(workdir, mock.port, config_path=config_path, concurrency=1,
                      prefix=["taskset", "-c", GATEWAY_CORE], cwd=ROOT, log_level="info")
        ports = {arm: listener_port(envoy, arm) for arm in arms}
        for arm in arms:  # warm-up: V8 compiles on first use
            for case, (_, stream) in cases.items():
                burst(envoy, arm, ports[arm], bodies[case], args.rate, 1.0, stream)
        for round_ in range(args.rounds):
            for case, (_, stream) in cases.items():
                order = arms[round_ % len(arms):] + arms[:round_ % len(arms)]
                for arm in order:
                    sample = burst(envoy, arm, ports[arm], bodies[case], args.rate, args.seconds, stream)
                    samples[case][arm].append(sample)
                    print(f"round {round_ + 1} {case:>6} {arm:<8} {sample['cpu_us_per_request']:7.1f} us/request "
                          f"({sample['requests']} requests)", file=sys.stderr, flush=True)
    finally:
        if envoy:
            envoy.stop()
        mock.stop()

    report = {"date": dt.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv),
              "cpu": next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                           if l.startswith("model name")), "unknown"),
              "rate": args.rate, "seconds": args.seconds, "rounds": args.rounds, "cases": {}}
    lines = [f"# Envoy CPU per request: plain, empty-filter floor, llm-fallback ({report['date']})", "",
             f"Machine: {report['cpu']}, Envoy `--concurrency 1` pinned to core 0. Command: "
             f"`{report['command']}`. Open loop, {args.rate} requests/s, {args.seconds} s bursts, "
             f"{args.rounds} interleaved rounds; ratios are medians of per-round ratios to `plain`.", "",
             "| case | " + " | ".join(f"{a} (us)" for a in arms) + " | " +
             " | ".join(f"{a} / plain" for a in arms if a != "plain") + " |",
             "|---|" + "---|" * (2 * len(arms) - 1)]
    for case in cases:
        per_arm = {a: statistics.median(s["cpu_us_per_request"] for s in samples[case][a]) for a in arms}
        ratios = {}
        if "plain" in arms:
            for a in arms:
                if a != "plain":
                    ratios[a] = statistics.median(
                        x["cpu_us_per_request"] / p["cpu_us_per_request"]
                        for x, p in zip(samples[case][a], samples[case]["plain"]))
        report["cases"][case] = {"cpu_us_per_request": per_arm, "ratio_to_plain": ratios, "samples": samples[case]}
        lines.append(f"| {case} | " + " | ".join(f"{per_arm[a]:.1f}" for a in arms) + " | " +
                     " | ".join(f"{ratios[a]:.2f}x" for a in ratios) + " |")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "cpu.json").write_text(json.dumps(report, indent=2))
    (out_dir / "cpu.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
