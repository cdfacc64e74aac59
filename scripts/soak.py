"""A chaos soak through a real Envoy with the compiled filter, rerunnable from a seed.

    .venv/bin/python scripts/soak.py --requests 100000 [--seed 1] [--threads 32] [--max-seconds 3600]

Starts two mock providers (provider A behind the shipped config's cluster `llm`, provider B behind
`llm_b`) and Envoy (2 workers) with the shipped `envoy/envoy.yaml`, cooldowns shortened so faults
come and go. It drives N requests from a thread pool: half of them unsafe to send twice (declared
with `x-llm-retry-safe: unsafe`, or a POST to an acting path `/v1/threads/<id>/runs`), streaming and
not, OpenAI and Anthropic shapes, every model of the config. Every few hundred requests the mocks
are re-scripted with a random (seeded) mix of faults: account-wide quota, per-model quota, rate
limits with waits, 529/503/500, gzip, resets before and after the headers and in the middle of
the body, slow first tokens and delays, error events inside 200 streams; some clients cancel
(short timeouts, or closing mid-stream).

Each request carries its number in its body (`soak-<n>`), so the mocks' request records tell which
upstream attempts every request made and which scripted step answered each one. At the end it
checks:

1. every request got exactly one outcome: an answer (a 200 whose id names an attempt of this very
   request, its last one; an error answer), a cancel the client caused, or a cut the upstream
   caused (the request's last attempt was reset after the headers or mid-body); no transport
   error, hang or silently truncated stream; no request made more attempts than the route allows;
2. no unsafe request was sent upstream twice unless every send but the last was answered with a
   proven rejection (README, "Never re-sending a request that may have acted"): the mock answered
   429 or 529 with a provider error body, and no reset. Envoy's own re-sends (connect failure,
   reset before the request was sent) never show up here, since such a request never reached
   the mock; a request the mock read and then reset is *not* such a case;
3. no VM trap or reload: no panic/trap lines in Envoy's log, no wasm VM created or reloaded after
   start, and the filter's counters keep advancing;
4. Envoy's memory stays flat: RSS at 10 % of the run against the end.

It prints a compact report and exits 1 on any violation, naming the requests (and their upstream
records). `run_soak()` is what tests/e2e/test_soak.py calls in-process.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import random
import re
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import requests
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/e2e"))
from harness import SHIPPED_CONFIG, Envoy, Mock  # noqa: E402

PROVIDER_MODELS = {"A": ("gpt-4o", "llama-3.1-8b", "gpt-4o-mini"), "B": ("claude-sonnet-4-5", "claude-haiku-4-5")}
MOCK_OF = {m: p for p, models in PROVIDER_MODELS.items() for m in models}
MODELS = tuple(MOCK_OF)
KEY_A, KEY_B, KEY_ACTING = "sk-soak-a", "sk-soak-b", "sk-soak-acting"
ACTING_PREFIX = "/v1/threads"
# What an acting endpoint answers when nothing is scripted (the mock has no Assistants API).
RUN_ANSWER = {"status": 200, "body": {"id": "run_soak", "object": "thread.run", "status": "queued"}}
# Statuses of the mock's presets used here (examples/mock-llm/src/preset.rs).
PRESET_STATUS = {
    "openai_insufficient_quota": 429, "openai_rate_limit": 429, "openai_tokens_per_day": 429,
    "openai_server_error": 500, "capacity": 503, "anthropic_credit_balance": 400,
    "anthropic_overloaded": 529, "anthropic_rate_limit": 429, "google_per_model_quota": 429,
    "google_overloaded": 503,
}
RATE_PRESET = {"A": "openai_rate_limit", "B": "anthropic_rate_limit"}
ACCOUNT_QUOTA_PRESET = {"A": "openai_insufficient_quota", "B": "anthropic_credit_balance"}
SOAK_ID = re.compile(rb"soak-(\d+)\b")
ANSWER_SEQ = re.compile(r'"id":\s*"(?:chatcmpl-mock-|msg_mock_|cmpl-mock-)(\d+)"')
LOG_BAD = ("panicked", "function: proxy_on_", "wasm trap", "plugin configured to fail", "vm failed", "failed to")
CUT_OUTCOMES = ("reset_after_headers", "reset_mid_body")


def soak_config(text: str) -> str:
    """The shipped config with short cooldowns, so faults come and go within a run (settings the
    config already has are changed in place, the others added next to `base_cooldown_ms`)."""
    settings = {"base_cooldown_ms": 500, "max_cooldown_ms": 4000, "quota_cooldown_ms": 2000,
                "unavailable_cooldown_ms": 2000}
    m = re.search(r"^( *)base_cooldown_ms: \d+ *$", text, re.M)
    if not m:
        raise ValueError("the shipped config has no `base_cooldown_ms` under `fallback:`: it changed shape")
    indent = m.group(1)
    missing = []
    for name, value in settings.items():
        text, found = re.subn(rf"^( *){name}: \d+ *$", rf"\g<1>{name}: {value}", text, flags=re.M)
        if not found:
            missing.append(f"{indent}{name}: {value}")
    m = re.search(r"^ *base_cooldown_ms: \d+ *$", text, re.M)
    return text[: m.end()] + "".join("\n" + line for line in missing) + text[m.end():]


def chains_of(config_text: str) -> tuple[dict[str, list[str]], int]:
    """Fallback chains of the client filter's configuration, and the route's num_retries."""
    doc = yaml.safe_load(config_text)
    listener = doc["static_resources"]["listeners"][0]
    hcm = listener["filter_chains"][0]["filters"][0]["typed_config"]
    client = next(f for f in hcm["http_filters"] if f["name"] == "llm_fallback")
    fallback = client["typed_config"]["config"]["configuration"]["value"].get("fallback", {})
    route = hcm["route_config"]["virtual_hosts"][0]["routes"][0]["route"]
    return fallback.get("chains", {}), int(route.get("retry_policy", {}).get("num_retries", 1))


# --- what the mocks are told --------------------------------------------------------------------

def proves_rejection(spec: dict | None) -> bool:
    """The answer this step shapes proves the request was rejected before any processing: an
    explicit 429 or 529 with a provider error body, the connection kept (README, "Never
    re-sending a request that may have acted")."""
    if spec is None or spec.get("reset") or spec.get("stream_error"):
        return False
    status = spec.get("status", PRESET_STATUS.get(spec.get("preset"), 200))
    return status in (429, 529) and ("preset" in spec or "body" in spec)


def describe(spec: dict | None) -> str:
    if spec is None:
        return "normal"
    parts = [spec.get("preset") or (f"status {spec['status']}" if "status" in spec else "ok")]
    for k in ("reset", "stream_error", "delay_ms", "ttft_ms", "compress"):
        if spec.get(k):
            parts.append(f"{k}={json.dumps(spec[k], separators=(',', ':'))}")
    return " ".join(parts)


def fault_kinds_of(spec: dict | None) -> list[str]:
    if not spec:
        return []
    preset = spec.get("preset", "")
    kinds = []
    if "quota" in preset or "credit" in preset or "per_day" in preset:
        kinds.append("account quota" if preset in ACCOUNT_QUOTA_PRESET.values() else "model quota")
    elif "rate_limit" in preset:
        kinds.append("rate limit")
    elif preset:
        kinds.append(f"{PRESET_STATUS[preset]}")
    if spec.get("reset"):
        kinds.append(f"reset {spec['reset']}")
    if spec.get("stream_error"):
        kinds.append("stream error event")
    if spec.get("compress"):
        kinds.append("gzip")
    if spec.get("ttft_ms") or spec.get("delay_ms"):
        kinds.append("slow")
    return kinds


class Faults:
    """Draws scripted steps: one generation of a key's script is a short list of steps around
    one dominant fault, so faults come in bursts and go."""

    KINDS = ("ok", "slow", "rate", "model_quota", "overload", "reset", "stream_error")
    # Quota stops cost a model (or a whole account) seconds of traffic, every other fault well
    # under one: they are kept rare so the run is not mostly answered locally.
    MIXED = (6, 1, 1, 0.03, 1, 1, 1)

    def __init__(self, rng: random.Random):
        self.rng = rng

    def gzip(self, step: dict, p: float = 0.25) -> dict:
        if self.rng.random() < p:
            step["compress"] = "gzip"
        return step

    def step(self, kind: str, provider: str, acting: bool = False) -> dict:
        r = self.rng
        if kind == "ok":
            step: dict = {}
            if r.random() < 0.3:
                step["chunks"] = r.randint(1, 6)
            if r.random() < 0.2:
                step["ttft_ms"] = r.randint(0, 300)
            if r.random() < 0.15:
                step["delay_ms"] = r.randint(0, 150)
            if acting:
                step = {**RUN_ANSWER, **{k: v for k, v in step.items() if k == "delay_ms"}}
            return self.gzip(step)
        if kind == "slow":
            step = {"delay_ms": r.randint(100, 600)}
            if not acting:
                step.update(ttft_ms=r.randint(100, 300), chunk_delay_ms=r.randint(0, 30))
            else:
                step.update(RUN_ANSWER)
            return self.gzip(step)
        if kind == "rate":
            step = {"preset": RATE_PRESET[provider] if r.random() < 0.8 else RATE_PRESET["AB".replace(provider, "")],
                    "headers": {"retry-after": str(r.randint(0, 2))}}
            if r.random() < 0.2:
                step["delay_ms"] = r.randint(0, 100)
            return self.gzip(step)
        if kind == "model_quota":
            # A daily quota of this model; the stated reset is kept short (retry-after is trusted
            # before the body's own hints) so the model comes back within the run.
            step = {"preset": r.choice(("google_per_model_quota", "openai_tokens_per_day")),
                    "headers": {"retry-after": str(r.randint(1, 2))}}
            return self.gzip(step)
        if kind == "overload":
            preset = r.choice(("anthropic_overloaded", "anthropic_overloaded", "capacity", "openai_server_error", "google_overloaded"))
            step = {"preset": preset}
            if r.random() < 0.2:
                step["delay_ms"] = r.randint(0, 200)
            return self.gzip(step)
        if kind == "reset":
            mode = r.choice(("before_headers", "after_headers", "mid_body", "mid_body"))
            step = {"reset": mode}
            if mode == "mid_body":
                step["reset_after_chunks"] = r.randint(1, 3)
            if r.random() < 0.3:
                step["delay_ms"] = r.randint(0, 100)
            if acting and mode != "before_headers":
                step.update(RUN_ANSWER)
            return self.gzip(step, 0.15)
        if kind == "stream_error":
            if acting:
                return self.step("overload", provider, acting)
            after = r.choice((0, 0, 1, 2))
            preset = r.choice(("anthropic_overloaded", "capacity", "openai_rate_limit", "openai_server_error"))
            step = {"stream_error": {"after": after, "preset": preset}, "chunks": r.randint(3, 5)}
            return self.gzip(step, 0.15)
        raise ValueError(kind)

    def generation(self, provider: str, acting: bool = False) -> list[dict]:
        r = self.rng
        dominant = r.choice(("calm", "rate", "model_quota", "overload", "reset", "stream_error", "slow", "mixed", "mixed"))
        steps = []
        for _ in range(r.randint(5, 20) if acting else r.randint(5, 60)):
            if dominant == "calm":
                kind = "ok" if r.random() < 0.9 else r.choices(self.KINDS, self.MIXED)[0]
            elif dominant not in ("mixed", "model_quota") and r.random() < 0.5:
                kind = dominant
            else:
                kind = r.choices(self.KINDS, self.MIXED)[0]
            steps.append(self.step(kind, provider, acting))
        if dominant == "model_quota":
            steps.insert(r.randrange(len(steps)), self.step("model_quota", provider, acting))
        if acting and r.random() < 0.1:
            steps.insert(r.randrange(len(steps)), self.gzip({"preset": ACCOUNT_QUOTA_PRESET[provider]}))
        return steps

    def account_quota(self, provider: str) -> list[dict]:
        """One step: the whole account is out of credit (every model of it cools down)."""
        return [self.gzip({"preset": ACCOUNT_QUOTA_PRESET[provider]}, 0.3)]


class AttributionError(Exception):
    pass


@dataclass
class KeyScript:
    """Every generation of one script key (a model, or an account) as installed, in order.

    A new generation is installed only after the records showed the current one's last step
    consumed, and steps are chosen and recorded under one lock in the mock, so in seq order a
    key's step indices run 0..L-1, then 0..L'-1: each record maps to exactly one step."""

    install: dict
    default: dict | None = None
    gens: list[list[dict]] = field(default_factory=list)
    cur: int = -1
    pos: int = 0

    def exhausted(self) -> bool:
        return self.cur == len(self.gens) - 1 and (self.cur < 0 or self.pos >= len(self.gens[self.cur]))

    def attribute(self, step: int | None) -> dict | None:
        if step is None:
            if self.default is None:
                raise AttributionError("a default step answered but the key has no default")
            return self.default
        if self.cur >= 0 and self.pos < len(self.gens[self.cur]) and step == self.pos:
            self.pos += 1
            return self.gens[self.cur][step]
        if step == 0 and self.cur < len(self.gens) - 1 and (self.cur < 0 or self.pos >= len(self.gens[self.cur])):
            self.cur += 1
            self.pos = 1
            return self.gens[self.cur][0]
        raise AttributionError(f"step {step} recorded while generation {self.cur} is at {self.pos}")


# --- the clients -----------------------------------------------------------------------------

@dataclass
class Plan:
    n: int
    model: str
    api: str  # openai | anthropic | acting
    stream: bool
    unsafe: bool
    cancel: str  # "" | timeout | close
    read_timeout: float
    idempotency_key: bool
    usage: bool


@dataclass
class Result:
    kind: str
    status: int = 0
    served: str = ""
    answer_seq: int | None = None
    attempts_header: str = ""
    blocked: bool = False
    error_class: str = ""
    local: bool = False
    detail: str = ""


def make_plans(n: int, rng: random.Random, unsafe_share: float = 0.5) -> list[Plan]:
    """Requests to make. `unsafe` is the README's judgement (rules 1, 2, 4): declared
    `x-llm-retry-safe: unsafe` (an Idempotency-Key does not override a declaration), or an acting
    path without an Idempotency-Key; an acting path *with* one is safe to re-send."""
    plans = []
    for i in range(n):
        model = rng.choice(MODELS)
        unsafe = rng.random() < unsafe_share
        acting = rng.random() < (0.2 if unsafe else 0.05)
        idempotency_key = (not unsafe and acting) or (unsafe and not acting and rng.random() < 0.25)
        if acting:
            api = "acting"
        else:
            native = "anthropic" if MOCK_OF[model] == "B" else "openai"
            api = native if rng.random() < 0.85 else ("openai" if native == "anthropic" else "anthropic")
        stream = api != "acting" and rng.random() < 0.5
        c = rng.random()
        cancel = "timeout" if c < 0.03 else "close" if (c < 0.05 and stream) else ""
        plans.append(Plan(
            n=i, model=model, api=api, stream=stream, unsafe=unsafe, cancel=cancel,
            # A client that gives up: mostly sooner than an answer takes here, sometimes during a
            # scripted delay or a rate-limit wait.
            read_timeout=(rng.uniform(0.001, 0.01) if rng.random() < 0.5 else rng.uniform(0.05, 0.4))
            if cancel == "timeout" else 30.0,
            idempotency_key=idempotency_key, usage=rng.random() < 0.5,
        ))
    return plans


def request_of(plan: Plan, seed: int) -> tuple[str, dict, bytes]:
    text = f"soak-{plan.n} say hello"
    headers = {"content-type": "application/json"}
    if plan.api == "acting":
        path = f"{ACTING_PREFIX}/thread_{plan.n}/runs"
        headers["authorization"] = f"Bearer {KEY_ACTING}"
        body = {"assistant_id": "asst_soak", "model": plan.model,
                "additional_messages": [{"role": "user", "content": text}]}
    elif plan.api == "anthropic":
        path = "/v1/messages"
        headers.update({"x-api-key": KEY_B, "anthropic-version": "2023-06-01"})
        body = {"model": plan.model, "max_tokens": 64, "messages": [{"role": "user", "content": text}], "stream": plan.stream}
    else:
        path = "/v1/chat/completions"
        headers["authorization"] = f"Bearer {KEY_A}"
        body = {"model": plan.model, "messages": [{"role": "user", "content": text}], "stream": plan.stream}
        if plan.stream and plan.usage:
            body["stream_options"] = {"include_usage": True}
    if plan.unsafe and plan.api != "acting":
        headers["x-llm-retry-safe"] = "unsafe"
    if plan.idempotency_key:
        headers["idempotency-key"] = f"soak-{seed}-{plan.n}"
    return path, headers, json.dumps(body).encode()


_local = threading.local()


def session() -> requests.Session:
    s = getattr(_local, "session", None)
    if s is None:
        s = _local.session = requests.Session()
    return s


def stream_complete(text: str, anthropic_shape: bool) -> tuple[bool, bool]:
    """(ended properly, carried an error event) for an event stream's text."""
    error = "event: error" in text or re.search(r'^data: \{"error"', text, re.M) is not None
    done = "event: message_stop" in text if anthropic_shape else "data: [DONE]" in text
    return done, error


def drive(url: str, plan: Plan, seed: int) -> Result:
    path, headers, body = request_of(plan, seed)
    try:
        r = session().post(url + path, data=body, headers=headers, timeout=(5, plan.read_timeout), stream=True)
    except requests.exceptions.ReadTimeout:
        return Result("client_cancel" if plan.cancel == "timeout" else "hang", detail="no answer headers")
    except requests.RequestException as e:
        _local.session = None
        return Result("transport_error", detail=f"{type(e).__name__}: {e}")
    res = Result("", status=r.status_code, served=r.headers.get("x-llm-model", ""),
                 attempts_header=r.headers.get("x-llm-attempts", ""),
                 blocked="x-llm-retry-blocked" in r.headers, error_class=r.headers.get("x-llm-error-class", ""))
    event_stream = r.headers.get("content-type", "").startswith("text/event-stream")
    try:
        if plan.cancel == "close" and r.status_code == 200 and event_stream:
            first = next(r.iter_content(chunk_size=None), b"")
            r.close()
            _local.session = None
            m = ANSWER_SEQ.search(first.decode(errors="replace"))
            res.answer_seq = int(m.group(1)) if m else None
            res.kind = "client_closed"
            return res
        content = r.content
    except requests.exceptions.ReadTimeout:
        res.kind = "client_cancel" if plan.cancel == "timeout" else "hang"
        return res
    except requests.RequestException as e:
        _local.session = None
        res.kind, res.detail = "cut", f"{type(e).__name__}"
        return res
    text = content.decode(errors="replace")
    m = ANSWER_SEQ.search(text)
    res.answer_seq = int(m.group(1)) if m else None
    if r.status_code != 200:
        res.kind = f"http_{r.status_code}"
        res.local = '"all_models_unavailable"' in text or res.attempts_header == "0"
        return res
    if event_stream:
        done, error = stream_complete(text, path.startswith("/v1/messages"))
        res.kind = "stream_error_event" if error else "ok_stream" if done else "truncated"
        return res
    try:
        json.loads(text)
    except ValueError:
        res.kind, res.detail = "truncated", "200 JSON body does not parse"
        return res
    res.kind = "ok"
    return res


# --- the run ---------------------------------------------------------------------------------

def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def prometheus_sums(envoy: Envoy) -> Counter:
    sums: Counter = Counter()
    for line in envoy.prometheus().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_labels, _, value = line.rpartition(" ")
        name = name_labels.split("{", 1)[0]
        try:
            sums[name] += float(value)
        except ValueError:
            pass
        if name == "llm_fallback_responses":
            m = re.search(r'class="([^"]*)"', name_labels)
            if m:
                sums[f"responses:{m.group(1)}"] += float(value)
    return sums


@dataclass
class Report:
    violations: list[tuple[str, int, str]]
    text: str
    numbers: dict


class Soak:
    def __init__(self, *, requests_n: int, seed: int, threads: int, epoch: int, max_seconds: float,
                 workdir: Path, rss_limit_mb: float, rss_limit_pct: float, quiet: bool):
        self.n, self.seed, self.threads, self.epoch = requests_n, seed, threads, epoch
        self.max_seconds, self.workdir, self.quiet = max_seconds, workdir, quiet
        self.rss_limit_mb, self.rss_limit_pct = rss_limit_mb, rss_limit_pct
        self.rng = random.Random(seed)
        self.faults = Faults(random.Random(seed * 7919 + 1))
        self.violations: list[tuple[str, int, str]] = []
        self.scripts: dict[str, dict[str, KeyScript]] = {}
        self.last_seq = {"A": 0, "B": 0}
        self.attempts: dict[int, list[tuple]] = defaultdict(list)
        self.outcomes: Counter = Counter()
        self.epochs = 0
        self.installs: Counter = Counter()

    def log(self, msg: str) -> None:
        if not self.quiet:
            print(msg, file=sys.stderr, flush=True)

    def violation(self, kind: str, n: int, detail: str) -> None:
        self.violations.append((kind, n, detail))

    # The mocks' records, incrementally.
    def poll(self) -> None:
        for name, mock in self.mocks.items():
            r = requests.get(f"{mock.url}/_mock/requests", params={"since": self.last_seq[name]}, timeout=60)
            r.raise_for_status()
            for rec in r.json():
                self.ingest(name, rec)

    def ingest(self, mock: str, rec: dict) -> None:
        seq = rec["seq"]
        if seq != self.last_seq[mock] + 1:
            self.violation("records_lost", -1, f"mock {mock}: seq {self.last_seq[mock]} then {seq}")
        self.last_seq[mock] = seq
        label, step = rec["script"], rec["step"]
        spec = None
        if label is not None:
            key = self.scripts[mock].get(label)
            if key is None:
                self.violation("attribution", -1, f"mock {mock} seq {seq}: unknown script {label}")
            else:
                try:
                    spec = key.attribute(step)
                except AttributionError as e:
                    self.violation("attribution", -1, f"mock {mock} seq {seq} script {label}: {e}")
        m = SOAK_ID.search(rec["body"].encode())
        if not m:
            self.violation("foreign_record", -1, f"mock {mock} seq {seq}: {rec['method']} {rec['path']} without a soak id")
            return
        h = rec["headers"]
        self.attempts[int(m.group(1))].append((mock, seq, rec["outcome"], label, step, spec, rec["model"],
                                               h.get("x-request-id", "-"), h.get("x-envoy-attempt-count", "-")))

    def rescript(self, first: bool = False) -> None:
        self.epochs += 1
        for provider, mock in self.mocks.items():
            batch = []
            for label, key in self.scripts[provider].items():
                if not key.exhausted():
                    continue
                if label == "account:*":
                    if first or self.rng.random() >= 0.03:
                        continue
                    steps = self.faults.account_quota(provider)
                elif label == f"account:{KEY_ACTING}":
                    if not first and self.rng.random() >= 0.5:
                        continue
                    steps = self.faults.generation(provider, acting=True)
                else:
                    if self.rng.random() >= 0.6:
                        continue
                    steps = self.faults.generation(provider)
                key.gens.append(steps)
                batch.append({**key.install, "steps": steps, "default": key.default})
                self.installs[label] += 1
            if batch:
                requests.post(mock.url + "/_mock/scripts", json=batch, timeout=10).raise_for_status()

    def run(self) -> Report:
        t_setup = time.monotonic()
        text = soak_config(SHIPPED_CONFIG.read_text())
        self.chains, num_retries = chains_of(text)
        self.max_attempts = 1 + num_retries
        # Polled every epoch; the ring buffer only has to hold one epoch's records (a gap is reported).
        args = ["--record-limit", "50000", "--record-body-limit", "4096"]
        self.mocks = {"A": Mock(self.workdir, args), "B": Mock(self.workdir, args)}
        envoy = None
        try:
            envoy = Envoy(self.workdir, self.mocks["A"].port, second_upstream_port=self.mocks["B"].port,
                          edit=soak_config, concurrency=2)
            # Decisions stay in the log (info); the per-attempt debug lines would only cost CPU.
            requests.post(envoy.admin + "/logging?wasm=info", timeout=5).raise_for_status()
            return self._run(envoy, t_setup)
        finally:
            if envoy is not None:
                envoy.stop()
            for mock in self.mocks.values():
                mock.stop()

    def _run(self, envoy: Envoy, t_setup: float) -> Report:
        for provider, mock in self.mocks.items():
            keys = {m: KeyScript(install={"model": m}) for m in PROVIDER_MODELS[provider]}
            keys["account:*"] = KeyScript(install={"account": "*"})
            keys[f"account:{KEY_ACTING}"] = KeyScript(
                install={"account": KEY_ACTING, "path_prefix": ACTING_PREFIX}, default=RUN_ANSWER)
            self.scripts[provider] = keys
        self.rescript(first=True)
        vm_before = prometheus_sums(envoy)
        plans = make_plans(self.n, self.rng)
        results: list[Result | None] = [None] * self.n
        pid = envoy.proc.pid
        rss_samples: list[tuple[int, float]] = []
        counter_samples: list[tuple[float, float]] = []
        done_count = 0
        lock = threading.Lock()
        next_mark = [max(1, self.n // 10)]
        marks: list[int] = []

        def work(plan: Plan) -> None:
            nonlocal done_count
            try:
                res = drive(envoy.url, plan, self.seed)
            except Exception as e:  # noqa: BLE001 - reported as a violation, never lost
                res = Result("client_bug", detail=repr(e))
            results[plan.n] = res
            with lock:
                done_count += 1
                if done_count >= next_mark[0]:
                    marks.append(done_count)
                    next_mark[0] += max(1, self.n // 10)

        start = time.monotonic()
        deadline = start + self.max_seconds
        stopped_early = False
        outstanding = threading.BoundedSemaphore(self.threads * 2)
        with cf.ThreadPoolExecutor(self.threads) as pool:
            futures = []
            for i, plan in enumerate(plans):
                if time.monotonic() > deadline:
                    stopped_early = True
                    break
                if i and i % self.epoch == 0:
                    self.poll()
                    self.rescript()
                while marks:
                    mark = marks.pop(0)
                    rss_samples.append((mark, rss_mb(pid)))
                    counter_samples.append((time.monotonic(), prometheus_sums(envoy)["llm_fallback_requests"]))
                    self.log(f"soak: {mark}/{self.n} done, {mark / (time.monotonic() - start):.0f} req/s, "
                             f"envoy rss {rss_samples[-1][1]:.1f} MB")
                outstanding.acquire()
                f = pool.submit(work, plan)
                f.add_done_callback(lambda _f: outstanding.release())
                futures.append(f)
            cf.wait(futures)
        wall = time.monotonic() - start
        issued = len(futures)
        rss_end = rss_mb(pid)
        # The filter folds counters into stats on a 1 s timer; let the last ones land.
        time.sleep(2.5)
        self.poll()
        filt = prometheus_sums(envoy)
        counter_samples.append((time.monotonic(), filt["llm_fallback_requests"]))
        return self.check(envoy, plans[:issued], results[:issued], wall, stopped_early,
                          rss_samples, rss_end, counter_samples, vm_before, filt)

    def check(self, envoy, plans, results, wall, stopped_early, rss_samples, rss_end,
              counter_samples, vm_before, filt) -> Report:
        self.plans, self.results = plans, results
        outcomes: Counter = Counter()
        traced = 0
        local_by: Counter = Counter()
        unsafe_resent = unsafe_resends = blocked = local = attempts_mismatch = 0
        for plan, res in zip(plans, results):
            n = plan.n
            # In attempt order (Envoy's attempt count): sequence numbers are per provider.
            atts = sorted(self.attempts.get(n, []),
                          key=lambda a: (int(a[8]) if str(a[8]).isdigit() else 0, a[1]))
            if res is None:
                self.violation("no_outcome", n, "the client never finished")
                continue
            outcomes[res.kind] += 1
            outcomes["unsafe" if plan.unsafe else "safe"] += 1
            recs = "; ".join(f"{a[0]}#{a[1]} {a[6]} {a[2]} [{describe(a[5])}] (x-request-id {a[7]}, attempt {a[8]})"
                             for a in atts) or "no upstream record"
            where = f"{plan.api} {plan.model} {'stream' if plan.stream else 'plain'} {'unsafe' if plan.unsafe else 'safe'}: {res.kind} {res.status} {res.detail} | {recs}"
            if res.kind in ("transport_error", "hang", "truncated", "client_bug"):
                self.violation(res.kind, n, where)
            # 1. Exactly one outcome, by the right attempt, within the route's attempts.
            if len(atts) > self.max_attempts:
                self.violation("too_many_attempts", n, where)
            # Attempts may move between providers (in-request switch), each to the provider
            # that serves the model it asks.
            if any(MOCK_OF.get(a[6]) != a[0] for a in atts):
                self.violation("attempt_on_the_wrong_provider", n, where)
            if res.kind == "cut" and (not atts or atts[-1][2] not in CUT_OUTCOMES):
                self.violation("cut_without_upstream_reset", n, where)
            if res.kind in ("ok", "ok_stream", "stream_error_event") and not atts:
                self.violation("answer_without_attempt", n, where)
            if res.served and res.served != plan.model and res.served not in self.chains.get(plan.model, []):
                self.violation("served_outside_chain", n, where)
            if res.answer_seq is not None and res.kind in ("ok", "ok_stream", "stream_error_event", "client_closed"):
                mock = MOCK_OF.get(res.served, "?")
                if not atts or (atts[-1][0], atts[-1][1]) != (mock, res.answer_seq):
                    self.violation("answer_not_from_last_attempt", n, f"answer id seq {res.answer_seq} from {mock} | " + where)
                else:
                    traced += 1
            if res.kind == "stream_error_event" and atts and not (atts[-1][5] or {}).get("stream_error"):
                self.violation("stream_error_not_scripted", n, where)
            if res.status == 409:
                self.violation("false_duplicate_refusal", n, where)
            if res.attempts_header.isdigit() and res.kind not in ("client_cancel", "client_closed", "cut") \
                    and int(res.attempts_header) != len(atts):
                attempts_mismatch += 1
            if res.local:
                local += 1
                local_by[res.error_class or "-"] += 1
            # 2. Unsafe requests: every send but the last was a proven rejection.
            if plan.unsafe:
                blocked += res.blocked
                if len(atts) > 1:
                    unsafe_resent += 1
                    unsafe_resends += len(atts) - 1
                    for a in atts[:-1]:
                        if not proves_rejection(a[5]):
                            self.violation("unsafe_resent_without_proven_rejection", n, where)
                            break
        known = {p.n for p in plans}
        for n in self.attempts:
            if n not in known:
                self.violation("record_of_unknown_request", n, "")
        # 3. No trap, no reload; counters advancing.
        bad_lines = []
        with open(envoy.log_path, errors="replace") as f:
            for line in f:
                low = line.lower()
                if any(p in low for p in LOG_BAD):
                    bad_lines.append(line.rstrip())
        for line in bad_lines[:20]:
            self.violation("envoy_log", -1, line[:400])
        if len(bad_lines) > 20:
            self.violation("envoy_log", -1, f"... {len(bad_lines) - 20} more such lines")
        vm_created = (vm_before["envoy_wasm_envoy_wasm_runtime_v8_created"], filt["envoy_wasm_envoy_wasm_runtime_v8_created"])
        reloads = sum(v for k, v in filt.items() if k.startswith("envoy_wasm_") and "vm_reload" in k)
        if vm_created[1] != vm_created[0]:
            self.violation("wasm_vm_created", -1, f"wasm VMs created {vm_created[0]:.0f} -> {vm_created[1]:.0f}")
        if reloads:
            self.violation("wasm_vm_reload", -1, f"vm_reload counters sum to {reloads:.0f}")
        values = [v for _, v in counter_samples]
        if any(b < a for a, b in zip(values, values[1:])) or values[-1] <= 0 or (len(values) > 1 and values[-1] <= values[0]):
            self.violation("counters_not_advancing", -1, f"llm_fallback_requests samples {values}")
        reached = len(plans) - outcomes["transport_error"]
        if not (reached - outcomes["client_cancel"] <= filt["llm_fallback_requests"] <= len(plans)):
            self.violation("request_counter", -1, f"llm_fallback_requests {filt['llm_fallback_requests']:.0f} for {len(plans)} requests")
        # The shipped route lists every provider: a retry that reached another cluster than the
        # filter named can only be a race the filter tells apart (logged at info), never counted.
        if filt["llm_fallback_misrouted"]:
            self.violation("misrouted_counted", -1, f"llm_fallback_misrouted {filt['llm_fallback_misrouted']:.0f}")
        # 4. Memory.
        rss_start = rss_samples[0][1] if rss_samples else rss_end
        growth = rss_end - rss_start
        growth_pct = 100 * growth / rss_start if rss_start else 0.0
        if growth >= self.rss_limit_mb and growth_pct >= self.rss_limit_pct:
            self.violation("envoy_rss_growth", -1, f"{rss_start:.1f} MB at 10 % -> {rss_end:.1f} MB at the end")

        records = [a for atts in self.attempts.values() for a in atts]
        fault_kinds: Counter = Counter()
        for a in records:
            for kind in fault_kinds_of(a[5]):
                fault_kinds[kind] += 1
        by_outcome = Counter(a[2] for a in records)
        by_mock = Counter(a[0] for a in records)
        kinds = sorted((k for k in outcomes if k not in ("safe", "unsafe")), key=lambda k: -outcomes[k])
        lines = [
            f"soak: {len(plans)} requests (seed {self.seed}), Envoy 1.40 with 2 workers, {self.threads} client threads, "
            f"{self.epochs} fault epochs ({sum(self.installs.values())} scripts installed)"
            + ("  [stopped early: --max-seconds]" if stopped_early else ""),
            f"wall {wall:.1f} s, {len(plans) / wall:.0f} requests/s",
            f"requests: {outcomes['safe']} safe, {outcomes['unsafe']} unsafe; "
            f"{sum(p.stream for p in plans)} streaming; {sum(p.api == 'anthropic' for p in plans)} Anthropic-shaped, "
            f"{sum(p.api == 'acting' for p in plans)} to an acting path",
            "outcomes: " + ", ".join(f"{k} {outcomes[k]}" for k in kinds),
            f"answered locally (every model of the chain cooling, no attempt): {local} ("
            + ", ".join(f"{k} {v}" for k, v in local_by.most_common()) + f"); 200 answers traced to their request's last attempt: {traced}",
            "faults answered upstream: " + ", ".join(f"{k} {v}" for k, v in fault_kinds.most_common()),
            f"upstream attempts: {len(records)} (A {by_mock['A']}, B {by_mock['B']}; "
            + ", ".join(f"{k} {v}" for k, v in sorted(by_outcome.items())) + ")",
            f"unsafe: {unsafe_resent} requests re-sent after proven rejections ({unsafe_resends} re-sends), "
            f"{blocked} answers with re-sends blocked (x-llm-retry-blocked; filter counter retries_blocked "
            f"{filt['llm_fallback_retries_blocked']:.0f})",
            f"filter counters: requests {filt['llm_fallback_requests']:.0f}, attempts {filt['llm_fallback_attempts']:.0f}, "
            f"fallbacks {filt['llm_fallback_fallbacks']:.0f}, cooldowns opened {filt['llm_fallback_cooldowns_opened']:.0f}, "
            f"stream errors {filt['llm_fallback_stream_errors']:.0f}; answers by class: "
            + ", ".join(f"{k.split(':', 1)[1]} {v:.0f}" for k, v in sorted(filt.items()) if k.startswith("responses:") and v),
            f"x-llm-attempts differing from the recorded attempts: {attempts_mismatch}",
            f"envoy rss: {rss_start:.1f} MB at 10 %, {rss_end:.1f} MB at the end ({growth:+.1f} MB, {growth_pct:+.1f} %); "
            f"samples " + " ".join(f"{v:.0f}" for _, v in rss_samples),
            f"envoy log: {len(bad_lines)} panic/trap/failure lines; wasm VMs created {vm_created[0]:.0f} -> {vm_created[1]:.0f}, "
            f"reloads {reloads:.0f}",
        ]
        by_kind = Counter(v[0] for v in self.violations)
        lines.append("violations: " + (", ".join(f"{k} {v}" for k, v in by_kind.items()) if by_kind else "none"))
        shown: Counter = Counter()
        for kind, n, detail in self.violations:
            shown[kind] += 1
            if shown[kind] <= 10:
                lines.append(f"  {kind}: soak-{n} {detail}" if n >= 0 else f"  {kind}: {detail}")
        numbers = {"outcomes": outcomes, "traced": traced, "faults": fault_kinds, "records": len(records), "by_outcome": by_outcome, "unsafe_resent": unsafe_resent,
                   "blocked": blocked, "rss_start": rss_start, "rss_end": rss_end, "wall": wall, "local": local,
                   "filter": filt, "stopped_early": stopped_early, "attempts_mismatch": attempts_mismatch}
        return Report(self.violations, "\n".join(lines), numbers)


def run_soak(requests_n: int, seed: int = 1, threads: int = 32, epoch: int = 500, max_seconds: float = 3600,
             workdir: Path | None = None, rss_limit_mb: float = 30, rss_limit_pct: float = 25, quiet: bool = False) -> Report:
    workdir = workdir or Path(tempfile.mkdtemp(prefix="llm-fallback-soak-"))
    return Soak(requests_n=requests_n, seed=seed, threads=threads, epoch=epoch, max_seconds=max_seconds,
                workdir=workdir, rss_limit_mb=rss_limit_mb, rss_limit_pct=rss_limit_pct, quiet=quiet).run()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=10000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=32, help="client threads (one requests.Session each)")
    p.add_argument("--epoch", type=int, default=500, help="requests between re-scriptings of the mocks")
    p.add_argument("--max-seconds", type=float, default=3600, help="stop issuing requests after this long")
    p.add_argument("--rss-limit-mb", type=float, default=30)
    p.add_argument("--rss-limit-pct", type=float, default=25)
    p.add_argument("--workdir", type=Path)
    a = p.parse_args()
    report = run_soak(a.requests, a.seed, a.threads, a.epoch, a.max_seconds, a.workdir, a.rss_limit_mb, a.rss_limit_pct)
    print(report.text)
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
