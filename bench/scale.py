"""Scale benchmark: the same requests against a million documents on SQLite and on PostgreSQL.

For each engine (SQLite in a temporary data dir; PostgreSQL in a throwaway cluster of Debian's
server binaries on loopback, started and stopped here, fsync off: tests/harness/pgcluster.py) and
each --owners layout, it loads --size documents with realistic text (bench/search.py's Zipf text and
titles), bulk-inserted with plain SQL in transactions of --batch documents. The owner whose
documents are queried (the admin with one owner, owner001 with more) gets the first 20,010
documents, then the owners take turns; that owner also has:
- `Big`, a folder of 10,000 of their documents;
- `Level 01` ... `Level 20`, folders nested 20 deep (the breadcrumb of the deepest is timed);
- `Movable`, a folder of 10 folders of 1,000 of their documents, moved back and forth between
  .home and `Elsewhere`.
It prints the time the load took and the database's size (dms.db; on PostgreSQL
pg_database_size and its eight largest tables, indexes and TOAST tables). On PostgreSQL
`--load-connections 2` inserts two batches at once: 50,000 documents loaded in 159–162 s instead
of 264 (2026-11-30), but the database came out ~8 % larger (1.26–1.28 GiB against 1.17), so the
default stays one connection, whose sizes compare with the earlier runs'.
Then `dms serve` (one process, DMS_OCR_WORKERS=1) answers, over one keep-alive connection as the
queried owner, 20 warm-up then --runs timed requests of each kind: GET /api/users/me/; a page of
100 from `Big` (pages 1..100 in turn); the 20-level breadcrumb (GET /api/folders/{id}/); the move
of the 10,010 nodes of `Movable`; search for one word (the most frequent), two words, a 3-letter
prefix, a piece of a compound word that begins no word (found inside words only, api.md §22).
On SQLite the server first builds its tantivy index (timed). Finally 16 clients, each on
its own keep-alive connection, send mixed requests (/users/me/, a page of `Big`, a two-word
search) for --seconds seconds: requests/s, p99, errors, and on PostgreSQL the peak of the
server's connections (pg_stat_activity, sampled every 0.1 s) against DMS_DB_POOL_SIZE.

It prints p50/p95 per request kind and engine, PostgreSQL's medians as ratios to SQLite's of the
same run (target: listings and /users/me/ within 2x), and the search targets (p95 <= 20 ms on
SQLite, <= 50 ms on PostgreSQL). It never asserts.

    .venv/bin/python -m bench.scale [--size 1000000] [--owners 1 1000] [--engines sqlite postgresql]
    .venv/bin/python -m bench.scale --size 20000 --owners 1 --runs 30 --seconds 5   # quick
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from bench.common import ADMIN_PASSWORD, KeepAlive, ServerProcess, engine_target, machine
from bench.lib.bulk import many, stamp
from bench.lib.corpus import FUNCTION_WORDS, TextGenerator, rare_words, vocabulary
from bench.lib.search_queries import inner_words, percentile
from bench.lib.search_server import OutputDrain, wait_for_index
from dms.db import database, is_postgresql, open_database
from dms.db.models import Node, new_id
from dms.db.schema import migrate_schema
from dms.domain import accounts

OWNER_PASSWORD = "bench-owner-password-1"
FOLDER_SIZE = 1000
BIG = 10_000
MOVABLE_FOLDERS = 10
DEPTH = 20
WARMUP = 20

FOLDER = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
          "updated_at) VALUES (?, ?, ?, 'folder', ?, ?, ?, ?)")
DOCUMENT = ("INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, lang, ocr, "
            "ocr_status, file_name, size, page_count, created_at, updated_at) "
            "VALUES (?, ?, ?, 'document', ?, ?, 'eng', TRUE, 'succeeded', ?, ?, 1, ?, ?)")
VERSION = ("INSERT INTO document_version (id, document_id, number, file_name, mime_type, size, "
           "page_count, sha256, lang, created_at) "
           "VALUES (?, ?, 1, ?, 'application/pdf', ?, 1, ?, 'eng', ?)")
PAGE = "INSERT INTO page (id, version_id, number, text, method) VALUES (?, ?, 1, ?, 'layer')"


class Layout:
    """The queried owner's special folders, and where each next document of an owner goes."""

    def __init__(self, owners: list[tuple[str, str]], queried: int):
        self.owners, self.queried = owners, queried
        self.counts = [0] * len(owners)
        self.current: list[str | None] = [None] * len(owners)
        self.folders: list[tuple] = []
        owner_id, home = owners[queried]
        self.big = self.folder(owner_id, home, "Big")
        self.elsewhere = self.folder(owner_id, home, "Elsewhere")
        self.movable = self.folder(owner_id, home, "Movable")
        self.movable_children = [self.folder(owner_id, self.movable, f"Part {n:02d}")
                                 for n in range(MOVABLE_FOLDERS)]
        parent = home
        for level in range(1, DEPTH + 1):
            parent = self.folder(owner_id, parent, f"Level {level:02d}")
        self.deepest = parent

    def folder(self, owner_id: str, parent: str, title: str) -> str:
        folder_id = new_id()
        self.folders.append((folder_id, owner_id, parent, title, title.casefold(), stamp(),
                             stamp()))
        return folder_id

    def place(self, number: int) -> tuple[str, str]:
        """(owner id, parent folder id) of document `number`: the queried owner's first, until
        `Big` and `Movable` are full, then the owners in turn."""
        special = BIG + MOVABLE_FOLDERS * FOLDER_SIZE
        index = self.queried if self.counts[self.queried] < special else number % len(self.owners)
        owner_id, home = self.owners[index]
        done = self.counts[index]
        self.counts[index] += 1
        if index == self.queried and done < BIG:
            return owner_id, self.big
        if index == self.queried and done < BIG + MOVABLE_FOLDERS * FOLDER_SIZE:
            return owner_id, self.movable_children[(done - BIG) // FOLDER_SIZE]
        if done % FOLDER_SIZE == 0 or self.current[index] is None:
            self.current[index] = self.folder(owner_id, home, f"Folder {done // FOLDER_SIZE:04d}")
        return owner_id, self.current[index]


def load(target, size: int, owner_count: int, args, words, rare) -> tuple[Layout, str, str]:
    """The database of one run; (layout, queried username, its password)."""
    open_database(target)
    migrate_schema()
    if not is_postgresql():
        database.execute_sql("PRAGMA synchronous = OFF")  # this loading connection only
    queried = 0 if owner_count == 1 else 1
    owners = []
    for number in range(owner_count):
        username = "admin" if number == 0 else f"owner{number:03d}"
        password = ADMIN_PASSWORD if number == 0 else OWNER_PASSWORD if number == queried else None
        extra = {"is_superuser": True, "is_staff": True} if number == 0 else {}
        user = accounts.create_user(username, password, **extra)
        home = Node.get((Node.owner == user.id) & (Node.special == Node.HOME))
        owners.append((user.id, home.id))
    layout = Layout(owners, queried)
    # Every document's place first, so that all folders are committed before any document: on
    # PostgreSQL --load-connections then insert batches side by side (its triggers make the
    # search rows, most of the loading time; one connection uses one of the two cores).
    places = [layout.place(number) for number in range(size)]
    with database.atomic():
        many(FOLDER, layout.folders)
    inserters = Inserters(args.load_connections if is_postgresql() else 1)
    generator = TextGenerator(words, rare, seed=8)
    started = last = time.perf_counter()
    try:
        for first in range(0, size, args.batch):
            nodes, versions, pages = [], [], []
            now = stamp()
            for number in range(first, min(first + args.batch, size)):
                owner_id, parent = places[number]
                document_id, version_id = new_id(), new_id()
                title = generator.title()
                text, _ = generator.text(args.words)
                file_name = f"doc-{number}.pdf"
                nodes.append((document_id, owner_id, parent, title, title.casefold(), file_name,
                              len(text) * 20, now, now))
                versions.append((version_id, document_id, file_name, len(text) * 20, "0" * 64,
                                 now))
                pages.append((new_id(), version_id, text))
            inserters.put((nodes, versions, pages))
            done = min(first + args.batch, size)
            if time.perf_counter() - last >= 30 or done == size:
                last = time.perf_counter()
                print(f"  loaded {done:,} of {size:,} documents ({last - started:.0f} s; "
                      f"{inserters.pending()} batches queued)", flush=True)
    finally:
        inserters.close()
    print(f"  all inserted ({time.perf_counter() - started:.0f} s)", flush=True)
    if is_postgresql():
        database.execute_sql("VACUUM ANALYZE")
    else:
        database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    username = "admin" if queried == 0 else f"owner{queried:03d}"
    return layout, username, ADMIN_PASSWORD if queried == 0 else OWNER_PASSWORD


class Inserters:
    """Threads that insert batches of (nodes, versions, pages), each in a transaction of its own
    connection; at most two batches wait for them."""

    def __init__(self, count: int):
        self.batches: queue.Queue = queue.Queue(maxsize=2)
        self.failures: list[BaseException] = []
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(count)]
        for thread in self.threads:
            thread.start()

    def put(self, batch: tuple) -> None:
        if self.failures:
            raise RuntimeError("a batch could not be inserted") from self.failures[0]
        self.batches.put(batch)

    def pending(self) -> int:
        return self.batches.qsize()

    def run(self) -> None:
        try:
            if not is_postgresql():
                database.execute_sql("PRAGMA synchronous = OFF")  # this loading connection only
            while (batch := self.batches.get()) is not None:
                if self.failures:
                    continue
                nodes, versions, pages = batch
                try:
                    with database.atomic():
                        many(DOCUMENT, nodes)
                        many(VERSION, versions)
                        many(PAGE, pages)
                        if not is_postgresql():  # the server's start-up rebuild indexes them all
                            database.execute_sql("DELETE FROM search_outbox")
                except BaseException as error:  # reported by put() and close()
                    self.failures.append(error)
        finally:
            database.close()  # this thread's connection

    def close(self) -> None:
        for _ in self.threads:
            self.batches.put(None)
        for thread in self.threads:
            thread.join()
        if self.failures:
            raise RuntimeError("a batch could not be inserted") from self.failures[0]


def timed(call, runs: int) -> dict:
    for _ in range(WARMUP):
        call()
    samples = []
    for number in range(runs):
        start = time.perf_counter()
        call(number)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95)}


def cycling(make_path):
    """A call for timed(): GET make_path(n), n counting up (warm-up calls pass none)."""
    counter = iter(range(10**9))

    def call(number=None):
        return make_path(next(counter))
    return call


def concurrent(server: ServerProcess, token: str, layout: Layout, two_words: list[str],
               seconds: float, peak_connections) -> dict:
    """16 clients of mixed requests; (requests/s, p99 ms, errors)."""
    paths = ["/api/users/me/", *(f"/api/nodes/{layout.big}/?page[size]=100&page[number]={n}"
                                 for n in range(1, 11)),
             *(f"/api/search/?q={urllib.parse.quote(q)}" for q in two_words[:10])]
    samples: list[float] = []
    errors = []
    deadline = time.monotonic() + seconds

    def client(seed: int) -> None:
        http, rng = KeepAlive(server.port, token), random.Random(seed)
        while time.monotonic() < deadline:
            path = rng.choice(paths)
            start = time.perf_counter()
            try:
                http.get(path)
            except Exception as error:  # counted, shown once
                errors.append(str(error)[:200])
                http = KeepAlive(server.port, token)
                continue
            samples.append((time.perf_counter() - start) * 1000)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
    stop_sampling = threading.Event()
    sampler = threading.Thread(target=peak_connections, args=(stop_sampling,)) \
        if peak_connections else None
    started = time.monotonic()
    for thread in threads + ([sampler] if sampler else []):
        thread.start()
    for thread in threads:
        thread.join()
    stop_sampling.set()
    if sampler:
        sampler.join()
    samples.sort()
    return {"rate": len(samples) / (time.monotonic() - started),
            "p99": percentile(samples, 0.99) if samples else float("nan"),
            "errors": len(errors), "first error": errors[0] if errors else None}


def run_engine(engine: str, owner_count: int, args, words, rare, cluster) -> dict:
    print(f"\n== {engine}, {args.size:,} documents, {owner_count} owner"
          f"{'s' if owner_count > 1 else ''}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dms-bench-scale-") as tmp:
        data_dir = Path(tmp) / "data"
        target, env = engine_target(engine, cluster, data_dir)
        started = time.perf_counter()
        layout, username, password = load(target, args.size, owner_count, args, words, rare)
        print(f"loaded in {time.perf_counter() - started:.0f} s; "
              + (f"dms.db {target.stat().st_size / 2**30:.2f} GiB" if engine == "sqlite" else
                 f"database {database_size(str(target)) / 2**30:.2f} GiB"), flush=True)
        if engine == "postgresql":
            print("  largest parts: " + "; ".join(
                f"{name} {size / 2**30:.2f} GiB" for name, size in database_parts(str(target))),
                flush=True)
        started = time.perf_counter()
        server = ServerProcess(data_dir, **env)
        drain = OutputDrain(server.process.stdout)
        try:
            admin = KeepAlive(server.port, server.login())
            wait_for_index(server, admin, started)
            print(f"server ready to search after {time.perf_counter() - started:.1f} s"
                  + (" (tantivy index built at start-up)" if engine == "sqlite" else ""),
                  flush=True)
            token = server.login(username, password)
            http = KeepAlive(server.port, token)
            searches = search_lists(words)
            two, prefixes, inner = (searches["two words"], searches["3-letter prefix"],
                                    searches["inside a word"])
            home = layout.owners[layout.queried][1]

            def move(number):
                target_id = layout.elsewhere if number % 2 == 0 else home
                http.post("/api/nodes/move/", {"nodes": [{"id": layout.movable}],
                                               "target_parent": {"id": target_id}})

            kinds = {
                "GET /api/users/me/": cycling(lambda n: http.get("/api/users/me/")),
                "page of 100 from a folder of 10,000": cycling(lambda n: http.get(
                    f"/api/nodes/{layout.big}/?page[size]=100&page[number]={n % 100 + 1}")),
                "breadcrumb 20 levels deep": cycling(
                    lambda n: http.get(f"/api/folders/{layout.deepest}/")),
                "move of 10,010 nodes": None,
                "search: one word": cycling(lambda n: http.get(
                    f"/api/search/?q={urllib.parse.quote(searches['one word'][n % 5])}")),
                "search: two words": cycling(lambda n: http.get(
                    f"/api/search/?q={urllib.parse.quote(two[n % len(two)])}")),
                "search: 3-letter prefix": cycling(lambda n: http.get(
                    f"/api/search/?q={urllib.parse.quote(prefixes[n % len(prefixes)])}")),
                "search: inside a word": cycling(lambda n: http.get(
                    f"/api/search/?q={urllib.parse.quote(inner[n % len(inner)])}")),
            }
            results = {}
            for kind, call in kinds.items():
                if call is None:
                    moved = [0]

                    def call(number=None, moved=moved):
                        move(moved[0])
                        moved[0] += 1
                    numbers = timed(call, max(10, args.runs // 10))
                else:
                    numbers = timed(call, args.runs)
                results[kind] = numbers
                print(f"  {kind:<38} p50 {numbers['p50']:8.2f} ms   p95 {numbers['p95']:8.2f} ms",
                      flush=True)
            peak = None
            if engine == "postgresql":
                peak = [0]

                def sample(stop):
                    import psycopg
                    with psycopg.connect(str(target), autocommit=True) as watcher:
                        while not stop.is_set():
                            count = watcher.execute(
                                "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                "current_database() AND pid <> pg_backend_pid()").fetchone()[0]
                            peak[0] = max(peak[0], count)
                            stop.wait(0.1)
                load_numbers = concurrent(server, token, layout, two, args.seconds, sample)
            else:
                load_numbers = concurrent(server, token, layout, two, args.seconds, None)
            results["16 clients"] = load_numbers
            print(f"  16 clients, mixed, {args.seconds:.0f} s: {load_numbers['rate']:,.0f} req/s, "
                  f"p99 {load_numbers['p99']:.1f} ms, {load_numbers['errors']} errors"
                  + (f" (first: {load_numbers['first error']})" if load_numbers["errors"] else "")
                  + (f"; peak PostgreSQL connections {peak[0]} (pool size "
                     f"{os.environ.get('DMS_DB_POOL_SIZE', '10')})" if peak else ""), flush=True)
            if drain.tracebacks:
                print(f"  the server printed {drain.tracebacks} traceback(s)")
        finally:
            server.stop()
    return results


def database_size(url: str) -> int:
    import psycopg
    with psycopg.connect(url) as connection:
        return connection.execute("SELECT pg_database_size(current_database())").fetchone()[0]


PARTS = """
    SELECT c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' ELSE ' (table)' END,
           pg_relation_size(c.oid) FROM pg_class AS c
    JOIN pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
    UNION ALL
    SELECT t.relname || ' (its TOAST: long values)', pg_total_relation_size(t.reltoastrelid)
    FROM pg_class AS t JOIN pg_namespace AS n ON n.oid = t.relnamespace
    WHERE n.nspname = 'public' AND t.relkind = 'r' AND t.reltoastrelid <> 0
    ORDER BY 2 DESC LIMIT 8"""


def database_parts(url: str) -> list[tuple[str, int]]:
    """The largest tables, indexes and TOAST tables: what the database's size is made of."""
    import psycopg
    with psycopg.connect(url) as connection:
        return connection.execute(PARTS).fetchall()


def search_lists(words: list[str], pairs: int = 50) -> dict[str, list[str]]:
    """The searches of each class, the same in every run (seeded): the five most frequent words,
    `pairs` pairs (a frequent content word and any), 50 three-letter prefixes of content words,
    and 50 pieces found only inside compound words (api.md §22). bench/pgplans.py times them
    too (and asks for more pairs: the first 50 are the same)."""
    rng = random.Random(9)
    content = words[len(FUNCTION_WORDS):]
    two = [f"{rng.choice(content[:300])} {rng.choice(content)}" for _ in range(pairs)]
    prefixes = [rng.choice([w for w in content if len(w) > 3])[:3] for _ in range(50)]
    inner = inner_words(words, 50, rng)
    return {"one word": FUNCTION_WORDS[:5], "two words": two, "3-letter prefix": prefixes,
            "inside a word": inner}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="documents")
    parser.add_argument("--owners", type=int, nargs="+", default=[1, 1000])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--runs", type=int, default=200, help="timed requests per kind")
    parser.add_argument("--seconds", type=float, default=20, help="of the 16-client run")
    parser.add_argument("--words", type=int, default=200, help="Zipf words of text per document")
    parser.add_argument("--batch", type=int, default=10_000, help="documents per transaction")
    parser.add_argument("--load-connections", type=int, default=1, choices=range(1, 9),
                        help="PostgreSQL: connections inserting batches side by side (2: loads "
                             "1.65x faster on 2 cores, the database ~8 %% larger)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    rng = random.Random(7)
    words = vocabulary(4000, rng)
    rare = rare_words(5000, set(words), rng)
    cluster = None
    if "postgresql" in args.engines:
        from tests.harness.pgcluster import Cluster
        cluster = Cluster().start()
        print(f"PostgreSQL: a throwaway cluster of {cluster.bin.parent.name} on loopback "
              "(fsync off, shared_buffers 64MB)")
    try:
        for owner_count in args.owners:
            measured = {engine: run_engine(engine, owner_count, args, words, rare, cluster)
                        for engine in args.engines}
            report(measured, owner_count)
    finally:
        if cluster:
            cluster.stop()


def report(measured: dict, owner_count: int) -> None:
    print(f"\n-- {owner_count} owner{'s' if owner_count > 1 else ''}: PostgreSQL's p50 / "
          "SQLite's p50 (target for listings and /users/me/: <= 2x)")
    if set(measured) >= {"sqlite", "postgresql"}:
        for kind, numbers in measured["postgresql"].items():
            if "p50" in numbers:
                print(f"  {kind:<38} {numbers['p50'] / measured['sqlite'][kind]['p50']:6.2f}x")
    limits = {"sqlite": 20.0, "postgresql": 50.0}  # ../shared/docs/targets.md
    for engine, numbers in measured.items():
        over = [f"{kind} {n['p95']:.1f} ms" for kind, n in numbers.items()
                if kind.startswith("search") and n["p95"] > limits[engine]]
        whom = "1 and 1,000 owners" if engine == "postgresql" else "one owner"
        print(f"  search p95 on {engine} (target <= {limits[engine]:g} ms at 1,000,000, {whom}): "
              f"{'over: ' + ', '.join(over) if over else 'all within'}")


if __name__ == "__main__":
    main()
