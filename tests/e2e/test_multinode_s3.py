"""Several machines on one, with their files in a bucket (api.md §19): a real PostgreSQL, Redis and
S3 server (SeaweedFS) on loopback, two web nodes (`dms serve --no-worker`) and one `dms worker`,
each with a data dir of its own and no files directory shared or not: originals and searchable
PDFs are only in the bucket, a reading's page PDFs are shared there (`<prefix>work/`), previews
are each node's own. Short timings as in test_multinode (tests.harness.cluster.TIMING).

The tests of this module share the cluster and run in order: the last kills and restarts node A."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import time

import pytest

from tests.harness import samples
from tests.harness.bucketuploads import UploadStorm, object_shas, sha
from tests.harness.cluster import (
    Cluster,
    admin_clients,
    read_pages,
    upload_long_scan,
    wait_succeeded,
)
from tests.harness.documents import new_document, upload
from tests.harness.pdfops import page_texts
from tests.harness.processes import dms_command, environment
from tests.harness.redisserver import RedisServer

# Sockets (pytest-socket): Redis, SeaweedFS, web nodes and workers as subprocesses, over HTTP.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.slow, pytest.mark.enable_socket]

PREFIX = "cluster/"


@pytest.fixture(scope="module")
def cluster(postgres, s3_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    redis = RedisServer().start()
    running = Cluster(root, postgres.new_database(empty=True), redis,
                      **s3_server.dms_environment(PREFIX))
    assert "DMS_FILES_DIR" not in running.env
    try:
        running.start_web("a")
        running.start_web("b")
        running.start_worker()
        yield running
    finally:
        running.stop_all()
        redis.stop()


@pytest.fixture(scope="module")
def clients(cluster):
    """The admin, logged in through node A, and the same token used on node B."""
    return admin_clients(cluster)


def copies_on_nodes(cluster: Cluster, *contents: bytes) -> list[str]:
    """The files of any node's data dir holding one of these contents (there should be none:
    originals and searchable PDFs are only in the bucket — but for the read cache,
    `cache/fetched/`, which keeps what a node read for minutes)."""
    wanted = {sha(content) for content in contents}
    return sorted(str(path) for node in cluster.all_nodes() for path in node.data_dir.rglob("*")
                  if path.is_file() and node.data_dir / "cache" / "fetched" not in path.parents
                  and hashlib.sha256(path.read_bytes()).hexdigest() in wanted)


def versions(client, document_id: str) -> list[dict]:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]


def test_a_scan_uploaded_through_one_node_is_read_by_the_worker_and_served_by_the_other(
        cluster, clients, s3_server):
    a, b = clients
    document_id = new_document(a, "scan")
    content = samples.png("Invoice 4711")
    response = upload(a, document_id, "scan.png", content)
    assert response.status_code == 201, response.text
    version_id = response.json()["data"]["attributes"]["versions"][0]["id"]
    client = s3_server.client()
    assert client.get_object(Bucket=s3_server.bucket, Key=f"{PREFIX}blobs/{sha(content)[:2]}/"
                             f"{sha(content)}")["Body"].read() == content

    assert wait_succeeded(b, document_id)["ocr_status"] == "succeeded"
    ranged = b.get(f"/api/documents/{document_id}/download/", headers={"Range": "bytes=10-99"})
    assert (ranged.status_code, ranged.content, ranged.headers["Content-Range"]) == \
        (206, content[10:100], f"bytes 10-99/{len(content)}")
    # The worker read it from the bucket and put its searchable PDF there, with the page's text.
    searchable = b.get(f"/api/documents/{document_id}/download/?searchable=1")
    assert searchable.status_code == 200
    assert "Invoice 4711" in page_texts(searchable.content)[0]
    assert object_shas(s3_server, PREFIX) == {sha(content), sha(searchable.content)}
    assert s3_server.keys(PREFIX + "work/") == []  # the page PDFs went with the reading
    # Each node renders its preview from the bucket into its own cache.
    page_id = versions(b, document_id)[0]["pages"][0]["id"]
    preview = b.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"})
    assert preview.status_code == 200 and preview.content.startswith(b"\xff\xd8")
    previews = cluster.web["b"].data_dir / "cache" / "previews" / version_id[:2] / version_id
    assert sorted(path.name for path in previews.iterdir()) != []
    assert a.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"}).status_code == 200
    assert "Invoice" in b.get(f"/api/documents/{document_id}/ocr-text").text
    assert copies_on_nodes(cluster, content, searchable.content) == []
    assert [node.name for node in cluster.all_nodes() if (node.data_dir / "files").exists()] \
        == []


def test_a_reading_whose_worker_was_killed_is_finished_by_another_from_the_bucket(
        cluster, clients, s3_server):
    a, b = clients
    pages = 8
    document_id, version_id, _ = upload_long_scan(cluster, a, pages)
    [victim] = cluster.workers
    cluster.retire(victim, signal.SIGKILL)
    saved = {row[0] for row in cluster.sql("SELECT number FROM page WHERE version_id = ? AND "
                                           "method IS NOT NULL", version_id)}
    shared = s3_server.keys(f"{PREFIX}work/{version_id}/")
    assert saved and {f"{number}.pdf" for number in saved} <= set(shared)

    successor = cluster.start_worker()  # a data dir of its own: no page PDF of the first's
    assert wait_succeeded(b, document_id)["ocr_status"] == "succeeded"
    # It read only what the first had not saved, and took the rest's page PDFs from the bucket.
    assert sorted(read_pages(successor.output)[version_id]) == \
        sorted(set(range(1, pages + 1)) - saved)
    assert f"processed version {version_id}: {pages} page(s)" in successor.output
    searchable = b.get(f"/api/documents/{document_id}/download/?searchable=1")
    assert searchable.status_code == 200
    texts = page_texts(searchable.content)
    assert [f"Statement page {n}" in text for n, text in enumerate(texts, 1)] == [True] * pages
    assert s3_server.keys(f"{PREFIX}work/{version_id}/") == []


def test_a_page_operation_through_one_node_on_an_upload_through_the_other(
        cluster, clients, s3_server):
    a, b = clients
    data = samples.pdf(["First page", "Second page", "Third page"])
    document_id = new_document(a, "three pages")
    assert upload(a, document_id, "three.pdf", data).status_code == 201
    assert wait_succeeded(a, document_id)["ocr_status"] == "succeeded"
    second = versions(a, document_id)[0]["pages"][1]["id"]

    assert b.delete(f"/api/pages/{second}/").status_code == 204
    assert wait_succeeded(b, document_id)["ocr_status"] == "succeeded"
    newest = a.get(f"/api/documents/{document_id}/download/")
    assert newest.status_code == 200
    assert page_texts(newest.content) == ["First page", "Third page"]
    by_number = {version["number"]: version["id"] for version in versions(a, document_id)}
    assert sorted(by_number) == [1, 2]
    first = a.get(f"/api/document-versions/{by_number[1]}/download/")
    assert sha(first.content) == sha(data)  # the older version as it was
    assert {sha(data), sha(newest.content)} <= object_shas(s3_server, PREFIX)


def test_a_web_node_killed_mid_upload_loses_nothing_acknowledged(cluster, clients, s3_server):
    a, b = clients
    killed_url = a.base_url
    urls = [a.base_url, a.base_url, a.base_url, b.base_url]
    documents = [[new_document(a, f"storm {thread}-{number}") for number in range(30)]
                 for thread in range(len(urls))]
    storm = UploadStorm(urls, a.token, documents).start()
    try:
        storm.wait_for_committing(s3_server, PREFIX, acknowledged=8, through=killed_url)
        cluster.retire(cluster.web["a"], signal.SIGKILL)
        restarted = cluster.start_web("a")  # while B goes on storing uploads
        a.base_url = restarted.url
        time.sleep(1.0)
    finally:
        storm.stop()
    assert storm.refused == [killed_url] * 3  # each of A's threads had an upload in flight
    assert len(storm.acknowledged) >= 8
    for document_id, content in storm.acknowledged.items():
        for client in (a, b):
            response = client.get(f"/api/documents/{document_id}/download/")
            assert (response.status_code, sha(response.content)) == (200, sha(content))
    rows = cluster.sql("SELECT document_id, id, sha256, searchable_sha256 FROM document_version")
    storm.check_bucket(rows, object_shas(s3_server, PREFIX))
    assert [node.name for node in cluster.all_nodes() if (node.data_dir / "files").exists()] \
        == []
    check = subprocess.run(dms_command("verify", "--data-dir", str(cluster.root / "verify")),
                           env=environment(**cluster.env), capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith("No problems found."), check.stdout
