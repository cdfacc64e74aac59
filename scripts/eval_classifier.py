"""`make eval`: how well the classifier reads real answers it was not written from.

Every answer of `tests/fixtures/provider_errors.jsonl` (the answers the rules were written from)
and of `tests/fixtures/corpus/*.jsonl` (gathered later, held out) is classified by the filter's
own core (`target/release/llm-fallback classify`). The held-out corpus is split **by source** (a
GitHub repository, else a web host): all answers of one source land in the same part, so a
provider's or a project's phrasing cannot leak from the development part into the test part.
The split is a hash of the source, fixed, so it never moves with the data: tune on the
development part only, read the test part.

Reports, per part: strict agreement with the expected class, agreement on the action group
(stop and switch / wait or back off / switch / fail), quota stops read as retryable (the costliest
mistake), and per-class precision and recall. `--misses` lists the development misses.
"""

from __future__ import annotations

import argparse
import collections
import glob
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "target/release/llm-fallback"
FIXTURES = ROOT / "tests/fixtures/provider_errors.jsonl"
CORPUS = sorted(glob.glob(str(ROOT / "tests/fixtures/corpus/*.jsonl")))
# Probe answers written blind by helper sessions (not captured answers; see their README):
# printed as a regression check, never part of the development or test figures.
PROBES = sorted(glob.glob(str(ROOT / "tests/fixtures/probes/*.tsv")))
TEST_SHARE = 0.4

GROUP = {
    "quota_exhausted": "stop and switch",
    "rate_limited": "wait or back off",
    "overloaded": "wait or back off",
    "timeout": "wait or back off",
    "model_unavailable": "switch",
    "context_overflow": "switch",
    "content_policy": "fail",
    "auth": "fail",
    "bad_request": "fail",
    "ok": "ok",
}
RETRYABLE = {"rate_limited", "overloaded", "timeout"}


def source_key(url: str) -> str:
    parsed = urlparse(url)
    host = parsed.netloc.lower()
    parts = [p for p in parsed.path.split("/") if p]
    if host == "github.com" and len(parts) >= 2:
        return f"github:{parts[0].lower()}/{parts[1].lower()}"
    return host or url


def part_of(url: str) -> str:
    digest = hashlib.sha256(source_key(url).encode()).digest()
    return "test" if digest[0] < 256 * TEST_SHARE else "development"


def load() -> list[dict]:
    rows = []
    for line in FIXTURES.read_text().splitlines():
        entry = json.loads(line)
        entry["part"] = "development"  # the rules were written from these
        rows.append(entry)
    for path in CORPUS:
        for line in Path(path).read_text().splitlines():
            entry = json.loads(line)
            entry["part"] = part_of(entry["source"])
            rows.append(entry)
    seen = collections.Counter(e["id"] for e in rows)
    repeated = sorted(i for i, n in seen.items() if n > 1)
    if repeated:
        raise SystemExit(f"answer ids must be unique; repeated: {', '.join(repeated)}")
    return rows


def load_probes() -> list[dict]:
    rows = []
    for path in PROBES:
        name = Path(path).stem
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            status, want, body = line.split("\t", 2)
            # Non-JSON bodies (SSE, plain text, NDJSON: JSON lines) write their newlines as `\n`.
            if not body.startswith(("{", "[")) or not parses(body):
                body = body.replace("\\n", "\n")
            rows.append({"id": f"{name}:{n}", "provider": name, "status": int(status), "headers": {},
                         "body": body, "expect": {"class": want}, "source": f"probes/{name}"})
    return rows


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def classify(entry: dict) -> dict:
    answer = {"status": entry["status"], "headers": entry["headers"], "body": entry["body"]}
    if entry.get("code_details"):
        answer["code_details"] = entry["code_details"]
    out = subprocess.run([str(CLI), "classify"], input=json.dumps(answer), capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"class": "error", "reason": out.stderr.strip()[:120]}


def report(name: str, rows: list[tuple[dict, dict]]) -> dict:
    n = len(rows)
    strict = sum(e["expect"]["class"] == got["class"] for e, got in rows)
    group = sum(GROUP.get(e["expect"]["class"]) == GROUP.get(got["class"]) for e, got in rows)
    quota = [got for e, got in rows if e["expect"]["class"] == "quota_exhausted"]
    quota_retryable = sum(got["class"] in RETRYABLE for got in quota)
    sources = {source_key(e["source"]) for e, _ in rows}
    producers = {e["provider"] for e, _ in rows}
    print(f"\n## {name}: {n} answers, {len(producers)} producers, {len(sources)} sources")
    if not n:
        return {}
    print(f"strict agreement {strict}/{n} = {strict / n:.1%}; action group {group}/{n} = {group / n:.1%}; "
          f"quota stops read as retryable: {quota_retryable} of {len(quota)}")
    print("\n| class | expected | precision | recall |\n|---|---|---|---|")
    for cls in GROUP:
        expected = [got for e, got in rows if e["expect"]["class"] == cls]
        predicted = [e for e, got in rows if got["class"] == cls]
        hit = sum(got["class"] == cls for got in expected)
        precision = f"{sum(e['expect']['class'] == cls for e in predicted) / len(predicted):.0%}" if predicted else "-"
        recall = f"{hit / len(expected):.0%}" if expected else "-"
        if expected or predicted:
            print(f"| {cls} | {len(expected)} | {precision} | {recall} |")
    learned = [(e, got) for e, got in rows if got.get("reason", "").startswith("learned tie-breaker")]
    if learned:
        right = sum(e["expect"]["class"] == got["class"] for e, got in learned)
        print(f"\nthe learned tie-breaker decided {len(learned)} answers, {right} of them as expected")
    return {"n": n, "strict": strict, "group": group, "quota_retryable": quota_retryable}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the development part's misses")
    parser.add_argument("--require", type=float, metavar="PCT",
                        help="fail unless the development part agrees strictly on at least PCT %% "
                             "and reads no quota stop as retryable (the test part is only printed)")
    args = parser.parse_args()
    if not CLI.exists():
        print(f"missing {CLI}: run `make build`", file=sys.stderr)
        return 2
    parts = collections.defaultdict(list)
    for entry in load():
        parts[entry["part"]].append((entry, classify(entry)))
    dev = report("development (fixtures + development part of the corpus)", parts["development"])
    report("test (held-out corpus, test part)", parts["test"])
    probes = [(entry, classify(entry)) for entry in load_probes()]
    report("probes (written blind by helper sessions; not real answers, tuned on after their first reading)", probes)
    if args.misses:
        print("\n## development misses")
        for e, got in parts["development"]:
            if e["expect"]["class"] != got["class"]:
                print(f"- {e['id']}: want {e['expect']['class']}, got {got['class']} ({got.get('reason')})")
    if args.require is not None:
        strict = 100 * dev["strict"] / dev["n"]
        if strict < args.require or dev["quota_retryable"]:
            print(f"\nFAILED: development part {strict:.1f} % strict (required {args.require} %), "
                  f"{dev['quota_retryable']} quota stops read as retryable (required 0)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
