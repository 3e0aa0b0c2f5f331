"""kill -9 and rules (docs/api.md, "Rules"): `dms serve` killed while a run goes through 1,000
documents, then started again on the same data dir (and database): the run resumes where its last
committed batch ended and finishes with exact counts, without applying anything twice (its title
template would show it: `X-X-...`); killed while it reads a new document, whose rules then run once
after the restart."""

from __future__ import annotations

import signal

import pytest

from tests.harness import samples
from tests.harness.client import Client
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload
from tests.harness.processes import Running
from tests.harness.rules import add_rule, applied, filed, finished_run, many_documents
from tests.harness.waiting import wait_for, wait_processed

# Sockets (pytest-socket): a `dms serve` subprocess killed and started again.
pytestmark = pytest.mark.enable_socket

ADMIN_PASSWORD = "crash-test-pw"


def started(data_dir, database_url) -> Running:
    env = {"DMS_ADMIN_PASSWORD": ADMIN_PASSWORD, "DMS_OCR_WORKERS": "1"}
    if database_url:
        env["DMS_DATABASE_URL"] = database_url
    return Running(data_dir, **env).drain()


@pytest.mark.slow
def test_a_run_killed_half_way_resumes_and_applies_nothing_twice(tmp_path, database_url,
                                                                 config):
    data_dir = tmp_path / "data"
    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        documents = many_documents(admin, [f"Invoice {n}" if n % 4 else f"Note {n}"
                                           for n in range(1000)])
        rule = add_rule(admin, "Invoices", "invoice",
                        actions={"set_title": "X-{title}", "add_tags": ["invoice"]})
        run = admin.post(f"/api/rules/{rule['id']}/apply/").json()["data"]

        def half_way():
            attributes = admin.get(f"/api/rule-runs/{run['id']}/").json()["data"]["attributes"]
            return attributes if 0 < attributes["examined"] < 1000 else None
        seen = wait_for(half_way, timeout=60, interval=0.02, message="the run never got going")
        server.stop(signal.SIGKILL)
    finally:
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)
    assert seen["state"] == "running"

    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        done = finished_run(admin, run["id"])
        assert (done["state"], done["examined"], done["matched"], done["changed"]) == \
            ("succeeded", 1000, 750, 750)
        titles = {item["id"]: item["title"] for item in admin.get("/api/documents").json()}
        assert sorted(titles) == sorted(documents)
        assert sorted(titles[document] for document in documents) == sorted(
            f"X-doc-{n:04d}.txt" if n % 4 else f"doc-{n:04d}.txt" for n in range(1000))
        assert query_sql(config, "SELECT count(*), count(DISTINCT node_id) FROM event "
                                 "WHERE action = 'rule_applied'") == [(750, 750)]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_server_killed_while_reading_a_new_document_runs_its_rules_once(tmp_path,
                                                                          database_url, config):
    """The rules are applied in the transaction that ends a document's reading: killed before
    it, the reading resumes after the restart and the rules run then; killed after, they have
    run. Either way once."""
    data_dir = tmp_path / "data"
    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        add_rule(admin, "Scans", "meter", actions={"set_title": "X-{title}",
                                                    "add_tags": ["meter"]})
        scan = samples.tiff([f"Meter reading {n} of the water supply" for n in range(4)])
        document = new_document(admin, "scan", admin.inbox_id)
        assert upload(admin, document, "scan.tiff", scan).status_code == 201

        def reading():
            attributes = admin.get(f"/api/documents/{document}/").json()["data"]["attributes"]
            return attributes["ocr_status"] == "started"
        wait_for(reading, timeout=60, interval=0.02, message="the reading never started")
        server.stop(signal.SIGKILL)
    finally:
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)

    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        assert wait_processed(admin, document, timeout=180)[-1] == "succeeded"
        assert filed(admin, document) == ("X-scan", admin.inbox_id, ["meter"])
        assert [details["rule"]["name"] for details in applied(admin, document)] == ["Scans"]
        assert query_sql(config, "SELECT count(*) FROM rule_pending") == [(0,)]
    finally:
        server.stop()
