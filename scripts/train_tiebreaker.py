"""Trains the classifier's learned tie-breaker on the development part, and writes its weights.

`make train-tiebreaker` (offline; CI never retrains). The tie-breaker (`src/classify/learned.rs`)
only speaks where no rule decided an answer, only weak signals did (the status, or a generic
code such as `invalid_request_error`): a softmax regression over the answer's tokens (which
`llm-fallback features` prints, so the trainer and the filter read the same tokens).

Protocol, so that the test part stays held out:
1. Rows: the development part only (the fixtures and the corpus answers whose source hashes to
   development, as in `scripts/eval_classifier.py`). The test part is never read here.
2. Cross-validation **by source** within the development part: five folds (a second, fixed hash
   of the source), train on four, predict the fifth's weak-basis answers. The settings (the
   margin a prediction needs over the runner-up, whether it may break a generic code's tie) are
   chosen on those out-of-fold predictions, counting a quota stop read as retryable as five
   misses (the costliest mistake).
3. The final weights are trained on the whole development part with those settings and written
   to `src/classify/learned/weights.rs`, with the cross-validation figures in its header.
   `--check` (CI, in `make eval-gate`) fails when the committed file is not what the development
   part trains, so weights and data never drift apart.

Deterministic: full passes in a fixed order, no randomness.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eval_classifier as ev  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src/classify/learned/weights.rs"
CLASSES = list(ev.GROUP)
FOLDS = 5
MIN_DF = 3  # a token must occur in three training answers to get a weight
L2 = 0.08
EPOCHS = 60
RATE = 0.5
SCALE = 100  # weights are stored as round(w * SCALE) in i16
MARGINS = [0, 50, 100, 150, 200, 300, 400, 600]
QUOTA_RETRYABLE_COST = 5


def fold_of(source: str) -> int:
    return hashlib.sha256(f"fold:{ev.source_key(source)}".encode()).digest()[0] % FOLDS


def cli(command: str, rows: list[dict]) -> list[dict]:
    lines = []
    for e in rows:
        answer = {"status": e["status"], "headers": e["headers"], "body": e["body"]}
        if e.get("code_details"):
            answer["code_details"] = e["code_details"]
        lines.append(json.dumps(answer))
    out = subprocess.run([str(ev.CLI), command], input="\n".join(lines), capture_output=True,
                         text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def train(rows: list[tuple[list[str], int]]) -> tuple[list[float], dict[str, list[float]]]:
    """Softmax regression, AdaGrad over full passes in a fixed order, L2 on the weights."""
    df = collections.Counter(t for tokens, _ in rows for t in set(tokens))
    vocab = {t for t, n in df.items() if n >= MIN_DF}
    k = len(CLASSES)
    weights = {t: [0.0] * k for t in vocab}
    bias = [0.0] * k
    g2w = {t: [1e-8] * k for t in vocab}
    g2b = [1e-8] * k
    kept = [([t for t in tokens if t in vocab], y) for tokens, y in rows]
    for _ in range(EPOCHS):
        for tokens, y in kept:
            scores = bias[:]
            for t in tokens:
                w = weights[t]
                for c in range(k):
                    scores[c] += w[c]
            top = max(scores)
            exp = [math.exp(s - top) for s in scores]
            total = sum(exp)
            grad = [e / total - (1.0 if c == y else 0.0) for c, e in enumerate(exp)]
            for c in range(k):
                g2b[c] += grad[c] ** 2
                bias[c] -= RATE * grad[c] / math.sqrt(g2b[c])
            for t in tokens:
                w, g2 = weights[t], g2w[t]
                for c in range(k):
                    g = grad[c] + L2 * w[c]
                    g2[c] += g * g
                    w[c] -= RATE * g / math.sqrt(g2[c])
    return bias, weights


def quantize(bias, weights):
    q = lambda v: max(-32767, min(32767, round(v * SCALE)))  # noqa: E731
    qb = [q(b) for b in bias]
    qw = {t: [q(v) for v in w] for t, w in weights.items()}
    return qb, {t: w for t, w in qw.items() if any(w)}


def predict(qb, qw, tokens: list[str]) -> tuple[int, int] | None:
    """(class, margin), as `learned::predict` computes it; None when only the status is known."""
    scores = qb[:]
    known = 0
    for t in tokens:
        w = qw.get(t)
        if w is None:
            continue
        known += not t.startswith("#")
        for c in range(len(scores)):
            scores[c] += w[c]
    if not known:
        return None
    order = sorted(range(len(scores)), key=lambda c: -scores[c])
    return order[0], scores[order[0]] - scores[order[1]]


def cost(want: str, got: str) -> int:
    if want == got:
        return 0
    if want == "quota_exhausted" and got in ev.RETRYABLE:
        return QUOTA_RETRYABLE_COST
    return 1


def main() -> int:
    check = "--check" in sys.argv[1:]
    if not ev.CLI.exists():
        print(f"missing {ev.CLI}: run `make build`", file=sys.stderr)
        return 2
    dev = [e for e in ev.load() if e["part"] == "development"]
    features = cli("features", dev)
    rows = [(f["tokens"], CLASSES.index(e["expect"]["class"])) for e, f in zip(dev, features)]
    folds = [fold_of(e["source"]) for e in dev]

    # Out-of-fold predictions for the weak-basis answers.
    oof: dict[int, tuple[int, int] | None] = {}
    for k in range(FOLDS):
        train_rows = [r for r, f in zip(rows, folds) if f != k]
        qb, qw = quantize(*train(train_rows))
        for i, (f, feat) in enumerate(zip(folds, features)):
            if f == k and feat["basis"]:
                oof[i] = predict(qb, qw, feat["tokens"])

    def outcome(margin: int, on_generic: bool) -> tuple[int, int, int, int]:
        """(cost, misses, quota read as retryable, answers the tie-breaker changed)."""
        total = misses = quota_retry = changed = 0
        for i, pred in oof.items():
            want = dev[i]["expect"]["class"]
            got = features[i]["rules_only"]
            allowed = on_generic or features[i]["basis"] == "status"
            # An error the rules found is never read as a success (as `learned::tie_break`).
            to_ok = CLASSES[pred[0]] == "ok" if pred else False
            if (allowed and pred and pred[1] >= margin and CLASSES[pred[0]] != features[i]["prior"]
                    and not to_ok):
                got = CLASSES[pred[0]]
                changed += 1
            total += cost(want, got)
            misses += want != got
            quota_retry += want == "quota_exhausted" and got in ev.RETRYABLE
        return total, misses, quota_retry, changed

    rules_only = outcome(10**9, False)
    grid = [(outcome(m, g), m, g) for g in (False, True) for m in MARGINS]
    for (c, misses, qr, changed), m, g in grid:
        print(f"margin {m:4} on generic codes {g!s:5}: cost {c}, misses {misses}, "
              f"quota->retryable {qr}, changed {changed}")
    (best, margin, on_generic) = min(grid, key=lambda x: (x[0][0], -x[1], x[2]))
    weak = len(oof)
    print(f"\nweak-basis development answers: {weak}; out-of-fold misses: rules alone "
          f"{rules_only[1]}, with the tie-breaker {best[1]} (margin {margin}, generic codes "
          f"{on_generic}); quota->retryable {rules_only[2]} -> {best[2]}")

    qb, qw = quantize(*train(rows))
    text = render(qb, qw, margin, on_generic, len(dev), weak, rules_only, best)
    if check:
        if OUT.read_text() != text:
            print(f"FAILED: {OUT.relative_to(ROOT)} is not what the development part trains; "
                  "run `make train-tiebreaker` and commit it", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(ROOT)} is what the development part trains")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(qw)} tokens")
    return 0


def rust_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def render(qb, qw, margin, on_generic, n, weak, rules_only, best) -> str:
    k = len(CLASSES)
    lines = [
        "//! Generated by `scripts/train_tiebreaker.py` (`make train-tiebreaker`): do not edit.",
        "//!",
        f"//! Trained on the {n} development answers; cross-validated by source (5 folds) on the",
        f"//! {weak} of them that only weak signals decide: out-of-fold misses {rules_only[1]} by the",
        f"//! rules alone, {best[1]} with the tie-breaker; quota stops read as retryable "
        f"{rules_only[2]} -> {best[2]}.",
        "",
        "use crate::classify::ErrorClass;",
        "",
        "/// The classes, in the order of each row's weights.",
        f"pub const CLASSES: [ErrorClass; {k}] = [",
        *[f"    ErrorClass::{''.join(w.title() for w in c.split('_'))}," for c in CLASSES],
        "];",
        "/// Whether the tie-breaker may also overrule a generic code's class.",
        f"pub const ON_GENERIC_CODES: bool = {'true' if on_generic else 'false'};",
        "/// How far the best class must lead the runner-up (in weight units).",
        f"pub const MARGIN: i32 = {margin};",
        f"pub const BIAS: [i16; {k}] = {qb};",
        "/// Token -> weight per class (x100), sorted by token for binary search.",
        "#[rustfmt::skip]",
        f"pub static WEIGHTS: &[(&str, [i16; {k}])] = &[",
    ]
    for token in sorted(qw, key=lambda t: t.encode()):
        if any(c in token for c in '"\\') or not token.isprintable():
            continue  # never a word token; keeps the literal plain
        lines.append(f"    ({rust_str(token)}, {qw[token]}),")
    lines.append("];")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
