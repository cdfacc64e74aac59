"""The hot path's host calls, counted: the built .wasm with the shipped configuration, run by a
minimal proxy-wasm host in Node.js (bench/wasm-host.mjs) through a healthy request's callbacks in
both positions.

In Envoy's V8 every host call is a crossing into Envoy and back (a data-returning one crosses a
second time to allocate in the VM), and the crossings are most of what the filter costs
(README, Benchmarks). This pins the healthy path's calls, so that one more per request is a
decision someone makes, not an accident.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from harness import NATIVE, ROOT, SHIPPED_CONFIG, WASM, WASM_FILTER

# What a healthy 1 KB chat request costs in host calls, by name (client, then the attempt).
EXPECTED = {
    # client: the request headers once, the route's steering metadata, the request's id
    "get_header_map_pairs 0": 1,
    "get_property xds.route_metadata.filter_metadata.llm_fallback": 1,
    "set_property llm_fallback_request": 1,
    # client: the body, the first model's health, arrival time; retry policy and routing header
    "get_buffer 0": 1,
    "get_shared_data": 1,
    "now": 2,
    "replace_header_map_value 0": 3,  # x-envoy-retry-on, x-llm-cluster; upstream: accept-encoding
    # upstream: the routing header goes, the request's id, the answer's headers and its tail
    "remove_header_map_value 0": 1,
    "get_property llm_fallback_request": 1,
    "get_header_map_pairs 2": 1,
    "get_buffer 1": 1,
    # token and duration histograms
    "record_metric": 3,
    # client: the final status, then x-llm-model, -attempts, -provider, -class
    "get_header_map_value 2": 1,
    "replace_header_map_value 2": 4,
}


def shipped_plugin_config() -> dict:
    config = yaml.safe_load(SHIPPED_CONFIG.read_text())

    def plugins(node):
        if isinstance(node, dict):
            if node.get("@type") == WASM_FILTER:
                yield node["config"]["configuration"]["value"]
            for value in node.values():
                yield from plugins(value)
        elif isinstance(node, list):
            for value in node:
                yield from plugins(value)

    return next(plugins(config))


@pytest.mark.skipif(NATIVE, reason="counts the .wasm's proxy-wasm host calls")
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (as `make unit-wasm` does)")
def test_a_healthy_request_makes_only_the_host_calls_it_needs(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(shipped_plugin_config()))
    run = subprocess.run(["node", "--no-warnings", str(ROOT / "bench/wasm-host.mjs"), str(WASM), str(config), "200"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    calls = {name: int(n) for n, name in (c.split(" ", 1) for c in report["calls"])}
    assert calls == EXPECTED, json.dumps(report, indent=1)
    assert report["host_calls_per_request"] == 22
    assert report["answer_headers"] == ["x-llm-model: gpt-4o", "x-llm-attempts: 1", "x-llm-provider: llm",
                                        "x-llm-class: internal"]
