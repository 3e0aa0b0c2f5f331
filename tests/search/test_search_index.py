"""The embedded search index stays exactly in step with the database: a server killed between the
database's commit and the index's finds exactly what the database holds after a restart; a missing,
broken or outdated index is rebuilt at start-up, with 503 until it is ready."""

from __future__ import annotations

import json
import signal
import sqlite3

import pytest

from dms.search.index import MARKER, IndexUnusable, SearchIndex
from tests.harness.client import JSON, Client
from tests.harness.processes import Running
from tests.harness.waiting import wait_indexed, wait_served

# The tantivy index of the SQLite mode.
# Sockets (pytest-socket): servers started on damaged indexes.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]

PASSWORD = "index-test-pw"
FOLDERS = 30_000


def add_folders(db_path, parent_id: str, owner_id: str, prefix: str, count: int) -> None:
    """`count` folders under `parent_id`, written straight into the database (the outbox
    triggers still record them for the index)."""
    stamp = "2026-01-01 00:00:00.000000"
    connection = sqlite3.connect(db_path)
    with connection:
        connection.executemany(
            "INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
            "updated_at) VALUES (?, ?, ?, 'folder', ?, ?, ?, ?)",
            [(f"{prefix[:4]}{number:04d}-0000-4000-8000-{number:012d}", owner_id, parent_id,
              f"{prefix} {number}", f"{prefix} {number}", stamp, stamp)
             for number in range(count)])
    connection.close()


def titles(client, q) -> list[str]:
    response = client.get("/api/search/", params={"q": q, "limit": 500})
    assert response.status_code == 200, response.text
    return sorted(result["title"] for result in response.json())


def make_folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


def start(data_dir) -> tuple[Running, Client]:
    server = Running(data_dir, DMS_ADMIN_PASSWORD=PASSWORD)
    return server, Client(server.url).login("admin", PASSWORD)


@pytest.mark.slow
def test_a_kill_between_the_database_commit_and_the_index_commit_loses_nothing(tmp_path):
    data_dir = tmp_path / "data"
    db_path = data_dir / "dms.db"
    server, admin = start(data_dir)
    try:
        doomed = make_folder(admin, "doomed parent", admin.home_id)
        kept = make_folder(admin, "report alpha", admin.home_id)
        add_folders(db_path, doomed, admin.user_id, "lost", FOLDERS)
        wait_indexed(db_path, timeout=120)
        assert len(titles(admin, "lost")) == 500  # the most one search returns
        # One request puts 30,001 nodes in the trash; the server dies right after the database
        # committed.
        assert admin.delete(f"/api/nodes/{doomed}/").status_code == 204
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(10)
    except BaseException:
        server.stop(signal.SIGKILL)
        raise
    # Proof that the kill fell between the two commits: the database holds the delete and its
    # outbox rows, the index still holds deleted folders — the last one the delete wrote an
    # outbox row for (the indexer takes rows in order; on a busy machine it may have taken the
    # first ones, the doomed folder's own among them, before the kill).
    connection = sqlite3.connect(db_path)
    assert connection.execute(
        "SELECT count(*) FROM node WHERE title LIKE 'lost %' AND trash_id IS NULL").fetchone() \
        == (0,)
    assert connection.execute("SELECT count(*) FROM search_outbox").fetchone()[0] > 0
    connection.close()
    stale = SearchIndex(data_dir / "search")
    stale.open()
    last = FOLDERS - 1
    assert stale.holds(f"lost{last:04d}-0000-4000-8000-{last:012d}")
    del stale

    server, admin = start(data_dir)
    try:
        wait_indexed(db_path, timeout=120)
        assert titles(admin, "lost") == []
        assert titles(admin, "doomed") == []
        assert titles(admin, "report") == ["report alpha"]
        renamed = admin.patch(f"/api/nodes/{kept}/", {"data": {"type": "folders",
                                                               "attributes": {"title": "memo"}}})
        assert renamed.status_code == 200
        wait_indexed(db_path)
        assert (titles(admin, "report"), titles(admin, "memo")) == ([], ["memo"])
    finally:
        assert server.stop() == 0


@pytest.mark.slow
def test_a_missing_index_is_rebuilt_with_503_until_it_is_ready(tmp_path):
    data_dir = tmp_path / "data"
    server, admin = start(data_dir)
    try:
        parent = make_folder(admin, "archive", admin.home_id)
        add_folders(data_dir / "dms.db", parent, admin.user_id, "box", 100_000)
        wait_indexed(data_dir / "dms.db", timeout=120)
    finally:
        assert server.stop() == 0
    for entry in (data_dir / "search").iterdir():
        entry.unlink()
    server, admin = start(data_dir)
    try:
        response = admin.get("/api/search/", params={"q": "box"})
        assert response.status_code == 503, response.text
        [error] = response.json()["errors"]
        assert (error["status"], error["code"]) == ("503", "unavailable")
        assert error["detail"].startswith("The search index is being ")
        assert error["detail"].endswith("; search again in a moment.")
        assert response.headers["Content-Type"] == JSON
        response = wait_served(lambda: admin.get("/api/search/", params={"q": "box 99999"}),
                               timeout=120, interval=0.2)
        assert [r["title"] for r in response.json()] == ["box 99999"]
        health = admin.get("/health").json()["search"]
        assert health == {"state": "ready", "pending_changes": 0, "indexed": 100_003}
    finally:
        assert server.stop() == 0
    assert "building the search index: the index is missing" in server.output


@pytest.mark.parametrize("damage", ["segment file", "version marker", "marker of another format"])
def test_a_broken_or_outdated_index_is_rebuilt(tmp_path, damage):
    data_dir = tmp_path / "data"
    server, admin = start(data_dir)
    try:
        make_folder(admin, "Käsekuchen", admin.home_id)
        wait_indexed(data_dir / "dms.db")
    finally:
        assert server.stop() == 0
    index_dir = data_dir / "search"
    if damage == "segment file":
        next(index_dir.glob("*.term")).unlink()
    elif damage == "version marker":
        (index_dir / MARKER).unlink()
    else:
        marker = json.loads((index_dir / MARKER).read_text())
        (index_dir / MARKER).write_text(json.dumps({**marker, "format": marker["format"] + 1}))
    with pytest.raises(IndexUnusable):
        SearchIndex(index_dir).open()
    server, admin = start(data_dir)
    try:
        wait_served(lambda: admin.get("/api/search/", params={"q": "x"}), timeout=30, interval=0.05)
        assert titles(admin, "kase") == ["Käsekuchen"]
    finally:
        assert server.stop() == 0
    assert "building the search index" in server.output


def test_verify_reports_an_index_that_drifted_and_repair_rebuilds_it(tmp_path):
    import subprocess
    import sys

    data_dir = tmp_path / "data"
    server, admin = start(data_dir)
    try:
        home = admin.home_id
        make_folder(admin, "indexed", home)
        wait_indexed(data_dir / "dms.db")
        user_id = admin.user_id
    finally:
        assert server.stop() == 0
    # A change the index never heard of (its outbox row lost): the kind of drift verify finds.
    add_folders(data_dir / "dms.db", home, user_id, "hidden", 1)
    connection = sqlite3.connect(data_dir / "dms.db")
    with connection:
        connection.execute("DELETE FROM search_outbox")
    connection.close()

    def dms(*args):
        return subprocess.run([sys.executable, "-m", "dms", *args, "--data-dir", str(data_dir)],
                              capture_output=True, text=True)

    checked = dms("verify")
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [
        "Checked 0 stored files.",
        "2 differences between the search index and the database (repair rebuilds the index):",
        "  the index holds 3 folders and documents, the database 4",
        "  1 of 4 sampled nodes are not in the index: hidd0000-0000-4000-8000-000000000000",
        "Problems found."]
    repaired = dms("verify", "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "Rebuilt the search index: 4 folders and documents." in repaired.stdout.splitlines()
    assert repaired.stdout.endswith("No problems found.\n")
