"""Starts the real parts of the test bed: the mock LLM upstream and Envoy with the shipped config.

Used by the end-to-end tests and the demo. Everything runs on free loopback ports; Envoy runs the
shipped `envoy/envoy.yaml` with only ports and the .wasm path substituted.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

import requests
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# LLM_FALLBACK_WASM points the test bed at another build (mutation checks: a test must fail when
# its fix is reverted).
WASM = Path(os.environ.get("LLM_FALLBACK_WASM", ROOT / "target/wasm32-wasip1/release/llm_fallback.wasm"))
MOCK_BIN = ROOT / "target/release/mock-llm"
ENVOY_BIN = ROOT / ".venv/bin/envoy"
SHIPPED_CONFIG = ROOT / "envoy/envoy.yaml"


# Ports handed out below the kernel's ephemeral range (Linux: 32768-60999). A port taken from the
# ephemeral range (`bind(0)`) is free only until someone binds it: between this check and Envoy's
# own bind, any outgoing connection on the machine may take it as its source port, and Envoy then
# exits with "Address already in use". Below the range only an explicit bind can take it.
_PORT_LOW, _PORT_HIGH = 12000, 32767
_next_port = _PORT_LOW + (os.getpid() * 7919) % (_PORT_HIGH - _PORT_LOW)


def free_port() -> int:
    """A loopback port nothing listens on, never one handed out before by this process."""
    global _next_port
    for _ in range(_PORT_HIGH - _PORT_LOW):
        port = _next_port
        _next_port = _PORT_LOW if _next_port >= _PORT_HIGH else _next_port + 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free loopback port in {_PORT_LOW}-{_PORT_HIGH}")


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (requests.RequestException, OSError):
            pass
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


class Mock:
    """The project's mock LLM upstream (examples/mock-llm), scripted over its control API."""

    def __init__(self, workdir: Path, extra_args: list[str] | None = None, prefix: list[str] | None = None):
        port_file = workdir / f"mock-{os.getpid()}-{time.monotonic_ns()}.port"
        self.log = open(workdir / "mock.log", "ab")
        self.proc = subprocess.Popen(
            [*(prefix or []), str(MOCK_BIN), "--listen", "127.0.0.1:0", "--port-file", str(port_file), *(extra_args or [])],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for(lambda: port_file.exists() and port_file.read_text().strip() != "", 10, "mock port")
        self.port = int(port_file.read_text().strip())
        self.url = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: requests.get(self.url + "/_mock/health", timeout=1).ok, 10, "mock health")

    def script(self, model: str | None, steps: list[dict] | None = None, default: dict | None = None, **extra) -> None:
        """Scripts a model (or, with `account=`, every model served with that credential)."""
        body = {"steps": steps or [], "default": default, **extra}
        if model is not None:
            body["model"] = model
        requests.post(self.url + "/_mock/script", json=body, timeout=5).raise_for_status()

    def requests(self) -> list[dict]:
        response = requests.get(self.url + "/_mock/requests", timeout=5)
        response.raise_for_status()
        return response.json()

    def reset(self) -> None:
        requests.post(self.url + "/_mock/reset", timeout=5).raise_for_status()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def render_config(text: str, *, listener: int, admin: int, upstreams: dict[int, int], wasm: Path = WASM, internal: int | None = None) -> str:
    """Substitutes ports and the .wasm path in a shipped Envoy config; nothing else changes."""
    if "port_value: 10000}" not in text or "port_value: 9901}" not in text:
        raise ValueError("the config has no listener on 10000 or admin on 9901: it changed shape")
    out = text.replace("port_value: 10000}", f"port_value: {listener}}}")
    out = out.replace("port_value: 9901}", f"port_value: {admin}}}")
    if "port_value: 10001}" in out:
        out = out.replace("port_value: 10001}", f"port_value: {internal or free_port()}}}")
    for shipped, actual in upstreams.items():
        out = out.replace(f"port_value: {shipped}}}", f"port_value: {actual}}}")
    if "port_value: 8080}" in text and all(f"port_value: {p}}}" not in out for p in upstreams.values()):
        raise ValueError("no upstream port was substituted: the config changed shape")
    out = out.replace("filename: envoy/keys/", f"filename: {ROOT}/envoy/keys/")
    return out.replace("filename: target/wasm32-wasip1/release/llm_fallback.wasm", f"filename: {wasm}")


class Envoy:
    """A real Envoy 1.40 running a config derived from a shipped one."""

    def __init__(
        self,
        workdir: Path,
        upstream_port: int,
        config_path: Path = SHIPPED_CONFIG,
        second_upstream_port: int | None = None,
        edit: Callable[[str], str] | None = None,
        concurrency: int = 2,
        prefix: list[str] | None = None,
        cwd: Path | None = None,
        log_level: str = "debug",
    ):
        self.port = free_port()
        self.admin_port = free_port()
        self.internal_port = free_port()
        text = render_config(
            config_path.read_text(),
            listener=self.port,
            admin=self.admin_port,
            upstreams={8080: upstream_port, 8081: second_upstream_port or upstream_port},
            internal=self.internal_port,
        )
        if edit is not None:
            text = edit(text)
        if os.environ.get("LLM_FALLBACK_SHELL") == "native" and WASM_FILTER in text:
            text = native(text)  # the whole suite against the native build
        self.config = workdir / f"envoy-{self.port}.yaml"
        self.config.write_text(text)
        self.log_path = workdir / f"envoy-{self.port}.log"
        self.proc = subprocess.Popen(
            [
                *(prefix or []),
                str(ENVOY_BIN),
                "-c", str(self.config),
                "--concurrency", str(concurrency),
                "--disable-hot-restart",
                "--log-level", "info",
                "--component-log-level", f"wasm:{log_level},dynamic_modules:{log_level}",
                "--log-path", str(self.log_path),
                "--file-flush-interval-msec", "100",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        self.internal = f"http://127.0.0.1:{self.internal_port}"
        try:
            wait_for(self._ready, 20, "envoy ready")
        except TimeoutError:
            self.stop()
            raise RuntimeError("envoy did not start:\n" + self.log_tail())

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError("envoy exited:\n" + self.log_tail())
        return requests.get(self.admin + "/ready", timeout=1).text.strip() == "LIVE"

    def log_tail(self, lines: int = 40) -> str:
        """The log's errors (where a start-up failure says why), then its last lines."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        errors = [line for line in text if "][critical][" in line or "][error][" in line]
        return "\n".join(errors[-10:] + ["..."] + text[-lines:])

    def status(self) -> dict:
        """The filter's status document, from the internal listener."""
        return requests.get(self.internal + "/llm-fallback/status", timeout=5).json()

    def prometheus(self) -> str:
        return requests.get(self.admin + "/stats/prometheus", timeout=5).text

    def metric(self, name: str, **labels: str) -> float | None:
        """Value of one Prometheus sample with exactly these labels, or None if absent."""
        for line in self.prometheus().splitlines():
            if line.startswith("#"):
                continue
            m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
            if not m or m.group(1) != name:
                continue
            found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            if found == labels:
                return float(m.group(4))
        return None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def validate_config(text: str) -> subprocess.CompletedProcess:
    """Runs `envoy --mode validate` on a config text (ports are irrelevant in validate mode)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(render_config(text, listener=free_port(), admin=free_port(), upstreams={8080: free_port(), 8081: free_port()}))
        path = f.name
    try:
        return subprocess.run(
            [str(ENVOY_BIN), "--mode", "validate", "-c", path, "--disable-hot-restart"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.unlink(path)


def chat_body(model: str, *, stream: bool = False, filler: int = 0, model_last: bool = True) -> bytes:
    """An OpenAI chat-completions body; `filler` bytes of message text; `model` last by default."""
    messages = [{"role": "user", "content": "Hello " + "x" * filler}]
    fields = {"messages": messages, "stream": stream}
    ordered = {**fields, "model": model} if model_last else {"model": model, **fields}
    return json.dumps(ordered).encode()


def with_plugin_setting(line: str) -> Callable[[str], str]:
    """An `edit` for Envoy(...) that adds one top-level setting to the shipped plugin
    configuration (e.g. `trust: {priority: any}`)."""
    anchor = "                    status_path: /llm-fallback/status"

    key = line.split(":", 1)[0]

    def edit(text: str) -> str:
        if anchor not in text:
            raise ValueError("the shipped plugin configuration changed shape")
        existing = re.search(rf"^                    {re.escape(key)}:.*$", text, flags=re.M)
        if existing:
            return text[:existing.start()] + f"                    {line}" + text[existing.end():]
        return text.replace(anchor, f"                    {line}\n{anchor}", 1)

    return edit


def next_request_mode(text: str) -> str:
    """An `edit` giving the shipped config the shape any Envoy supports (and what Envoy < 1.39
    needs): a `cluster_header` route, retries that stay on the routed cluster, a fallback on
    another provider served from the client's next request (`providers.switch: next_request`)."""
    start = text.index("                  inline_cluster_specifier_plugin:\n")
    end = text.index("                  # Each attempt gets its provider's hostname")
    out = text[:start] + "                  cluster_header: x-llm-cluster\n" + text[end:]
    if "refresh_cluster_on_retry: true\n" not in out or "providers: {switch: in_request}" not in out:
        raise ValueError("the shipped config changed shape")
    out = out.replace("                    refresh_cluster_on_retry: true\n", "", 1)
    return out.replace("providers: {switch: in_request}", "providers: {switch: next_request}", 1)


def drained(*models: str) -> Callable[[str], str]:
    """An `edit` that drains these models of the shipped configuration (no request goes to them)."""
    def edit(text: str) -> str:
        for model in models:
            needle = f"{{name: {model}, "
            if needle not in text:
                raise ValueError(f"{model} is not in the shipped configuration")
            text = text.replace(needle, f"{{name: {model}, drain: true, ", 1)
        return text
    return edit


def both(*edits: Callable[[str], str]) -> Callable[[str], str]:
    """Several `edit`s, in order."""
    def edit(text: str) -> str:
        for e in edits:
            text = e(text)
        return text
    return edit


NATIVE_MODULE = ROOT / "target/native/libllm_fallback.so"
# `LLM_FALLBACK_SHELL=native`: the whole suite runs against the native build (`make e2e-native`).
NATIVE = os.environ.get("LLM_FALLBACK_SHELL") == "native"
WASM_FILTER = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"
DYNAMIC_FILTER = "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter"


def native_filters(config: dict, module: Path = NATIVE_MODULE) -> dict:
    """The same config with every llm-fallback proxy-wasm filter replaced by the native build
    (an Envoy dynamic module): same position, same role (`filter_name`), same configuration."""

    def convert(entry: dict) -> dict:
        typed = entry.get("typed_config", {})
        if typed.get("@type") != WASM_FILTER:
            return entry
        plugin = typed["config"]
        value = plugin.get("configuration", {}).get("value", {})
        return {"name": entry["name"], "typed_config": {
            "@type": DYNAMIC_FILTER,
            "dynamic_module_config": {"module": {"local": {"filename": str(module)}}, "metrics_namespace": "wasmcustom"},
            "filter_name": plugin["root_id"],
            "filter_config": {"@type": "type.googleapis.com/google.protobuf.StringValue", "value": json.dumps(value)},
        }}

    return edit_http_filters(config, lambda filters: [convert(h) for h in filters])


def edit_http_filters(config: dict, edit: Callable[[list[dict]], list[dict]]) -> dict:
    """`config` with every HTTP filter list (connection managers' and clusters' upstream
    filters) replaced by `edit` of it."""
    for listener in config["static_resources"]["listeners"]:
        for chain in listener["filter_chains"]:
            for f in chain["filters"]:
                hcm = f.get("typed_config", {})
                if "http_filters" in hcm:
                    hcm["http_filters"] = edit(hcm["http_filters"])
    for cluster in config["static_resources"]["clusters"]:
        for options in cluster.get("typed_extension_protocol_options", {}).values():
            if "http_filters" in options:
                options["http_filters"] = edit(options["http_filters"])
    return config


# Dynamic-module stats are named `<metrics_namespace>.<name>`; with this runtime flag Envoy 1.40
# treats the namespace as it treats proxy-wasm's `wasmcustom` (no `envoy_` prefix in Prometheus),
# so both builds export the same series.
STRIP_PREFIX = "envoy.reloadable_features.dynamic_modules_strip_custom_stat_prefix"


def native(text: str) -> str:
    """An `edit` for [`Envoy`]: the config with the native build in place of the .wasm."""
    config = native_filters(yaml.safe_load(text))
    layers = config.setdefault("layered_runtime", {}).setdefault("layers", [])
    layers.insert(0, {"name": "llm_fallback_native", "static_layer": {STRIP_PREFIX: True}})
    return yaml.safe_dump(config, sort_keys=False)


# What the native build cannot do (README: "The native build"): each test that depends on it
# is skipped under `LLM_FALLBACK_SHELL=native`, with the reason.
native_gap_endings = pytest.mark.skipif(NATIVE, reason=(
    "native build: Envoy 1.40's dynamic-module ABI gives an upstream filter no response flags, "
    "code details or transport failure reason once its attempt has ended, so a connection failure "
    "or a client that left reads as a timeout"))
native_gap_check = pytest.mark.skipif(NATIVE, reason=(
    "native build: `llm-fallback check` reads proxy-wasm filter configs only"))
wasm_vm_only = pytest.mark.skipif(NATIVE, reason="a VM that traps and is replaced: proxy-wasm only")
