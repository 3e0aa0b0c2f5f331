"""Page operations raced by many threads: the check that a document still has the version its pages
were taken from and the write of the new version are one write transaction, so of calls built on the
same version exactly one wins (the others: 409, or 400 once they see the new version), version
numbers stay consecutive, and two documents merged into each other at once end as one document with
every page. On both databases."""

from __future__ import annotations

import threading

import pytest

from tests.harness import samples
from tests.harness.client import JSON
from tests.harness.documents import new_document, upload
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_processed

THREADS = 8
# One user's calls waiting for a shared PDF reader are bounded by half the request threads: a server
# of 16 lets all eight of alice's calls wait their turn and race at the commit, which is what these
# tests are about.
pytestmark = pytest.mark.config(threads=16)


def letter(client, title, words):
    document_id = new_document(client, title)
    assert upload(client, document_id, title,
                  samples.pdf([f"Page {word}" for word in words])).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id


def versions(client, document_id):
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]


def at_once(calls) -> list:
    results = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index):
        start.wait()
        results[index] = calls[index]()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


def test_rotations_built_on_one_version_one_wins(alice):
    document_id = letter(alice, "a.pdf", ["one", "two"])
    page = versions(alice, document_id)[-1]["pages"][0]["id"]
    body = {"pages": [{"id": page, "angle": 90}]}
    answers = at_once([lambda: alice.post("/api/pages/rotate/", body, media=JSON)] * THREADS)
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses.count(204) == 1 and set(statuses) <= {204, 400, 409}, statuses
    for answer in answers:
        if answer.status_code == 409:
            assert answer.json()["errors"][0]["code"] == "conflict"
        elif answer.status_code == 400:
            assert answer.json()["errors"][0]["detail"] == \
                "Pages of an older version cannot be changed."
    assert [v["number"] for v in versions(alice, document_id)] == [1, 2]
    data = alice.get(f"/api/documents/{document_id}/download/").content
    assert [rotation for rotation, _ in bytes_layout(data)] == [90, 0]


def test_rotations_that_retry_all_land(alice):
    """Each thread turns the first page by 90 degrees, reading the latest page ids again after a
    409 or 400: every turn lands once, in its own consecutive version."""
    document_id = letter(alice, "a.pdf", ["one"])

    def turn():
        for _ in range(200):
            page = versions(alice, document_id)[-1]["pages"][0]["id"]
            answer = alice.post("/api/pages/rotate/", {"pages": [{"id": page, "angle": 90}]},
                                media=JSON)
            if answer.status_code == 204:
                return True
            assert answer.status_code in (400, 409), answer.text
        return False
    assert at_once([turn] * 6) == [True] * 6
    assert [v["number"] for v in versions(alice, document_id)] == list(range(1, 8))
    data = alice.get(f"/api/documents/{document_id}/download/").content
    assert bytes_layout(data)[0][0] == (6 * 90) % 360


def test_two_documents_merged_into_each_other_at_once_keep_every_page(alice):
    a = letter(alice, "a.pdf", ["alpha"])
    b = letter(alice, "b.pdf", ["bravo"])
    answers = at_once([
        lambda: alice.post("/api/documents/merge/", {"src": a, "dst": b}, media=JSON),
        lambda: alice.post("/api/documents/merge/", {"src": b, "dst": a}, media=JSON)])
    assert sorted(answer.status_code for answer in answers) in ([204, 404], [204, 409])
    live = [d for d in (a, b) if alice.get(f"/api/documents/{d}/").status_code == 200]
    assert len(live) == 1
    data = alice.get(f"/api/documents/{live[0]}/download/").content
    assert sorted(" ".join(t.split()) for t in page_texts(data)) == ["Page alpha", "Page bravo"]
    trashed = [node["id"] for node in alice.get("/api/trash/").json()["data"]]
    assert trashed == [d for d in (a, b) if d not in live]
