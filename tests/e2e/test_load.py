"""The load test in CI (bounded): bench/load.py's 16 mixed clients against a real `dms serve`
with OCR busy must see no error, no "database is locked" and no traceback. Latencies are printed
by the benchmark, never asserted; its probes inside the server (--profile-lock, --profile-memory)
run too, so that they keep working: their figures must be printed, whatever they are."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sqlite_only  # a load run of the default appliance

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_sixteen_mixed_clients_see_no_error():
    result = subprocess.run(
        [sys.executable, "-m", "bench.load", "--seconds", "15", "--me-seconds", "3",
         "--drain-seconds", "120", "--profile-lock", "--profile-memory"],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout
    totals = re.findall(r"^total: \d+ requests in .* errors (\d+)$", output, re.MULTILINE)
    assert totals == ["0", "0"], output  # the /users/me/ run and the mixed load
    server = re.search(r"'database is locked' (\d+), 'Traceback' (\d+)", output)
    assert server and server.groups() == ("0", "0"), output
    lock_windows = re.findall(r"^  .*request [\d.]+ s, .*; request holds on a core [\d.]+ s, .*; "
                              r"request holds in the run queue [\d.]+ s, .*; wait [\d.]+/[\d.]+",
                              output, re.MULTILINE)
    assert lock_windows, output
    memory = re.findall(r"^ +(before|after) the load(?: +[\d.]+){7} +\d+ +\d+$", output,
                        re.MULTILINE)
    assert memory == ["before", "after"], output
    drained = re.search(r"OCR backlog drained", output) or \
        re.search(r"OCR backlog at the end: 0 ", output)
    assert drained, output
