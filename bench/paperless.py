"""Paperless-ngx dialect benchmark (api.md §17): its document list against dms's own listing of
the same documents, in one run.

The target (../shared/docs/targets.md): "the Paperless-ngx dialect's document list, page of
25 / 100 — measured against dms's own listing of the same documents — <= 1.3x".

One user gets --documents documents (default 10,000) in one folder, written straight into SQLite
(as bench/tree.py does), each with a version, a page of about 600 characters of text, two tags
and a correspondent; then `dms serve` answers over one keep-alive connection. Each case is timed
alternately, request by request, with dms's own `GET /api/documents/` at the same page size and
page (so the machine's noise hits both alike): the dialect's `GET /paperless/api/documents/` in
version 10, and in version 9 (which adds `all`, every id). The dialect's page carries each
document's text (`content`), as Paperless-ngx's does; dms's own page does not.

    .venv/bin/python -m bench.paperless [--documents 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

from bench.common import ADMIN_PASSWORD, KeepAlive, ServerProcess, machine, timed_beside
from bench.lib.search_server import wait_for_index
from dms.db import database, open_database
from dms.db.models import DocumentVersion, Node, Page, new_id, utcnow
from dms.db.schema import migrate_schema
from dms.domain import accounts

TARGET = 1.3
TEXT = ("Invoice {n} from ACME Corporation for office chairs and a delivery. Payment terms: "
        "30 days. Thank you for your business. ") * 5


def build(data_dir: Path, total: int) -> dict[str, str]:
    open_database(data_dir / "dms.db")
    migrate_schema()
    user = accounts.create_user("admin", ADMIN_PASSWORD, is_superuser=True, is_staff=True)
    home = Node.get(Node.owner == user, Node.special == Node.HOME)
    now, stamp = utcnow(), utcnow().strftime("%Y-%m-%d %H:%M:%S.%f")
    folder = new_id()
    tags = [new_id(), new_id()]
    correspondent = new_id()
    with database.atomic():
        Node.insert(id=folder, owner=user.id, parent=home.id, kind=Node.FOLDER, title="Bills",
                    title_sort="bills", created_at=now, updated_at=now).execute()
        for tag_id, name in zip(tags, ("paid", "2024"), strict=True):
            database.execute_sql("INSERT INTO tag (id, owner_id, name, name_key, created_at) "
                                 "VALUES (?, ?, ?, ?, ?)", (tag_id, user.id, name, name, stamp))
        database.execute_sql("INSERT INTO correspondent (id, owner_id, name, name_key, "
                             "created_at) VALUES (?, ?, 'ACME', 'acme', ?)",
                             (correspondent, user.id, stamp))
        for start in range(0, total, 500):
            nodes, versions, pages, links = [], [], [], []
            for n in range(start, min(start + 500, total)):
                node_id, version_id, text = new_id(), new_id(), TEXT.format(n=n)
                nodes.append({"id": node_id, "owner": user.id, "parent": folder,
                              "kind": Node.DOCUMENT, "title": f"invoice {n:05d}",
                              "title_sort": f"invoice {n:05d}", "created_at": now,
                              "updated_at": now, "lang": "eng", "ocr": True,
                              "ocr_status": "succeeded", "file_name": f"invoice-{n}.txt",
                              "size": len(text), "page_count": 1,
                              "correspondent_id": correspondent})
                versions.append({"id": version_id, "document": node_id, "number": 1,
                                 "file_name": f"invoice-{n}.txt", "mime_type": "text/plain",
                                 "size": len(text), "page_count": 1, "lang": "eng",
                                 "sha256": hashlib.sha256(text.encode()).hexdigest(),
                                 "created_at": now})
                pages.append({"id": new_id(), "version": version_id, "number": 1,
                              "text": text})
                links += [(node_id, tag_id) for tag_id in tags]
            Node.insert_many(nodes).execute()
            DocumentVersion.insert_many(versions).execute()
            Page.insert_many(pages).execute()
            database.execute_sql("INSERT INTO node_tag (node_id, tag_id) VALUES "
                                 + ", ".join("(?, ?)" for _ in links),
                                 [value for link in links for value in link])
    database.close()
    return {"user": user.id}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        started = time.perf_counter()
        build(data_dir, args.documents)
        print(f"machine: {machine()}")
        print(f"library: {args.documents} documents with text, tags and a correspondent, built "
              f"in {time.perf_counter() - started:.1f} s")
        server = ServerProcess(data_dir)
        try:
            token = server.login()
            own, dialect = KeepAlive(server.port, token), KeepAlive(server.port, token)
            # The search index is built at the first start: not while the lists are timed.
            wait_for_index(server, own, time.perf_counter())
            counter = iter(range(10**9))
            results = {}
            for size in (25, 100):
                pages = args.documents // size
                for version in (10, 9):
                    position = {"page": 1}

                    def theirs(size=size, version=version, position=position, pages=pages):
                        position["page"] = next(counter) % pages + 1
                        dialect.request("GET", f"/paperless/api/documents/?page_size={size}"
                                        f"&page={position['page']}", headers={
                                            "Accept": f"application/json; version={version}"})

                    def ours(size=size, position=position):
                        own.get(f"/api/documents/?page[size]={size}"
                                f"&page[number]={position['page']}")

                    name = f"dialect's list, page of {size}, version {version}"
                    results[name] = timed_beside(theirs, ours, runs=args.runs)
            print(f"server RSS after the run: {server.rss_mib():.1f} MiB")
        finally:
            server.stop()
    width = max(map(len, results))
    print(f"{'operation':<{width}}  {'p50 ms':>8}  {'p95 ms':>8}  {'dms ms':>8}  {'x dms':>6}  "
          f"target")
    for name, numbers in results.items():
        verdict = "met" if numbers["ratio"] <= TARGET else "MISSED"
        print(f"{name:<{width}}  {numbers['p50']:8.2f}  {numbers['p95']:8.2f}  "
              f"{numbers['floor_p50']:8.2f}  {numbers['ratio']:5.2f}x  <= {TARGET}x {verdict}")
    print("dms: its own GET /api/documents/ at the same page size and page, timed alternately")


if __name__ == "__main__":
    main()
