"""The bucket down (api.md §19): uploads answer 503 `unavailable` with a sentence within seconds
and change nothing, downloads too; what is cached on the node (previews) is still served; once
the bucket is back everything works again by itself, and a reading that met the outage finishes.
Both a bucket that refuses connections (killed) and one that accepts them but never answers
(stopped) are tried."""

from __future__ import annotations

import time

import pytest

from tests.harness import samples
from tests.harness.documents import new_document, upload, upload_accepted
from tests.harness.waiting import wait_for, wait_processed, wait_served

pytestmark = pytest.mark.enable_socket

DOWN = ("The file store (the S3 bucket) cannot be reached, so nothing was saved; try again in a "
        "moment.")


def versions_of(client, document_id: str) -> list[dict]:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]


@pytest.mark.parametrize("outage", ["killed", "hanging"])
def test_with_the_bucket_down_uploads_are_refused_cached_previews_served_and_it_recovers(
        alice, s3_server, outage):
    document = new_document(alice, "kept")
    upload_accepted(alice, document, "kept.pdf", samples.pdf(["Before the outage"]))
    assert wait_processed(alice, document)[-1] == "succeeded"
    [version] = versions_of(alice, document)
    preview = alice.get(f"/api/pages/{version['pages'][0]['id']}/preview/")
    assert preview.status_code == 200
    later = new_document(alice, "later")

    s3_server.kill() if outage == "killed" else s3_server.pause()
    try:
        started = time.monotonic()
        refused = upload(alice, later, "later.pdf", samples.pdf(["During the outage"]))
        took = time.monotonic() - started
        assert (refused.status_code, refused.json()["errors"][0]["code"],
                refused.json()["errors"][0]["detail"]) == (503, "unavailable", DOWN)
        assert took < 30 if outage == "hanging" else took < 10
        assert versions_of(alice, later) == []
        download = alice.get(f"/api/documents/{document}/download/")
        assert (download.status_code, download.json()["errors"][0]["detail"]) == (503, DOWN)
        cached = alice.get(f"/api/pages/{version['pages'][0]['id']}/preview/")
        assert (cached.status_code, cached.content) == (200, preview.content)
    finally:
        s3_server.start() if outage == "killed" else s3_server.resume()

    # Back by itself: within the few seconds calls fail at once after an outage.
    after = wait_served(lambda: upload(alice, later, "later.pdf",
                                       samples.pdf(["After the outage"])), timeout=10)
    assert after.status_code == 201
    assert wait_processed(alice, later)[-1] == "succeeded"
    assert alice.get(f"/api/documents/{document}/download/").status_code == 200


def test_a_reading_that_meets_the_outage_waits_and_finishes_when_the_bucket_is_back(
        alice, s3_server):
    document = new_document(alice, "scan")
    upload_accepted(alice, document, "scan.tiff", samples.tiff(
        ["Outage page one", "Outage page two", "Outage page three"]))
    s3_server.kill()
    try:
        time.sleep(4)  # the worker fetched the scan before, or meets the outage now: either way
        attributes = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
        assert attributes["ocr_status"] in ("received", "started")
    finally:
        s3_server.start()
    assert wait_processed(alice, document, timeout=60)[-1] == "succeeded"
    text = alice.get(f"/api/documents/{document}/ocr-text").text
    assert all(f"Outage page {n}" in text for n in ("one", "two", "three"))
    searchable = alice.get(f"/api/documents/{document}/download/?searchable=1")
    assert searchable.status_code == 200 and searchable.content.startswith(b"%PDF")


def test_health_tells_the_admin_whether_the_bucket_answers_and_stays_ok(admin, s3_server,
                                                                         config):
    def storage() -> tuple[str, dict]:
        answer = admin.get("/health").json()
        return answer["status"], answer["storage"]

    assert storage() == ("ok", {"kind": "s3", "bucket": config.s3_bucket, "reachable": True})
    s3_server.kill()
    try:
        assert storage() == ("ok", {"kind": "s3", "bucket": config.s3_bucket,
                                    "reachable": False})
    finally:
        s3_server.start()
    wait_for(lambda: storage()[1]["reachable"], timeout=10)
