"""Requests that may act are never re-sent unless the answer proves they were rejected.

Each test runs its own Envoy with a short per-try timeout; the mock records every attempt."""

from __future__ import annotations

import json
import threading
import time

import openai
import pytest
import requests

from harness import Envoy, chat_body, free_port, wait_for

JSON = {"content-type": "application/json"}
OVERLOADED = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
UNSAFE_PATH = "/v1/threads/thread_abc/runs"
SAFE_PATH = "/v1/chat/completions"


@pytest.fixture
def fresh(workdir, mock):
    envoys = []

    def start(upstream=None):
        e = Envoy(workdir, upstream or mock.port, edit=lambda t: t.replace("per_try_timeout: 120s", "per_try_timeout: 0.7s"))
        envoys.append(e)
        return e

    yield start
    for e in envoys:
        e.stop()


def send(envoy, path: str, model: str = "gpt-4o", headers: dict | None = None) -> requests.Response:
    body = chat_body(model) if path == SAFE_PATH else json.dumps({"assistant_id": "asst_1", "model": model}).encode()
    return requests.post(envoy.url + path, data=body, headers={**JSON, **(headers or {})}, timeout=30)


def attempts(mock) -> list[str]:
    return [r["model"] for r in mock.requests()]


@pytest.mark.parametrize("fault", [
    {"delay_ms": 3000},                       # per-try timeout
    {"status": 500, "reset": "after_headers"},  # reset after the upstream started answering
    {"reset": "before_headers"},              # reset after the request was sent
    {"status": 500},                          # a 5xx that proves nothing
], ids=["per-try-timeout", "reset-after-headers", "reset-before-headers", "500"])
def test_an_unsafe_request_reaches_the_upstream_exactly_once(fresh, mock, fault):
    envoy = fresh()
    mock.script("gpt-4o", default=fault)
    r = send(envoy, UNSAFE_PATH)
    assert r.status_code >= 500
    assert r.headers["x-should-retry"] == "false"
    assert r.headers["x-llm-retry-blocked"] == "non-idempotent"
    time.sleep(0.3)
    assert attempts(mock) == ["gpt-4o"], "an action that may have happened is never re-sent"
    wait_for(lambda: envoy.metric("llm_fallback_retries_blocked", model="gpt-4o") == 1, 5, "blocked counter")
    assert envoy.metric("llm_fallback_unsafe_requests", model="gpt-4o") == 1


@pytest.mark.parametrize("fault", [
    {"delay_ms": 3000},
    {"reset": "before_headers"},
    {"status": 500},
], ids=["per-try-timeout", "reset-before-headers", "500"])
def test_a_safe_request_meeting_the_same_faults_is_retried_and_falls_back(fresh, mock, fault):
    envoy = fresh()
    mock.script("gpt-4o", default=fault)
    r = send(envoy, SAFE_PATH)
    assert r.status_code == 200
    assert r.headers["x-llm-model"] == "llama-3.1-8b"
    assert attempts(mock) == ["gpt-4o", "gpt-4o", "llama-3.1-8b"]


def test_an_explicit_529_rejection_of_an_unsafe_request_is_retried_and_falls_back(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 529, "body": OVERLOADED})
    mock.script("llama-3.1-8b", default={"status": 200, "body": json.dumps({"id": "run_1", "object": "thread.run"})})
    r = send(envoy, UNSAFE_PATH)
    assert r.status_code == 200
    assert "x-llm-retry-blocked" not in r.headers
    assert attempts(mock) == ["gpt-4o", "gpt-4o", "llama-3.1-8b"]


def test_an_unsafe_request_is_retried_when_the_connection_failed_before_sending(fresh):
    envoy = fresh(upstream=free_port())  # nothing listens: every attempt fails to connect
    r = send(envoy, UNSAFE_PATH)
    assert r.status_code == 503
    retries = lambda: sum(int(line.split()[-1]) for line in envoy.prometheus().splitlines()
                          if line.startswith("envoy_cluster_upstream_rq_retry{") and 'envoy_cluster_name="llm"' in line)
    wait_for(lambda: retries() >= 1, 5, "connect-failure retries")


def test_a_duplicate_idempotency_key_in_flight_is_refused_and_never_reaches_the_upstream(fresh, mock):
    envoy = fresh()
    mock.script("gpt-4o", default={"delay_ms": 500})  # in flight for a while (per-try timeout 0.7 s)
    key = {"idempotency-key": "order-42", "authorization": "Bearer sk-a"}
    first = {}
    t = threading.Thread(target=lambda: first.setdefault("r", send(envoy, SAFE_PATH, headers=key)))
    t.start()
    wait_for(lambda: len(mock.requests()) == 1, 5, "first request at the upstream")
    dup = send(envoy, SAFE_PATH, headers=key)
    assert dup.status_code == 409
    assert dup.json()["error"]["code"] == "idempotency_key_in_use"
    assert dup.headers["x-should-retry"] == "false"
    t.join()
    assert first["r"].status_code == 200
    assert len(mock.requests()) == 1, "the duplicate never reached the upstream"
    # Finished: a repeat within the window is refused too; another credential is another key.
    again = send(envoy, SAFE_PATH, headers=key)
    assert again.status_code == 409 and again.json()["error"]["code"] == "idempotency_key_reused"
    other = send(envoy, SAFE_PATH, headers={"idempotency-key": "order-42", "authorization": "Bearer sk-b"})
    assert other.status_code == 200
    wait_for(lambda: envoy.metric("llm_fallback_duplicates_refused", model="gpt-4o") == 2, 5, "duplicates counter")


def test_the_openai_sdk_makes_one_attempt_when_blocked_and_retries_where_allowed(fresh, mock):
    envoy = fresh()
    client = openai.OpenAI(api_key="sk-test", base_url=envoy.url + "/v1", max_retries=2)
    mock.script("*", default={"status": 500})
    with pytest.raises(openai.InternalServerError):
        client.batches.create(input_file_id="file-1", endpoint="/v1/chat/completions", completion_window="24h")
    assert len(mock.requests()) == 1, "the SDK obeyed x-should-retry: false"

    mock.reset()
    mock.script("*", default={"status": 500})
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="acme-unlisted", messages=[{"role": "user", "content": "hi"}])
    assert len(mock.requests()) == 3, "a safe request is retried by the SDK as usual"


def test_a_compressed_unsafe_request_is_still_protected(fresh, mock):
    import gzip

    envoy = fresh()
    mock.script("*", default={"status": 500})
    body = gzip.compress(json.dumps({"assistant_id": "asst_1", "model": "gpt-4o"}).encode())
    r = requests.post(envoy.url + UNSAFE_PATH, data=body, headers={**JSON, "content-encoding": "gzip"}, timeout=30)
    assert r.status_code == 500
    assert r.headers["x-llm-retry-blocked"] == "non-idempotent"
    assert len(mock.requests()) == 1
