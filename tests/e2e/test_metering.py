"""Usage accounting through a real Envoy: tokens and cost per key, task and model exactly as the
answers' `usage` reported them (JSON and streams, the official SDKs at their defaults, cached
prompt tokens at their own price), budgets that refuse the request that would cross them (and a
shadow budget that refuses nothing), a temporary budget that ends, latency histograms that carry
the mock's scripted delays, and a label set that stays the same under 10 000 distinct keys."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import time
from concurrent.futures import ThreadPoolExecutor

import anthropic
import openai
import pytest
import requests

from harness import Envoy, both, chat_body, wait_for, with_plugin_setting

# The shipped price table (USD per million tokens): input, output, cached input.
ACCOUNTS = {"gpt-4o": "llm", "gpt-4o-mini": "llm", "claude-sonnet-4-5": "llm_b"}
PRICES = {
    "gpt-4o": (2.5, 10.0, 1.25),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
    "claude-sonnet-4-5": (3.0, 15.0, 0.3),
}
CRITICAL_KEY = "Bearer demo-critical-key"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def nanos(model: str, prompt: int, cached: int, completion: int) -> int:
    """The filter's cost of one answer in nano-USD (same arithmetic, rounded once)."""
    p_in, p_out, p_cached = PRICES[model]
    cached = min(cached, prompt)
    value = (prompt - cached) * (p_in * 1000.0) + cached * (p_cached * 1000.0) + completion * (p_out * 1000.0)
    return math.floor(value + 0.5)


def metering(block: str):
    """An `edit` replacing the shipped `metering:` block with `metering: {block}`."""
    def edit(text: str) -> str:
        m = re.search(r"^ {20}metering:\n(?: {22,}.*\n)+", text, flags=re.M)
        if not m:
            raise ValueError("the shipped config has no metering block")
        return text[:m.start()] + f"                    metering: {block}\n" + text[m.end():]
    return edit


def post(envoy, body: bytes, key: str | None = "Bearer sk-test", **headers):
    h = {"content-type": "application/json", **headers}
    if key:
        h["authorization"] = key
    return requests.post(envoy.url + "/v1/chat/completions", data=body, headers=h, timeout=30)


def budget(envoy, name: str) -> dict:
    return next(b for b in envoy.status()["budgets"] if b["name"] == name)


def bucket(envoy, name: str, le: str, **labels) -> float:
    return envoy.metric(name + "_bucket", **labels, le=le) or 0


@pytest.fixture
def fresh(workdir, mock):
    envoys = []

    def start(*edits):
        e = Envoy(workdir, mock.port, edit=both(with_plugin_setting("trust: {task: true}"), *edits))
        envoys.append(e)
        return e

    yield start
    for e in envoys:
        e.stop()


def test_tokens_and_cost_per_key_task_and_model_are_what_the_answers_reported(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o-mini", default={"cached_tokens": 6})
    mock.script("claude-sonnet-4-5", default={"cached_tokens": 4})
    want_cost: dict[tuple[str, str, str], int] = {}
    want_tokens: dict[tuple[str, str], int] = {}

    def expect(model, task, key, prompt, cached, completion):
        want_cost[(model, task, key)] = want_cost.get((model, task, key), 0) + nanos(model, prompt, cached, completion)
        want_tokens[(key, "input")] = want_tokens.get((key, "input"), 0) + prompt
        want_tokens[(key, "output")] = want_tokens.get((key, "output"), 0) + completion

    # A labelled key, task `quick`, a JSON answer with cached prompt tokens.
    plain = post(envoy, chat_body("gpt-4o-mini"), key=CRITICAL_KEY, **{"x-llm-task": "quick"})
    assert plain.status_code == 200
    u = plain.json()["usage"]
    expect("gpt-4o-mini", "quick", "demo-critical", u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"], u["completion_tokens"])
    # The same key and task streaming, through the openai SDK at its defaults.
    client = openai.OpenAI(base_url=envoy.url + "/v1", api_key="demo-critical-key",
                           default_headers={"x-llm-task": "quick"})
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                            stream=True, stream_options={"include_usage": True})
    usage = [c.usage for c in stream if c.usage][-1]
    expect("gpt-4o-mini", "quick", "demo-critical", usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens,
           usage.completion_tokens)
    # Another key, no task, gpt-4o.
    other = post(envoy, chat_body("gpt-4o", filler=300), key="Bearer sk-somebody-else")
    u = other.json()["usage"]
    expect("gpt-4o", "none", "other", u["prompt_tokens"], 0, u["completion_tokens"])
    # Anthropic's SDK (x-api-key): cache reads are counted beside input_tokens and priced apart.
    claude = anthropic.Anthropic(base_url=envoy.url, api_key="sk-ant-someone")
    message = claude.messages.create(model="claude-sonnet-4-5", max_tokens=64,
                                     messages=[{"role": "user", "content": "hi"}])
    mu = message.usage
    assert mu.cache_read_input_tokens == 4
    expect("claude-sonnet-4-5", "none", "other", mu.input_tokens + mu.cache_read_input_tokens,
           mu.cache_read_input_tokens, mu.output_tokens)
    # And a request without any credential.
    bare = post(envoy, chat_body("gpt-4o"), key=None)
    u = bare.json()["usage"]
    expect("gpt-4o", "none", "none", u["prompt_tokens"], 0, u["completion_tokens"])

    for (model, task, key), value in want_cost.items():
        labels = {"model": model, "task": task, "key": key, "account": ACCOUNTS[model]}
        wait_for(lambda: envoy.metric("llm_fallback_cost_nanousd", **labels) == value,
                 5, f"cost of {labels} = {value}: {envoy.metric('llm_fallback_cost_nanousd', **labels)}")
    for (key, direction), value in want_tokens.items():
        assert envoy.metric("llm_fallback_key_tokens", key=key, direction=direction) == value, (key, direction)
    # Nothing was charged anywhere else.
    total = sum(float(line.rsplit(" ", 1)[1]) for line in envoy.prometheus().splitlines()
                if line.startswith("llm_fallback_cost_nanousd{"))
    assert total == sum(want_cost.values())
    # The OpenTelemetry GenAI token histogram carries the same numbers (histograms reach the
    # admin output at Envoy's stats flush, every 5 s).
    # Envoy's histogram sums are approximate (log-linear buckets): within 5 %.
    want_out = want_tokens[("demo-critical", "output")]
    wait_for(lambda: abs((envoy.metric("gen_ai_client_token_usage_sum", gen_ai_request_model="gpt-4o-mini",
                                       gen_ai_provider_name="openai", gen_ai_token_type="output") or 0)
                         - want_out) <= 0.05 * want_out, 12, "gen_ai token histogram")
    assert envoy.metric("gen_ai_client_token_usage_count", gen_ai_request_model="claude-sonnet-4-5",
                        gen_ai_provider_name="anthropic", gen_ai_token_type="input") == 1


def test_a_budget_refuses_the_request_that_would_cross_it_and_a_shadow_budget_refuses_none(fresh, mock):
    body = json.dumps({"model": "gpt-4o", "max_tokens": 40,
                       "messages": [{"role": "user", "content": "Hello " + "x" * 200}]}).encode()
    estimate = math.ceil(len(body) / 4) * 2500 + 40 * 10000
    # The mock's usage: prompt = body bytes / 4, completion = its 3 pieces.
    actual = (len(body) // 4) * 2500 + 3 * 10000
    cap = 3 * actual + estimate - 1  # room for exactly three requests
    usd = cap / 1e9
    envoy = fresh(metering(
        f"{{keys: [{{sha256: {sha('Bearer team-a')}, label: team-a}}, {{sha256: {sha('Bearer team-b')}, label: team-b}}],"
        f" prices: {{gpt-4o: {{input: 2.5, output: 10}}}},"
        f" budgets: [{{name: team-a-daily, key: team-a, usd: {usd!r}, window: day}},"
        f" {{name: team-b-daily, key: team-b, usd: {usd!r}, window: day, shadow: true}}]}}"))
    assert budget(envoy, "team-a-daily")["limit"] == cap
    for k in range(3):
        answer = post(envoy, body, key="Bearer team-a")
        assert answer.status_code == 200, answer.text
        assert "x-llm-budget" not in answer.headers
        wait_for(lambda: budget(envoy, "team-a-daily")["spent"] == (k + 1) * actual, 5, "settled")
    seen = len(mock.requests())
    refused = post(envoy, body, key="Bearer team-a")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["type"] == "budget_exceeded" and error["budget"] == "team-a-daily"
    assert refused.headers["x-should-retry"] == "false"
    assert refused.headers["x-llm-budget"] == "refused team-a-daily"
    now = dt.datetime.now(dt.timezone.utc)
    midnight = (now + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    assert error["resets_at"] == midnight.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert abs(int(refused.headers["retry-after"]) - (midnight - now).total_seconds()) < 5
    assert len(mock.requests()) == seen, "a refused request never reaches the provider"
    # The openai SDK at its defaults takes the answer as final: one try, nothing re-sent.
    client = openai.OpenAI(base_url=envoy.url + "/v1", api_key="team-a")
    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model="gpt-4o", max_tokens=40,
                                       messages=[{"role": "user", "content": "Hello " + "x" * 400}])
    assert raised.value.body["type"] == "budget_exceeded"
    assert len(mock.requests()) == seen
    wait_for(lambda: envoy.metric("llm_fallback_budget", budget="team-a-daily", event="refused") == 2, 5,
             "refusals counted")
    assert budget(envoy, "team-a-daily")["reserved"] == 0
    # A smaller request still fits what is left.
    small = json.dumps({"model": "gpt-4o", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert post(envoy, small, key="Bearer team-a").status_code == 200

    # The shadow budget: the same traffic is all served, and the ones past the cap say so.
    # Each worker keeps its shadow changes and folds them in on its timer (once a second), so
    # the record lags, and a worker sees another's changes at its next tick.
    answers = []
    for k in range(5):
        answers.append(post(envoy, body, key="Bearer team-b"))
        wait_for(lambda: budget(envoy, "team-b-daily")["spent"] == (k + 1) * actual, 5, "settled")
        time.sleep(1.1)
    assert [a.status_code for a in answers] == [200] * 5
    assert [a.headers.get("x-llm-budget") for a in answers] == [None] * 3 + ["shadow-over team-b-daily"] * 2
    wait_for(lambda: envoy.metric("llm_fallback_budget", budget="team-b-daily", event="shadow_refused") == 2, 5,
             "shadow refusals counted")
    doc = budget(envoy, "team-b-daily")
    assert doc["state"] == "shadow" and doc["spent"] + estimate > doc["limit"]
    # Gauges for the burn alert.
    wait_for(lambda: envoy.metric("llm_fallback_budget_spent", budget="team-b-daily") == 5 * actual, 5, "gauge")
    assert envoy.metric("llm_fallback_budget_limit", budget="team-b-daily") == cap


def test_a_temporary_budget_ends_at_its_time(fresh, mock):
    until = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=6)
    stamp = until.strftime("%Y-%m-%dT%H:%M:%SZ")
    envoy = fresh(metering(
        f'{{budgets: [{{name: launch, tokens: 1, window: month, until: "{stamp}"}}]}}'))
    refused = post(envoy, chat_body("gpt-4o"))
    assert refused.status_code == 429
    assert refused.json()["error"]["resets_at"] == stamp, "told to come back when the budget ends"
    assert 1 <= int(refused.headers["retry-after"]) <= 6
    assert budget(envoy, "launch")["state"] == "enforced"
    wait_for(lambda: dt.datetime.now(dt.timezone.utc) >= until, 10, "the budget's end")
    assert post(envoy, chat_body("gpt-4o")).status_code == 200
    assert budget(envoy, "launch")["state"] == "expired"
    wait_for(lambda: envoy.metric("llm_fallback_budget_limit", budget="launch") == 0, 5, "gauge cleared")


def test_latency_histograms_carry_the_scripted_delays(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"delay_ms": 1500})
    mock.script("gpt-4o-mini", default={"ttft_ms": 600, "chunk_delay_ms": 60, "chunks": 6})
    assert post(envoy, chat_body("gpt-4o")).status_code == 200
    body = json.dumps({"model": "gpt-4o-mini", "stream": True, "stream_options": {"include_usage": True},
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    streamed = post(envoy, body)
    assert streamed.status_code == 200
    labels = {"model": "gpt-4o", "provider": "openai"}
    wait_for(lambda: bucket(envoy, "llm_fallback_request_duration_ms", "+Inf", **labels) == 1, 12, "duration")
    assert bucket(envoy, "llm_fallback_request_duration_ms", "1280", **labels) == 0
    assert bucket(envoy, "llm_fallback_request_duration_ms", "2560", **labels) == 1
    mini = {"model": "gpt-4o-mini", "provider": "openai"}
    wait_for(lambda: bucket(envoy, "llm_fallback_ttft_ms", "+Inf", **mini) == 1, 12, "ttft")
    assert bucket(envoy, "llm_fallback_ttft_ms", "500", **mini) == 0
    assert bucket(envoy, "llm_fallback_ttft_ms", "1000", **mini) == 1
    # 60 ms between chunks: per output token somewhere between 40 and 200 ms.
    assert bucket(envoy, "llm_fallback_tpot_us", "25000", **mini) == 0
    assert bucket(envoy, "llm_fallback_tpot_us", "200000", **mini) == 1
    # The stream's whole duration covers its first token and its chunks.
    assert bucket(envoy, "llm_fallback_request_duration_ms", "640", **mini) == 0
    # A JSON answer has no time to first token.
    assert bucket(envoy, "llm_fallback_ttft_ms", "+Inf", **labels) == 0


def series(envoy) -> set[str]:
    """Every llm-fallback and GenAI series (name and labels, no value)."""
    return {line.rsplit(" ", 1)[0] for line in envoy.prometheus().splitlines()
            if line.startswith(("llm_fallback_", "gen_ai_"))}


def test_the_label_set_stays_the_same_under_ten_thousand_distinct_keys(fresh, mock):
    envoy = fresh()
    body = chat_body("gpt-4o")

    def run(keys):
        session = requests.Session()
        codes = []
        for key in keys:
            r = session.post(envoy.url + "/v1/chat/completions", data=body,
                             headers={"content-type": "application/json", "authorization": f"Bearer sk-{key}"},
                             timeout=30)
            codes.append(r.status_code)
        return codes

    run([f"warm-{i}" for i in range(20)])
    wait_for(lambda: (envoy.metric("llm_fallback_key_tokens", key="other", direction="input") or 0) > 0, 5, "flushed")
    before = series(envoy)
    keys = [f"user-{i}" for i in range(10_000)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = [c for chunk in pool.map(run, [keys[i::16] for i in range(16)]) for c in chunk]
    elapsed = time.monotonic() - started
    assert codes.count(200) == 10_000, {c: codes.count(c) for c in set(codes)}
    wait_for(lambda: envoy.metric("llm_fallback_requests", model="gpt-4o") == 10_020, 10, "all counted")
    after = series(envoy)
    assert after == before, sorted(after ^ before)[:10]
    key_values = {m for s in after for m in re.findall(r'\bkey="([^"]*)"', s)}
    assert key_values <= {"demo-critical", "other", "none"}, key_values
    assert elapsed < 120


def test_streams_settle_budgets_from_their_usage_or_else_their_estimate(fresh, mock):
    envoy = fresh(metering(
        f"{{keys: [{{sha256: {sha('Bearer team-s')}, label: team-s}}],"
        " budgets: [{name: streams, key: team-s, tokens: 10000000, window: day}]}"))
    spent = lambda: budget(envoy, "streams")["spent"]  # noqa: E731

    def stream(body: dict) -> list[dict]:
        r = post(envoy, json.dumps(body).encode(), key="Bearer team-s")
        assert r.status_code == 200
        return [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]

    # With include_usage: the last chunk's usage.
    events = stream({"model": "gpt-4o", "stream": True, "stream_options": {"include_usage": True},
                     "max_tokens": 500, "messages": [{"role": "user", "content": "hi"}]})
    usage = events[-1]["usage"]
    wait_for(lambda: spent() == usage["prompt_tokens"] + usage["completion_tokens"], 5, "settled from usage")
    # Without it (the OpenAI default) the answer reports nothing: it is charged its estimate.
    before = spent()
    body = {"model": "gpt-4o", "stream": True, "max_tokens": 500, "messages": [{"role": "user", "content": "hi"}]}
    assert not any("usage" in e and e["usage"] for e in stream(body))
    estimate = math.ceil(len(json.dumps(body).encode()) / 4) + 500
    wait_for(lambda: spent() == before + estimate, 5, "charged its estimate")
    # Anthropic's SDK streaming: message_start's input and message_delta's output.
    before = spent()
    claude = anthropic.Anthropic(base_url=envoy.url, api_key="unused", default_headers={"authorization": "Bearer team-s"})
    with claude.messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                messages=[{"role": "user", "content": "hi"}]) as s:
        final = s.get_final_message()
    want = final.usage.input_tokens + final.usage.output_tokens
    wait_for(lambda: spent() == before + want, 5, f"settled from the Anthropic stream ({want})")
    assert budget(envoy, "streams")["reserved"] == 0
