"""The PDF readers of requests are shared by users' turns: one user's parallel Flate bombs, each
refused only after seconds of a reader's time, hold one reader and a few waiting request threads;
another user's upload is read meanwhile; and a user whose files keep failing at the readers' limits
is held back (429) while others are not.

Over real sockets: the point is waitress' threads, shared by both users."""

from __future__ import annotations

import os
import threading

import pytest

from dms.files.fairness import acting_for
from dms.files.pdf.process import PdfReaders
from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.socket, pytest.mark.config(pdf_inspect_seconds=2)]

TOO_SLOW = ("The PDF takes too long to read: its pages' content is too large or too complex for "
            "dms.")
STILL_READING = "Your other files are still being read; try again when they are done."


def bomb() -> bytes:
    """200 pages sharing one content stream that inflates to 300 MiB: each page takes seconds
    to parse, so the upload is refused when its time to be read is up."""
    return samples.pdf_content_bomb(300, pages=200)


def test_one_users_bombs_hold_one_reader_and_another_users_upload_is_read_meanwhile(
        server, alice, bob, config):
    # One reader and two waiting calls are alice's (two: the least a server's users get, and
    # the test server's half of its four request threads); her fourth bomb is told to wait.
    documents = [new_document(alice, f"bomb {n}") for n in range(4)]
    answers: list = []
    payload = bomb()

    def send(document_id):
        answers.append(upload(alice, document_id, "bomb.pdf", payload))

    threads = [threading.Thread(target=send, args=(d,)) for d in documents]
    for thread in threads:
        thread.start()
    shares = server.runtime.pdf._shares
    wait_for(lambda: shares.held().get(alice.user_id) == 1, 30,
             message="alice's first bomb did not take a reader")
    bobs = new_document(bob, "letter")
    response = upload(bob, bobs, "letter.pdf", samples.pdf(["Dear Bob"]))
    in_flight = len(answers) < 4  # read before alice's bombs were all answered
    assert response.status_code == 201, response.text
    assert in_flight
    assert shares.held().get(alice.user_id, 0) <= 1
    for thread in threads:
        thread.join(60)
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [400, 400, 400, 429], [a.text for a in answers]
    for answer in answers:
        if answer.status_code == 400:
            assert_error(answer, 400, "invalid", TOO_SLOW)
        else:
            assert_error(answer, 429, "throttled", STILL_READING)
            assert answer.headers["Retry-After"] == "5"
    for document_id in documents:  # nothing was stored for alice
        attributes = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
        assert (attributes["versions"], attributes["page_count"]) == ([], 0)


def test_a_user_refused_again_and_again_for_bombs_is_held_back_and_others_are_not(
        alice, bob, config):
    document_id = new_document(alice, "bombs")
    payload = bomb()
    for _ in range(4):  # three are free; the fourth closes the door for 30 s
        assert_error(upload(alice, document_id, "bomb.pdf", payload), 400, "invalid", TOO_SLOW)
    before = snapshot(config)
    held_back = upload(alice, document_id, "letter.pdf", samples.pdf(["Dear Alice"]))
    assert_error(held_back, 429, "throttled",
                 "Several of your recent files needed more memory or time than this server "
                 f"allows for one file; it reads your next files in "
                 f"{held_back.headers['Retry-After']} seconds.")
    assert 1 <= int(held_back.headers["Retry-After"]) <= 30
    assert snapshot(config) == before
    bobs = new_document(bob, "letter")
    response = upload(bob, bobs, "letter.pdf", samples.pdf(["Dear Bob"]))
    assert response.status_code == 201, response.text


def test_a_struck_users_files_are_read_at_the_lowest_priority_by_a_child_not_lent_again():
    """In-process, on a fair pool of its own: a user whose file failed at a limit lately has the
    next read by a child of its own at the lowest CPU priority, stopped after (a child's priority
    cannot be raised again without privileges), never taking another user's warm child; another
    user's child runs 10 steps behind the server and is lent again."""
    pool = PdfReaders(2, 1024, fair=True)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        with acting_for("bob"), pool.session() as child:
            assert os.getpriority(os.PRIO_PROCESS, child.process.pid) == min(19, own + 10)
            kept = child
        assert kept.alive and pool._idle == [kept]
        pool._penalties.strike("alice")
        with acting_for("alice"), pool.session() as child:
            assert child is not kept  # bob's warm child is not taken
            assert os.getpriority(os.PRIO_PROCESS, child.process.pid) == 19
            struck = child
        assert not struck.alive and kept.alive and pool._idle == [kept]
    finally:
        pool.stop()
