"""Requests while the search index is rebuilt (issue 47): a data dir of --size documents with
realistic text (bench/scale.py's load, one owner) and no search index, so that `dms serve` builds
it at start-up, as after a restored backup or an upgrade that changes the index's format. While
/health says "rebuilding", GET /api/users/me/ and a page of 100 from a folder of 10,000 are timed
in turn over one keep-alive connection (after 20 of each as a warm-up); then as many again once
the index is ready. Printed: p50/p95 of each, during the build and after it, the ratios of the two
(the aim: the build does not slow the requests, ~1.0x), the build's duration and the server's RSS.

Since c4b9b1b a build of more than 2,000 nodes runs in a process of its own (dms.search.build);
before, in a thread of the server. To compare, run this script against an older checkout:
`git worktree add /tmp/old <rev>`, copy this file into /tmp/old/bench/, run it from /tmp/old.

    .venv/bin/python -m bench.rebuild [--size 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from bench.common import KeepAlive, ServerProcess, machine
from bench.lib.corpus import rare_words, vocabulary
from bench.lib.search_queries import percentile
from bench.lib.search_server import OutputDrain
from bench.scale import load

WARMUP = 20
MAX_SAMPLES = 2000  # per kind, during the build


def timed_ms(call, number: int) -> float:
    start = time.perf_counter()
    call(number)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="documents")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    rng = random.Random(7)
    words = vocabulary(4000, rng)
    rare = rare_words(5000, set(words), rng)
    with tempfile.TemporaryDirectory(prefix="dms-bench-rebuild-") as tmp:
        data_dir = Path(tmp) / "data"
        started = time.perf_counter()
        layout, _, _ = load(data_dir / "dms.db", args.size, 1,
                            SimpleNamespace(batch=10_000, load_connections=1, words=200),
                            words, rare)
        shutil.rmtree(data_dir / "search", ignore_errors=True)
        print(f"loaded {args.size:,} documents in {time.perf_counter() - started:.0f} s; "
              "no search index", flush=True)
        server = ServerProcess(data_dir)
        drain = OutputDrain(server.process.stdout)
        try:
            http = KeepAlive(server.port, server.login())
            kinds = {
                "GET /api/users/me/": lambda n: http.get("/api/users/me/"),
                "page of 100 from a folder of 10,000": lambda n: http.get(
                    f"/api/nodes/{layout.big}/?page[size]=100&page[number]={n % 100 + 1}"),
            }

            def state() -> str:
                return json.loads(http.get("/health")).get("search", {}).get("state", "")

            build_started = time.perf_counter()
            for number in range(WARMUP):
                for call in kinds.values():
                    call(number)
            during: dict[str, list[float]] = {kind: [] for kind in kinds}
            number = 0
            while state() != "ready" and number < MAX_SAMPLES:
                for kind, call in kinds.items():
                    during[kind].append(timed_ms(call, number))
                number += 1
            while state() != "ready":
                time.sleep(0.2)
            built = time.perf_counter() - build_started
            print(f"index built in {built:.1f} s (from the server's start); server RSS "
                  f"{server.rss_mib():.1f} MiB", flush=True)
            after: dict[str, list[float]] = {kind: [] for kind in kinds}
            for count in range(max(number, 50)):
                for kind, call in kinds.items():
                    after[kind].append(timed_ms(call, count))
            for kind in kinds:
                while_building, ready = sorted(during[kind]), sorted(after[kind])
                if not while_building:
                    print(f"  {kind}: the index was ready before the first timed request")
                    continue
                numbers = [percentile(samples, q) for samples in (while_building, ready)
                           for q in (0.5, 0.95)]
                print(f"  {kind:<38} during the build ({len(while_building)}): p50 "
                      f"{numbers[0]:6.2f} ms p95 {numbers[1]:6.2f} ms; after ({len(ready)}): "
                      f"p50 {numbers[2]:6.2f} ms p95 {numbers[3]:6.2f} ms; during/after "
                      f"{numbers[0] / numbers[2]:.2f}x p50, {numbers[1] / numbers[3]:.2f}x p95",
                      flush=True)
            if drain.tracebacks:
                print(f"  the server printed {drain.tracebacks} traceback(s)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
