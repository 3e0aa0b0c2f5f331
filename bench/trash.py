"""The trash and the history at scale: a listing and a search are no slower with 10,000 nodes in the
trash beside 100,000 live ones, and what the history costs in the database.

One SQLite data dir, written directly (bulk inserts through dms's own schema): one user, 100,000
live documents with a line of text each — 10,000 of them in one folder, the rest in folders of
100 — then timed in-process (no HTTP: what the trash changes is the database's work):
1. a page of 100 of the 10,000-children folder, and a one-word search with the tantivy index;
2. the same with 10,000 more documents in the trash, all in that same folder (the worst case for
   its listing: every page skips over trashed siblings); between the blocks with the trash they
   belong to another user (restored there), so that the blocks without it have the same live
   documents and no trash at all;
each ROUNDS times in all, in BLOCKS alternating blocks (the trash filled, then emptied by a
restore, again and again: a machine whose speed drifts weighs on both alike), p50 and p95 in ms,
and their ratio. Then the history: three events
per document (created, uploaded, processed) for each of the live documents, and the database's
growth: bytes per event (the row and both indexes) and MiB per 100,000 documents.

    .venv/bin/python -m bench.trash [--documents 100000] [--trashed 10000] [--rounds 200]
                                    [--blocks 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from dms.db import database, events, open_database, owner_scope, write_transaction
from dms.db.models import Node, new_id, utcnow
from dms.db.schema import migrate_schema
from dms.domain import accounts, listings, tree
from dms.search import engine, query

WORDS = ("invoice electricity water insurance contract tax letter bank pension doctor rent "
         "phone internet car school garden").split()


def build(data_dir: Path, documents: int, trashed: int):
    open_database(data_dir / "dms.db")
    migrate_schema()
    user = accounts.create_user("admin", "bench-password", is_superuser=True, is_staff=True)
    home = tree.special_folder(user, Node.HOME)
    now = utcnow()
    nodes, pages = [], []
    big = new_id()
    nodes.append(_node(big, user.id, home.id, "folder", "big", now))

    def document(parent: str, index: int) -> str:
        node_id = new_id()
        nodes.append(_node(node_id, user.id, parent, "document", f"letter {index:06d}", now))
        pages.append((node_id, f"{WORDS[index % len(WORDS)]} number {index} for the bench"))
        return node_id

    for index in range(10_000):
        document(big, index)
    folder = None
    for index in range(10_000, documents):
        if folder is None or index % 100 == 0:
            folder = new_id()
            nodes.append(_node(folder, user.id, home.id, "folder", f"folder {index}", now))
        document(folder, index)
    doomed = [document(big, documents + index) for index in range(trashed)]
    _insert(nodes, pages)
    return user, big, doomed


def _node(node_id, owner, parent, kind, title, now) -> dict:
    document = kind == "document"
    return {"id": node_id, "owner": owner, "parent": parent, "kind": kind, "title": title,
            "title_sort": title.casefold(), "created_at": now, "updated_at": now,
            "lang": "eng" if document else None, "ocr": True if document else None,
            "ocr_status": "succeeded" if document else None, "page_count": 1 if document else 0}


def _insert(nodes: list[dict], pages: list[tuple[str, str]]) -> None:
    with database.atomic():
        for start in range(0, len(nodes), 500):
            Node.insert_many(nodes[start:start + 500]).execute()
        for start in range(0, len(pages), 300):
            rows = pages[start:start + 300]
            versions = [(new_id(), document_id) for document_id, _ in rows]
            database.execute_sql(
                "INSERT INTO document_version (id, document_id, number, file_name, mime_type, "
                "size, page_count, sha256, lang, created_at) VALUES "
                + ", ".join("(?, ?, 1, 'a.txt', 'text/plain', 10, 1, ?, 'eng', ?)"
                            for _ in rows),
                [v for (version_id, document_id) in versions
                 for v in (version_id, document_id, "0" * 64, "2026-01-01 00:00:00.000000")])
            database.execute_sql(
                "INSERT INTO page (id, version_id, number, text, method) VALUES "
                + ", ".join("(?, ?, 1, ?, 'text')" for _ in rows),
                [v for (version_id, _), (_, text) in zip(versions, rows, strict=True)
                 for v in (new_id(), version_id, text)])


def timings(user, big, search_engine, rounds: int) -> tuple[list[float], list[float]]:
    listing_ms, search_ms = [], []
    folder = Node.get_by_id(big)
    for round_ in range(rounds):
        started = time.perf_counter()
        rows = listings.children(folder).fetch(4_900, 100)
        listing_ms.append((time.perf_counter() - started) * 1000)
        assert len(rows) == 100
        started = time.perf_counter()
        found = query(search_engine, user, WORDS[round_ % len(WORDS)])
        search_ms.append((time.perf_counter() - started) * 1000)
        assert found
    return listing_ms, search_ms


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"p50 {statistics.median(ordered):6.2f} ms, "
            f"p95 {ordered[int(len(ordered) * 0.95) - 1]:6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--trashed", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=4)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="dms-bench-trash-") as tmp:
        data_dir = Path(tmp)
        started = time.monotonic()
        user, big, doomed = build(data_dir, args.documents, args.trashed)
        # The doomed documents are first live beside the others, as before their deletion.
        search_engine = engine(data_dir)
        print(f"built {args.documents + args.trashed:,} documents in "
              f"{time.monotonic() - started:.0f} s; indexing ...", flush=True)
        search_engine.rebuild_now()
        search_engine.start()
        other = accounts.create_user("other", "bench-password")
        elsewhere = tree.special_folder(other, Node.HOME).id
        with_trash: tuple[list[float], list[float]] = ([], [])
        without: tuple[list[float], list[float]] = ([], [])
        per_block = max(1, args.rounds // args.blocks)
        try:
            for _ in range(args.blocks):
                with database.atomic():  # `trashed` of the big folder's documents in the trash
                    database.execute_sql("UPDATE node SET owner_id = ?, parent_id = ? "
                                         "WHERE parent_id = ?", (user.id, big, elsewhere))
                    for node_id in doomed:
                        tree.trash_subtree(node_id)
                        database.execute_sql(
                            "INSERT INTO trash_entry (node_id, owner_id, deleted_at, purge_at, "
                            "original_parent_id, original_parent_title) VALUES (?, ?, ?, ?, ?, ?)",
                            (node_id, user.id, "2026-11-25 00:00:00.000000",
                             "2026-12-25 00:00:00.000000", big, "big"))
                _wait_indexed(search_engine)
                for mine, theirs in zip(with_trash, timings(user, big, search_engine, per_block),
                                        strict=True):
                    mine.extend(theirs)
                with database.atomic():  # restored (the marks cleared), to the other user
                    database.execute_sql("UPDATE node SET trash_id = NULL, owner_id = ?, "
                                         "parent_id = ? WHERE trash_id IS NOT NULL",
                                         (other.id, elsewhere))
                    database.execute_sql("DELETE FROM trash_entry")
                _wait_indexed(search_engine)
                for mine, theirs in zip(without, timings(user, big, search_engine, per_block),
                                        strict=True):
                    mine.extend(theirs)
        finally:
            search_engine.stop()
        print(f"\npage of 100 from a folder of 10,000 live documents ({per_block * args.blocks} "
              f"rounds in {args.blocks} blocks each way)")
        print(f"  without trashed siblings: {percentiles(without[0])}")
        print(f"  with {args.trashed:,} trashed siblings: {percentiles(with_trash[0])}  "
              f"(p50 ratio {statistics.median(with_trash[0]) / statistics.median(without[0]):.2f})")
        print(f"\none-word search over {args.documents:,} live documents")
        print(f"  without trashed documents: {percentiles(without[1])}")
        print(f"  with {args.trashed:,} trashed: {percentiles(with_trash[1])}  "
              f"(p50 ratio {statistics.median(with_trash[1]) / statistics.median(without[1]):.2f})")
        history(user.id, args.documents)


def _wait_indexed(search_engine) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        pending = database.execute_sql("SELECT count(*) FROM search_outbox").fetchone()[0]
        if pending == 0:
            return
        search_engine.notify()
        time.sleep(0.5)
    raise RuntimeError("the index did not catch up")


def history(owner_id: str, documents: int) -> None:
    """Three events per document, as a document brought in and read has, and the growth of the
    database file (its pages in use, before and after)."""
    ids = [row[0] for row in database.execute_sql(
        "SELECT id FROM node WHERE kind = 'document' LIMIT ?", (documents,))]
    before = _used_bytes()
    with write_transaction(owner_scope(owner_id)):  # events are written in their owner's scope
        for start in range(0, len(ids), 1000):
            events.record_many([
                (owner_id, node_id, action, owner_id if action != events.PROCESSED else None,
                 details)
                for node_id in ids[start:start + 1000]
                for action, details in (
                    (events.CREATED, {"title": "letter 000123", "kind": "document",
                                      "parent": {"id": new_id(), "title": "folder 12300"}}),
                    (events.UPLOADED, {"version": 1, "file_name": "letter 000123.pdf",
                                       "size": 123456}),
                    (events.PROCESSED, {"status": "succeeded", "version": new_id(),
                                        "pages": 2}))])
    grown = _used_bytes() - before
    count = len(ids) * 3
    print(f"\nhistory: {count:,} events ({len(ids):,} documents x 3) take {grown / 2**20:.1f} MiB "
          f"of the database, {grown / count:.0f} bytes each (row and both indexes): "
          f"{grown / len(ids) * 100_000 / 2**20:.1f} MiB per 100,000 documents")


def _used_bytes() -> int:
    page_size = database.execute_sql("PRAGMA page_size").fetchone()[0]
    pages = database.execute_sql("PRAGMA page_count").fetchone()[0]
    free = database.execute_sql("PRAGMA freelist_count").fetchone()[0]
    return (pages - free) * page_size


if __name__ == "__main__":
    main()
