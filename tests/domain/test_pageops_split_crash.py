"""kill -9 during a split in the background (docs/api.md, "Splits in the background"): `dms serve`
killed while a run makes 2,000 parts, then started again on the same data dir (and database): the
run resumes after its last committed batch and finishes with every part made exactly once, in order,
and the source in the trash. On both databases."""

from __future__ import annotations

import signal

import pytest

from tests.harness.client import Client
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload
from tests.harness.pdfops import finished_split, long_batch, page_line
from tests.harness.processes import Running
from tests.harness.waiting import wait_for, wait_processed

# Sockets (pytest-socket): a `dms serve` subprocess killed and started again.
pytestmark = pytest.mark.enable_socket

ADMIN_PASSWORD = "crash-test-pw"
PARTS = 2000  # 100 batches: the kill lands between the first and the last


def started(data_dir, database_url) -> Running:
    env = {"DMS_ADMIN_PASSWORD": ADMIN_PASSWORD, "DMS_OCR_WORKERS": "1",
           "DMS_SPLIT_MAX_PAGES": str(PARTS)}
    if database_url:
        env["DMS_DATABASE_URL"] = database_url
    return Running(data_dir, **env).drain()


@pytest.mark.slow
def test_a_split_killed_half_way_resumes_and_makes_no_part_twice(tmp_path, database_url, config):
    data_dir = tmp_path / "data"
    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        source = new_document(admin, "long.pdf")
        assert upload(admin, source, "long.pdf", long_batch(PARTS)).status_code == 201
        assert wait_processed(admin, source, timeout=180)[-1] == "succeeded"
        response = admin.post(f"/api/documents/{source}/split/",
                              {"after_pages": list(range(1, PARTS))}, media="application/json")
        assert response.status_code == 202, response.text
        run = response.json()["data"]["id"]

        def half_way():
            attributes = admin.get(f"/api/split-runs/{run}/").json()["data"]["attributes"]
            return attributes if 0 < attributes["parts_made"] < PARTS else None
        seen = wait_for(half_way, timeout=60, interval=0.02, message="the split never got going")
        server.stop(signal.SIGKILL)
    finally:
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)
    assert seen["state"] == "running"

    server = started(data_dir, database_url)
    try:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        done = finished_split(admin, run)
        assert (done["state"], done["parts"], done["parts_made"], done["error"]) == \
            ("succeeded", PARTS, PARTS, None)
        rows = query_sql(config, "SELECT s.number, n.title, p.text FROM split_part AS s "
                                 "JOIN node AS n ON n.id = s.document_id "
                                 "JOIN document_version AS v ON v.document_id = n.id "
                                 "JOIN page AS p ON p.version_id = v.id WHERE s.run_id = ? "
                                 "ORDER BY s.number, p.number", run)
        assert [(number, title, " ".join(text.split())) for number, title, text in rows] == [
            (n, f"long-{n}.pdf", page_line(n)) for n in range(1, PARTS + 1)]
        home = admin.home_id
        assert query_sql(config, "SELECT count(*), count(DISTINCT title) FROM node WHERE "
                                 "parent_id = ? AND trash_id IS NULL", home) == [(PARTS, PARTS)]
        assert query_sql(config, "SELECT count(*), count(DISTINCT e.node_id) FROM event AS e "
                                 "JOIN node AS n ON n.id = e.node_id WHERE e.action = 'created' "
                                 "AND n.parent_id = ? AND n.trash_id IS NULL", home) == \
            [(PARTS, PARTS)]
        assert [node["id"] for node in admin.get("/api/trash/").json()["data"]] == [source]
    finally:
        server.stop()
