"""Walking skeleton: the filter loads in both positions of the shipped config, passes traffic
through byte for byte without buffering, and counts requests per model."""

from __future__ import annotations

import socket
import time

import requests

from harness import SHIPPED_CONFIG, chat_body, validate_config, wait_for


def post(envoy, path: str, body: bytes, headers: dict | None = None, **kw) -> requests.Response:
    h = {"content-type": "application/json", **(headers or {})}
    return requests.post(envoy.url + path, data=body, headers=h, timeout=30, **kw)


def test_json_request_and_response_pass_through_unchanged(envoy, mock):
    body = b'{ "model" :"gpt-4o",\n  "messages": [{"role":"user","content":"caf\\u00e9 \xe2\x80\x9cquoted\xe2\x80\x9d"}] }'
    direct = requests.post(mock.url + "/v1/chat/completions", data=body, headers={"content-type": "application/json"})
    mock.reset()

    r = post(envoy, "/v1/chat/completions", body, {"x-client-header": "kept"})

    assert r.status_code == 200
    assert r.content == direct.content  # the response body is the mock's, byte for byte
    assert r.headers["content-type"] == direct.headers["content-type"]
    [seen] = mock.requests()
    assert seen["body"].encode() == body  # the request body reached the upstream untouched
    assert seen["model"] == "gpt-4o"
    assert seen["headers"]["x-client-header"] == "kept"
    assert seen["headers"]["x-envoy-attempt-count"] == "1"


def test_a_model_of_the_second_provider_is_sent_to_its_cluster(envoy, mock):
    """The client filter names the first model's cluster in a request header after the route
    was first looked at (for its metadata): the route must be picked again, or the request goes
    to the default cluster while the headers say otherwise (the native build once did this)."""

    def sent(cluster: str) -> int:
        text = requests.get(envoy.admin + f"/stats?filter=^cluster\\.{cluster}\\.upstream_rq_total$", timeout=5).text
        return int(text.split(":")[1]) if ":" in text else 0

    before = {c: sent(c) for c in ("llm", "llm_b")}
    r = post(envoy, "/v1/chat/completions", chat_body("claude-sonnet-4-5"))
    assert r.status_code == 200 and r.headers["x-llm-provider"] == "llm_b"
    assert sent("llm_b") == before["llm_b"] + 1
    assert sent("llm") == before["llm"]


def test_sse_stream_is_not_buffered(envoy, mock):
    mock.script("gpt-4o-mini", default={"chunk_delay_ms": 300, "chunks": 5})
    start = time.monotonic()
    r = post(envoy, "/v1/chat/completions", chat_body("gpt-4o-mini", stream=True), stream=True)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    arrivals, data = [], b""
    for chunk in r.iter_content(chunk_size=None):
        arrivals.append(time.monotonic() - start)
        data += chunk
    # The mock spends >= 1.5 s between its first and last frame (5+ gaps of 300 ms). The first
    # frame must reach the client long before the mock has sent the last one.
    assert arrivals[0] < 0.9, arrivals
    assert arrivals[-1] > 1.4, arrivals
    assert data.rstrip().endswith(b"data: [DONE]")
    assert data.count(b"data: ") >= 7


def test_model_after_large_messages_is_counted(envoy, mock):
    before_req = envoy.metric("llm_fallback_requests", model="claude-haiku-4-5") or 0
    before_att = envoy.metric("llm_fallback_attempts", model="claude-haiku-4-5") or 0
    body = chat_body("claude-haiku-4-5", filler=300_000)
    assert body.index(b'"model"') > 300_000

    r = post(envoy, "/v1/chat/completions", body)

    assert r.status_code == 200
    assert r.json()["model"] == "claude-haiku-4-5"
    [seen] = mock.requests()
    assert seen["model"] == "claude-haiku-4-5"
    assert seen["body_len"] == len(body)
    wait_for(lambda: envoy.metric("llm_fallback_requests", model="claude-haiku-4-5") == before_req + 1, 5, "request counter")
    wait_for(lambda: envoy.metric("llm_fallback_attempts", model="claude-haiku-4-5") == before_att + 1, 5, "attempt counter")


def test_counters_per_model_in_prometheus_and_shared_data(envoy, mock):
    def status():
        return envoy.status()["counters"]

    before = status()
    for model, n in [("gpt-4o", 3), ("claude-sonnet-4-5", 2), ("some-unlisted-model", 2)]:
        for _ in range(n):
            assert post(envoy, "/v1/chat/completions", chat_body(model)).status_code == 200
    assert requests.get(envoy.url + "/v1/models", timeout=5).status_code == 200

    expected = {
        "llm_fallback.requests;model=gpt-4o": 3,
        "llm_fallback.requests;model=claude-sonnet-4-5": 2,
        "llm_fallback.requests;model=other": 2,  # unlisted models share one bounded label
        "llm_fallback.requests;model=none": 1,  # GET without a body
        "llm_fallback.attempts;model=gpt-4o": 3,
    }

    def shared_counts_landed():
        now = status()
        return all(now[k] - before.get(k, 0) == v for k, v in expected.items())

    # Shared data is updated by the root context's 1 s timer, on every worker.
    wait_for(shared_counts_landed, 5, "shared-data counters")
    assert envoy.metric("llm_fallback_requests", model="gpt-4o") >= 3
    assert envoy.metric("llm_fallback_requests", model="other") >= 2
    assert "some-unlisted-model" not in envoy.prometheus()
    # Exactly one request per model reached the mock per client request: nothing was retried.
    assert sorted(r["model"] or "-" for r in mock.requests()) == sorted(
        ["gpt-4o"] * 3 + ["claude-sonnet-4-5"] * 2 + ["some-unlisted-model"] * 2 + ["-"]
    )


def test_bad_bodies_pass_through_untouched_and_are_counted(envoy, mock):
    cases = {
        "not_json": (b"model=gpt-4o&x=1", {"content-type": "application/x-www-form-urlencoded"}),
        "model_not_string": (b'{"model": 42, "messages": []}', {}),
        "duplicate_model": (b'{"model": "a", "model": "b"}', {}),
        "no_model": (b'{"messages": [{"model": "nested"}]}', {}),
        # gzip and deflate bodies are read (test_trust.py); other encodings are not.
        "encoded": (b"\x1b\x2f\x00\xf8brotli-bytes", {"content-encoding": "br"}),
    }
    before = {reason: envoy.metric("llm_fallback_body_skipped", reason=reason) or 0 for reason in cases}
    for body, headers in cases.values():
        post(envoy, "/v1/chat/completions", body, headers)
    seen = [r for r in mock.requests()]
    assert [r["body_len"] for r in seen] == [len(b) for b, _ in cases.values()]
    assert [r["body"] for r in seen[:4]] == [b.decode() for b, _ in list(cases.values())[:4]]
    for reason in cases:
        wait_for(lambda: envoy.metric("llm_fallback_body_skipped", reason=reason) == before[reason] + 1, 5, reason)


def test_split_body_chunks_are_scanned(envoy, mock):
    """A body that reaches Envoy in many small TCP writes still yields its model."""
    before = envoy.metric("llm_fallback_requests", model="gpt-4o-mini") or 0
    body = chat_body("gpt-4o-mini", filler=20_000)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", envoy.port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(head)
        for i in range(0, len(body), 4093):
            s.sendall(body[i : i + 4093])
            time.sleep(0.002)
        response = b""
        while chunk := s.recv(65536):
            response += chunk
    assert response.startswith(b"HTTP/1.1 200")
    assert mock.requests()[0]["body"].encode() == body
    wait_for(lambda: envoy.metric("llm_fallback_requests", model="gpt-4o-mini") == before + 1, 5, "counter")


def test_shipped_config_validates():
    result = validate_config(SHIPPED_CONFIG.read_text())
    assert result.returncode == 0, result.stdout + result.stderr


def test_bad_configuration_refuses_to_start_naming_the_field():
    text = SHIPPED_CONFIG.read_text()
    cases = [
        (text.replace("status_path:", "status_pth:"), "unknown field `status_pth`"),
        (text.replace("{name: llama-3.1-8b,", "{name: 'llama 3.1',"), "field `models[1].name`"),
        (text.replace("gpt-4o-mini: [llama-3.1-8b]", "gpt-4o-mini: [llama-9]"), "field `fallback.chains.gpt-4o-mini[0]`"),
        (text.replace("root_id: upstream", "root_id: upstrem"), "field `root_id`"),
    ]
    for config, message in cases:
        assert config != text
        result = validate_config(config)
        output = result.stdout + result.stderr
        assert result.returncode != 0, output
        assert message in output, output


def test_both_filter_positions_are_loaded(envoy):
    wait_for(lambda: "configured as Upstream filter" in envoy.log_path.read_text(), 5, "log flush")
    log = envoy.log_path.read_text()
    assert "configured as Client filter" in log
    assert "configured as Status filter" in log
    assert "configured as Upstream filter" in log
    # The filter's own lines come through the host's logger (proxy-wasm: "wasm log ...",
    # the native build: Envoy's dynamic_modules logger).
    assert ("wasm log" in log or "][dynamic_modules] [:] configured as" in log)
    assert "Plugin configured to fail closed failed" not in log


def test_status_answers_on_the_internal_listener_only(envoy, mock):
    post(envoy, "/v1/chat/completions", chat_body("gpt-4o"))
    doc = envoy.status()
    assert doc["models"]["gpt-4o"]["state"] == "healthy"
    assert set(doc["models"]) == {"gpt-4o", "llama-3.1-8b", "gpt-4o-mini", "claude-sonnet-4-5", "claude-haiku-4-5"}
    # The public listener does not answer it: the request goes upstream like any other.
    mock.reset()
    public = requests.get(envoy.url + "/llm-fallback/status", timeout=5)
    assert "models" not in public.text
    assert [r["path"] for r in mock.requests()] == ["/llm-fallback/status"]
    # Everything else on the internal listener is 404.
    assert requests.get(envoy.internal + "/v1/models", timeout=5).status_code == 404


def test_status_filter_requires_a_status_path():
    text = SHIPPED_CONFIG.read_text().replace("status_path: /llm-fallback/status", "")
    result = validate_config(text)
    assert result.returncode != 0
    assert "field `status_path`: required by the status filter" in result.stdout + result.stderr
