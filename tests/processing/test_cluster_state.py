"""The cluster's check-then-write sequences under many threads at once, on both engines: one lease
per version, one claim per period of a periodic job, each expired lease taken over once, failed
logins counted across throttles (as two nodes would). The multi-node lane
(tests/e2e/test_multinode.py) shows the same with real processes; these rounds make the races
likely."""

from __future__ import annotations

import threading
import time

import pytest

from dms.db import database
from dms.domain.credentials import LoginThrottle
from dms.processing import cluster, leases
from tests.harness import samples
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload

THREADS = 8  # below the server's pool of 10 PostgreSQL connections
ROUNDS = 5


def together(count: int, call) -> list:
    """call(index) in `count` threads released at once; their results in order."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(index):
        barrier.wait()
        try:
            results[index] = call(index)
        finally:
            database.close()  # give the connection back to the pool

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def stored_version(client) -> str:
    document_id = new_document(client)
    response = upload(client, document_id, "a.txt", samples.text())
    return response.json()["data"]["attributes"]["versions"][0]["id"]


def test_one_worker_of_many_gets_a_version_s_lease(alice, config, server):
    server.processor.stop()  # the server's own worker stays out of these rounds
    version_id = stored_version(alice)
    leases.release_all()
    for round_ in range(ROUNDS):
        workers = [f"worker-{round_}-{i}" for i in range(THREADS)]
        taken = together(THREADS,
                         lambda i, workers=workers: leases.take(version_id, workers[i], 60))
        assert taken.count(True) == 1, taken
        winner = workers[taken.index(True)]
        assert query_sql(config, "SELECT worker_id FROM lease WHERE version_id = ?",
                         version_id) == [(winner,)]
        # The holder keeps it (renewing is taking again); another cannot while it is live.
        assert leases.take(version_id, winner, 60) is True
        assert leases.take(version_id, "someone-else", 60) is False
        leases.release(version_id, winner)
    assert query_sql(config, "SELECT count(*) FROM lease") == [(0,)]


def test_an_expired_lease_is_taken_over_exactly_once(alice, config, server):
    server.processor.stop()
    versions = [stored_version(alice) for _ in range(4)]
    leases.release_all()
    for version_id in versions:
        assert leases.take(version_id, "dead-worker", 0.01)
    time.sleep(0.05)
    found = together(THREADS, lambda i: leases.take_over_expired())
    assert sorted(v for result in found for v in result) == sorted(versions)
    assert leases.take(versions[0], "successor", 60) is True
    assert leases.leased_versions() == {versions[0]}


def test_a_period_of_a_periodic_job_is_claimed_once(server):
    assert cluster.claim_period("race-job", 100) is False  # the first claim only records
    for period in range(101, 101 + ROUNDS):
        claimed = together(THREADS,
                           lambda i, period=period: cluster.claim_period("race-job", period))
        assert claimed.count(True) == 1, (period, claimed)
    assert cluster.claim_period("race-job", 101) is False  # an earlier period never runs again


def test_failed_logins_recorded_by_two_throttles_count_together(server):
    nodes = [LoginThrottle(), LoginThrottle()]  # two web nodes on one database
    keys = [("addr+user", "192.0.2.1", "carol-key")]
    together(LoginThrottle.MAX_FAILURES["addr+user"],
             lambda i: nodes[i % 2].record_failure(keys))
    assert all(node.retry_after(keys) is not None for node in nodes)
    assert nodes[0].retry_after([("addr+user", "192.0.2.1", "somebody else")]) is None
    nodes[1].reset(keys)
    assert all(node.retry_after(keys) is None for node in nodes)


def test_a_node_accepts_only_the_languages_every_live_worker_has(alice, server):
    """A worker without German joins: German is refused until it leaves (the server's own
    embedded worker has deu and eng)."""
    from dms.processing import languages

    cluster.register("english-only", ("eng",), 1, 60)
    try:
        time.sleep(languages.ACCEPTED_CACHE_SECONDS + 0.1)
        assert alice.get("/api/ocr-languages/").json() == {"languages": ["eng"], "default": "eng"}
        document_id = new_document(alice)
        refused = alice.patch(f"/api/nodes/{document_id}/", {"data": {
            "type": "documents", "id": document_id, "attributes": {"lang": "deu"}}})
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["detail"] == (
            "Unknown OCR language 'deu'; installed languages: eng (combine them with +, e.g. "
            "eng+deu).")
    finally:
        cluster.deregister("english-only")
    time.sleep(languages.ACCEPTED_CACHE_SECONDS + 0.1)
    assert alice.get("/api/ocr-languages/").json()["languages"] == ["deu", "eng"]


@pytest.mark.socket  # requests at once on real threads
# One user's calls waiting for a shared PDF reader are bounded by half the request threads (issue
# 38): a server of 16 threads lets all eight of alice's previews wait their turn.
@pytest.mark.config(threads=16)
def test_one_page_rendered_by_many_requests_at_once_is_one_whole_preview_removed_with_its_version(
        alice, config):
    document_id = new_document(alice)
    response = upload(alice, document_id, "a.pdf", samples.pdf(["Preview me"]))
    version = response.json()["data"]["attributes"]["versions"][0]
    page_id, version_id = version["pages"][0]["id"], version["id"]
    clients = [type(alice)(alice.base_url, alice.token) for _ in range(THREADS)]
    previews = together(THREADS, lambda i: clients[i].get(f"/api/pages/{page_id}/",
                                                          headers={"Accept": "image/jpeg"}))
    assert {(p.status_code, p.headers["Content-Type"]) for p in previews} == {(200, "image/jpeg")}
    folder = config.files_path / ".previews" / version_id[:2] / version_id
    assert sorted(p.name for p in folder.iterdir()) == ["1.jpg"]  # no temporary file left
    assert {p.content for p in previews} == {(folder / "1.jpg").read_bytes()}
    assert alice.delete(f"/api/nodes/{document_id}/").status_code == 204
    assert folder.exists()  # in the trash, it may come back
    assert alice.delete(f"/api/trash/{document_id}/").status_code == 204
    assert not folder.exists()
