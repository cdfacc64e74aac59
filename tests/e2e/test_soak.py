"""The chaos soak (scripts/soak.py) in small: about 3000 requests with a fixed seed, in-process.

Two mock providers, Envoy with the shipped config (2 workers), faults re-scripted every few
hundred requests; fails on any violation of the soak's invariants (every request answered once;
no unsafe request sent twice unless each earlier send was a proven rejection; no VM trap or
reload; Envoy's memory flat). `.venv/bin/python scripts/soak.py --requests 100000` is the long run.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import soak  # noqa: E402

SEED = 20261201


def test_chaos_soak(tmp_path):
    report = soak.run_soak(3000, seed=SEED, threads=32, epoch=300, max_seconds=90, workdir=tmp_path, quiet=True)
    print(report.text)
    assert not report.violations, report.text

    numbers = report.numbers
    outcomes, upstream = numbers["outcomes"], numbers["by_outcome"]
    assert not numbers["stopped_early"], report.text
    assert outcomes["safe"] + outcomes["unsafe"] == 3000
    # The chaos happened: the invariants were checked against every kind of trouble.
    assert outcomes["ok"] + outcomes["ok_stream"] > 900, report.text
    assert numbers["traced"] > 900, report.text
    assert outcomes["cut"] > 0 and outcomes["stream_error_event"] > 0, report.text
    assert outcomes["client_cancel"] + outcomes["client_closed"] > 0, report.text
    assert sum(v for k, v in outcomes.items() if k.startswith("http_")) > 0, report.text
    for ending in ("scripted", "reset_before_headers", "reset_after_headers", "reset_mid_body"):
        assert upstream[ending] > 0, (ending, report.text)
    assert numbers["unsafe_resent"] > 0, "some unsafe requests were re-sent after a proven rejection"
    assert numbers["blocked"] > 0, "some unsafe requests were not re-sent"
    assert numbers["rss_end"] > 0
