"""What real providers and real clients do, through the real Envoy with the compiled filter.

Two mock providers stand behind the shipped config: provider A (cluster `llm`, account `llm`:
gpt-4o, llama-3.1-8b, gpt-4o-mini) and provider B (cluster `llm_b`, account `llm_b`:
claude-sonnet-4-5, claude-haiku-4-5). They compress JSON answers when asked (as CDN-fronted APIs
do), speak real error bodies (`preset`), and the clients are the official `openai` and
`anthropic` SDKs at their defaults (gzip accepted, their own retries on).
"""

from __future__ import annotations

import gzip
import json
import time

import anthropic
import openai
import pytest
import requests

from harness import chat_body, drained, free_port, next_request_mode, wait_for, native_gap_endings

JSON = {"content-type": "application/json"}


@pytest.fixture
def fresh(two_providers):
    return two_providers


def models_seen(mock) -> list[str]:
    return [r["model"] for r in mock.requests()]


def oai(envoy, **kw) -> openai.OpenAI:
    return openai.OpenAI(base_url=envoy.url + "/v1", api_key="sk-test-a", **kw)


def ask(envoy, model: str, headers: dict | None = None, path: str = "/v1/chat/completions", **body_kw):
    return requests.post(envoy.url + path, data=chat_body(model, **body_kw),
                         headers={**JSON, **(headers or {})}, timeout=30)


def health(envoy, model: str) -> dict:
    return envoy.status()["models"][model]


# --- compressed answers and accounts -------------------------------------------------------

@pytest.mark.parametrize("mode", ["in_request", "next_request"])
@pytest.mark.parametrize("compress", [None, "gzip"], ids=["compressed-when-asked", "compressed-anyway"])
def test_gzipped_account_quota_costs_one_attempt_and_the_sdk_lands_on_another_account(fresh, mock, mock_b, compress, mode):
    """The openai SDK at its defaults (accept-encoding: gzip, 2 retries) meets an account-wide
    `insufficient_quota` from provider A. Exactly one attempt is spent on account A; every model
    of A cools down at once, and provider B serves: inside the same request, or (next-request
    mode, a `cluster_header` route) through the SDK's own retry, which the answer sends there."""
    envoy = fresh(edit=next_request_mode if mode == "next_request" else lambda t: t)
    step = {"preset": "openai_insufficient_quota", **({"compress": compress} if compress else {})}
    mock.script(None, account="*", default=step)

    raw = oai(envoy).chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    completion = raw.parse()

    assert completion.model == "claude-sonnet-4-5"
    assert raw.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert raw.headers["x-llm-fallback-from"] == "gpt-4o"
    assert raw.headers["x-llm-fallback-reason"] == "quota_exhausted"
    # In-request: attempt 2 of the same request; next-request: the SDK's retry, attempt 1.
    assert raw.headers["x-llm-attempts"] == ("2" if mode == "in_request" else "1")
    assert raw.headers["x-llm-provider"] == "llm_b"
    attempts_a = mock.requests()
    assert [r["model"] for r in attempts_a] == ["gpt-4o"], "one attempt on the account, no more"
    assert attempts_a[0]["headers"]["accept-encoding"] == "identity"
    if compress:
        assert attempts_a[0]["response_encoding"] == "gzip"
    assert models_seen(mock_b) == ["claude-sonnet-4-5"]
    status = envoy.status()
    for model in ("gpt-4o", "llama-3.1-8b", "gpt-4o-mini"):
        assert status["models"][model]["state"] == "cooling_down", model
        assert status["models"][model]["last_reason"] == "quota_exhausted"
    assert status["models"]["claude-sonnet-4-5"]["state"] == "healthy"
    assert status["accounts"]["llm"]["state"] == "quota_exhausted"
    wait_for(lambda: envoy.metric("llm_fallback_account_quota_stops", account="llm") == 1, 5, "account counter")

    # The next request does not touch account A at all.
    mock.reset()
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert mock.requests() == []


def test_per_model_quota_cools_that_model_only(fresh, mock, mock_b):
    """Google's per-model quota id stops one model: the request falls back inside Envoy's retry
    loop to a model of the same account, which stays healthy."""
    envoy = fresh()
    mock.script("gpt-4o", default={"preset": "google_per_model_quota", "compress": "gzip"})

    r = ask(envoy, "gpt-4o", headers={"accept-encoding": "gzip"})

    assert r.status_code == 200
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    assert models_seen(mock) == ["gpt-4o", "llama-3.1-8b"]
    assert health(envoy, "gpt-4o")["state"] == "cooling_down"
    assert health(envoy, "llama-3.1-8b")["state"] == "healthy"
    assert health(envoy, "gpt-4o-mini")["state"] == "healthy"


def test_anthropic_sdk_credit_balance_stops_the_account(fresh, mock, mock_b):
    """The anthropic SDK at its defaults: "credit balance is too low" (a 400!) from provider B,
    gzipped. Both Claude models cool down; the SDK's retry is routed to gpt-4o at provider A."""
    envoy = fresh()
    mock_b.script(None, account="*", default={"preset": "anthropic_credit_balance", "compress": "gzip"})
    client = anthropic.Anthropic(base_url=envoy.url, api_key="sk-ant-test")

    raw = client.messages.with_raw_response.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    message = raw.parse()

    assert message.model == "gpt-4o"
    assert raw.headers["x-llm-fallback-from"] == "claude-sonnet-4-5"
    assert models_seen(mock_b) == ["claude-sonnet-4-5"]
    assert models_seen(mock) == ["gpt-4o"]
    assert health(envoy, "claude-haiku-4-5")["state"] == "cooling_down"


def test_compressed_success_counts_its_tokens(fresh, mock, mock_b):
    """A provider that compresses a success anyway: the client gets the very bytes and encoding
    the provider sent, and the usage is counted from the inflated answer."""
    envoy = fresh()
    mock.script("gpt-4o", default={"compress": "gzip"})
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"),
                      headers={**JSON, "accept-encoding": "gzip"}, timeout=10, stream=True)
    raw = r.raw.read(decode_content=False)
    assert r.headers["content-encoding"] == "gzip"
    answer = json.loads(gzip.decompress(raw))
    usage = answer["usage"]
    wait_for(lambda: envoy.metric("llm_fallback_tokens", model="gpt-4o", direction="output") == usage["completion_tokens"], 5, "output tokens")
    assert envoy.metric("llm_fallback_tokens", model="gpt-4o", direction="input") == usage["prompt_tokens"]


# --- attempts that end without an answer ---------------------------------------------------

@native_gap_endings
def test_clients_that_give_up_do_not_cool_the_model(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("gpt-4o", default={"delay_ms": 2000})
    for _ in range(3):
        with pytest.raises(requests.exceptions.ReadTimeout):
            requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o"), headers=JSON, timeout=0.3)
    wait_for(lambda: envoy.metric("llm_fallback_client_cancels", model="gpt-4o") == 3, 10, "cancel counter")
    h = health(envoy, "gpt-4o")
    assert h["state"] == "healthy" and h["consecutive_failures"] == 0
    assert envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": "timeout"}) in (None, 0.0)


@native_gap_endings
def test_a_connect_failure_is_the_providers_overload(fresh, mock, mock_b):
    closed = free_port()
    envoy = fresh(second=closed)
    r = ask(envoy, "claude-haiku-4-5")
    assert r.status_code == 503
    wait_for(lambda: (envoy.metric("llm_fallback_responses", model="claude-haiku-4-5", **{"class": "overloaded"}) or 0) >= 1, 5, "overloaded")
    assert envoy.metric("llm_fallback_responses", model="claude-haiku-4-5", **{"class": "timeout"}) in (None, 0.0)


def test_a_per_try_timeout_is_a_timeout(fresh, mock, mock_b):
    envoy = fresh(edit=lambda t: t.replace("per_try_timeout: 120s", "per_try_timeout: 1s"))
    mock.script("gpt-4o", steps=[{"delay_ms": 1500}])
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-attempts"] == "2"
    wait_for(lambda: envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": "timeout"}) == 1, 5, "timeout")
    assert health(envoy, "gpt-4o")["consecutive_failures"] in (0, 1)


def test_a_reset_in_the_middle_of_a_200_counts_against_the_model_and_is_not_retried(fresh, mock, mock_b):
    envoy = fresh()
    mock_b.script("claude-haiku-4-5", steps=[{"reset": "mid_body", "reset_after_chunks": 3}])
    client = anthropic.Anthropic(base_url=envoy.url, api_key="sk-ant-test", max_retries=0)
    with pytest.raises(Exception):
        with client.messages.stream(model="claude-haiku-4-5", max_tokens=64,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            for _ in stream.text_stream:
                pass
    assert models_seen(mock_b) == ["claude-haiku-4-5"], "never re-sent once bytes reached the client"
    wait_for(lambda: envoy.metric("llm_fallback_answers_cut", model="claude-haiku-4-5") == 1, 5, "cut counter")
    assert health(envoy, "claude-haiku-4-5")["consecutive_failures"] == 1
    # message_start carried the input tokens: counted as far as seen.
    assert (envoy.metric("llm_fallback_tokens", model="claude-haiku-4-5", direction="input") or 0) > 0


# --- the start of a 200 stream ------------------------------------------------------------

def test_an_error_as_the_first_stream_event_falls_back_before_the_client_sees_it(fresh, mock, mock_b):
    """OpenAI SDK, streaming: the provider answers 200 and an overload error as the first
    event. The filter holds the stream's start, judges the error like a 529, and Envoy retries:
    the client reads one clean stream."""
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"stream_error": {"after": 0, "preset": "anthropic_overloaded"}},
                                 {"stream_error": {"after": 0, "preset": "anthropic_overloaded"}}])
    raw = oai(envoy).chat.completions.with_raw_response.create(
        model="gpt-4o", stream=True, messages=[{"role": "user", "content": "hi"}])
    text = "".join(chunk.choices[0].delta.content or "" for chunk in raw.parse() if chunk.choices)
    assert text == "Hello from llama-3.1-8b"
    assert raw.headers["x-llm-model"] == "llama-3.1-8b"
    assert raw.headers["x-llm-fallback-reason"] == "overloaded"
    assert models_seen(mock) == ["gpt-4o", "gpt-4o", "llama-3.1-8b"]
    wait_for(lambda: envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": "overloaded"}) == 2, 5, "judged as answers")


# Baidu Qianfan's daily limit as an error envelope inside a 200.
QIANFAN_DAILY = json.dumps({"error_code": 17, "error_msg": "Open api daily request limit reached"})
# A relay's balance stop written as a chat completion that no model wrote: no id, no tokens.
RELAY_COMPLETION = json.dumps({
    "id": "", "object": "chat.completion", "created": 0, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "您的余额不足，请充值后再试"},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
# A relay's doubled envelope: the upstream's error object inside its own, nothing else (read as
# a bare 200 error, an overload, without the inner object).
DOUBLED = json.dumps({"error": {"error": {"message": "Daily request limit reached for model gpt-4o (500 requests per day). Resets at 00:00 UTC.", "code": 429}}, "data": None})
# A completion a model did write, stopped because the context window filled (Mistral's
# `model_length`): a failed stop, judged like a context overflow at 400.
WINDOW_FULL = json.dumps({
    "id": "cmpl-7f3c", "object": "chat.completion", "created": 1764892800, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "The quarterly figures show"},
                 "finish_reason": "model_length"}],
    "usage": {"prompt_tokens": 127990, "completion_tokens": 10, "total_tokens": 128000}})


@pytest.mark.parametrize("body, compress, reason", [(QIANFAN_DAILY, None, "quota_exhausted"),
                                                    (QIANFAN_DAILY, "gzip", "quota_exhausted"),
                                                    (RELAY_COMPLETION, None, "quota_exhausted"),
                                                    (DOUBLED, None, "quota_exhausted"),
                                                    (WINDOW_FULL, None, "context_overflow")],
                         ids=["plain", "compressed-anyway", "completion-no-model-wrote", "doubled-envelope",
                              "stopped-at-the-window"])
def test_an_error_inside_a_200_json_answer_falls_back_before_the_client_sees_it(fresh, mock, mock_b, body, compress, reason):
    """Relays and some providers answer 200 with the error inside (Baidu Qianfan's daily limit
    as `{"error_code": 17, ...}`, or a relay's "balance too low" as a completion with no id and
    no tokens). The openai SDK at its defaults would parse that as a completion. The filter
    holds a short 200 JSON answer's headers until its body ends, judges the error like the same
    error at 429, and Envoy falls back: the client reads a real completion. A completion that
    stopped because the window filled (`model_length`) is judged like a context overflow at 400:
    only a model with a larger window is asked."""
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 200, "body": body, **({"compress": compress} if compress else {})}])
    raw = oai(envoy).chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    completion = raw.parse()
    assert raw.headers["x-llm-fallback-from"] == "gpt-4o"
    assert raw.headers["x-llm-fallback-reason"] == reason
    served = raw.headers["x-llm-model"]
    assert served != "gpt-4o" and completion.choices[0].message.content == f"Hello from {served}"
    if reason == "context_overflow":
        assert served == "claude-sonnet-4-5", "only a larger window is worth asking"
    assert models_seen(mock)[0] == "gpt-4o" and len(models_seen(mock) + models_seen(mock_b)) == 2
    wait_for(lambda: envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": reason}) == 1, 5, "judged as an answer")
    wait_for(lambda: envoy.metric("llm_fallback_responses", model=served, **{"class": "ok"}) == 1, 5, "the fallback's success")
    assert (envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": "ok"}) or 0) == 0

    # A real answer, short (read whole) or long (let go unread past 4 KiB), is a success:
    # nothing added, its tokens counted (on a model the quota stop left alone).
    mock.reset()
    tokens_before = envoy.metric("llm_fallback_tokens", model="llama-3.1-8b", direction="output") or 0
    ok_before = envoy.metric("llm_fallback_responses", model="llama-3.1-8b", **{"class": "ok"}) or 0
    long = json.dumps({"id": "chatcmpl-long", "object": "chat.completion", "created": 1733000000, "model": "llama-3.1-8b",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": "rate limit " * 600}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 9, "completion_tokens": 1200, "total_tokens": 1209}})
    mock.script("llama-3.1-8b", steps=[{}, {"status": 200, "body": long}])
    for _ in range(2):
        r = ask(envoy, "llama-3.1-8b")
        assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
        assert "x-llm-error-class" not in r.headers and r.json()["choices"]
    assert r.text == long
    wait_for(lambda: envoy.metric("llm_fallback_responses", model="llama-3.1-8b", **{"class": "ok"}) == ok_before + 2, 5, "successes")
    wait_for(lambda: (envoy.metric("llm_fallback_tokens", model="llama-3.1-8b", direction="output") or 0) > tokens_before + 1200, 5, "tokens of both")


# 200 answers judged whole that no other model would mend. Gemini's stop when the model wrote a
# tool call the request's tools do not allow (the request's fault: every model would fail it);
# a completion whose server adds an error object of zero code and no text (a success).
GEMINI_BAD_TOOL_CALL = json.dumps({
    "candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}],
    "usageMetadata": {"promptTokenCount": 412, "totalTokenCount": 412}, "modelVersion": "gemini-2.5-flash"})
EMPTY_ERROR = json.dumps({
    "id": "0f9c", "object": "chat.completion", "created": 1764892800, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10}, "error": {"code": 0, "message": ""}})


# A music task refused for its words, its status naming what failed (a Suno relay's
# `SENSITIVE_WORD_ERROR`): a refusal, which no other model mends.
TASK_REFUSED = json.dumps({"code": 200, "msg": "success", "data": {
    "taskId": "e02b6d91f4a34c7d", "status": "SENSITIVE_WORD_ERROR", "errorCode": 400,
    "errorMessage": "Song description contains sensitive words."}})


@pytest.mark.parametrize("body, klass", [(GEMINI_BAD_TOOL_CALL, "bad_request"), (EMPTY_ERROR, "ok"),
                                         (TASK_REFUSED, "content_policy")],
                         ids=["gemini-malformed-function-call", "empty-error-object", "task-status-names-failure"])
def test_a_200_no_other_model_would_mend_reaches_the_client_as_it_came(fresh, mock, body, klass):
    """Read whole like the answers above, judged, and let go: one attempt, the body untouched;
    a failed stop tells the client its class, a success carries nothing."""
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 200, "body": body}])
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.text == body
    assert r.headers.get("x-llm-error-class", "ok") == klass, r.headers.get("x-llm-error-reason")
    assert "x-llm-fallback-from" not in r.headers and models_seen(mock) == ["gpt-4o"]
    wait_for(lambda: envoy.metric("llm_fallback_responses", model="gpt-4o", **{"class": klass}) == 1, 5, "judged as an answer")


def test_an_error_after_content_is_counted_and_never_retried(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"chunks": 4, "stream_error": {"after": 2, "preset": "anthropic_overloaded"}}])
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o", stream=True), headers=JSON, timeout=10)
    assert r.status_code == 200 and '"error"' in r.text
    assert models_seen(mock) == ["gpt-4o"]
    wait_for(lambda: envoy.metric("llm_fallback_stream_errors", model="gpt-4o", **{"class": "overloaded"}) == 1, 5, "stream error")
    assert health(envoy, "gpt-4o")["consecutive_failures"] == 1


# Errors that follow content in streams a relay re-writes: Bedrock's ConverseStream exception as
# a named SSE event (its payload only a message), and the Vercel AI SDK's UI stream error part.
CHUNK = 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
BEDROCK_THROTTLED = 'event: throttlingException\ndata: {"message":"Too many tokens, please wait before trying again."}\n\n'
AI_SDK_NO_CREDIT = 'data: {"type":"error","errorText":"Your credit balance is too low to access the Anthropic API."}\n\n'


@pytest.mark.parametrize("error_event, klass", [(BEDROCK_THROTTLED, "rate_limited"), (AI_SDK_NO_CREDIT, "quota_exhausted")],
                         ids=["bedrock-exception-event", "ai-sdk-error-text"])
def test_an_error_after_content_is_counted_by_what_it_says(fresh, mock, mock_b, error_event, klass):
    """Content first, then the error: the client has the bytes, so nothing is retried; the error
    is counted by its class (the exception's name or the errorText's words), not as an unknown."""
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"sse": [CHUNK, CHUNK, error_event]}])
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o", stream=True), headers=JSON, timeout=10)
    assert r.status_code == 200 and r.text.endswith(error_event)
    assert models_seen(mock) == ["gpt-4o"]
    wait_for(lambda: envoy.metric("llm_fallback_stream_errors", model="gpt-4o", **{"class": klass}) == 1, 5, "stream error by class")


def test_a_slow_first_token_is_held_only_briefly(fresh, mock, mock_b):
    envoy = fresh(edit=lambda t: t.replace("max_wait_ms: 30000", "max_wait_ms: 30000\n                      stream_start: {max_hold_ms: 500}"))
    mock.script("gpt-4o", default={"ttft_ms": 2500})
    start = time.monotonic()
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o", stream=True), headers=JSON, timeout=10, stream=True)
    headers_after = time.monotonic() - start
    body = r.content.decode()
    assert r.status_code == 200 and "[DONE]" in body
    assert 0.4 <= headers_after < 1.5, f"headers after {headers_after:.2f} s"
    assert time.monotonic() - start >= 2.4


# --- circuits, exhausted chains, waits ----------------------------------------------------

def test_the_error_rate_circuit_opens(fresh, mock, mock_b):
    """failure_threshold out of reach; a 50 % overload rate over min_requests opens the circuit.
    Unsafe requests are not re-sent on a 503, so each request is exactly one answer."""
    envoy = fresh(concurrency=1, edit=lambda t: t.replace("failure_threshold: 2", "failure_threshold: 100\n                      error_rate_threshold: 0.3\n                      min_requests: 6"))
    mock.script("gpt-4o", steps=[{"status": 503}, {}] * 3)
    unsafe = {"x-llm-retry-safe": "unsafe"}
    for _ in range(6):
        ask(envoy, "gpt-4o", headers=unsafe)
    h = health(envoy, "gpt-4o")
    assert h["state"] == "cooling_down", h
    r = ask(envoy, "gpt-4o")
    assert r.headers["x-llm-model"] == "llama-3.1-8b"


def test_a_chain_out_of_quota_is_answered_without_calling_anyone(fresh, mock, mock_b):
    envoy = fresh()
    mock.script(None, account="*", default={"preset": "openai_insufficient_quota"})
    mock_b.script(None, account="*", default={"preset": "anthropic_credit_balance"})
    # Both accounts answer their quota stop inside one request: one attempt each.
    first = ask(envoy, "gpt-4o")
    assert first.status_code == 400 and first.headers["x-llm-error-class"] == "quota_exhausted"
    assert first.headers["x-should-retry"] == "false" and first.headers["x-llm-provider"] == "llm_b"
    assert models_seen(mock) == ["gpt-4o"] and models_seen(mock_b) == ["claude-sonnet-4-5"]
    before_a, before_b = len(mock.requests()), len(mock_b.requests())

    third = ask(envoy, "gpt-4o")

    assert (len(mock.requests()), len(mock_b.requests())) == (before_a, before_b)
    assert third.status_code == 429
    assert third.headers["x-llm-error-class"] == "quota_exhausted"
    # The filter's own answer is not judged again on its way out.
    assert third.headers["x-llm-error-reason"] == "every model of the chain is unavailable"
    assert "x-llm-retry-after-ms" not in third.headers
    assert third.headers["x-should-retry"] == "false"
    assert 3000 <= int(third.headers["retry-after"]) <= 3600
    assert third.json()["error"]["code"] == "all_models_unavailable"
    # The SDK obeys: one call, no retries.
    with pytest.raises(openai.RateLimitError):
        oai(envoy).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert (len(mock.requests()), len(mock_b.requests())) == (before_a, before_b)


def test_stated_waits_are_capped_and_nonsense_is_ignored(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "200000"},
                                  "body": {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}}])
    r = ask(envoy, "gpt-4o")
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    remaining = health(envoy, "gpt-4o")["cooldown_remaining_ms"]
    assert 86_000_000 < remaining <= 86_400_000, remaining
    wait_for(lambda: envoy.metric("llm_fallback_wait_hints", outcome="capped") == 1, 5, "capped")

    mock.reset()
    mock.script("gpt-4o-mini", steps=[{"status": 429, "headers": {"retry-after": "1000000000000"},
                                       "body": {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}}])
    r = ask(envoy, "gpt-4o-mini")
    assert r.status_code == 200
    assert health(envoy, "gpt-4o-mini")["cooldown_remaining_ms"] < 60_000
    wait_for(lambda: envoy.metric("llm_fallback_wait_hints", outcome="ignored") == 1, 5, "ignored")


def test_a_long_error_body_and_a_cut_one_keep_their_code(fresh, mock, mock_b):
    # No fallback for the account's quota stop: the client gets the upstream's answer.
    envoy = fresh(edit=drained("claude-sonnet-4-5"))
    long_body = '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota","param":"' + "x" * (1 << 20) + '"}}'
    mock.script("gpt-4o", steps=[{"status": 429, "body": long_body}])
    r = ask(envoy, "gpt-4o")
    assert r.headers["x-llm-error-class"] == "quota_exhausted", r.headers
    assert len(r.content) == len(long_body), "the body reaches the client whole"

    envoy2 = fresh(edit=drained("claude-sonnet-4-5"))
    mock.reset()
    mock.script("gpt-4o", steps=[{"status": 429, "body": '{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You excee'}])
    r = ask(envoy2, "gpt-4o")
    assert r.headers["x-llm-error-class"] == "quota_exhausted"


def test_a_wrong_path_does_not_take_the_model_out(fresh, mock, mock_b):
    envoy = fresh()
    body = {"error": {"message": "Invalid URL (POST /v1/chat/completion)", "type": "invalid_request_error", "param": None, "code": None}}
    mock.script("gpt-4o", default={"status": 404, "body": body})
    r = ask(envoy, "gpt-4o", path="/v1/chat/completion")
    assert r.status_code == 404
    assert r.headers["x-llm-error-class"] == "bad_request"
    assert health(envoy, "gpt-4o")["state"] == "healthy"
    assert models_seen(mock) == ["gpt-4o"]
