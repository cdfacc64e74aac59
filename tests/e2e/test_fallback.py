"""Fallback along model chains inside Envoy's own retry loop, with shared health state.

Each test starts its own Envoy (health state is process-wide shared data) in front of the mock,
and asserts the exact sequence of (model, attempt) that reached the upstream."""

from __future__ import annotations

import concurrent.futures
import json
import time

import pytest
import requests

from harness import Envoy, Mock, both, chat_body, drained, next_request_mode, wait_for, with_plugin_setting

JSON = {"content-type": "application/json"}
# A per-model quota stop (OpenAI's daily token limit names the model): the model cools down,
# the other models of its account keep serving. Account-wide stops (`insufficient_quota`) are in
# test_real_traffic.py.
QUOTA = json.dumps({"error": {"message": "Rate limit reached for gpt-4o in organization org-abc123 on tokens per day (TPD): Limit 90000, Used 90000, Requested 512. Visit https://platform.openai.com/account/rate-limits to learn more.", "type": "tokens", "param": None, "code": "rate_limit_exceeded"}})
RATE = json.dumps({"error": {"message": "Rate limit reached for gpt-4o on requests per min (RPM).", "type": "requests", "code": "rate_limit_exceeded"}})
OVERLOADED = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


@pytest.fixture
def fresh(workdir, mock):
    """An Envoy of its own (fresh health state), with a short circuit cooldown."""
    envoys = []

    def start(edit=lambda t: t, second=None):
        e = Envoy(workdir, mock.port, second_upstream_port=second,
                  edit=lambda t: edit(t.replace("base_cooldown_ms: 10000", "base_cooldown_ms: 1500")))
        envoys.append(e)
        return e

    yield start
    for e in envoys:
        e.stop()


def ask(envoy, model: str, headers: dict | None = None, **body_kw) -> requests.Response:
    return requests.post(envoy.url + "/v1/chat/completions", data=chat_body(model, **body_kw),
                         headers={**JSON, **(headers or {})}, timeout=30)


def seen(mock) -> list[tuple[str, str]]:
    return [(r["model"], r["headers"].get("x-envoy-attempt-count")) for r in mock.requests()]


def test_quota_falls_back_at_once_and_the_model_is_not_asked_again(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})

    r = ask(envoy, "gpt-4o")

    assert r.status_code == 200
    assert r.json()["model"] == "llama-3.1-8b"
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    assert r.headers["x-llm-fallback-from"] == "gpt-4o"
    assert r.headers["x-llm-fallback-reason"] == "quota_exhausted"
    assert r.headers["x-llm-attempts"] == "2"
    assert "x-llm-retry" not in r.headers  # the retry marker never reaches the client
    assert seen(mock) == [("gpt-4o", "1"), ("llama-3.1-8b", "2")]

    mock.reset()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    for _ in range(20):
        r = ask(envoy, "gpt-4o")
        assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
        assert r.headers["x-llm-fallback-reason"] == "quota_exhausted"
    assert seen(mock) == [("llama-3.1-8b", "1")] * 20, "no attempt may be wasted on a model out of quota"
    wait_for(lambda: envoy.metric("llm_fallback_fallbacks", model="gpt-4o", to="llama-3.1-8b", account="llm", **{"class": "quota_exhausted"}) == 1, 5, "fallback counter")
    wait_for(lambda: envoy.metric("llm_fallback_skipped_cooling", model="gpt-4o") == 20, 5, "skipped counter")


def test_short_rate_limit_is_waited_out_on_the_same_model(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "1"}, "body": RATE}])
    start = time.monotonic()
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "gpt-4o"
    assert "x-llm-fallback-from" not in r.headers
    records = mock.requests()
    assert [(x["model"], x["headers"]["x-envoy-attempt-count"]) for x in records] == [("gpt-4o", "1"), ("gpt-4o", "2")]
    gap = records[1]["t_ms"] - records[0]["t_ms"]
    assert 800 <= gap <= 3000, f"the retry came {gap} ms later; the upstream asked for 1 s"
    assert time.monotonic() - start >= 0.8


def test_long_rate_limit_switches_at_once(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "headers": {"retry-after": "120"}, "body": RATE})
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
    assert r.headers["x-llm-fallback-reason"] == "rate_limited"
    records = mock.requests()
    assert [x["model"] for x in records] == ["gpt-4o", "llama-3.1-8b"]
    assert records[1]["t_ms"] - records[0]["t_ms"] < 700


def test_overload_opens_the_circuit_then_one_probe_and_switch_back(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 529, "body": OVERLOADED}, {"status": 529, "body": OVERLOADED}])
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
    assert r.headers["x-llm-fallback-reason"] == "overloaded"
    assert seen(mock) == [("gpt-4o", "1"), ("gpt-4o", "2"), ("llama-3.1-8b", "3")]
    opened_at = time.monotonic()

    mock.reset()
    for _ in range(5):
        assert ask(envoy, "gpt-4o").headers["x-llm-model"] == "llama-3.1-8b"
    assert all(m == "llama-3.1-8b" for m, _ in seen(mock)), "the open circuit is skipped"

    # After the cooldown (1.5 s + jitter), exactly one of several concurrent requests probes.
    time.sleep(max(0, 2.0 - (time.monotonic() - opened_at)))
    mock.reset()
    mock.script("gpt-4o", default={"delay_ms": 600})
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: ask(envoy, "gpt-4o"), range(6)))
    assert all(a.status_code == 200 for a in answers)
    probes = [m for m, _ in seen(mock) if m == "gpt-4o"]
    assert len(probes) == 1, seen(mock)
    wait_for(lambda: envoy.metric("llm_fallback_switch_backs", model="gpt-4o") == 1, 5, "switch-back counter")

    mock.reset()
    r = ask(envoy, "gpt-4o")
    assert r.headers["x-llm-model"] == "gpt-4o" and "x-llm-fallback-from" not in r.headers
    assert seen(mock) == [("gpt-4o", "1")]


def test_a_failed_probe_reopens_the_circuit(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 529, "body": OVERLOADED})
    ask(envoy, "gpt-4o")
    time.sleep(2.0)
    mock.reset()
    mock.script("gpt-4o", default={"status": 529, "body": OVERLOADED})
    r = ask(envoy, "gpt-4o")  # the probe fails: re-opened at once, served by the fallback
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    assert seen(mock) == [("gpt-4o", "1"), ("llama-3.1-8b", "2")]
    mock.reset()
    ask(envoy, "gpt-4o")
    assert seen(mock) == [("llama-3.1-8b", "1")]


def test_requests_with_tools_skip_a_fallback_without_tools(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    body = json.loads(chat_body("gpt-4o"))
    body["tools"] = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    r = requests.post(envoy.url + "/v1/chat/completions", data=json.dumps(body), headers=JSON, timeout=30)
    assert r.status_code == 200 and r.headers["x-llm-model"] == "gpt-4o-mini"
    assert seen(mock) == [("gpt-4o", "1"), ("gpt-4o-mini", "2")]


def test_critical_requests_are_never_downgraded(fresh, mock):
    # Clients may name `critical` only on a listener that trusts them (see test_trust.py).
    envoy = fresh(edit=with_plugin_setting("trust: {priority: any}"))
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "critical"})
    # Not llama-3.1-8b (light) nor gpt-4o-mini (general): the flagship of the other provider.
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert seen(mock) == [("gpt-4o", "1"), ("claude-sonnet-4-5", "2")]
    # With no other flagship, the critical request fails rather than being downgraded.
    mock.reset()
    envoy = fresh(edit=both(with_plugin_setting("trust: {priority: any}"), drained("claude-sonnet-4-5")))
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "critical"})
    assert r.status_code == 429
    assert r.headers["x-llm-error-class"] == "quota_exhausted"
    assert r.headers["x-llm-model"] == "gpt-4o"
    assert seen(mock) == [("gpt-4o", "1")]


def test_batch_requests_never_fall_back_and_fail_fast(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "batch"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert seen(mock) == [("gpt-4o", "1")]
    mock.reset()
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "batch"})
    assert r.status_code == 503 and int(r.headers["retry-after"]) > 60
    assert mock.requests() == [], "a batch request for a cooling model never reaches the upstream"


def test_a_stream_falls_back_as_a_stream(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    mock.script("llama-3.1-8b", default={"chunk_delay_ms": 200, "chunks": 4})
    start = time.monotonic()
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o", stream=True), headers=JSON, stream=True, timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    arrivals, text = [], b""
    for chunk in r.iter_content(chunk_size=None):
        arrivals.append(time.monotonic() - start)
        text += chunk
    assert b"llama-3.1-8b" in text and text.rstrip().endswith(b"data: [DONE]")
    assert arrivals[-1] - arrivals[0] > 0.5, "the fallback's stream arrives as a stream"


def test_a_fallback_on_another_cluster_reaches_the_second_provider(fresh, mock, workdir):
    second = Mock(workdir)
    try:
        envoy = fresh(second=second.port, edit=with_plugin_setting("trust: {task: true}"))
        # A task chain that starts on the second provider (clients may pick tasks here).
        r = ask(envoy, "gpt-4o", {"x-llm-task": "code"})
        assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
        assert [x["model"] for x in second.requests()] == ["claude-sonnet-4-5"]
        assert mock.requests() == []
        # A model of the second provider falls back within it.
        second.script("claude-sonnet-4-5", default={"status": 529, "body": OVERLOADED})
        second.reset()
        second.script("claude-sonnet-4-5", default={"status": 529, "body": OVERLOADED})
        r = ask(envoy, "claude-sonnet-4-5")
        assert r.headers["x-llm-model"] == "claude-haiku-4-5"
        assert [x["model"] for x in second.requests()] == ["claude-sonnet-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"]
    finally:
        second.stop()


def test_next_request_mode_sends_the_clients_retry_to_the_other_cluster(fresh, mock, workdir):
    """Next-request mode (a `cluster_header` route, any Envoy): retries stay on the routed
    cluster, and the failing answer tells the SDK where its retry will be routed."""
    second = Mock(workdir)
    try:
        drain = lambda t: t.replace("{name: llama-3.1-8b, tier: light, cluster: llm,", "{name: llama-3.1-8b, tier: light, cluster: llm, drain: true,").replace(
            "{name: gpt-4o-mini, tier: general, cluster: llm,", "{name: gpt-4o-mini, tier: general, cluster: llm, drain: true,")
        envoy = fresh(edit=both(next_request_mode, drain), second=second.port)
        mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
        r = ask(envoy, "gpt-4o")
        assert r.status_code == 429
        assert r.headers["x-should-retry"] == "true"  # the SDK's retry will be routed elsewhere
        assert r.headers["x-llm-fallback-next"] == "claude-sonnet-4-5"
        r = ask(envoy, "gpt-4o")
        assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
        assert [x["model"] for x in second.requests()] == ["claude-sonnet-4-5"]
        assert [x["model"] for x in mock.requests()] == ["gpt-4o"]
    finally:
        second.stop()


def test_model_rewrite_uses_the_upstream_name(fresh, mock):
    envoy = fresh(edit=lambda t: t.replace("{name: gpt-4o-mini, tier: general,", "{name: gpt-4o-mini, upstream_name: gpt-4o-mini-2024-07-18, tier: general,"))
    body = chat_body("gpt-4o-mini", filler=50_000)
    r = requests.post(envoy.url + "/v1/chat/completions", data=body, headers=JSON, timeout=30)
    assert r.status_code == 200
    [record] = mock.requests()
    assert record["model"] == "gpt-4o-mini-2024-07-18"
    assert record["body"].encode() == body.replace(b'"gpt-4o-mini"', b'"gpt-4o-mini-2024-07-18"')
    assert r.headers["x-llm-model"] == "gpt-4o-mini"


def test_max_tokens_is_clamped_to_the_fallbacks_output_limit(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": QUOTA})
    body = json.loads(chat_body("gpt-4o"))
    body["max_tokens"] = 8000
    raw = json.dumps(body).encode()
    r = requests.post(envoy.url + "/v1/chat/completions", data=raw, headers=JSON, timeout=30)
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
    first, second = mock.requests()
    assert first["body"].encode() == raw  # the primary got the request exactly as sent
    assert json.loads(second["body"])["max_tokens"] == 2048
    assert second["body"].encode() == raw.replace(b'"max_tokens": 8000', b'"max_tokens": 2048').replace(b'"gpt-4o"', b'"llama-3.1-8b"')


def test_context_overflow_only_moves_to_a_larger_window(fresh, mock):
    envoy = fresh()
    overflow = json.dumps({"error": {"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}})
    mock.script("gpt-4o", default={"status": 400, "body": overflow})
    r = ask(envoy, "gpt-4o")
    # llama (8k) and gpt-4o-mini (128k) are not larger, so neither is asked; claude-sonnet-4-5
    # (200k, the other provider) is. The model is not cooled down: the prompt was the problem.
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert r.headers["x-llm-fallback-reason"] == "context_overflow"
    assert seen(mock) == [("gpt-4o", "1"), ("claude-sonnet-4-5", "2")]
    mock.reset()
    envoy = fresh(edit=drained("claude-sonnet-4-5"))
    mock.script("gpt-4o", default={"status": 400, "body": overflow})
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 400 and r.headers["x-llm-error-class"] == "context_overflow"
    assert r.headers["x-should-retry"] == "false" and "x-llm-fallback-next" not in r.headers
    assert seen(mock) == [("gpt-4o", "1")]
    mock.reset()
    mock.script("gpt-4o-mini", default={"status": 400, "body": overflow.replace("128000", "128000")})
    r = ask(envoy, "gpt-4o-mini", filler=40_000)  # ~10k tokens: llama's 8k window is too small
    assert r.status_code == 400
    assert seen(mock) == [("gpt-4o-mini", "1")]
