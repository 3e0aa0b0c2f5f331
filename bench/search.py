"""Search benchmark: latency of GET /api/search/ over 10,000, 100,000 and 1,000,000 documents with
text, served by a real `dms serve` on its tantivy index; the index's build time and size, the size
of dms.db, and the server's RSS.

For each --sizes count and each --owners layout, in a fresh temporary data dir:

1. The database: schema by dms.db.schema.open_migrated; the owners by
   dms.domain.accounts.create_user (`admin`, the first owner, is also the admin; with more owners
   `owner001`... — only the admin and the owner whose documents are queried get a password, hashing
   100 scrypt passwords would only cost time); then the documents, bulk-inserted with plain SQL in
   transactions of --batch documents, generated batch by batch (memory stays flat): each a `node`
   row (kind 'document', ocr_status 'succeeded', a title of two words and a year-month), one
   `document_version` row and ONE `page` row holding its text: --words words drawn from a Zipf
   distribution (exponent 1) over a vocabulary of --vocabulary English and German words (function
   words the most frequent, then real words, German compounds and English plurals; umlauts
   included), plus one of --rare-words made-up words (e.g. `kavomitu`) at a random place, so that
   rare words exist. Documents go to the owners in turn, in folders of 1,000 under each owner's
   .home. The triggers' search_outbox rows are deleted (the server's start-up rebuild covers every
   node). It prints the time this took and the size of dms.db (after a WAL checkpoint).
2. The index build: `dms serve` (DMS_OCR_WORKERS=1) finds no index in <data-dir>/search/ and
   builds it from the database; GET /health as the admin is polled every 0.2 s until
   `search.state` is "ready". It prints the seconds from starting the server process until then
   (and the server's own logged figure, which excludes the start-up), the folders and documents
   indexed, the index's size on disk (every file in <data-dir>/search/, and its segment count),
   and the server's RSS (VmRSS, of which anonymous and file-backed) at its peak during the build
   (sampled at each poll), right after it, and after the queries. The index is memory-mapped:
   queries read it through the page cache, so the page cache it wants to stay fast is its size
   on disk; the file-backed part of the RSS is the shared libraries (~20 MiB) plus the pages of
   the index the server has touched. The indexer's writer may still merge segments after
   "ready": the segment count is printed again after the queries.
3. Queries, over one keep-alive connection logged in as the owner whose documents are queried
   (with one owner: all documents; with 100: 1/100 of them), one class after the other; each
   class is a list of --queries queries cycled through 20 warm-up requests and then --runs timed
   ones (sequential, as in ../shared/docs/targets.md): "common word" — the most frequent words of
   the vocabulary (the function words: in nearly every document); "rare word" — made-up words
   that occur in the queried owner's documents; "two words" — one of the 300 most frequent
   content words and any content word; "prefix 3/4/5" — the first 3, 4 or 5 letters of content
   words (dms makes every query word a prefix); "inside a word" — 6 letters from inside
   compound words that begin no word (api.md §22: found only inside words, the second tier). It
   prints per class the median number of results
   (dms returns at most 100, best first) and p50/p95/p99 in ms, then the targets (p95 <= 20 ms for
   every class at 100,000 documents and at 1,000,000) and the classes over them.
4. Pages with a total (api.md §22): a common word, a 3-letter prefix and a word inside words
   with `page=1` (the engine counts every match), each right after the same queries without it,
   the p95 and its ratio.
5. The query language (api.md §20; bench.lib.search_queries.make_field_queries): a common word
   with a correspondent, a year, a type and half a year, a serial number range, a NOT of a
   correspondent, and a phrase of two words — each class timed right after the same words without
   fields, and its p95 as a ratio to theirs (target <= 1.5x, ../shared/docs/targets.md); then
   names and a date without words (the document list's conditions), absolute.

The load average is printed before each layout: the machine may be shared. It prints numbers and
never asserts.

    .venv/bin/python -m bench.search [--sizes 10000 100000 1000000] [--owners 1 100] [--runs 300]
        [--queries 50] [--words 200] [--vocabulary 4000] [--rare-words 5000] [--batch 10000]
    .venv/bin/python -m bench.search --sizes 2000 --owners 1 --runs 50     # quick: checks it runs

`--keep` leaves each data dir in place (its path printed) for a closer look at the same corpus:
`dms serve --data-dir <it>/data` opens it again without a rebuild, and `--reuse <it>/data` (with
the same `--sizes` and `--owners`, one each) measures it again — the index rebuilt only if its
format changed meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from bench.common import KeepAlive, ServerProcess, machine
from bench.lib.corpus import rare_words, vocabulary
from bench.lib.search_db import FOLDER_SIZE, build_database
from bench.lib.search_queries import WARMUP, make_field_queries, make_queries, run_class
from bench.lib.search_server import OutputDrain, index_size, memory, rss_text, wait_for_index

MAX_RESULTS = 100  # dms's default limit
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f"
TARGETS_MS = {100_000: 20.0, 1_000_000: 20.0}  # p95 of every class, ../shared/docs/targets.md
KEPT = "bench-search.json"  # beside a kept data dir: what --reuse needs
FIELD_TARGET = 1.5  # p95 with fields and dates over p95 of the same words alone (targets.md)


def print_targets(size: int, measured: dict[str, dict]) -> None:
    """The target for this size (p95 of every class), or both when the size has none."""
    worst = max(measured, key=lambda kind: measured[kind]["p95"])
    for target_size, target in TARGETS_MS.items():
        if size in TARGETS_MS and size != target_size:
            continue
        over = [f"{kind} {measured[kind]['p95']:.1f} ms" for kind in measured
                if measured[kind]["p95"] > target]
        verdict = (f"over it: {', '.join(over)}" if over else
                   f"all within (worst: {worst}, {measured[worst]['p95']:.1f} ms)")
        note = "" if size == target_size else f" (this run has {size:,})"
        print(f"target: p95 <= {target:g} ms for every class at {target_size:,} documents{note}: "
              f"{verdict}")


def measure(size: int, owner_count: int, args, words: list[str], rare: list[str]) -> None:
    print(f"\n== {size:,} documents, {owner_count} owner{'s' if owner_count > 1 else ''}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with (contextlib.nullcontext(str(args.reuse.parent)) if args.reuse else
          contextlib.nullcontext(tempfile.mkdtemp(prefix="dms-bench-search-")) if args.keep
          else tempfile.TemporaryDirectory(prefix="dms-bench-search-")) as tmp:
        data_dir = Path(tmp) / "data"
        if args.keep:
            print(f"data dir (kept): {data_dir}", flush=True)
        db_path = data_dir / "dms.db"
        started = time.perf_counter()
        if args.reuse:
            queried, rare_counts = kept_corpus(args.reuse)
            print(f"database: reused from {args.reuse}, {queried.documents:,} documents the "
                  f"queried owner {queried.username}'s; dms.db "
                  f"{db_path.stat().st_size / 2**20:,.1f} MiB", flush=True)
        else:
            owners, queried, rare_counts = build_database(db_path, size, owner_count, args, words,
                                                          rare)
            print(f"database: {size:,} documents ({sum(o.documents for o in owners):,} placed, "
                  f"{queried.documents:,} of them the queried owner {queried.username}'s) "
                  f"written in {time.perf_counter() - started:.1f} s; dms.db "
                  f"{db_path.stat().st_size / 2**20:,.1f} MiB", flush=True)
            if args.keep:
                keep_corpus(data_dir, queried, rare_counts)

        started = time.perf_counter()
        server = ServerProcess(data_dir, DMS_OCR_WORKERS="1")
        drain = OutputDrain(server.process.stdout)
        try:
            admin = KeepAlive(server.port, server.login())
            status, peak = wait_for_index(server, admin, started)
            built = time.perf_counter() - started
            after_build = memory(server.process.pid)
            index_bytes, segments = index_size(data_dir / "search")
            time.sleep(0.5)  # the log line comes right after the state changes
            logged = drain.built_line.split("search index built: ", 1)[-1] \
                if drain.built_line else "not seen"
            print(f"index build: {built:.1f} s from starting the server to search ready "
                  f"({status.get('indexed', 0) / built:,.0f} nodes/s); server's log: {logged}")
            print(f"  indexed (health): {status.get('indexed', 0):,} folders and documents, "
                  f"pending changes {status.get('pending_changes')}")
            print(f"  index on disk: {index_bytes / 2**20:,.1f} MiB in {segments} segments "
                  f"({index_bytes / max(size, 1):,.0f} bytes a document); dms.db "
                  f"{db_path.stat().st_size / 2**20:,.1f} MiB")
            print(f"  page cache the index wants: {index_bytes / 2**20:,.1f} MiB (its size: the "
                  "index is memory-mapped, read through the page cache, not counted in the RSS "
                  "until touched)")
            print(f"  server RSS: peak during the build {rss_text(peak)}; after the build "
                  f"{rss_text(after_build)}", flush=True)

            token = server.token if queried.username == "admin" else \
                server.login(queried.username, queried.password)
            http = KeepAlive(server.port, token)
            queries = make_queries(words, rare_counts, args.queries, random.Random(9))
            print(f"queries as {queried.username} ({queried.documents:,} documents), "
                  f"{args.queries} per class, {WARMUP} warm-up then {args.runs} timed requests; "
                  "examples: " + ", ".join(f"{kind} {texts[0]!r}"
                                           for kind, texts in queries.items()))
            print(f"{'class':<12}  {'median results':>14}  {'p50 ms':>8}  {'p95 ms':>8}  "
                  f"{'p99 ms':>8}", flush=True)
            measured = {}
            for kind, texts in queries.items():
                numbers = measured[kind] = run_class(http, texts, args.runs)
                print(f"{kind:<12}  {numbers['results']:>14,.0f}  {numbers['p50']:8.2f}  "
                      f"{numbers['p95']:8.2f}  {numbers['p99']:8.2f}", flush=True)
            measure_pages(http, queries, args)
            measure_fields(http, words, args)
            after_queries = memory(server.process.pid)
            index_after, segments_after = index_size(data_dir / "search")
            print(f"server RSS after the queries: {rss_text(after_queries)}; index on disk then "
                  f"{index_after / 2**20:,.1f} MiB in {segments_after} segments")
            print_targets(size, measured)
            if drain.tracebacks:
                print(f"the server printed {drain.tracebacks} traceback(s)")
        finally:
            server.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


def keep_corpus(data_dir: Path, queried, rare_counts: Counter) -> None:
    """What --reuse needs of a kept corpus, beside its data dir."""
    (data_dir.parent / KEPT).write_text(json.dumps({
        "username": queried.username, "password": queried.password,
        "documents": queried.documents, "rare_counts": rare_counts}))


def kept_corpus(data_dir: Path) -> tuple[SimpleNamespace, Counter]:
    kept = json.loads((data_dir.parent / KEPT).read_text())
    return (SimpleNamespace(username=kept["username"], password=kept["password"],
                            documents=kept["documents"]), Counter(kept["rare_counts"]))


def measure_pages(http: KeepAlive, queries: dict[str, list[str]], args) -> None:
    """A first page with its total (api.md §22, `page=1`: the engine counts every match) right
    after the same queries without it: p95 and its ratio."""
    print("pages with a total (api.md §22): page=1 beside the same queries without a page")
    print(f"{'class':<16}  {'total':>7}  {'p50 ms':>7}  {'p95 ms':>7}  {'alone p95':>9}  "
          f"{'ratio':>6}", flush=True)
    for kind in ("common word", "prefix 3", "inside a word"):
        plain = run_class(http, queries[kind], args.runs)
        paged = run_class(http, queries[kind], args.runs, "&page=1")
        print(f"{kind:<16}  {paged['results']:>7,.0f}  {paged['p50']:7.2f}  "
              f"{paged['p95']:7.2f}  {plain['p95']:9.2f}  {paged['p95'] / plain['p95']:5.2f}x",
              flush=True)


def measure_fields(http: KeepAlive, words: list[str], args) -> None:
    """The query language's classes, each right after the same words without fields (the
    plain-word search of the same run): p95 and its ratio to the plain words' p95."""
    classes = make_field_queries(words, args.queries, random.Random(11))
    print("query language (api.md §20): each class beside the same words alone; examples: "
          + ", ".join(f"{kind} {texts[0]!r}" for kind, (texts, _) in classes.items()))
    print(f"{'class':<16}  {'results':>7}  {'p50 ms':>7}  {'p95 ms':>7}  {'alone p95':>9}  "
          f"{'ratio':>6}", flush=True)
    over = []
    for kind, (texts, alone) in classes.items():
        plain = run_class(http, alone, args.runs)
        fielded = run_class(http, texts, args.runs)
        ratio = fielded["p95"] / plain["p95"]
        if ratio > FIELD_TARGET:
            over.append(f"{kind} {ratio:.2f}x")
        print(f"{kind:<16}  {fielded['results']:>7,.0f}  {fielded['p50']:7.2f}  "
              f"{fielded['p95']:7.2f}  {plain['p95']:9.2f}  {ratio:5.2f}x", flush=True)
    names = run_class(http, [f'correspondent:"Sender {n % 20:02d}" created:{2015 + n % 12}'
                             for n in range(args.queries)], args.runs)
    print(f"{'names and a date':<16}  {names['results']:>7,.0f}  {names['p50']:7.2f}  "
          f"{names['p95']:7.2f}  {'-':>9}  {'-':>6}  (no words: the document list's conditions)")
    print(f"target: p95 with fields and dates <= {FIELD_TARGET}x the same words alone: "
          + (f"over it: {', '.join(over)}" if over else "all within"), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000],
                        help="document counts, each in its own fresh data dir")
    parser.add_argument("--owners", type=int, nargs="+", default=[1, 100],
                        help="owner layouts: the documents spread over this many owners")
    parser.add_argument("--runs", type=int, default=300, help="timed requests per query class")
    parser.add_argument("--queries", type=int, default=50, help="distinct queries per class")
    parser.add_argument("--words", type=int, default=200, help="Zipf words of text per document")
    parser.add_argument("--vocabulary", type=int, default=4000, help="distinct Zipf words")
    parser.add_argument("--rare-words", type=int, default=5000,
                        help="made-up words, one in each document")
    parser.add_argument("--batch", type=int, default=10_000, help="documents per transaction")
    parser.add_argument("--keep", action="store_true", help="leave each data dir in place")
    parser.add_argument("--reuse", type=Path, metavar="DATA_DIR",
                        help="measure a data dir kept by --keep again (one size and layout: "
                             "give them as that run did), without writing its database")
    args = parser.parse_args()
    if args.reuse and (len(args.sizes) != 1 or len(args.owners) != 1):
        parser.error("--reuse measures one corpus: give its --sizes and --owners, one each")
    print(f"machine: {machine()}")
    print(f"load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    rng = random.Random(7)
    words = vocabulary(args.vocabulary, rng)
    rare = rare_words(args.rare_words, set(words), rng)
    print(f"{len(words)} distinct words (Zipf), {args.words} words a document plus one of "
          f"{len(rare):,} rare words; folders of {FOLDER_SIZE:,} documents", flush=True)
    for size in args.sizes:
        for owner_count in args.owners:
            measure(size, owner_count, args, words, rare)


if __name__ == "__main__":
    main()
