"""Switch conditions per tier through a real Envoy (one worker: error-rate windows are per
worker): a light model's error-rate rule opens its circuit above its threshold and not at it,
and not below its minimum volume; a flagship waits out a short Retry-After but switches on one
longer than its tier's limit."""
from __future__ import annotations

import pytest
import requests

from harness import Envoy, chat_body, wait_for

RATE = {"error": {"message": "Rate limit reached for requests per min (RPM).", "type": "requests",
                  "code": "rate_limit_exceeded"}}


def switch_on(block: str):
    """An `edit` replacing the shipped `switch_on:` block with `switch_on: {block}`."""
    def edit(text: str) -> str:
        start = text.index("                      switch_on:\n")
        end = text.index("                        light: {error_rate:", start)
        end = text.index("\n", end) + 1
        return text[:start] + f"                      switch_on: {block}\n" + text[end:]
    return edit


@pytest.fixture
def fresh(workdir, mock):
    envoys = []

    def start(block: str):
        e = Envoy(workdir, mock.port, edit=switch_on(block), concurrency=1)
        envoys.append(e)
        return e

    yield start
    for e in envoys:
        e.stop()


def state(envoy, model: str) -> str:
    return envoy.status()["models"][model]["state"]


def ask(envoy, model: str) -> requests.Response:
    return requests.post(envoy.url + "/v1/chat/completions", data=chat_body(model),
                         headers={"content-type": "application/json"}, timeout=30)


LIGHT = "{light: {consecutive_failures: 100, error_rate: {over: 0.25, window_ms: 60000, min_requests: 8}}}"


def test_an_error_rate_rule_waits_for_its_minimum_volume(fresh, mock):
    envoy = fresh(LIGHT)
    # Each request meets one overload, is retried on the same model and served: 1 error, 1 ok.
    mock.script("llama-3.1-8b", steps=[{"status": 503}, {}] * 3 + [{}])
    for _ in range(4):
        assert ask(envoy, "llama-3.1-8b").status_code == 200
    # 3 errors in 7 answers (43 % > 25 %), but below the 8 answers the rule needs.
    assert state(envoy, "llama-3.1-8b") == "healthy"
    assert ask(envoy, "llama-3.1-8b").status_code == 200
    # The 8th answer: 3 / 8 = 37.5 %, with the volume: the circuit opens.
    assert state(envoy, "llama-3.1-8b") == "cooling_down"
    assert envoy.status()["models"]["llama-3.1-8b"]["last_reason"] == "overloaded"
    wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="llama-3.1-8b", condition="error_rate") == 1,
             5, "the condition counted")
    assert envoy.metric("llm_fallback_switch_conditions", model="llama-3.1-8b", condition="consecutive_failures") == 0
    rule = envoy.status()["models"]["llama-3.1-8b"]["switch_on"]
    assert rule == {"consecutive_failures": 100, "wait_over_ms": 30000,
                    "error_rate": {"over": 0.25, "window_ms": 60000, "min_requests": 8,
                                   "classes": ["overloaded", "timeout"]}}


def test_an_error_rate_rule_opens_above_its_threshold_and_not_at_it(fresh, mock):
    envoy = fresh(LIGHT)
    # 2 errors in 8 answers: exactly 25 %, not above.
    mock.script("llama-3.1-8b", steps=[{"status": 503}, {}, {}, {}, {"status": 503}, {}, {}, {}]
                + [{"status": 503}, {}])
    for _ in range(6):
        assert ask(envoy, "llama-3.1-8b").status_code == 200
    assert len([r for r in mock.requests() if r["model"] == "llama-3.1-8b"]) == 8
    assert state(envoy, "llama-3.1-8b") == "healthy"
    # One more error: 3 / 9 = 33 %.
    ask(envoy, "llama-3.1-8b")
    assert state(envoy, "llama-3.1-8b") == "cooling_down"


def test_a_flagship_waits_out_a_short_retry_after_and_switches_on_a_long_one(fresh, mock):
    envoy = fresh("{flagship: {consecutive_failures: 2, wait_over_ms: 2000}}")
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "1"}, "body": RATE}])
    short = ask(envoy, "gpt-4o")
    assert short.status_code == 200 and short.headers["x-llm-model"] == "gpt-4o", "waited out"
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "5"}, "body": RATE}])
    long = ask(envoy, "gpt-4o")
    assert long.status_code == 200 and long.headers["x-llm-model"] != "gpt-4o", "switched"
    assert state(envoy, "gpt-4o") == "cooling_down"
    wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="gpt-4o", condition="long_wait") == 1,
             5, "the condition counted")


def test_an_error_rate_that_counts_429s_switches_a_model_whose_short_waits_pile_up(fresh, mock):
    envoy = fresh("{light: {error_rate: {over: 0.25, window_ms: 60000, min_requests: 4,"
                  " classes: [rate_limited]}}}")
    short = {"status": 429, "headers": {"retry-after": "0"}, "body": RATE}
    mock.script("llama-3.1-8b", steps=[short, {}, short, {}])
    # Each short 429 is waited out on the same model (nothing opens on one of them)...
    assert ask(envoy, "llama-3.1-8b").status_code == 200
    assert state(envoy, "llama-3.1-8b") == "healthy"
    # ... but 2 in 4 answers is over the rate.
    assert ask(envoy, "llama-3.1-8b").status_code == 200
    assert state(envoy, "llama-3.1-8b") == "cooling_down"
    wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="llama-3.1-8b", condition="error_rate") == 1,
             5, "the condition counted")
