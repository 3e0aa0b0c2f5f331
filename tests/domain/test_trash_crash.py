"""kill -9 and the trash (issue 25): a delete killed before or after its commit, and the periodic
purge killed half-way, leave a data dir that `dms verify` finds clean, with every deletion either
whole in the trash or whole gone, and nothing acknowledged missing."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import requests

from tests.harness import samples
from tests.harness.processes import Running, environment

pytestmark = pytest.mark.sqlite_only  # kills the server and reads its SQLite file

ADMIN = ("admin", "crash-test-pw")


def session(url: str) -> tuple[requests.Session, str]:
    client = requests.Session()
    token = client.post(url + "/api/auth/login/", json=dict(zip(("username", "password"),
                                                                ADMIN))).json()["token"]
    client.headers["Authorization"] = f"Token {token}"
    me = client.get(url + "/api/users/me/").json()["data"]
    return client, me["relationships"]["home_folder"]["data"]["id"]


def make(client, url, kind, title, parent) -> str:
    body = {"data": {"type": kind, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    response = client.post(url + "/api/nodes/", json=body,
                           headers={"Content-Type": "application/vnd.api+json"})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def verify(data_dir) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", "verify", "--data-dir", str(data_dir)],
                          env=environment(), capture_output=True, text=True)


def deletions_whole(data_dir) -> tuple[int, int]:
    """(deletions in the trash, nodes marked); asserts each deletion marks its whole subtree."""
    connection = sqlite3.connect(data_dir / "dms.db")
    try:
        entries = [row[0] for row in connection.execute("SELECT node_id FROM trash_entry")]
        for root in entries:
            below = connection.execute("""
                WITH RECURSIVE below(id) AS (SELECT ? UNION
                    SELECT n.id FROM node AS n JOIN below ON n.parent_id = below.id)
                SELECT count(*), count(CASE WHEN n.trash_id IS NULL THEN 1 END)
                FROM below JOIN node AS n ON n.id = below.id""", (root,)).fetchone()
            assert below[1] == 0, f"deletion {root} left {below[1]} of {below[0]} nodes live"
        marked = connection.execute(
            "SELECT count(*) FROM node WHERE trash_id IS NOT NULL").fetchone()[0]
        return len(entries), marked
    finally:
        connection.close()


@pytest.mark.slow
def test_a_delete_killed_in_flight_is_whole_or_not_at_all(tmp_path):
    data_dir = tmp_path / "data"
    server = Running(data_dir, DMS_ADMIN_PASSWORD=ADMIN[1])
    try:
        client, home = session(server.url)
        root = make(client, server.url, "folders", "Archive", home)
        parents = [root]
        for index in range(400):  # a wide and deep tree: the delete takes a while
            parents.append(make(client, server.url, "folders", f"F{index}",
                                parents[index // 3]))
        document = make(client, server.url, "documents", "kept", home)
        kept = samples.pdf(["acknowledged before the crash"])
        assert client.put(f"{server.url}/api/documents/{document}/upload/kept.pdf", data=kept,
                          headers={"Content-Disposition": "attachment"}).status_code == 201
        pending = requests.Session()
        pending.headers.update(client.headers)
        import threading
        thread = threading.Thread(target=lambda: _ignore(pending.delete,
                                                         f"{server.url}/api/nodes/{root}/"))
        thread.start()
        time.sleep(0.01)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        thread.join(10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    entries, marked = deletions_whole(data_dir)
    assert (entries, marked) in ((0, 0), (1, 401))
    checked = verify(data_dir)
    assert checked.returncode == 0, checked.stdout
    restarted = Running(data_dir)
    try:
        client, _ = session(restarted.url)
        assert client.get(f"{restarted.url}/api/documents/{document}/download/").content == kept
    finally:
        assert restarted.stop() == 0


def _ignore(call, *args):
    try:
        call(*args, timeout=10)
    except requests.RequestException:
        pass  # the server was killed under it


@pytest.mark.slow
def test_the_purge_killed_half_way_leaves_whole_deletions(tmp_path):
    data_dir = tmp_path / "data"
    server = Running(data_dir, DMS_ADMIN_PASSWORD=ADMIN[1])
    try:
        client, home = session(server.url)
        nodes = [make(client, server.url, "folders", f"Old {index}", home)
                 for index in range(600)]
        with_file = make(client, server.url, "documents", "letter", home)
        assert client.put(f"{server.url}/api/documents/{with_file}/upload/a.txt",
                          data=samples.text("a letter\n"),
                          headers={"Content-Disposition": "attachment"}).status_code == 201
        for node in [*nodes, with_file]:
            assert client.delete(f"{server.url}/api/nodes/{node}/").status_code == 204
    finally:
        assert server.stop() == 0
    connection = sqlite3.connect(data_dir / "dms.db")
    connection.execute("UPDATE trash_entry SET purge_at = '2000-01-01 00:00:00.000000'")
    connection.commit()
    connection.close()
    # Purge periods of a second, claimed by heartbeats every second.
    server = Running(data_dir, DMS_TRASH_PURGE_MINUTES="0.01", DMS_LEASE_SECONDS="3")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = _entries(data_dir)
            if left < 601:
                break
            time.sleep(0.005)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    entries, marked = deletions_whole(data_dir)
    assert entries == marked and entries < 601
    restarted = Running(data_dir, DMS_SWEEP_GRACE_MINUTES="0", DMS_TRASH_PURGE_MINUTES="0.01",
                        DMS_LEASE_SECONDS="3")
    try:
        deadline = time.monotonic() + 60
        while _entries(data_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _entries(data_dir) == 0
    finally:
        assert restarted.stop() == 0
    checked = verify(data_dir)
    assert checked.returncode == 0, checked.stdout
    assert [p for p in (data_dir / "files").rglob("*") if p.is_file()] == []


def _entries(data_dir) -> int:
    connection = sqlite3.connect(data_dir / "dms.db", timeout=5)
    try:
        return connection.execute("SELECT count(*) FROM trash_entry").fetchone()[0]
    finally:
        connection.close()
