"""Page operations raced by many threads: the check that a document still has the version its pages
were taken from and the write of the new version are one write transaction, so of calls built on
the same version exactly one wins (the others: a conflict, or pages of an older version once they
see the new version), version numbers stay consecutive, and two documents merged into each other
at once end as one document with every page. On both databases.

The races on the fast tier: the domain's functions called from many threads at once, each acting
for the user as its request would (no server; the queue's workers read the uploads). Through the API
what the loser of a race is answered: 409, or 400 pointing at /pages."""

from __future__ import annotations

import threading

import pytest

from dms.db.models import Node
from dms.domain import documents, trash
from dms.domain.pages import operations
from dms.errors import DomainError
from dms.files.fairness import acting_for
from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.documents import new_document, upload
from tests.harness.domaintier import domain_thread, latest_file, new_user, page_ids, read_document
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_processed

THREADS = 8
CHANGED = ("The document changed while its pages were being changed (a new version, a move or a "
           "deletion came first); nothing was changed: try again.")
OLDER = "Pages of an older version cannot be changed."
# One user's calls waiting for a shared PDF reader are bounded by half the request threads
# (DMS_THREADS; the domain's readers are sized by it too): 16 lets all eight of alice's calls wait
# their turn and race at the commit, which is what these tests are about.
pytestmark = pytest.mark.config(threads=16)


def letter(services, user, title, words) -> str:
    """A PDF of one page for each of `words`, read to the end: its id."""
    return read_document(services, user, title, title,
                         samples.pdf([f"Page {word}" for word in words]))


def at_once(user, calls) -> list:
    """Each call in its own thread, acting for `user` as its request would, all let go at once;
    for each, "done" or the DomainError it raised (anything else leaves None)."""
    results: list = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index):
        with acting_for(user.id):
            start.wait()
            try:
                calls[index]()
                results[index] = "done"
            except DomainError as error:
                results[index] = error
    threads = [domain_thread(run, i) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


def refusals(results) -> list[tuple[str, str, str | None]]:
    return [(error.code, str(error), error.field) for error in results if error != "done"]


def test_rotations_built_on_one_version_one_wins(reading):
    alice = new_user("alice")
    document_id = letter(reading, alice, "a.pdf", ["one", "two"])
    body = [{"id": page_ids(document_id)[0], "angle": 90}]
    results = at_once(alice, [lambda: operations.rotate_pages(reading, alice, body)] * THREADS)
    assert results.count("done") == 1, results
    assert set(refusals(results)) <= {("conflict", CHANGED, None), ("invalid", OLDER, "pages")}
    assert [v.number for v in documents.versions(document_id)] == [1, 2]
    assert [rotation for rotation, _ in bytes_layout(latest_file(reading, document_id))] == [90, 0]


def test_rotations_that_retry_all_land(reading):
    """Each thread turns the first page by 90 degrees, reading the latest page ids again after a
    conflict or pages of an older version: every turn lands once, in its own consecutive
    version."""
    alice = new_user("alice")
    document_id = letter(reading, alice, "a.pdf", ["one"])
    landed = []

    def turn():
        for _ in range(200):
            try:
                operations.rotate_pages(reading, alice, [{"id": page_ids(document_id)[0],
                                                          "angle": 90}])
            except DomainError as error:
                assert (error.code, str(error)) in (("conflict", CHANGED), ("invalid", OLDER))
            else:
                landed.append(True)
                return
    assert at_once(alice, [turn] * 6) == ["done"] * 6
    assert landed == [True] * 6
    assert [v.number for v in documents.versions(document_id)] == list(range(1, 8))
    assert bytes_layout(latest_file(reading, document_id))[0][0] == (6 * 90) % 360


def test_two_documents_merged_into_each_other_at_once_keep_every_page(reading):
    alice = new_user("alice")
    a = letter(reading, alice, "a.pdf", ["alpha"])
    b = letter(reading, alice, "b.pdf", ["bravo"])
    results = at_once(alice, [lambda: operations.merge_documents(reading, alice, a, b),
                              lambda: operations.merge_documents(reading, alice, b, a)])
    assert results.count("done") == 1, results
    assert refusals(results)[0] in (("not_found", "Not found.", None),
                                    ("conflict", CHANGED, None))
    live = [d for d in (a, b) if Node.get_by_id(d).trash_id is None]
    assert len(live) == 1
    assert sorted(" ".join(t.split()) for t in page_texts(latest_file(reading, live[0]))) == \
        ["Page alpha", "Page bravo"]
    assert [node.id for node, _ in trash.trashed(alice).fetch(0, 100)] == \
        [d for d in (a, b) if d not in live]


def test_the_loser_of_a_race_is_answered_409_or_400_pointing_at_pages(alice):
    """Through the API: two rotations built on one version at once; one is answered 204, the
    other 409 (the other came first), or 400 pointing at /pages (it saw the new version)."""
    document_id = new_document(alice, "a.pdf")
    assert upload(alice, document_id, "a.pdf", samples.pdf(["Page one"])).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    page = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"][-1]["pages"][0]["id"]
    answers: list = [None, None]
    start = threading.Barrier(2)

    def rotate(index):
        start.wait()
        answers[index] = alice.post("/api/pages/rotate/", {"pages": [{"id": page, "angle": 90}]},
                                    media=JSON)
    threads = [threading.Thread(target=rotate, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    won, lost = sorted(answers, key=lambda answer: answer.status_code)
    assert (won.status_code, won.content) == (204, b"")
    if lost.status_code == 409:
        assert_error(lost, 409, "conflict", CHANGED)
    else:
        assert_error(lost, 400, "invalid", OLDER, "/pages")
