"""Falling back to another provider inside the same request, through the real Envoy 1.40.

The shipped route picks each retry's cluster from filter state the upstream filter writes
(matcher cluster specifier + `refresh_cluster_on_retry`); each provider cluster injects its own
key (`credential_injector`, the key files in envoy/keys/). Provider A is cluster `llm` (gpt-4o,
llama-3.1-8b, gpt-4o-mini), provider B is `llm_b` (claude-*); some tests add a provider C.
"""

from __future__ import annotations

import json
import subprocess

import openai
import pytest
import requests

from harness import Envoy, Mock, ROOT, both, chat_body, drained, free_port, next_request_mode, wait_for, native_gap_check, native_gap_endings

JSON = {"content-type": "application/json"}
CLIENT_KEYS = {"authorization": "Bearer sk-client-secret", "x-api-key": "client-secret-2", "api-key": "client-secret-3"}
KEY_A, KEY_B, KEY_C = "Bearer demo-key-provider-a", "Bearer demo-key-provider-b", "Bearer demo-key-provider-c"
MODEL_QUOTA = json.dumps({"error": {"message": "Rate limit reached for gpt-4o in organization org-abc on tokens per day (TPD): Limit 90000, Used 90000, Requested 512.", "type": "tokens", "param": None, "code": "rate_limit_exceeded"}})
OVERLOADED = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


@pytest.fixture
def fresh(two_providers):
    return two_providers


def chain(model: str, fallbacks: list[str]):
    """An `edit` setting `model`'s chain in the shipped configuration."""
    def edit(text: str) -> str:
        import re
        line = re.search(rf"^( +){re.escape(model)}: \[.*\]$", text, flags=re.M)
        assert line, f"no chain for {model}"
        return text[:line.start()] + f"{line.group(1)}{model}: [{', '.join(fallbacks)}]" + text[line.end():]
    return edit


def with_provider_c(port: int, key_file):
    """An `edit` adding provider C: cluster `llm_c` (model mistral-large), its key and its entry
    in the route's provider map, as an operator adds a provider."""
    def edit(text: str) -> str:
        text = text.replace(
            "                                llm_b: {action: {name: llm_b,",
            "                                llm_c: {action: {name: llm_c, typed_config: {\"@type\": type.googleapis.com/envoy.extensions.router.cluster_specifiers.matcher.v3.ClusterAction, cluster: llm_c}}}\n"
            "                                llm_b: {action: {name: llm_b,", 1)
        text = text.replace(
            "                    - {name: claude-haiku-4-5,",
            "                    - {name: mistral-large, tier: flagship, cluster: llm_c}\n"
            "                    - {name: claude-haiku-4-5,", 1)
        text = text.replace("  clusters:\n", f"  - name: llm_c_key\n    generic_secret: {{secret: {{filename: {key_file}}}}}\n\n  clusters:\n", 1)
        start = text.index("  - name: llm_b\n")
        b = text[start:]
        c = b.replace("name: llm_b", "name: llm_c").replace("cluster_name: llm_b", "cluster_name: llm_c").replace(
            "credential: {name: llm_b_key}", "credential: {name: llm_c_key}")
        c = c.replace(c[c.index("port_value: "):c.index("}", c.index("port_value: "))], f"port_value: {port}", 1)
        assert "llm_c_key" in c and "llm_c" in c
        return text + c
    return edit


def ask(envoy, model: str, headers: dict | None = None, **body_kw) -> requests.Response:
    return requests.post(envoy.url + "/v1/chat/completions", data=chat_body(model, **body_kw),
                         headers={**JSON, **(headers or {})}, timeout=30)


def credentials(record: dict) -> dict:
    h = record["headers"]
    return {k: h[k] for k in ("authorization", "x-api-key", "api-key", "x-goog-api-key") if k in h}


def models_seen(mock) -> list[str]:
    return [r["model"] for r in mock.requests()]


def test_account_quota_on_a_is_served_by_b_in_the_same_request_with_bs_key_only(fresh, mock, mock_b):
    envoy = fresh()
    mock.script(None, account="*", default={"preset": "openai_insufficient_quota"})
    client = openai.OpenAI(base_url=envoy.url + "/v1", api_key="sk-client-secret", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], extra_headers={"x-api-key": "client-secret-2"})
    assert raw.parse().model == "claude-sonnet-4-5", "served inside the request: the SDK does not retry"
    assert raw.headers["x-llm-model"] == "claude-sonnet-4-5" and raw.headers["x-llm-provider"] == "llm_b"
    assert raw.headers["x-llm-attempts"] == "2" and raw.headers["x-llm-fallback-reason"] == "quota_exhausted"
    [a] = mock.requests()
    [b] = mock_b.requests()
    assert (a["model"], b["model"]) == ("gpt-4o", "claude-sonnet-4-5"), "one attempt each"
    assert credentials(a) == {"authorization": KEY_A}, "A gets A's key, never the client's"
    assert credentials(b) == {"authorization": KEY_B}, "B gets B's key, never A's nor the client's"
    assert "x-llm-cluster" not in a["headers"] and "x-llm-cluster" not in b["headers"]
    wait_for(lambda: envoy.metric("llm_fallback_fallbacks", model="gpt-4o", to="claude-sonnet-4-5", account="llm",
                                  **{"class": "quota_exhausted"}) == 1, 5, "fallback counter")
    # The next request skips the whole account: B at once, no attempt wasted on A.
    r = ask(envoy, "gpt-4o", CLIENT_KEYS)
    assert r.status_code == 200 and r.headers["x-llm-attempts"] == "1" and r.headers["x-llm-provider"] == "llm_b"
    assert len(mock.requests()) == 1
    assert credentials(mock_b.requests()[-1]) == {"authorization": KEY_B}


def test_a_cooling_provider_in_the_middle_of_a_chain_costs_no_attempt(fresh, mock, mock_b, workdir):
    mock_c = Mock(workdir)
    key_c = workdir / "key-c"
    key_c.write_bytes(KEY_C.encode())
    try:
        envoy = fresh(edit=both(with_provider_c(mock_c.port, key_c), chain("gpt-4o", ["claude-sonnet-4-5", "mistral-large"])))
        # Provider B's account runs out of quota: every claude model cools down.
        mock_b.script(None, account="*", default={"preset": "anthropic_credit_balance"})
        r = ask(envoy, "claude-haiku-4-5")
        assert r.headers["x-llm-error-class"] == "quota_exhausted"
        mock_b.reset()
        # A -> B -> C: B is cooling, so the retry after A's failure goes straight to C.
        mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
        r = ask(envoy, "gpt-4o", CLIENT_KEYS)
        assert r.status_code == 200 and r.headers["x-llm-model"] == "mistral-large"
        assert r.headers["x-llm-provider"] == "llm_c" and r.headers["x-llm-attempts"] == "2"
        assert models_seen(mock) == ["gpt-4o"]
        assert mock_b.requests() == [], "B sees nothing"
        [c] = mock_c.requests()
        assert c["model"] == "mistral-large" and c["headers"]["x-envoy-attempt-count"] == "2"
        assert credentials(c) == {"authorization": KEY_C}
    finally:
        mock_c.stop()


@native_gap_endings
def test_a_connect_failure_on_a_follows_the_policy(workdir, mock_b):
    """Provider A refuses connections: the request's retry policy (resets and connect failures
    are retried for safe requests) asks A again until gpt-4o's circuit opens (failure_threshold
    2), then the same request goes to B. The next request skips A."""
    envoy = Envoy(workdir, free_port(), second_upstream_port=mock_b.port, edit=chain("gpt-4o", ["claude-sonnet-4-5"]))
    try:
        r = ask(envoy, "gpt-4o")
        assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
        assert r.headers["x-llm-attempts"] == "3" and r.headers["x-llm-provider"] == "llm_b"
        assert r.headers["x-llm-fallback-reason"] == "overloaded"
        [b] = mock_b.requests()
        assert b["headers"]["x-envoy-attempt-count"] == "3" and credentials(b) == {"authorization": KEY_B}
        r = ask(envoy, "gpt-4o")
        assert r.headers["x-llm-attempts"] == "1" and r.headers["x-llm-provider"] == "llm_b"
    finally:
        envoy.stop()


def retry_breakers_of_a(max_retries: int):
    """An `edit` giving cluster `llm` (provider A) other retry circuit breakers than B's."""
    def edit(text: str) -> str:
        inline = "    circuit_breakers: {thresholds: [{priority: DEFAULT, max_retries: 1024}]}\n"
        assert "    circuit_breakers: *llm_breakers\n" in text
        text = text.replace("    circuit_breakers: *llm_breakers\n", inline)
        return text.replace("max_retries: 1024}", f"max_retries: {max_retries}}}", 1)
    return edit


@native_gap_check
def test_retry_breakers_at_zero_on_the_first_cluster_stop_the_switch_and_check_warns(fresh, mock, mock_b, workdir):
    edit = both(retry_breakers_of_a(0), drained("llama-3.1-8b", "gpt-4o-mini"))
    envoy = fresh(edit=edit)
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
    r = ask(envoy, "gpt-4o")
    # Retries are gated by the first attempt's cluster: no retry, so no switch to B.
    assert r.status_code == 429 and r.headers["x-llm-model"] == "gpt-4o"
    assert mock_b.requests() == []
    wait_for(lambda: (envoy.metric("envoy_cluster_upstream_rq_retry_overflow", envoy_cluster_name="llm") or 0) >= 1, 5, "retry overflow")
    result = subprocess.run([str(ROOT / "target/release/llm-fallback"), "check", str(envoy.config)],
                            capture_output=True, text=True, timeout=30)
    out = result.stdout + result.stderr
    assert "max_retries" in out and "llm" in out, out


def test_a_cluster_the_route_does_not_list_falls_through_and_the_attempt_asks_a_model_served_there(fresh, mock, mock_b):
    """The route's provider map lacks `llm_b`: the retry the filter names for claude-sonnet-4-5
    falls through to the route's default cluster (A). The filter sees where the attempt landed
    and asks a model A serves instead of sending a claude model to provider A."""
    unlisted = lambda t: t.replace(
        "                                llm_b: {action: {name: llm_b, typed_config: {\"@type\": type.googleapis.com/envoy.extensions.router.cluster_specifiers.matcher.v3.ClusterAction, cluster: llm_b}}}\n", "", 1)
    envoy = fresh(edit=both(unlisted, chain("gpt-4o", ["claude-sonnet-4-5", "gpt-4o-mini"])))
    mock.script("gpt-4o", default={"status": 429, "body": MODEL_QUOTA})
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "gpt-4o-mini"
    assert r.headers["x-llm-provider"] == "llm" and r.headers["x-llm-attempts"] == "2"
    assert models_seen(mock) == ["gpt-4o", "gpt-4o-mini"]
    assert mock_b.requests() == []
    wait_for(lambda: envoy.metric("llm_fallback_misrouted", model="claude-sonnet-4-5") == 1, 5, "misrouted counter")


def test_a_stream_moves_before_its_first_byte_and_never_after(fresh, mock, mock_b):
    # Before the first byte: a 529 answer, or an error as the first event of a 200 stream.
    for first in ({"status": 529, "body": OVERLOADED}, {"stream_error": {"after": 0, "preset": "anthropic_overloaded"}}):
        envoy = fresh(edit=chain("gpt-4o", ["claude-sonnet-4-5"]))
        mock.reset()
        mock_b.reset()
        mock.script("gpt-4o", steps=[first, first])
        client = openai.OpenAI(base_url=envoy.url + "/v1", api_key="sk-client", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o", stream=True, messages=[{"role": "user", "content": "hi"}])
        text = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
        assert text == "Hello from claude-sonnet-4-5", first
        assert raw.headers["x-llm-provider"] == "llm_b" and raw.headers["x-llm-attempts"] == "3"
        assert models_seen(mock) == ["gpt-4o", "gpt-4o"] and models_seen(mock_b) == ["claude-sonnet-4-5"]
    # After content reached the client: never moved.
    envoy = fresh(edit=chain("gpt-4o", ["claude-sonnet-4-5"]))
    mock.reset()
    mock_b.reset()
    mock.script("gpt-4o", steps=[{"chunks": 4, "stream_error": {"after": 2, "preset": "anthropic_overloaded"}}])
    r = requests.post(envoy.url + "/v1/chat/completions", data=chat_body("gpt-4o", stream=True), headers=JSON, timeout=10)
    assert r.status_code == 200 and '"error"' in r.text and r.headers["x-llm-provider"] == "llm"
    assert models_seen(mock) == ["gpt-4o"] and mock_b.requests() == []


def test_next_request_mode_keeps_retries_on_the_routed_cluster(fresh, mock, mock_b):
    """The shape any Envoy supports: a `cluster_header` route and `switch: next_request`. The
    failing answer tells the SDK to retry and where its retry goes; that retry lands on B."""
    envoy = fresh(edit=next_request_mode)
    mock.script(None, account="*", default={"preset": "openai_insufficient_quota"})
    r = ask(envoy, "gpt-4o", CLIENT_KEYS)
    assert r.status_code == 429 and r.headers["x-should-retry"] == "true"
    assert r.headers["x-llm-fallback-next"] == "claude-sonnet-4-5"
    assert mock_b.requests() == []
    # The client's keys go upstream in this mode (the default for next_request).
    assert credentials(mock.requests()[0])["x-api-key"] == "client-secret-2"
    r = ask(envoy, "gpt-4o")
    assert r.status_code == 200 and r.headers["x-llm-model"] == "claude-sonnet-4-5"
    assert r.headers["x-llm-provider"] == "llm_b"


def test_a_provider_that_takes_its_key_in_another_header_never_sees_the_last_providers(fresh, mock, mock_b):
    """Provider B reads `x-api-key` (as Anthropic's native API does): A's injected
    `authorization` carries over into B's attempt unless the filter removes it."""
    b_header = lambda t: t.replace("                credential: {name: llm_b_key}\n                header: authorization",
                                   "                credential: {name: llm_b_key}\n                header: x-api-key", 1)
    envoy = fresh(edit=b_header)
    mock.script(None, account="*", default={"preset": "openai_insufficient_quota"})
    r = ask(envoy, "gpt-4o", CLIENT_KEYS)
    assert r.status_code == 200 and r.headers["x-llm-provider"] == "llm_b"
    [b] = mock_b.requests()
    assert credentials(b) == {"x-api-key": KEY_B}, "neither A's authorization nor the client's keys"


def test_a_held_stream_reset_on_the_second_provider_is_retried_there(fresh, mock, mock_b):
    """A request routed to B (claude) whose 200 stream resets before its first event: the
    client saw nothing, Envoy retries, and the retry stays on B although the routing header is
    gone after the first attempt. (Under load the router can pick a retry's cluster before the
    attempt's end reaches the filter, so each attempt also names its own cluster when it starts:
    the soak, which checks that every attempt reached its model's provider, fails without that.)"""
    envoy = fresh()
    # An Anthropic stream: its first chunk is the `message_start` prelude, so the start is still
    # held when the connection resets.
    mock_b.script("claude-sonnet-4-5", steps=[{"reset": "after_headers", "compress": "gzip"}])
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]})
    r = requests.post(envoy.url + "/v1/messages", data=body, headers=JSON, timeout=30)
    assert r.status_code == 200 and "message_stop" in r.text
    assert r.headers["x-llm-provider"] == "llm_b" and r.headers["x-llm-attempts"] == "2"
    assert mock.requests() == [], "nothing reaches provider A"
    assert models_seen(mock_b) == ["claude-sonnet-4-5", "claude-sonnet-4-5"]


@native_gap_endings
def test_a_provider_down_under_load_sends_every_request_to_the_next_one(workdir, mock_b):
    """Provider A refuses every connection while 48 requests arrive at once on two workers: each
    is served by B within its retry budget, with one attempt on B, every attempt reaching B asks
    B's model, and no attempt lands on a cluster the filter did not name for it."""
    import concurrent.futures
    envoy = Envoy(workdir, free_port(), second_upstream_port=mock_b.port, edit=chain("gpt-4o", ["claude-sonnet-4-5"]))
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=24) as pool:
            answers = list(pool.map(lambda _: ask(envoy, "gpt-4o"), range(48)))
        assert [r.status_code for r in answers] == [200] * 48
        assert {r.headers["x-llm-provider"] for r in answers} == {"llm_b"}
        assert set(models_seen(mock_b)) == {"claude-sonnet-4-5"}
        assert len(mock_b.requests()) == 48, "one attempt on B per request"
        assert (envoy.metric("llm_fallback_misrouted", model="claude-sonnet-4-5") or 0) == 0
    finally:
        envoy.stop()
