"""The README's run command (`make demo` = scripts/demo.py) plays the launch-day drill end to end,
in well under two minutes, and its final table matches what the mock providers recorded."""

import re
import subprocess
import sys
import time

from harness import ROOT


def test_the_launch_day_drill_plays_end_to_end():
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(ROOT / "scripts/demo.py")], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    out = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert result.returncode == 0, out + result.stderr
    assert elapsed < 120
    assert "match what the providers recorded: yes" in out
    # Each act of the drill shows what it claims.
    assert re.search(r"gpt-4o\s+-> 200 llama-3.1-8b\s+attempts 3\s+provider llm; fallback from gpt-4o: overloaded", out)
    # One attempt on account A; then provider B serves without touching A.
    # Provider A's account is out of quota: the same request is served by provider B.
    assert re.search(r"gpt-4o\s+-> 200 claude-sonnet-4-5\s+attempts 2\s+provider llm_b; fallback from gpt-4o: quota_exhausted", out), out
    assert "provider B saw: model=claude-sonnet-4-5 attempt=2 authorization=Bearer demo-key-provider-b" in out
    assert len(re.findall(r"gpt-4o\s+-> 200 claude-sonnet-4-5\s+attempts 1\s+provider llm_b; fallback from gpt-4o: quota_exhausted", out)) == 4, out
    assert "llm quota_exhausted" in out
    assert re.search(r"claude-sonnet-4-5\s+-> 200 claude-sonnet-4-5\s+attempts 2", out)
    assert re.search(r"claude-haiku-4-5\s+-> 500 .*retry blocked: non-idempotent, x-should-retry: false", out)
    assert out.rstrip().count("-> 200 gpt-4o ") >= 10  # normal traffic, then the switch back
