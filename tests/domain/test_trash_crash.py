"""kill -9 and the trash, on both engines: a delete killed before or after its commit, and the
periodic purge killed half-way, leave a data dir that `dms verify` finds clean, with every deletion
either whole in the trash or whole gone, its `deleted` event with it (the event is written in the
change's own transaction: never one without the other), and nothing acknowledged missing."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest
import requests

from tests.harness import samples
from tests.harness.database import execute_sql, query_sql
from tests.harness.processes import (
    Running,
    admin_session,
    config_args,
    config_env,
    environment,
    make_node,
)
from tests.harness.waiting import wait_for

# Sockets (pytest-socket): a `dms serve` subprocess killed and started again.
pytestmark = pytest.mark.enable_socket

ADMIN = ("admin", "crash-test-pw")


def session(url: str) -> tuple[requests.Session, str]:
    return admin_session(url, ADMIN[1])


make = make_node


def serve(config, **env: str) -> Running:
    """`dms serve` on the data dir and database of the test's config."""
    return Running(config.data_dir, **config_env(config), **env)


def verify(config) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", "verify", *config_args(config)],
                          env=environment(), capture_output=True, text=True)


def deletions_whole(config) -> tuple[int, int]:
    """(deletions in the trash, nodes marked); asserts each deletion marks its whole subtree and
    has exactly one `deleted` event, and that no `deleted` event is left without its deletion."""
    entries = [row[0] for row in query_sql(config, "SELECT node_id FROM trash_entry")]
    for root in entries:
        [(count, live)] = query_sql(config, """
            WITH RECURSIVE below(id) AS (SELECT id FROM node WHERE id = ? UNION
                SELECT n.id FROM node AS n JOIN below ON n.parent_id = below.id)
            SELECT count(*), count(CASE WHEN n.trash_id IS NULL THEN 1 END)
            FROM below JOIN node AS n ON n.id = below.id""", root)
        assert live == 0, f"deletion {root} left {live} of {count} nodes live"
    deleted = query_sql(config, "SELECT node_id FROM event WHERE action = 'deleted'")
    assert sorted(row[0] for row in deleted) == sorted(entries)
    [(marked,)] = query_sql(config, "SELECT count(*) FROM node WHERE trash_id IS NOT NULL")
    return len(entries), marked


def entries(config) -> int:
    return query_sql(config, "SELECT count(*) FROM trash_entry")[0][0]


@pytest.mark.slow
def test_a_delete_killed_in_flight_is_whole_or_not_at_all(config):
    server = serve(config, DMS_ADMIN_PASSWORD=ADMIN[1])
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
        thread = threading.Thread(target=lambda: _ignore(pending.delete,
                                                         f"{server.url}/api/nodes/{root}/"))
        thread.start()
        time.sleep(0.01)  # the delete is on its way, maybe committed: the point of the test
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        thread.join(10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert deletions_whole(config) in ((0, 0), (1, 401))
    checked = verify(config)
    assert checked.returncode == 0, checked.stdout
    restarted = serve(config)
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
def test_the_purge_killed_half_way_leaves_whole_deletions(config):
    server = serve(config, DMS_ADMIN_PASSWORD=ADMIN[1])
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
    assert deletions_whole(config) == (601, 601)
    execute_sql(config, "UPDATE trash_entry SET purge_at = '2000-01-01 00:00:00.000000'")
    # Purge periods of a second, claimed by heartbeats every second.
    server = serve(config, DMS_TRASH_PURGE_MINUTES="0.01", DMS_LEASE_SECONDS="3")
    try:
        wait_for(lambda: entries(config) < 601, timeout=60, interval=0.005,
                 message="the purge did not start")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    left, marked = deletions_whole(config)
    assert left == marked and left < 601
    restarted = serve(config, DMS_SWEEP_GRACE_MINUTES="0", DMS_TRASH_PURGE_MINUTES="0.01",
                      DMS_LEASE_SECONDS="3")
    try:
        wait_for(lambda: entries(config) == 0, timeout=60, interval=0.2,
                 message=lambda: f"{entries(config)} deletions not purged")
    finally:
        assert restarted.stop() == 0
    assert deletions_whole(config) == (0, 0)
    checked = verify(config)
    assert checked.returncode == 0, checked.stdout
    assert [p for p in (config.data_dir / "files").rglob("*") if p.is_file()] == []
