"""Several machines, on one: a real PostgreSQL and Redis on loopback, two web nodes
(`dms serve --no-worker`) and two `dms worker` processes, each with a data dir of its own, all on
one shared files dir that is another filesystem than the nodes' data dirs (/dev/shm), as a NAS mount
would be. Leases expire after 3 s, reconcile runs every 3 s and verify every 7.2 s, so that the
cluster's behaviour shows within seconds.

The tests of this module share the cluster and run in order: the failed-logins test, which locks
127.0.0.1 out for five minutes, comes last."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from tests.harness import cluster as harness
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.cluster import (
    PASSWORD,
    admin_clients,
    read_pages,
    slow_upload,
    upload_long_scan,
    wait_succeeded,
)
from tests.harness.database import query_sql
from tests.harness.documents import create_node, new_document, upload
from tests.harness.nodes import DmsNode
from tests.harness.processes import dms_command, environment, free_port
from tests.harness.redisserver import RedisServer
from tests.harness.rules import add_rule, finished_run, many_documents
from tests.harness.users import add_user
from tests.harness.waiting import wait_for
from tests.harness.webhooks import Receiver, add_webhook

# Sockets (pytest-socket): Redis, web nodes and workers as subprocesses, asked over HTTP.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.slow, pytest.mark.enable_socket]


class Cluster(harness.Cluster):
    """The lane's web nodes and workers on one shared files dir."""

    def __init__(self, root: Path, database_url: str, redis: RedisServer, files_dir: Path):
        super().__init__(root, database_url, redis, DMS_FILES_DIR=str(files_dir))
        self.files_dir = files_dir


@pytest.fixture(scope="module")
def cluster(postgres, tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    shared = Path(f"/dev/shm/dms-shared-{uuid.uuid4().hex[:8]}")
    shared.mkdir()
    # The point of the lane: the shared files are on another filesystem than the nodes' tmp/.
    assert os.stat(shared).st_dev != os.stat(root).st_dev
    redis = RedisServer().start()
    running = Cluster(root, postgres.new_database(empty=True), redis, shared)
    try:
        running.start_web("a")
        running.start_web("b")
        running.start_worker()
        running.start_worker()
        yield running
    finally:
        running.stop_all()
        redis.stop()
        shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture(scope="module")
def clients(cluster):
    """The admin, logged in through node A, and the same token used on node B."""
    return admin_clients(cluster)


def test_an_upload_through_one_node_downloads_and_previews_through_the_other(cluster, clients):
    a, b = clients
    document_id = new_document(a, "scan")
    content = samples.png("Invoice 4711")
    response = upload(a, document_id, "scan.png", content)
    assert response.status_code == 201, response.text
    version_id = response.json()["data"]["attributes"]["versions"][0]["id"]
    assert (cluster.files_dir / version_id[:2] / version_id).read_bytes() == content
    attributes = wait_succeeded(b, document_id)
    assert attributes["ocr_status"] == "succeeded"
    ranged = b.get(f"/api/documents/{document_id}/download/", headers={"Range": "bytes=10-99"})
    assert ranged.status_code == 206
    assert ranged.content == content[10:100]
    assert ranged.headers["Content-Range"] == f"bytes 10-99/{len(content)}"
    page_id = b.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"][0]["pages"][0]["id"]
    preview = b.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"})
    assert preview.status_code == 200 and preview.content.startswith(b"\xff\xd8")
    # Stored by version in the shared store, where node A finds the same file.
    assert (cluster.files_dir / ".previews" / version_id[:2] / version_id / "1.jpg").is_file()
    assert a.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"}).content \
        == preview.content
    assert "Invoice" in b.get(f"/api/documents/{document_id}/ocr-text").text


def test_every_document_is_read_once_by_one_of_the_workers(cluster, clients):
    a, b = clients
    uploaded = {}
    for index in range(6):
        client = (a, b)[index % 2]
        document_id = new_document(client, f"letter {index}")
        pages = [f"Letter {index} page {n}" for n in range(1, 3)]
        response = upload(client, document_id, "letter.tiff", samples.tiff(pages))
        assert response.status_code == 201, response.text
        uploaded[document_id] = response.json()["data"]["attributes"]["versions"][0]["id"]
    for document_id in uploaded:
        assert wait_succeeded(a, document_id)["ocr_status"] == "succeeded"
    logs = cluster.worker_logs()
    pages = read_pages(logs)
    assert {version: sorted(pages.get(version, [])) for version in uploaded.values()} \
        == {version: [1, 2] for version in uploaded.values()}
    for version_id in uploaded.values():
        assert logs.count(f"processed version {version_id}:") == 1
    assert cluster.sql("SELECT count(*) FROM lease") == [(0,)]


def test_a_worker_stopped_with_sigterm_saves_its_pages_and_another_continues(cluster, clients):
    a, _ = clients
    document_id, version_id, holder = upload_long_scan(cluster, a, 10)
    leaving = next(node for node in cluster.workers if node.worker_id == holder)
    started = time.monotonic()
    assert cluster.retire(leaving, signal.SIGTERM) == 0
    assert time.monotonic() - started < 20  # the page being read, not the whole document
    assert "dms worker stopped" in leaving.output
    assert f"version {version_id}: read page(s) 1" in leaving.output
    assert wait_succeeded(a, document_id)["ocr_status"] == "succeeded"
    # Nothing read twice: what the leaving worker read it saved, and the other went on from there.
    assert sorted(read_pages(cluster.worker_logs())[version_id]) == list(range(1, 11))
    assert cluster.sql("SELECT count(*) FROM worker WHERE id = ?", holder) == [(0,)]
    cluster.start_worker()


def test_a_killed_worker_s_document_is_finished_by_another_after_its_lease_expires(cluster,
                                                                                   clients):
    a, _ = clients
    document_id, version_id, holder = upload_long_scan(cluster, a, 12)
    victim = next(node for node in cluster.workers if node.worker_id == holder)
    cluster.retire(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    assert wait_succeeded(a, document_id)["ocr_status"] == "succeeded"
    assert time.monotonic() - killed_at >= 2  # not before the 3-second lease could expire
    survivor_logs = "".join(node.output for node in cluster.workers)
    # Whichever comes first once the lease has expired queues it again: a survivor's heartbeat
    # (which says so, naming the version) or its periodic reconcile (which names what it queued);
    # a loaded machine ran either first.
    assert f"version {version_id}: its worker stopped renewing its lease" in survivor_logs or \
        re.search(rf"reconcile: queued \d+ document\(s\) for processing \(versions [^)]*"
                  rf"{version_id}", survivor_logs)
    assert f"processed version {version_id}: 12 page(s)" in survivor_logs
    text = a.get(f"/api/documents/{document_id}/ocr-text").text
    assert all(f"page {n}" in text for n in range(1, 13)), text
    # The dead worker shows as not live; a new one takes its place for the next tests.
    cluster.start_worker()
    health = a.get("/health").json()
    by_id = {w["id"]: w for w in health["workers"]}
    assert by_id[holder]["live"] is False
    assert sorted(w["live"] for w in health["workers"]) == [False, True, True]  # SIGTERM: gone
    assert all(w["languages"] and w["host"] == socket.gethostname() for w in health["workers"])
    assert health["queue"] == {"engine": "redis", "pending": health["queue"]["pending"]}


def test_a_web_node_killed_mid_upload_while_another_restarts_loses_nothing(cluster, clients):
    a, b = clients
    # A file another node has just stored and whose row it is committing (young), and one a
    # crash left long ago (old): a starting node's sweep must keep the first.
    young = cluster.files_dir / "ff" / "ffffffff-0000-4000-8000-000000000001"
    old = cluster.files_dir / "ff" / "ffffffff-0000-4000-8000-000000000002"
    young.parent.mkdir(exist_ok=True)
    young.write_bytes(b"being committed")
    old.write_bytes(b"left by a crash")
    os.utime(old, (time.time() - 7200, time.time() - 7200))

    acknowledged: dict[str, bytes] = {}
    stop = threading.Event()

    def keep_uploading():  # through node B while A dies and comes back (each its own client)
        client = Client(b.base_url, b.token)
        number = 0
        while not stop.is_set():
            number += 1
            content = f"note {number} {uuid.uuid4()}\n".encode() * 50
            body = {"data": {"type": "documents", "attributes": {"title": f"note {number}"},
                             "relationships": {"parent": {"data": {"type": "folders",
                                                                   "id": b.home_id}}}}}
            created = client.post("/api/nodes/", body)
            if created.status_code != 201:
                continue
            document_id = created.json()["data"]["id"]
            if upload(client, document_id, "note.txt", content).status_code == 201:
                acknowledged[document_id] = content

    uploader = threading.Thread(target=keep_uploading)
    uploader.start()
    try:
        hanging_id = new_document(a, "hanging")
        hanging = slow_upload(a.base_url, a.token, hanging_id, 4 * 1024 * 1024)
        time.sleep(0.5)
        cluster.retire(cluster.web["a"], signal.SIGKILL)  # mid-upload
        hanging.close()
        restarted = cluster.start_web("a")  # its start-up sweep runs while B commits uploads
        a.base_url = restarted.url
        time.sleep(1.0)
    finally:
        stop.set()
        uploader.join(timeout=60)
    assert len(acknowledged) >= 3
    assert young.read_bytes() == b"being committed" and not old.exists()
    young.unlink()
    for document_id, content in acknowledged.items():
        for client in (a, b):
            response = client.get(f"/api/documents/{document_id}/download/")
            assert response.status_code == 200 and response.content == content
    # The hanging upload never reached the store; its document has no version.
    assert a.get(f"/api/documents/{hanging_id}/").json()["data"]["attributes"]["versions"] == []
    check = subprocess.run(dms_command("verify", "--data-dir", str(cluster.root / "verify")),
                           env=environment(**cluster.env), capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith("No problems found."), check.stdout


def test_periodic_jobs_run_once_per_period_for_the_whole_cluster(cluster, clients):
    a, _ = clients
    time.sleep(8)  # at least two reconcile periods and one verify period more
    logs = cluster.worker_logs()
    for job, least in (("reconcile", 4), ("verify", 1), ("rule-runs", 4)):
        periods = [int(p) for p in re.findall(rf"periodic job {job}, period (\d+)", logs)]
        assert len(periods) == len(set(periods)), f"{job} ran twice in a period: {periods}"
        assert len(periods) >= least, logs
    health = a.get("/health").json()
    assert health["verify"]["checked_at"] and health["verify"]["ok"] in (True, False)


def test_a_rule_run_whose_web_node_was_killed_is_finished_by_another_node(cluster, clients):
    """A run is claimed with a lease in the database; killed with its node, it is
    taken up by another node's periodic job once the lease expired, after its last committed
    batch, and nothing is applied twice (its template would show it: X-X-...)."""
    a = add_user(clients[0], "ruler")  # documents of their own: exact counts
    texts = [f"Invoice {n}" if n % 3 else f"Note {n}" for n in range(600)]
    many_documents(a, texts)
    rule = add_rule(a, "Cluster invoices", "invoice",
                    actions={"set_title": "X-{title}", "add_tags": ["cluster"]})
    node = cluster.start_web("c")
    c = Client(node.url, a.token)
    run = c.post(f"/api/rules/{rule['id']}/apply/").json()["data"]

    def half_way():
        attributes = c.get(f"/api/rule-runs/{run['id']}/").json()["data"]["attributes"]
        return 0 < attributes["examined"] < 600
    wait_for(half_way, timeout=60, interval=0.01, message="the run never got going")
    cluster.retire(node, signal.SIGKILL)
    del cluster.web["c"]
    done = finished_run(a, run["id"], timeout=120)
    assert (done["state"], done["examined"], done["matched"], done["changed"]) == \
        ("succeeded", 600, 400, 400)
    titles = [row[0] for row in cluster.sql(
        "SELECT n.title FROM node AS n JOIN node_tag AS nt ON nt.node_id = n.id "
        "JOIN tag AS t ON t.id = nt.tag_id WHERE t.name = 'cluster'")]
    assert len(titles) == 400 and all(re.fullmatch(r"X-doc-\d{4}\.txt", t) for t in titles)
    assert cluster.sql("SELECT count(*) FROM event WHERE action = 'rule_applied' AND "
                       "details LIKE '%Cluster invoices%'") == [(400,)]


def test_each_event_is_delivered_once_by_one_of_the_web_nodes(cluster, clients):
    """Both web nodes run a deliverer; the webhook's lease in the database lets one at a time
    deliver it, so each event arrives once, in order, whichever node made it."""
    a, b = clients
    user = add_user(a, "hooked")
    on_b = Client(b.base_url, user.token)
    receiver = Receiver()
    try:
        add_webhook(user, receiver.url(), ["node.created", "node.renamed"])
        titles = [f"folder {index}" for index in range(20)]
        for index, title in enumerate(titles):
            folder = create_node((user, on_b)[index % 2], "folders", title, user.home_id)
            if index % 5 == 0:
                assert (on_b, user)[index % 2].patch(f"/api/folders/{folder}/", {"data": {
                    "type": "folders", "id": folder, "attributes": {"title": title + "!"}}}
                ).status_code == 200
        expected = cluster.sql("SELECT id FROM event WHERE owner_id = ? ORDER BY id",
                               user.user_id)
        deliveries = receiver.wait_for_count(len(expected), timeout=60)
        time.sleep(2)  # two polls of both deliverers more: nothing comes twice
        assert [int(d.event["id"]) for d in receiver.deliveries] == [row[0] for row in expected]
        assert [d.event["node"]["title"] for d in deliveries if
                d.event["type"] == "node.created"] == titles
    finally:
        receiver.stop()


def test_health_is_503_with_the_reason_when_redis_or_postgresql_is_unreachable(tmp_path,
                                                                              postgres):
    url = postgres.new_database()
    env = {"DMS_DATABASE_URL": url, "DMS_QUEUE_URL": f"redis://127.0.0.1:{free_port()}/0",
           "DMS_ADMIN_PASSWORD": PASSWORD}
    node = DmsNode("serve", tmp_path / "lonely", env)
    try:
        response = requests.get(node.url + "/health", timeout=30)
        assert (response.status_code, response.json()) == (503, {"errors": [{
            "detail": "The queue (Redis) is not reachable.", "status": "503",
            "code": "unavailable"}]})
        postgres.admin_sql(f"DROP DATABASE {url.rsplit('/', 1)[1]} WITH (FORCE)")
        response = requests.get(node.url + "/health", timeout=30)
        assert (response.status_code, response.json()) == (503, {"errors": [{
            "detail": "The database is not reachable.", "status": "503",
            "code": "unavailable"}]})
    finally:
        node.stop()


def test_two_web_nodes_starting_on_an_empty_database_make_one_schema_and_one_admin(
        tmp_path, postgres):
    redis = RedisServer().start()
    try:
        url = postgres.new_database(empty=True)
        env = {"DMS_DATABASE_URL": url, "DMS_QUEUE_URL": redis.url()}
        nodes: list = [None, None]
        barrier = threading.Barrier(2)

        def start(index):
            barrier.wait()
            nodes[index] = DmsNode("serve", tmp_path / f"node{index}", env)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            outputs = [node.output for node in nodes]
            passwords = [re.search(r"with the password\n\n    (\S+)\n", o) for o in outputs]
            assert len([p for p in passwords if p]) == 1, outputs
            database = SimpleNamespace(database_url=url)
            assert query_sql(database, 'SELECT username FROM "user"') == [("admin",)]
            shipped = sorted(p.stem for p in (Path(__file__).parents[2] / "dms" / "db" /
                                              "migrations").glob("0*.py"))
            applied = sorted(row[0] for row in query_sql(database,
                                                         "SELECT name FROM schema_migrations"))
            assert applied == shipped
        finally:
            for node in nodes:
                if node is not None:
                    node.stop()
    finally:
        redis.stop()


def test_five_failed_logins_spread_over_both_nodes_lock_the_account_on_both(cluster, clients):
    a, b = clients
    user = a.post("/api/users/", {"data": {"type": "users", "attributes": {
        "username": "carol", "password": "carol-password-1"}}})
    assert user.status_code in (200, 201), user.text
    for index in range(5):
        node = (a, b)[index % 2]
        response = node.as_anonymous().post("/api/auth/login/", {"username": "carol",
                                                                 "password": "wrong"})
        assert response.status_code == 400, response.text
    for node in (a, b):
        response = node.as_anonymous().post("/api/auth/login/", {
            "username": "carol", "password": "carol-password-1"})
        assert response.status_code == 429, response.text
        assert response.json()["errors"][0]["code"] == "throttled"
