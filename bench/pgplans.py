"""PostgreSQL's plans of each search class (issue 47): --size documents loaded as bench/scale.py
loads them (one owner, or --owners N in scale.py's layout, searched as its queried owner) into a
throwaway cluster (tests/harness/pgcluster.py), then each class of
scale.py's searches (one word, two words, a 3-letter prefix, a piece found only inside words) run
in-process with every SQL statement captured (peewee's log) and each SELECT run again under
`EXPLAIN (ANALYZE, BUFFERS)`: its execution time, and its whole plan where it took more than
--show-ms. With --inside N, N pieces found only inside words are timed as well and the plans of
the slowest two shown (scale.py's p95 of that class comes from a few slow pieces); with --two N,
the first N of scale.py's own two-word searches alike; with --classes, each of scale.py's own
lists of every class (bench.scale.search_lists), the two slowest of each explained. Where a
search's time goes on PostgreSQL, without a server; it never asserts.

    .venv/bin/python -m bench.pgplans [--size 100000] [--owners 1] [--show-ms 2] [--inside 50]
                                      [--two 50] [--classes] [--hold]
"""

from __future__ import annotations

import argparse
import logging
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from bench.common import engine_target, machine
from bench.lib.corpus import rare_words, vocabulary
from bench.lib.search_queries import inner_words
from bench.scale import database_parts, database_size, load, search_lists

WARMUP = 3


class Captured(logging.Handler):
    """peewee's debug records of the statements it runs: (sql, params)."""

    def __init__(self):
        super().__init__()
        self.statements: list[tuple[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, tuple):
            self.statements.append(record.msg)


def searches(words: list[str]) -> dict[str, str]:
    """scale.py's classes, the first query of each of its lists."""
    return {kind: texts[0] for kind, texts in search_lists(words).items()}


def explain(url: str, statements: list[tuple[str, object]], show_ms: float) -> None:
    import psycopg

    # One transaction, rolled back: the search's set_config(..., true) (its planner settings)
    # hold for the statements after them, as inside the search (and, here, to the end).
    with psycopg.connect(url) as connection:
        for sql, params in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            plan = [row[0] for row in connection.execute(
                "EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()]
            total = next((line for line in plan if line.startswith("Execution Time")), "")
            print(f"-- {total or 'no time'}: {' '.join(sql.split())[:300]}")
            if total and float(total.split()[2]) > show_ms:
                print("\n".join("   " + line for line in plan))
        connection.rollback()


def two_word_searches(words: list[str], count: int) -> list[str]:
    """The first `count` of scale.py's two-word searches (its generator, its seed)."""
    return search_lists(words, pairs=count)["two words"]


def slowest(search, user, kind: str, texts: list[str]) -> list[tuple[float, str]]:
    """Each search's time (the second of two runs), slowest first, with a summary line."""
    from dms.errors import Unavailable
    from dms.search import query

    timed = []
    for text in texts:
        for _ in range(2):
            started = time.perf_counter()
            try:
                query(search, user, text, timeout=60)
            except Unavailable:  # past the 60 s: the time it took
                pass
        timed.append(((time.perf_counter() - started) * 1000, text))
    timed.sort(reverse=True)
    times = sorted(took for took, _ in timed)
    print(f"\n== {kind}, {len(times)} searches: p50 {times[len(times) // 2]:.1f} ms, "
          f"p95 {times[int(len(times) * 0.95)]:.1f} ms; slowest "
          + ", ".join(f"{text!r} {took:.1f} ms" for took, text in timed[:5]), flush=True)
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="documents")
    parser.add_argument("--owners", type=int, default=1,
                        help="owners, laid out as scale.py's (its queried owner searches)")
    parser.add_argument("--show-ms", type=float, default=2.0,
                        help="print the whole plan of a statement slower than this")
    parser.add_argument("--inside", type=int, default=1,
                        help="pieces found only inside words to time (the two slowest explained)")
    parser.add_argument("--hold", action="store_true",
                        help="then keep the cluster and print its URL until killed (to try plans)")
    parser.add_argument("--two", type=int, default=1,
                        help="scale.py's two-word searches to time (the two slowest explained)")
    parser.add_argument("--classes", action="store_true",
                        help="time all of scale.py's searches of each class (its lists), the "
                             "two slowest of each explained")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    rng = random.Random(7)
    words = vocabulary(4000, rng)
    rare = rare_words(5000, set(words), rng)
    from tests.harness.pgcluster import Cluster
    cluster = Cluster().start()
    try:
        with tempfile.TemporaryDirectory(prefix="dms-bench-pgplans-") as tmp:
            data_dir = Path(tmp) / "data"
            url, _ = engine_target("postgresql", cluster, data_dir)
            started = time.perf_counter()
            _, username, _ = load(url, args.size, args.owners, SimpleNamespace(
                batch=10_000, load_connections=2, words=200), words, rare)
            print(f"loaded {args.size:,} documents of {args.owners:,} owner(s) (the searches "
                  f"are scale.py's queried owner's) in {time.perf_counter() - started:.0f} s "
                  f"(two connections); database {database_size(url) / 2**30:.2f} GiB")
            print("  largest parts: " + "; ".join(
                f"{name} {size / 2**20:.0f} MiB" for name, size in database_parts(url)))
            from dms.db import open_database
            from dms.db.models import User
            from dms.search import engine, query
            open_database(url)
            user = User.get(User.username == username)
            search = engine(data_dir)
            captured = Captured()
            logger = logging.getLogger("peewee")
            logger.setLevel(logging.DEBUG)
            logger.addHandler(captured)
            for kind, text in searches(words).items():
                for _ in range(WARMUP):
                    query(search, user, text, timeout=600)
                captured.statements.clear()
                started = time.perf_counter()
                query(search, user, text, timeout=600)
                took = (time.perf_counter() - started) * 1000
                statements = list(captured.statements)
                print(f"\n== {kind} ({text!r}): {took:.1f} ms in-process, "
                      f"{len(statements)} statements", flush=True)
                explain(url, statements, args.show_ms)
            timed = {"inside a word": (args.inside, lambda: inner_words(
                         words, args.inside, random.Random(11))),
                     "two words": (args.two, lambda: two_word_searches(words, args.two))}
            if args.classes:  # scale.py's own lists instead
                timed = {f"scale.py's {kind}": (len(texts), lambda texts=texts: texts)
                         for kind, texts in search_lists(words).items()}
            for kind, (count, texts) in timed.items():
                if count <= 1:
                    continue
                for took, text in slowest(search, user, kind, texts())[:2]:
                    captured.statements.clear()
                    query(search, user, text, timeout=600)
                    print(f"\n== {kind}, slow ({text!r}): {took:.1f} ms in-process, "
                          f"{len(captured.statements)} statements", flush=True)
                    explain(url, list(captured.statements), args.show_ms)
            if args.hold:
                print(f"\nholding the database at {url} until killed (SIGTERM)", flush=True)
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
                while True:
                    time.sleep(3600)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
