"""Only the operator steers the filter: request identity, header trust, retry limits, duplicates.

Through the real Envoy with the shipped config: clients and upstreams send what they like;
only the operator's configuration (the listener's `trust`, the route's metadata, the clusters)
changes what the filter does.
"""

from __future__ import annotations

import concurrent.futures
import json
import time

import pytest
import requests

from harness import Envoy, chat_body, with_plugin_setting

JSON = {"content-type": "application/json"}
INTERNAL = ("x-llm-cluster", "x-llm-priority", "x-llm-task", "x-llm-retry-safe", "x-llm-retry", "x-llm-retry-after-s")
MODEL_QUOTA = {"error": {"message": "Rate limit reached for gpt-4o in organization org-abc123 on tokens per day (TPD): Limit 90000, Used 90000, Requested 512.", "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}
RATE = {"error": {"message": "Rate limit reached for requests per min (RPM).", "type": "requests", "code": "rate_limit_exceeded"}}


@pytest.fixture
def fresh(two_providers):
    return two_providers


def ask(envoy, model: str, headers: dict | None = None, path: str = "/v1/chat/completions", body: bytes | None = None):
    return requests.post(envoy.url + path, data=body or chat_body(model), headers={**JSON, **(headers or {})}, timeout=30)


# --- request identity -------------------------------------------------------------------

def test_requests_sharing_an_x_request_id_keep_their_own_state(fresh, mock, mock_b):
    """A mesh propagates one x-request-id to every call of a trace: concurrent requests that
    carry the same id are each served by their own chain, with their own headers."""
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA, "delay_ms": 300})
    mock.script("llama-3.1-8b", default={"delay_ms": 300})
    mock_b.script("claude-haiku-4-5", default={"delay_ms": 300})
    shared = {"x-request-id": "trace-0001"}

    def one(i):
        model = "gpt-4o" if i % 2 == 0 else "claude-haiku-4-5"
        r = ask(envoy, model, shared)
        return model, r.status_code, r.json().get("model"), r.headers.get("x-llm-fallback-from"), r.headers.get("x-llm-attempts")

    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(one, range(12)))
    for model, status, served, fallback_from, attempts in results:
        assert status == 200, results
        if model == "gpt-4o":
            assert (served, fallback_from, attempts) == ("llama-3.1-8b", "gpt-4o", "2"), results
        else:
            assert (served, fallback_from, attempts) == ("claude-haiku-4-5", None, "1"), results


# --- header trust -----------------------------------------------------------------------

def test_an_upstream_cannot_make_envoy_resend_an_unsafe_request(fresh, mock, mock_b):
    envoy = fresh()
    spoof = {"x-llm-retry": "true", "x-llm-retry-after-s": "0"}
    mock.script("gpt-4o", steps=[{"status": 503, "headers": spoof}, {"status": 200, "headers": spoof}])
    unsafe = {"x-llm-retry-safe": "unsafe"}
    r = ask(envoy, "gpt-4o", unsafe)
    assert r.status_code == 503 and r.headers["x-llm-retry-blocked"] == "non-idempotent"
    assert len(mock.requests()) == 1, "exactly one upstream send"
    r = ask(envoy, "gpt-4o", unsafe)
    assert r.status_code == 200
    assert len(mock.requests()) == 2, "a 200 carrying the marker is not re-sent either"
    assert "x-llm-retry" not in r.headers


def test_internal_and_policy_headers_never_reach_the_provider(fresh, mock, mock_b):
    envoy = fresh()
    r = ask(envoy, "gpt-4o", {"x-llm-cluster": "llm_b", "x-llm-priority": "batch", "x-llm-task": "code", "x-llm-retry-safe": "unsafe"})
    assert r.status_code == 200 and r.headers["x-llm-model"] == "gpt-4o"
    assert mock_b.requests() == [], "a client's x-llm-cluster does not pick the cluster"
    [seen] = mock.requests()
    assert not [h for h in INTERNAL if h in seen["headers"]], seen["headers"]


def test_spoofed_policy_changes_nothing_on_the_shipped_listener(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
    # `critical` would refuse the fallback; `code` would move the request to provider B.
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "critical", "x-llm-task": "code"})
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b"
    assert mock_b.requests() == []
    # A client may always declare its own request unsafe, never safe.
    mock.reset()
    mock.script("gpt-4o-mini", steps=[{"status": 500}])
    r = ask(envoy, "gpt-4o-mini", {"x-llm-retry-safe": "safe"}, path="/v1/threads/t1/runs",
            body=json.dumps({"assistant_id": "a", "model": "gpt-4o-mini"}).encode())
    assert r.status_code == 500 and r.headers["x-llm-retry-blocked"] == "non-idempotent"
    assert len(mock.requests()) == 1


def test_trust_is_granted_by_the_listener(fresh, mock, mock_b):
    envoy = fresh(edit=with_plugin_setting("trust: {priority: any, task: true, retry_safety: any}"))
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "critical"})
    # Critical: never a lower tier (llama-3.1-8b would serve a normal request); the other
    # provider's flagship may.
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert [x["model"] for x in mock.requests()] == ["gpt-4o"]
    r = ask(envoy, "gpt-4o", {"x-llm-task": "code"})
    assert r.headers["x-llm-model"] == "claude-sonnet-4-5"


def test_the_route_sets_policy_for_its_requests(fresh, mock, mock_b):
    """The operator's way: route metadata. Clients of that route get it whatever they send."""
    def route_policy(text: str) -> str:
        return text.replace('''              - match: {prefix: "/"}
                route:''', '''              - match: {prefix: "/"}
                metadata: {filter_metadata: {llm_fallback: {priority: critical}}}
                route:''', 1)

    envoy = fresh(edit=route_policy)
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
    # A normal request would fall back to llama-3.1-8b; the route makes it critical.
    r = ask(envoy, "gpt-4o", {"x-llm-priority": "normal"})
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert [x["model"] for x in mock.requests()] == ["gpt-4o"], "critical: never downgraded"


def test_the_public_listener_takes_the_edge_posture():
    import yaml
    from harness import SHIPPED_CONFIG
    config = yaml.safe_load(SHIPPED_CONFIG.read_text())
    hcm = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]["typed_config"]
    assert hcm["use_remote_address"] is True


# --- retries under load -----------------------------------------------------------------

def test_twelve_concurrent_waited_retries_are_all_served(fresh, mock, mock_b):
    envoy = fresh()
    n = 16
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "1"}, "body": RATE}] * n)
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        results = list(pool.map(lambda _: ask(envoy, "gpt-4o"), range(n)))
    statuses = [r.status_code for r in results]
    assert statuses == [200] * n, statuses
    assert all(r.headers["x-llm-model"] == "gpt-4o" and r.headers["x-llm-attempts"] == "2" for r in results)


# --- duplicates -------------------------------------------------------------------------

def test_simultaneous_duplicates_on_a_fresh_slot_admit_exactly_one(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("gpt-4o", default={"delay_ms": 400})
    for round_ in range(6):
        key = {"idempotency-key": f"fresh-key-{round_}-{time.monotonic_ns()}", "authorization": "Bearer sk-1"}
        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            statuses = sorted(pool.map(lambda _: ask(envoy, "gpt-4o", key).status_code, range(12)))
        assert statuses == [200] + [409] * 11, (round_, statuses)


def test_a_request_refused_locally_frees_its_key(fresh, mock, mock_b):
    envoy = fresh()
    mock.script(None, account="*", default={"preset": "openai_insufficient_quota"})
    mock_b.script(None, account="*", default={"preset": "anthropic_credit_balance"})
    ask(envoy, "gpt-4o")
    ask(envoy, "gpt-4o")  # both accounts out now
    key = {"idempotency-key": "k-local", "authorization": "Bearer sk-1"}
    first = ask(envoy, "gpt-4o", key)
    assert first.status_code == 429 and first.headers["x-llm-attempts"] == "0"
    again = ask(envoy, "gpt-4o", key)
    assert again.status_code == 429, "not 409: nothing was sent, the key is free"


def test_a_key_alone_does_not_make_an_acting_request_resendable(fresh, mock, mock_b):
    body = json.dumps({"assistant_id": "a", "model": "gpt-4o-mini"}).encode()
    key = {"idempotency-key": "k-acting-1", "authorization": "Bearer sk-1"}
    envoy = fresh()
    mock.script("gpt-4o-mini", steps=[{"status": 500}])
    r = ask(envoy, "gpt-4o-mini", key, path="/v1/threads/t1/runs", body=body)
    assert r.status_code == 500 and r.headers["x-llm-retry-blocked"] == "non-idempotent"
    assert len(mock.requests()) == 1
    # Where the operator declares the provider deduplicates by key, it may be re-sent.
    mock.reset()
    dedup = fresh(edit=with_plugin_setting("retry_safety: {key_deduplicated_by: {paths: ['/v1/threads/*']}}"))
    mock.script("gpt-4o-mini", steps=[{"status": 500}], default={"status": 200, "body": {"id": "run_1", "object": "thread.run"}})
    r = ask(dedup, "gpt-4o-mini", {**key, "idempotency-key": "k-acting-2"}, path="/v1/threads/t1/runs", body=body)
    assert r.status_code == 200
    assert len(mock.requests()) == 2


# --- configuration ------------------------------------------------------------------------

def test_a_struct_whose_first_entry_is_123_bytes_loads(workdir, mock):
    """0x0a 0x7b: the Struct's first bytes look like whitespace and `{`."""
    path = "/" + "s" * 105  # entry: key field 13 bytes + value field 2 + 2 + 106 = 123 bytes
    block = f'value: &llm_fallback_config {{status_path: "{path}"}}\n'

    def only_status_path(text: str) -> str:
        start = text.index("value: &llm_fallback_config")
        end = text.index("          - name: envoy.filters.http.router", start)
        return text[:start] + block + text[end:]

    envoy = Envoy(workdir, mock.port, edit=only_status_path)
    try:
        r = requests.get(envoy.internal + path, timeout=5)
        assert r.status_code == 200 and "counters" in r.json()
    finally:
        envoy.stop()


# --- requests whose model is hard to read ---------------------------------------------------

def test_a_gzipped_request_body_is_read_and_its_fallback_sent_plain(fresh, mock, mock_b):
    import gzip as gz
    envoy = fresh()
    mock.script("*", steps=[{"status": 429, "body": MODEL_QUOTA}])
    body = gz.compress(chat_body("gpt-4o"))
    r = ask(envoy, "gpt-4o", {"content-encoding": "gzip"}, body=body)
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b", r.headers
    first, second = mock.requests()
    # Every attempt sends the decoded body (see the next test for why).
    assert "content-encoding" not in first["headers"]
    assert json.loads(first["body"])["model"] == "gpt-4o"
    assert "content-encoding" not in second["headers"]
    assert json.loads(second["body"])["model"] == "llama-3.1-8b"


def test_a_model_is_read_past_invalid_text_elsewhere(fresh, mock, mock_b):
    envoy = fresh()
    body = b'{"messages":[{"role":"user","content":"caf\xe9 \\ud800 ' + b"[" * 0 + b'"}],"model":"claude-haiku-4-5"}'
    r = ask(envoy, "claude-haiku-4-5", body=body)
    assert r.headers.get("x-llm-model") == "claude-haiku-4-5"
    assert [x["model"] for x in mock_b.requests()] == ["claude-haiku-4-5"], "routed to the model's own cluster"
    assert mock.requests() == []
    deep = b'{"messages":' + b"[" * 5000 + b"]" * 5000 + b',"model":"claude-haiku-4-5"}'
    r = ask(envoy, "claude-haiku-4-5", body=deep)
    assert r.headers.get("x-llm-model") == "claude-haiku-4-5"
    assert len(mock_b.requests()) == 2 and mock.requests() == []


def test_a_key_stays_refused_after_a_retry_succeeded(fresh, mock, mock_b):
    """A proven rejection of an earlier attempt says nothing once a later attempt served."""
    envoy = fresh()
    mock.script("gpt-4o", steps=[{"status": 429, "headers": {"retry-after": "0"}, "body": RATE}])
    key = {"idempotency-key": "k-retried", "authorization": "Bearer sk-1"}
    first = ask(envoy, "gpt-4o", key)
    assert first.status_code == 200 and first.headers["x-llm-attempts"] == "2"
    again = ask(envoy, "gpt-4o", key)
    assert again.status_code == 409
    assert len(mock.requests()) == 2


def test_a_gzipped_body_stays_valid_on_every_attempt(fresh, mock, mock_b):
    """Header changes carry over between attempts while the router replays the original bytes:
    every attempt of a compressed body goes out plain and whole."""
    import gzip as gz
    envoy = fresh()
    mock.script("*", steps=[{"status": 429, "body": MODEL_QUOTA}])
    mock.script("llama-3.1-8b", steps=[{"status": 503}])
    r = ask(envoy, "gpt-4o", {"content-encoding": "gzip"}, body=gz.compress(chat_body("gpt-4o")))
    assert r.status_code == 200 and r.headers["x-llm-model"] == "llama-3.1-8b", r.headers
    sends = mock.requests()
    assert len(sends) == 3
    for send in sends[1:]:
        assert "content-encoding" not in send["headers"]
        assert json.loads(send["body"])["model"] == "llama-3.1-8b"
        assert int(send["headers"]["content-length"]) == len(send["body"].encode())


def test_duplicates_are_refused_whatever_the_body_encoding(fresh, mock, mock_b):
    envoy = fresh()
    mock.script("*", default={"delay_ms": 600})
    key = {"idempotency-key": "k-brotli", "authorization": "Bearer sk-1", "content-encoding": "br"}
    body = b"\x1b\x2f\x00\xf8brotli-bytes"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(ask, envoy, "gpt-4o", key, "/v1/chat/completions", body)
        time.sleep(0.2)
        second = ask(envoy, "gpt-4o", key, body=body)
        assert second.status_code == 409
        assert first.result().status_code == 400  # the mock cannot read brotli: it answers 400
    assert len(mock.requests()) == 1
