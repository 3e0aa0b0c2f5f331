"""Tree benchmark: a tree of 100,000 nodes with 10,000 children in one folder, served by a real
`dms serve`; prints p50/p95 latency of the operations that must stay flat as the tree grows.

The requests the targets compare with our own stack's floor (`/users/me/`, a folder of 100
children) are timed alternately with a bare waitress app (bench/floor.py) on its own keep-alive
connection, and printed as ratios to its median. The big folder's documents all carry the tag
`paid`, every third also `2024`: a tag-filtered page of it is timed beside the unfiltered one.
The big folder is shared with a second user, bob, as a viewer (api.md §21): his page of it is
timed alternately with the owner's same page (the target: within 1.3× of it), with his
"Shared with me" and his list of all documents (the 10,000 shared with him).

Everything is timed once the server's search index is built: a first start builds it for the
whole tree in the background, and requests timed meanwhile measured how they share the
interpreter with the build (on 2026-11-30 a page of 100 took 12.7 ms then, 3.9 ms after).

    .venv/bin/python -m bench.tree [--nodes 100000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.common import (
    ADMIN_PASSWORD,
    FloorProcess,
    KeepAlive,
    ServerProcess,
    machine,
    timed,
    timed_beside,
)
from bench.lib.search_server import OutputDrain, wait_for_index
from dms.db import database, open_database
from dms.db.models import Node, new_id, utcnow
from dms.db.schema import migrate_schema
from dms.domain import accounts

BIG_FOLDER_CHILDREN = 10_000
MOVED_DESCENDANTS = 10_000
SMALL_FOLDER_CHILDREN = 100
DEPTH = 20
FILLER_FOLDER_SIZE = 100


def build_tree(data_dir: Path, total: int) -> dict[str, str]:
    """Write the tree straight into SQLite (bulk inserts); returns the ids the timings use."""
    open_database(data_dir / "dms.db")
    migrate_schema()
    user = accounts.create_user("admin", ADMIN_PASSWORD, is_superuser=True, is_staff=True)
    home = Node.get(Node.owner == user, Node.special == Node.HOME)
    inbox = Node.get(Node.owner == user, Node.special == Node.INBOX)
    now = utcnow()
    rows: list[dict] = []

    def add(parent_id: str, kind: str, title: str) -> str:
        node_id = new_id()
        document = kind == Node.DOCUMENT
        rows.append({"id": node_id, "owner": user.id, "parent": parent_id, "kind": kind,
                     "title": title, "title_sort": title.casefold(), "created_at": now,
                     "updated_at": now, "lang": "eng" if document else None,
                     "ocr": True if document else None,
                     "ocr_status": "received" if document else None})
        return node_id

    big = add(home.id, Node.FOLDER, "big")
    for index in range(BIG_FOLDER_CHILDREN):
        add(big, Node.DOCUMENT, f"invoice {index:05d}")
    small = add(home.id, Node.FOLDER, "small")
    for index in range(SMALL_FOLDER_CHILDREN):
        add(small, Node.FOLDER if index < 10 else Node.DOCUMENT, f"item {index:03d}")
    deep = home.id
    for level in range(DEPTH):
        deep = add(deep, Node.FOLDER, f"level {level}")
    mover = add(home.id, Node.FOLDER, "mover")
    for _ in range(MOVED_DESCENDANTS // FILLER_FOLDER_SIZE):
        sub = add(mover, Node.FOLDER, f"sub {len(rows)}")
        for index in range(FILLER_FOLDER_SIZE - 1):
            add(sub, Node.DOCUMENT, f"page {index}")
    sub = None
    while len(rows) < total:
        if sub is None or len(rows) % FILLER_FOLDER_SIZE == 0:
            sub = add(inbox.id, Node.FOLDER, f"filler {len(rows)}")
        else:
            add(sub, Node.DOCUMENT, f"doc {len(rows)}")
    with database.atomic():
        for start in range(0, len(rows), 500):
            Node.insert_many(rows[start:start + 500]).execute()
        tag_big_folder(user.id, [row["id"] for row in rows if row["parent"] == big], now)
    bob = accounts.create_user("bob", ADMIN_PASSWORD)
    database.execute_sql("INSERT INTO node_grant (id, node_id, user_id, role, granted_by, "
                         "created_at) VALUES (?, ?, ?, 'viewer', ?, ?)",
                         (new_id(), big, bob.id, user.id, now.strftime("%Y-%m-%d %H:%M:%S.%f")))
    database.close()
    return {"big": big, "small": small, "deep": deep, "mover": mover, "home": home.id,
            "inbox": inbox.id, "nodes": str(len(rows) + 2), "user": user.id, "bob": bob.id}


def tag_big_folder(owner_id: str, document_ids: list[str], now) -> None:
    """`paid` on every document of the big folder, `2024` on every third."""
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")
    paid, year = new_id(), new_id()
    for tag_id, name in ((paid, "paid"), (year, "2024")):
        database.execute_sql("INSERT INTO tag (id, owner_id, name, name_key, created_at) "
                             "VALUES (?, ?, ?, ?, ?)", (tag_id, owner_id, name, name, stamp))
    links = [(node_id, paid) for node_id in document_ids]
    links += [(node_id, year) for node_id in document_ids[::3]]
    for start in range(0, len(links), 400):
        chunk = links[start:start + 400]
        database.execute_sql("INSERT INTO node_tag (node_id, tag_id) VALUES "
                             + ", ".join("(?, ?)" for _ in chunk),
                             [v for row in chunk for v in row])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        started = time.perf_counter()
        ids = build_tree(data_dir, args.nodes)
        print(f"machine: {machine()}")
        print(f"tree: {ids['nodes']} nodes, {BIG_FOLDER_CHILDREN} children in one folder, built in "
              f"{time.perf_counter() - started:.1f} s")
        server, floor = ServerProcess(data_dir), FloorProcess()
        OutputDrain(server.process.stdout)  # a full pipe would block the server
        try:
            server.login()
            http, bare = server.connection(), floor.connection()
            started = time.perf_counter()
            wait_for_index(server, http, started)
            print(f"search index built in {time.perf_counter() - started:.1f} s; timing from now")
            bobs = KeepAlive(server.port, server.login("bob"))
            shared_id = json.loads(bobs.get("/api/users/me/"))["data"]["relationships"][
                "shared_folder"]["data"]["id"]

            def floor_call():
                bare.get("/api/users/me/")

            pages = BIG_FOLDER_CHILDREN // 100
            counter = iter(range(10**9))

            def move_back_and_forth():
                target = ids["inbox"] if next(counter) % 2 else ids["home"]
                http.post("/api/nodes/move/", {"nodes": [{"id": ids["mover"]}],
                                               "target_parent": {"id": target}})

            results = {
                "GET /api/users/me/": timed_beside(lambda: http.get("/api/users/me/"),
                                                   floor_call),
                "list small folder (100 children), default page of 10":
                    timed_beside(lambda: http.get(f"/api/nodes/{ids['small']}/"), floor_call),
                "list small folder (100 children), page[size]=100":
                    timed_beside(lambda: http.get(f"/api/nodes/{ids['small']}/?page[size]=100"),
                                 floor_call),
                "list page of 100 from the 10,000-children folder":
                    timed(lambda: http.get(f"/api/nodes/{ids['big']}/?page[size]=100"
                                           f"&page[number]={next(counter) % pages + 1}")),
                "same, only tags=paid,2024 (all; 3,334 match)":
                    timed(lambda: http.get(f"/api/nodes/{ids['big']}/?page[size]=100&tags=paid,2024"
                                           f"&page[number]={next(counter) % 33 + 1}")),
                "same, only tags=paid (all 10,000 match)":
                    timed(lambda: http.get(f"/api/nodes/{ids['big']}/?page[size]=100&tags=paid"
                                           f"&page[number]={next(counter) % pages + 1}")),
                "bob: page of 100 from the 10,000-children folder shared with him (x the "
                "owner's same page)": timed_beside(
                    lambda: bobs.get(f"/api/nodes/{ids['big']}/?page[size]=100"
                                     f"&page[number]={next(counter) % pages + 1}"),
                    lambda: http.get(f"/api/nodes/{ids['big']}/?page[size]=100"
                                     f"&page[number]={next(counter) % pages + 1}")),
                "bob: his Shared with me (one folder)":
                    timed(lambda: bobs.get(f"/api/nodes/{shared_id}/")),
                "bob: all his documents, page of 100 (10,000 shared with him)":
                    timed(lambda: bobs.get(f"/api/documents/?page[size]=100"
                                           f"&page[number]={next(counter) % pages + 1}")),
                "breadcrumb 20 levels deep (GET /api/folders/{id}/)":
                    timed(lambda: http.get(f"/api/folders/{ids['deep']}/")),
                "move a folder with 10,000 descendants": timed(move_back_and_forth, runs=100),
            }
            print(f"server RSS after the run: {server.rss_mib():.1f} MiB")
        finally:
            server.stop()
            floor.stop()
    width = max(map(len, results))
    print(f"{'operation':<{width}}  {'p50 ms':>8}  {'p95 ms':>8}  {'floor ms':>8}  {'x floor':>7}")
    for name, numbers in results.items():
        floor_text = (f"  {numbers['floor_p50']:8.2f}  {numbers['ratio']:6.2f}x"
                      if "ratio" in numbers else "")
        print(f"{name:<{width}}  {numbers['p50']:8.2f}  {numbers['p95']:8.2f}{floor_text}")
    print("floor: a bare waitress app answering a constant body (bench/floor.py), timed "
          "alternately with dms on its own keep-alive connection")


if __name__ == "__main__":
    main()
