"""A real Prometheus (Debian's) scraping the test Envoy: every Grafana dashboard query and every
shipped alerting rule evaluates against live data without error, and the core ones see the
traffic the test made (a 429 storm shows in the rate-limit rule's expression, queued requests in
the queue-wait histogram)."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
import yaml

from harness import ROOT, Envoy, chat_body, free_port, wait_for
from test_compose import DASHBOARD, dashboard_queries
from test_shaping import shaping

RULES = ROOT / "docker/rules/llm-fallback.rules.yml"
GENAI_RULES = ROOT / "docker/rules/llm-fallback.genai.rules.yml"
PROMETHEUS = shutil.which("prometheus")
RATE = {"error": {"message": "Rate limit reached for requests per min (RPM).", "type": "requests",
                  "code": "rate_limit_exceeded"}}

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="make setup installs Debian's prometheus")


@pytest.fixture(scope="module")
def stack(workdir, mock):
    # Internal traffic always limited (two slots), so that requests queue and the histogram fills.
    limited = shaping("{classes: [{name: critical, fallback: critical},"
                      " {name: internal, max_concurrency: 2, max_queue: 40, max_queue_ms: 20000},"
                      " {name: batch, fallback: batch}], default_class: internal}")
    envoy = Envoy(workdir, mock.port, edit=limited, log_level="info")
    port = free_port()
    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES), str(GENAI_RULES)],
        "scrape_configs": [{"job_name": "envoy", "metrics_path": "/stats/prometheus",
                            "static_configs": [{"targets": [envoy.admin.removeprefix("http://")]}]}],
    }))
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=(workdir / "prometheus.log").open("w"))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(url + "/-/ready", timeout=1).status_code == 200, 20, "prometheus ready")
        # Targets are applied a few seconds after start: traffic must come after the first scrape,
        # so that every counter has a sample from before it.
        wait_for(lambda: query(url, 'up{job="envoy"} == 1'), 20, "first scrape of Envoy")
        yield envoy, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        envoy.stop()


def query(url: str, expr: str) -> list:
    r = requests.get(url + "/api/v1/query", params={"query": expr}, timeout=10).json()
    assert r["status"] == "success", f"{expr}: {r}"
    return r["data"]["result"]


def grafana(expr: str) -> str:
    """A dashboard query as Grafana sends it (its variables and intervals filled in)."""
    return (expr.replace("$__rate_interval", "1m").replace("$__range", "5m")
            .replace("$model", ".*").replace("$__interval", "15s"))


def test_dashboard_and_alert_queries_evaluate_against_live_data(stack, mock):
    envoy, url = stack
    post = lambda body, **h: requests.post(envoy.url + "/v1/chat/completions", data=body,  # noqa: E731
                                           headers={"content-type": "application/json", **h}, timeout=30)
    # Healthy traffic, a stream, a fallback, a 429 storm on gpt-4o, and queued internal requests.
    for _ in range(5):
        assert post(chat_body("gpt-4o")).status_code == 200
    assert post(chat_body("gpt-4o-mini", stream=True)).status_code == 200
    # One overload on gpt-4o-mini, then its circuit is closed again: a switch to llama that succeeds.
    mock.script("gpt-4o-mini", steps=[{"status": 529}, {"status": 529}])
    switched = post(chat_body("gpt-4o-mini"))
    assert switched.status_code == 200 and switched.headers["x-llm-model"] == "llama-3.1-8b"
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "0"}, "body": RATE}, {}] * 10)
    for _ in range(10):
        post(chat_body("gpt-4o"))
    mock.script("gpt-4o", default={"delay_ms": 400})
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: post(chat_body("gpt-4o")), range(8)))
    assert sum("queued" in a.headers.get("x-llm-shaping", "") for a in answers) >= 4
    # A few scrapes after the traffic (counters fold into stats once a second).
    time.sleep(4)

    problems = []
    for expr in dashboard_queries(json.loads(DASHBOARD.read_text())):
        try:
            query(url, grafana(expr))
        except AssertionError as e:
            problems.append(str(e))
    assert not problems, "\n".join(problems)
    # What the traffic must show.
    seen = {r["metric"].get("model") for r in query(url, "sum by (model) (llm_fallback_requests)")}
    assert {"gpt-4o", "gpt-4o-mini"} <= seen
    waits = query(url, 'sum by (priority) (llm_fallback_queue_wait_ms_count)')
    assert any(r["metric"].get("priority") == "internal" and float(r["value"][1]) >= 4 for r in waits), waits

    outcomes = query(url, 'sum by (model, outcome) (llm_fallback_fallback_outcomes{model="gpt-4o-mini"})')
    assert {(r["metric"]["outcome"], r["value"][1]) for r in outcomes} == {("success", "1"), ("failure", "0")}, outcomes
    rules = [rule for path in (RULES, GENAI_RULES)
             for group in yaml.safe_load(path.read_text())["groups"] for rule in group["rules"]]
    for rule in rules:
        query(url, rule["expr"])
    # The GenAI names in seconds, from the filter's millisecond histograms (Envoy flushes
    # histograms every 5 s), and the token histogram straight from Envoy.
    wait_for(lambda: query(url, 'sum(gen_ai_server_request_duration_seconds_count{gen_ai_request_model="gpt-4o"}) > 0'),
             20, "GenAI duration recorded")
    ttft = query(url, 'sum by (gen_ai_request_model) (gen_ai_server_time_to_first_token_seconds_count)')
    assert any(r["metric"].get("gen_ai_request_model") == "gpt-4o-mini" for r in ttft), ttft
    p95 = query(url, 'histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_request_duration_seconds_bucket[1m])))')
    assert p95 and 0 < float(p95[0]["value"][1]) < 60, p95
    assert query(url, 'sum(gen_ai_client_token_usage_count{gen_ai_token_type="output"}) > 0')
    # The shipped budgets' gauges are there for the burn alert.
    limits = {r["metric"]["budget"] for r in query(url, "llm_fallback_budget_limit > 0")}
    assert {"all-daily", "unknown-keys-monthly"} <= limits, limits
    storm = next(r for r in rules if r["alert"] == "LLMRateLimitSpike")
    # The rule's condition holds for gpt-4o (it pends for its `for:` before firing).
    hits = query(url, storm["expr"].replace("[5m]", "[1m]"))
    assert [h["metric"]["model"] for h in hits] == ["gpt-4o"], hits
    # Prometheus itself evaluated every shipped rule without an error.
    wait_for(lambda: all(r.get("lastEvaluation", "").startswith("2")
                         for g in requests.get(url + "/api/v1/rules", timeout=5).json()["data"]["groups"]
                         for r in g["rules"]), 10, "rules evaluated")
    groups = requests.get(url + "/api/v1/rules", timeout=5).json()["data"]["groups"]
    health = {r["name"]: (r["health"], r.get("lastError", "")) for g in groups for r in g["rules"]}
    assert len(health) == len(rules)
    assert all(h == "ok" for h, _ in health.values()), health
