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
                                   "classes": ["overloaded", "timeout"]},
                    "latency": None}


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


def fnv_bucket(key: bytes) -> int:
    """The filter's conversation bucket (FNV-1a 64, mod 10 000)."""
    h = 0xcbf29ce484222325
    for b in key:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h % 10_000


def with_canary(text: str) -> str:
    """gpt-5 as a canary on 10 % of gpt-4o's conversations (by x-conversation-id)."""
    text = text.replace("                    - {name: gpt-4o, tier: flagship,",
                        "                    - {name: gpt-5, tier: flagship, cluster: llm, context_window: 128000}\n"
                        "                    - {name: gpt-4o, tier: flagship,", 1)
    anchor = "                      switch_on:\n"
    return text.replace(anchor,
                        "                      canaries: [{model: gpt-5, of: gpt-4o, share: 0.1, sticky_header: x-conversation-id,"
                        " halt: {min_requests: 10, error_rate_margin: 0.2, window_ms: 60000, cooldown_ms: 60000}}]\n"
                        + anchor, 1)


def test_a_canary_takes_its_share_sticky_per_conversation_and_halts_when_it_degrades(workdir, mock):
    # gpt-5's own switch conditions are relaxed, so that the halt (the canary against its
    # base), not its own error rate, is what takes it out.
    envoy = Envoy(workdir, mock.port, edit=lambda t: switch_on(
        "{flagship: {consecutive_failures: 2, wait_over_ms: 30000}, gpt-5: {consecutive_failures: 1000, error_rate: {over: 1.0}}}")(with_canary(t)),
        concurrency=1)
    try:
        def ask_in(conversation: str) -> requests.Response:
            return requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                                 headers={"content-type": "application/json", "x-conversation-id": conversation})

        ids = [f"conv-{i}" for i in range(1000)]
        session = requests.Session()
        served = {}
        for c in ids:
            r = session.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                             headers={"content-type": "application/json", "x-conversation-id": c})
            assert r.status_code == 200
            served[c] = r.headers["x-llm-model"]
        on_canary = [c for c in ids if served[c] == "gpt-5"]
        # Exactly the conversations the hash puts in the share, and about 10 % of them.
        assert set(on_canary) == {c for c in ids if fnv_bucket(c.encode()) < 1000}
        assert 70 <= len(on_canary) <= 130, len(on_canary)
        assert all(served[c] in ("gpt-5", "gpt-4o") for c in ids)
        canary_answer = ask_in(on_canary[0])
        assert canary_answer.headers["x-llm-canary"] == "gpt-5"
        assert "x-llm-fallback-from" not in canary_answer.headers
        # Sticky: a conversation stays where it is.
        base_one = next(c for c in ids if served[c] == "gpt-4o")
        assert {ask_in(on_canary[0]).headers["x-llm-model"] for _ in range(10)} == {"gpt-5"}
        assert {ask_in(base_one).headers["x-llm-model"] for _ in range(10)} == {"gpt-4o"}
        wait_for(lambda: envoy.metric("llm_fallback_canary", model="gpt-5", of="gpt-4o", event="routed")
                 == len(on_canary) + 11, 5, "routed counted")
        assert envoy.status()["canaries"][0]["state"] == "serving"
        # The canary degrades (529 on every answer): once its error rate over the window (its
        # ~110 good answers included) is 20 points above the base's 0, it is halted.
        mock.script("gpt-5", default={"status": 529})
        for c in on_canary[1:21]:
            ask_in(c)
            if envoy.metric("llm_fallback_canary", model="gpt-5", of="gpt-4o", event="halted"):
                break
        wait_for(lambda: envoy.metric("llm_fallback_canary", model="gpt-5", of="gpt-4o", event="halted") == 1,
                 5, "halted")
        doc = envoy.status()["canaries"][0]
        assert doc["state"] == "halted" and doc["halted_for_ms"] > 50_000
        # Halted: its conversations are served by the base.
        after = ask_in(on_canary[0])
        assert after.status_code == 200 and after.headers["x-llm-model"] == "gpt-4o"
        assert "x-llm-canary" not in after.headers
    finally:
        envoy.stop()


def test_a_share_of_safe_traffic_keeps_the_fallbacks_known_good(workdir, mock):
    envoy = Envoy(workdir, mock.port, edit=lambda t: t.replace(
        "                      switch_on:\n", "                      backup_share: 0.1\n                      switch_on:\n", 1))
    try:
        session = requests.Session()
        backups = []
        for i in range(1000):
            r = session.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                             headers={"content-type": "application/json"})
            assert r.status_code == 200
            if "x-llm-backup" in r.headers:
                assert r.headers["x-llm-model"] == r.headers["x-llm-backup"]
                assert "x-llm-fallback-from" not in r.headers
                backups.append(r.headers["x-llm-backup"])
        # About 10 %, spread over the chain's three fallbacks.
        assert 60 <= len(backups) <= 140, len(backups)
        assert set(backups) == {"llama-3.1-8b", "gpt-4o-mini", "claude-sonnet-4-5"}, set(backups)
        for model in set(backups):
            wait_for(lambda: envoy.metric("llm_fallback_backups", model=model) == backups.count(model), 5,
                     f"backups to {model} counted")
        # A request declared unsafe is never backup traffic.
        unsafe = [session.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                               headers={"content-type": "application/json", "x-llm-retry-safe": "unsafe"})
                  for _ in range(100)]
        assert not any("x-llm-backup" in r.headers for r in unsafe)
        # A broken fallback is seen while the primary is fine: its backup requests fail over to
        # the primary (the client still gets its answer) and its circuit opens.
        mock.script("llama-3.1-8b", default={"status": 529})
        for _ in range(400):
            r = session.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                             headers={"content-type": "application/json"})
            assert r.status_code == 200
            if envoy.status()["models"]["llama-3.1-8b"]["state"] == "cooling_down":
                break
        models = envoy.status()["models"]
        assert models["llama-3.1-8b"]["state"] == "cooling_down"
        assert models["gpt-4o"]["state"] == "healthy"
    finally:
        envoy.stop()


def test_a_model_slower_than_its_baseline_is_switched_away_held_out_and_let_back_when_fast(workdir, mock):
    edit = lambda t: switch_on(  # noqa: E731
        "{general: {latency: {baseline_ms: 200, over: 2, for_ms: 1500, window_ms: 4000, min_samples: 4,"
        " release: 1.5}}}")(t).replace("base_cooldown_ms: 10000", "base_cooldown_ms: 2000", 1)
    envoy = Envoy(workdir, mock.port, edit=edit)
    try:
        def served() -> requests.Response:
            r = ask(envoy, "gpt-4o-mini")
            assert r.status_code == 200
            return r

        mock.script("gpt-4o-mini", default={"delay_ms": 30})
        assert {served().headers["x-llm-model"] for _ in range(8)} == {"gpt-4o-mini"}
        # Slow answers (700 ms, over 2 x 200 ms): switched away once the P95 has stayed above
        # 400 ms for 1.5 s, not at the first slow answer.
        mock.script("gpt-4o-mini", default={"delay_ms": 700})
        first_slow = served()
        assert first_slow.headers["x-llm-model"] == "gpt-4o-mini"
        models = [served().headers["x-llm-model"] for _ in range(6)]
        assert "llama-3.1-8b" in models, models
        assert state(envoy, "gpt-4o-mini") == "cooling_down"
        wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="gpt-4o-mini", condition="latency") == 1,
                 5, "the condition counted")
        assert served().headers["x-llm-fallback-from"] == "gpt-4o-mini"
        latency = envoy.status()["models"]["gpt-4o-mini"]["switch_on"]["latency"]
        assert latency["threshold_ms"] == 400 and latency["release_ms"] == 300
        wait_for(lambda: envoy.metric("llm_fallback_circuit_open", model="gpt-4o-mini") == 1, 5, "gauge")
        assert envoy.metric("llm_fallback_circuit_open", model="gpt-4o") == 0
        # Still slow when its cooldown ends: the probe is slower than the release bound (300 ms),
        # so the model stays out (hysteresis).
        wait_for(lambda: state(envoy, "gpt-4o-mini") != "cooling_down", 10, "cooldown over")
        served()
        wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="gpt-4o-mini", condition="latency") == 2,
                 5, "the slow probe re-opened it")
        assert served().headers["x-llm-model"] == "llama-3.1-8b"
        # Fast again: the next probe closes the circuit and the model is back.
        mock.script("gpt-4o-mini", default={"delay_ms": 30})
        wait_for(lambda: state(envoy, "gpt-4o-mini") != "cooling_down", 15, "second cooldown over")
        served()
        assert served().headers["x-llm-model"] == "gpt-4o-mini"
        assert state(envoy, "gpt-4o-mini") == "healthy"
        wait_for(lambda: envoy.metric("llm_fallback_circuit_open", model="gpt-4o-mini") == 0, 5, "gauge")
        assert envoy.metric("llm_fallback_latency_p95_ms", model="gpt-4o-mini") is not None
    finally:
        envoy.stop()


def test_a_canary_slower_than_its_base_by_the_margin_is_halted(workdir, mock):
    envoy = Envoy(workdir, mock.port, edit=lambda t: switch_on(
        "{flagship: {consecutive_failures: 2, wait_over_ms: 30000}}")(with_canary(t)), concurrency=1)
    try:
        mock.script("gpt-4o", default={"delay_ms": 20})
        mock.script("gpt-5", default={"delay_ms": 600})
        ids = [f"conv-{i}" for i in range(400)]
        on_canary = [c for c in ids if fnv_bucket(c.encode()) < 1000]
        base = [c for c in ids if fnv_bucket(c.encode()) >= 1000]
        session = requests.Session()

        def ask_in(c: str) -> requests.Response:
            return session.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), timeout=30,
                                headers={"content-type": "application/json", "x-conversation-id": c})

        for c in base[:12]:
            assert ask_in(c).status_code == 200
        # The canary answers in 600 ms against the base's 20 ms: once it has its 10 answers,
        # halted (latency_margin 2 by default), though it never failed.
        for c in on_canary[:12]:
            assert ask_in(c).status_code == 200
        wait_for(lambda: envoy.metric("llm_fallback_canary", model="gpt-5", of="gpt-4o", event="halted") == 1,
                 5, "halted on latency")
        assert envoy.status()["canaries"][0]["state"] == "halted"
        assert ask_in(on_canary[0]).headers["x-llm-model"] == "gpt-4o"
    finally:
        envoy.stop()


def answer_with(tokens: int) -> dict:
    """A chat completion whose usage reports `tokens` output tokens."""
    return {"id": "chatcmpl-x", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok " * 10},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": tokens, "total_tokens": 12 + tokens}}


def test_json_answers_judged_per_output_token_are_not_slow_for_being_long(workdir, mock):
    edit = switch_on("{general: {latency: {baseline_ms: 200, over: 2, for_ms: 1000, window_ms: 8000,"
                     " min_samples: 4, release: 1.5, per_token_baseline_ms: 20}}}")
    envoy = Envoy(workdir, mock.port, edit=edit)
    try:
        # 1 000 tokens in 600 ms: 0.6 ms per token. Its whole time (600 ms) is over twice the
        # 200 ms baseline, but per token it is fast: the model stays.
        mock.script("gpt-4o-mini", default={"delay_ms": 600, "body": answer_with(1000)})
        models = [ask(envoy, "gpt-4o-mini").headers["x-llm-model"] for _ in range(7)]
        assert set(models) == {"gpt-4o-mini"}, models
        assert state(envoy, "gpt-4o-mini") == "healthy"
        # 5 tokens in 600 ms: 120 ms per token, three times the 40 ms bound: switched away.
        mock.script("gpt-4o-mini", default={"delay_ms": 600, "body": answer_with(5)})
        for _ in range(8):
            if ask(envoy, "gpt-4o-mini").headers["x-llm-model"] != "gpt-4o-mini":
                break
        assert state(envoy, "gpt-4o-mini") == "cooling_down"
        wait_for(lambda: envoy.metric("llm_fallback_switch_conditions", model="gpt-4o-mini", condition="latency") == 1,
                 5, "the condition counted")
        per_token = envoy.status()["models"]["gpt-4o-mini"]["switch_on"]["latency"]["per_token"]
        assert per_token["threshold_us"] == 40_000
    finally:
        envoy.stop()
