"""The docker-compose demo (docker-compose.yml, docker/) without a Docker engine.

Checks that the compose file is valid and consistent with the repository (every host path it or
the Dockerfile reads exists; the pod-like shared network namespace has no port clash and its
addresses are the ones envoy/envoy.yaml uses), and runs what the demo runs against the real
parts: the Envoy config the compose file gives Envoy (it must be the shipped envoy/envoy.yaml)
under the PyPI Envoy, every metric and label the Grafana dashboard queries against a live
/stats/prometheus scrape, and the launch-day scenario in the mock.

Needs PyYAML (tests/requirements.txt) and, for the `config` check, `docker-compose` (Debian
package docker-compose) or the `docker compose` plugin.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from harness import ROOT, Envoy, chat_body

COMPOSE = ROOT / "docker-compose.yml"
DASHBOARD = ROOT / "docker/grafana/dashboards/llm-fallback.json"
GRAFANA_DATASOURCES = ROOT / "docker/grafana/provisioning/datasources"
SHIPPED = (ROOT / "envoy/envoy.yaml").resolve()

try:
    import yaml
except ImportError:  # pragma: no cover - reported as a failure below, not a skip
    yaml = None


def load_yaml(path: Path):
    if yaml is None:
        pytest.fail("PyYAML is missing from the test virtualenv: add PyYAML to tests/requirements.txt")
    return yaml.safe_load(path.read_text())


# --- compose and Dockerfile model ---------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict:
    return load_yaml(COMPOSE)


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def binds(service: dict) -> list[tuple[Path, str]]:
    """(host path, container path) of every bind mount; named volumes are skipped."""
    out = []
    for v in service.get("volumes", []):
        if isinstance(v, dict):
            if v.get("type") != "bind":
                continue
            src, dst = v["source"], v["target"]
        else:
            parts = v.split(":")
            if len(parts) < 2 or not parts[0].startswith((".", "/", "~")):
                continue
            src, dst = parts[0], parts[1]
        out.append(((COMPOSE.parent / Path(src).expanduser()).resolve(), dst))
    return out


def build_of(service: dict) -> dict | None:
    b = service.get("build")
    if b is None:
        return None
    return {"context": b} if isinstance(b, str) else b


class Dockerfile:
    """Just enough of a Dockerfile: stages with their WORKDIR, CMD, ENTRYPOINT and COPY lines."""

    def __init__(self, path: Path, context: Path):
        self.path, self.context = path, context
        self.stages: dict[str, dict] = {}
        text = re.sub(r"\\\n", " ", path.read_text())
        stage = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            op, _, rest = line.partition(" ")
            op, rest = op.upper(), rest.strip()
            if op == "FROM":
                m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?$", rest, re.I)
                assert m, f"unreadable FROM: {line}"
                name = m.group(2) or str(len(self.stages))
                stage = self.stages[name] = {"from": m.group(1), "workdir": "/", "copies": [], "cmd": None, "entrypoint": None}
            elif stage is None:
                continue
            elif op == "WORKDIR":
                stage["workdir"] = posixpath.join(stage["workdir"], rest)
            elif op in ("CMD", "ENTRYPOINT"):
                stage[op.lower()] = json.loads(rest) if rest.startswith("[") else ["/bin/sh", "-c", rest]
            elif op in ("COPY", "ADD"):
                args = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
                flags = {a.split("=", 1)[0]: a.split("=", 1)[-1] for a in args if a.startswith("--")}
                paths = [a for a in args if not a.startswith("--")]
                dst = posixpath.join(stage["workdir"], paths[-1])
                if paths[-1].endswith("/"):
                    dst += "/"
                stage["copies"].append({"from": flags.get("--from"), "srcs": paths[:-1], "dst": dst})

    def container_to_source(self, stage: str, path: str) -> tuple[str | None, str] | None:
        """Where `path` in the stage's file system comes from: (None, context-relative path) for
        the build context, (stage, path) for another stage; None if no COPY provides it."""
        for c in reversed(self.stages[stage]["copies"]):
            for src in c["srcs"]:
                src = posixpath.normpath(src)
                dst = posixpath.normpath(c["dst"])
                # Into a directory (`dst/`), a file keeps its name; a directory's contents land there.
                src_is_dir = c["from"] is None and (self.context / src).is_dir()
                if c["dst"].endswith("/") and not src_is_dir:
                    dst = posixpath.join(dst, posixpath.basename(src))
                if path == dst or path.startswith(dst + "/"):
                    return c["from"], posixpath.normpath(posixpath.join(src, posixpath.relpath(path, dst)))
        return None


def dockerfile_of(service: dict) -> tuple[Dockerfile, str]:
    b = build_of(service)
    assert b is not None, "service has no build section"
    context = (COMPOSE.parent / b.get("context", ".")).resolve()
    df = Dockerfile(context / b.get("dockerfile", "Dockerfile"), context)
    target = b.get("target") or list(df.stages)[-1]
    return df, target


def argv_of(service: dict) -> tuple[list[str], str]:
    """The service's effective argv (entrypoint + command, compose over Dockerfile) and working dir."""
    stage = None
    if build_of(service) is not None:
        df, target = dockerfile_of(service)
        stage = df.stages[target]

    def listify(v):
        return shlex.split(v) if isinstance(v, str) else list(v)

    entry = service.get("entrypoint")
    entry = listify(entry) if entry is not None else (stage or {}).get("entrypoint") or []
    cmd = service.get("command")
    if cmd is None and service.get("entrypoint") is None:
        cmd = (stage or {}).get("cmd") or []
    workdir = service.get("working_dir") or (stage or {}).get("workdir") or "/"
    return entry + listify(cmd or []), workdir


def option(argv: list[str], *names: str) -> list[str]:
    """Values of a command-line option (`--x v` or `--x=v`)."""
    out = []
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                out.append(argv[i + 1])
            elif a.startswith(n + "="):
                out.append(a.split("=", 1)[1])
    return out


def host_path(service: dict, container_path: str, workdir: str = "/") -> Path | None:
    """The repository file behind a path inside a service's container: a bind mount, or a COPY
    from the build context in the service's image."""
    path = posixpath.normpath(posixpath.join(workdir, container_path))
    for src, dst in sorted(binds(service), key=lambda b: -len(b[1])):
        dst = dst.rstrip("/")
        if path == dst or path.startswith(dst + "/"):
            return src / posixpath.relpath(path, dst)
    if build_of(service) is not None:
        df, target = dockerfile_of(service)
        found = df.container_to_source(target, path)
        if found and found[0] is None:
            return (df.context / found[1]).resolve()
    return None


def envoy_config(services) -> tuple[Path, str]:
    argv, workdir = argv_of(services["envoy"])
    configs = option(argv, "-c", "--config-path")
    assert len(configs) == 1, f"envoy's command names no single config: {argv}"
    path = host_path(services["envoy"], configs[0], workdir)
    assert path is not None, f"{configs[0]} in the envoy container comes from no repository file"
    return path.resolve(), workdir


def socket_addresses(node) -> list[tuple[str, int]]:
    if isinstance(node, dict):
        if "socket_address" in node:
            sa = node["socket_address"]
            return [(sa["address"], int(sa["port_value"]))]
        return [a for v in node.values() for a in socket_addresses(v)]
    if isinstance(node, list):
        return [a for v in node for a in socket_addresses(v)]
    return []


# --- the compose file ---------------------------------------------------------------------------


def compose_clis() -> list[list[str]]:
    clis = []
    if shutil.which("docker-compose"):
        clis.append(["docker-compose"])
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        clis.append(["docker", "compose"])
    return clis


def test_compose_config_is_valid(services):
    clis = compose_clis()
    if not clis:
        pytest.skip("neither `docker-compose` (apt-get install docker-compose) nor `docker compose` is installed")
    for cli in clis:
        r = subprocess.run([*cli, "-f", str(COMPOSE), "config"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{' '.join(cli)} config failed:\n{r.stderr}"
        for name in services:
            assert re.search(rf"^  {re.escape(name)}:$", r.stdout, re.M), f"{name} missing from `{' '.join(cli)} config`"


def test_every_host_path_exists(services):
    for name, service in services.items():
        b = build_of(service)
        if b is not None:
            context = (COMPOSE.parent / b.get("context", ".")).resolve()
            assert context.is_dir(), f"{name}: build context {context} missing"
            dockerfile = context / b.get("dockerfile", "Dockerfile")
            assert dockerfile.is_file(), f"{name}: {dockerfile} missing"
            df = Dockerfile(dockerfile, context)
            if b.get("target"):
                assert b["target"] in df.stages, f"{name}: no stage {b['target']} in {dockerfile}"
        env_files = service.get("env_file", [])
        for env_file in [env_files] if isinstance(env_files, str) else env_files:
            p = env_file if isinstance(env_file, str) else env_file["path"]
            assert (COMPOSE.parent / p).is_file(), f"{name}: env_file {p} missing"
        for src, dst in binds(service):
            assert src.exists(), f"{name}: mounted host path {src} (-> {dst}) missing"
        argv, workdir = argv_of(service)
        for scenario in option(argv, "--scenario"):
            p = host_path(service, scenario, workdir)
            assert p is not None and p.is_file(), f"{name}: scenario {scenario} is not a repository file"
    # Grafana's home dashboard comes from a mount too.
    g = services["grafana"]
    env = g.get("environment", {})
    env = env if isinstance(env, dict) else dict(e.split("=", 1) for e in env)
    home = env.get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    if home:
        p = host_path(g, home)
        assert p is not None and p.is_file(), f"grafana home dashboard {home} is not a repository file"


def test_dockerfile_copies_exist_and_are_not_ignored(services):
    checked = set()
    for service in services.values():
        if build_of(service) is None:
            continue
        df, _ = dockerfile_of(service)
        if df.path in checked:
            continue
        checked.add(df.path)
        ignore_file = df.path.with_name(df.path.name + ".dockerignore")
        if not ignore_file.exists():
            ignore_file = df.context / ".dockerignore"
        ignored = []
        if ignore_file.exists():
            ignored = [ln.strip().rstrip("/") for ln in ignore_file.read_text().splitlines()
                       if ln.strip() and not ln.startswith("#") and "*" not in ln and not ln.startswith("!")]
        for stage_name, stage in df.stages.items():
            for c in stage["copies"]:
                if c["from"] is not None:
                    assert c["from"] in df.stages or "/" in c["from"], f"{stage_name}: COPY --from={c['from']}: no such stage"
                    continue
                for src in c["srcs"]:
                    assert (df.context / src).exists(), f"{df.path} stage {stage_name}: COPY source {src} missing"
                    for pattern in ignored:
                        assert not (src == pattern or src.startswith(pattern + "/")), \
                            f"COPY source {src} is excluded by {pattern!r} in {ignore_file}"


def test_pod_addresses_match_the_envoy_config(services):
    """All services share Envoy's network namespace; the mocks listen where the shipped config's
    clusters point, Prometheus scrapes its admin address, and nothing clashes on a port."""
    for name, service in services.items():
        if name != "envoy":
            assert service.get("network_mode") == "service:envoy", f"{name} is not in envoy's network namespace"
            assert "ports" not in service, f"{name}: only envoy can publish the pod's ports"
    config_path, _ = envoy_config(services)
    config = load_yaml(config_path)
    clusters = {c["name"]: socket_addresses(c["load_assignment"]) for c in config["static_resources"]["clusters"]}
    listeners = [a for l in config["static_resources"]["listeners"] for a in socket_addresses(l["address"])]
    admin = socket_addresses(config["admin"]["address"])[0]

    mock_listens = {}
    for name, service in services.items():
        argv, _ = argv_of(service)
        for addr in option(argv, "--listen"):
            host, _, port = addr.rpartition(":")
            mock_listens[name] = (host or "127.0.0.1", int(port))
    upstreams = {a for addrs in clusters.values() for a in addrs}
    assert set(mock_listens.values()) == upstreams, f"mocks listen on {mock_listens}, clusters use {clusters}"

    ports = [p for _, p in listeners] + [admin[1]] + [p for _, p in mock_listens.values()] + [9090, 3000]
    assert len(ports) == len(set(ports)), f"port clash in the shared network namespace: {sorted(ports)}"

    published = set()
    for spec in services["envoy"].get("ports", []):
        container = spec["target"] if isinstance(spec, dict) else str(spec).split(":")[-1]
        published.add(int(str(container).split("/")[0]))
    public = {p for a, p in listeners if a == "0.0.0.0"}
    assert public | {9090, 3000} <= published, f"published {published}, want the public listeners {public} and 9090, 3000"
    assert admin[1] not in published and admin[0] == "127.0.0.1", "the admin endpoint must stay loopback-only"

    prom = load_yaml(ROOT / "docker/prometheus.yml")
    [job] = [j for j in prom["scrape_configs"] if j.get("metrics_path") == "/stats/prometheus"]
    targets = [t for sc in job["static_configs"] for t in sc["targets"]]
    assert targets == [f"{admin[0]}:{admin[1]}"]
    assert prom["global"]["scrape_interval"] == "5s"
    assert host_path(services["prometheus"], "/etc/prometheus/prometheus.yml") == (ROOT / "docker/prometheus.yml").resolve()


# --- what the demo runs, against the real Envoy and mock ----------------------------------------


@pytest.fixture(scope="module")
def compose_envoy(workdir, mock, services):
    path, _ = envoy_config(services)
    e = Envoy(workdir, mock.port, config_path=path, second_upstream_port=mock.port)
    yield e
    e.stop()


def post(envoy, body: bytes, path: str = "/v1/chat/completions") -> requests.Response:
    return requests.post(envoy.url + path, data=body, headers={"content-type": "application/json"}, timeout=30)


def test_envoy_runs_the_shipped_config_unchanged(services, compose_envoy, mock):
    path, workdir = envoy_config(services)
    assert path == SHIPPED, f"the compose demo gives Envoy {path}, not the shipped {SHIPPED}"
    # The wasm the shipped config names (relative to Envoy's working directory) is in the image,
    # copied from the build stage's cargo output.
    filenames = set(re.findall(r"filename:\s*(\S+?)[\s}]", path.read_text()))
    # Provider keys are mounted, as an operator mounts them (never baked into the image).
    keys = {f for f in filenames if f.startswith("envoy/keys/")}
    for key in keys:
        mounted = host_path(services["envoy"], key, workdir)
        assert mounted is not None and mounted.is_file(), f"{key} is not mounted into the envoy container"
        assert not mounted.read_bytes().endswith(b"\n"), f"{mounted} ends with a newline: it would be in the header"
    filenames -= keys
    assert filenames, "no wasm filename in the shipped config"
    df, target = dockerfile_of(services["envoy"])
    for filename in filenames:
        wasm = posixpath.normpath(posixpath.join(workdir, filename))
        found = df.container_to_source(target, wasm)
        assert found is not None and found[0] in df.stages, f"{wasm} is not copied into the envoy image from a build stage"
        assert found[1].endswith("target/wasm32-wasip1/release/llm_fallback.wasm"), found

    r = post(compose_envoy, chat_body("gpt-4o"))
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "Hello from gpt-4o"


PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
    "and", "or", "unless", "inf", "nan",
}


def parse_promql(expr: str) -> tuple[set[str], dict[str, list[tuple[str, str, str]]], set[str]]:
    """(metric names, label matchers per metric, grouping labels) of a PromQL expression."""
    matchers: dict[str, list[tuple[str, str, str]]] = {}
    for name, body in re.findall(r"([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}", expr):
        for label, op, value in re.findall(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"', body):
            matchers.setdefault(name, []).append((label, op, value))
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    grouping = {g.strip() for gs in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text)
                for g in gs.split(",") if g.strip()}
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = {n for n in re.findall(r"(?<![\w$.])([a-zA-Z_:][\w:]*)\b(?!\s*\()", text) if n.lower() not in PROMQL_WORDS}
    return names, matchers, grouping


def scrape_series(text: str) -> dict[str, list[dict[str, str]]]:
    series: dict[str, list[dict[str, str]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$", line)
        if m:
            series.setdefault(m.group(1), []).append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))
    return series


def dashboard_queries(dash: dict) -> list[str]:
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    exprs = [t["expr"] for p in panels(dash["panels"]) for t in p.get("targets", [])]
    assert all(exprs), "a dashboard target has an empty expr"
    for var in dash.get("templating", {}).get("list", []):
        q = var.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if var.get("type") == "query" and q:
            m = re.fullmatch(r"label_values\(\s*([\w:]+)\s*,\s*(\w+)\s*\)", q.strip())
            exprs.append(f"sum by ({m.group(2)}) ({m.group(1)})" if m else q)
    return exprs


def test_dashboard_is_valid_and_uses_the_provisioned_datasource(services):
    dash = json.loads(DASHBOARD.read_text())
    assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 36
    uids = set()
    for f in GRAFANA_DATASOURCES.glob("*.y*ml"):
        for ds in load_yaml(f).get("datasources", []):
            uids.add(ds["uid"])
            if ds["type"] == "prometheus":
                assert ds["url"] == "http://127.0.0.1:9090", "Prometheus is in the same network namespace"
    ids = []

    def walk(node):
        if isinstance(node, dict):
            ds = node.get("datasource")
            if isinstance(ds, dict) and "uid" in ds:
                assert ds["uid"] in uids, f"datasource uid {ds['uid']} is not provisioned ({uids})"
            if "gridPos" in node:
                ids.append(node["id"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(dash)
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    provider = load_yaml(ROOT / "docker/grafana/provisioning/dashboards/llm-fallback.yml")
    [p] = provider["providers"]
    assert host_path(services["grafana"], p["options"]["path"]) == DASHBOARD.parent.resolve()


# Metrics of features the shipped config does not turn on (their series exist once configured):
# the dashboard may query them; the e2e tests of those features check their names and labels.
OPT_IN = {"llm_fallback_canary"}


def test_dashboard_queries_name_exported_metrics(compose_envoy, mock):
    # Traffic through both clusters (latency histograms appear on first use), an error that falls
    # back, a stream with usage, and a body the filter cannot read.
    mock.script("gpt-4o", steps=[{"status": 529}])
    for body in (chat_body("gpt-4o"), chat_body("gpt-4o"), chat_body("claude-sonnet-4-5"), chat_body("gpt-4o-mini", stream=True)):
        assert post(compose_envoy, body).status_code == 200
    post(compose_envoy, b"not json")
    scraped = scrape_series(compose_envoy.prometheus())

    exprs = dashboard_queries(json.loads(DASHBOARD.read_text()))
    assert len(exprs) >= 10
    problems = []
    for expr in exprs:
        names, matchers, grouping = parse_promql(expr)
        if not names:
            problems.append(f"no metric found in {expr!r}")
        if names and names <= OPT_IN:
            continue  # series of a feature the shipped config leaves off
        for name in names:
            if name not in scraped:
                problems.append(f"{name} (in {expr!r}) is not exported")
        labels = {k for n in names for s in scraped.get(n, []) for k in s}
        for g in grouping - labels:
            problems.append(f"label {g} (in {expr!r}) is on none of {sorted(names)}")
        for name, ms in matchers.items():
            have = scraped.get(name, [])
            for label, op, value in ms:
                if not any(label in s for s in have):
                    problems.append(f"{name} has no label {label} (in {expr!r})")
                elif op in ("=", "=~") and "$" not in value:
                    # `a|b` of plain names: each must exist (a typo would hide behind the other).
                    plain = op == "=~" and re.fullmatch(r"[\w-]+(\|[\w-]+)*", value)
                    wanted = value.split("|") if plain else [value]
                    for want in wanted:
                        pattern = want if op == "=~" else re.escape(want)
                        if not any(re.fullmatch(pattern, s.get(label, "")) for s in have):
                            problems.append(f"no {name} series has {label}{op}{want!r}")
    assert not problems, "\n".join(problems)


# --- the launch-day scenario --------------------------------------------------------------------


def model_names(node) -> list[str]:
    """Names in every filter configuration's `models` list."""
    if isinstance(node, dict):
        found = [m["name"] for m in node.get("models", []) if isinstance(m, dict) and "name" in m]
        return found + [n for k, v in node.items() if k != "models" for n in model_names(v)]
    if isinstance(node, list):
        return [n for v in node for n in model_names(v)]
    return []


def scenario_files(services) -> set[Path]:
    files = set()
    for service in services.values():
        argv, workdir = argv_of(service)
        for scenario in option(argv, "--scenario"):
            files.add(host_path(service, scenario, workdir))
    return files


def test_scenario_is_accepted_by_the_mock_and_plays_out(services, mock, workdir):
    files = scenario_files(services)
    assert files, "no mock loads a scenario"
    config_path, _ = envoy_config(services)
    config = load_yaml(config_path)
    models = set(model_names(config))
    assert "gpt-4o" in models, models
    for f in files:
        scripts = json.loads(f.read_text())
        assert isinstance(scripts, list) and scripts
        for s in scripts:
            # A typo in a model name would make its script silently never apply.
            assert s["model"] in models | {"*"}, f"{f.name}: {s['model']} is not a model of {config_path.name}"
        r = requests.post(mock.url + "/_mock/scripts", json=scripts, timeout=5)
        assert r.status_code == 200, f"{f.name} rejected by the mock: {r.text}"

        # Launch day through the shipped config: gpt-4o is overloaded, the client never notices.
        e = Envoy(workdir, mock.port, config_path=config_path, second_upstream_port=mock.port)
        try:
            served = []
            for _ in range(3):
                r = post(e, chat_body("gpt-4o"))
                assert r.status_code == 200, r.text
                served.append(r.headers.get("x-llm-model"))
            assert any(m and m != "gpt-4o" for m in served), served
        finally:
            e.stop()
        mock.reset()
