""""Done" means findable: a document whose status is `succeeded` is found by the next search — from
an index in memory laid over the index's last commit while the index lags (a few changes of the
caller's), else after waiting, at most CATCH_UP_SECONDS, until the index holds the changes to
the caller's nodes committed before the search began — also when another process (a `dms
worker`) finished it, and also behind another user's backlog; another user's pending changes
never make a search wait; and past a short wait only two searches of a user wait on (the waits
themselves, without a server). PostgreSQL writes its search entries in each change's own
transaction: tests/search/test_search.py covers it."""

from __future__ import annotations

import sqlite3
import threading
import uuid

import pytest

from dms.search import indexer
from dms.search.freshness import Freshness
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.database import execute_sql, query_sql
from tests.harness.documents import new_document, upload_accepted
from tests.harness.waiting import wait_for, wait_indexed, wait_processed

# The tantivy index of the SQLite mode; the workers' heartbeat (every lease_seconds / 3) commits
# and so wakes the indexer: made rare, so that nothing but the test does.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.config(lease_seconds=3600)]

STAMP = "2026-01-01 00:00:00.000000"
# Words of the documents uploaded under load (no word a prefix of another).
WORDS = ["ambergris", "bluebottle", "cormorant", "driftwood", "eiderdown", "fjordland",
         "gannetry", "heronshaw"]


@pytest.fixture
def asleep(monkeypatch):
    """The indexer looks at the outbox only when this process commits a write or a search asks
    it to: a change committed by another process (a `dms worker` finishing a document) waits in
    the outbox until then. Requested before the server starts."""
    monkeypatch.setattr(indexer, "POLL_SECONDS", 3600.0)


def finish_elsewhere(config, document_id: str, text: str) -> None:
    """What another process's worker does when it has read a document: its version and page, and
    the status `succeeded` (the outbox row with it, by trigger), in one transaction of its own."""
    version_id = str(uuid.uuid4())
    connection = sqlite3.connect(config.db_path)
    try:
        with connection:
            connection.execute(
                "INSERT INTO document_version (id, document_id, number, file_name, mime_type, "
                "size, page_count, sha256, lang, created_at) "
                "VALUES (?, ?, 1, 'scan.txt', 'text/plain', ?, 1, ?, 'eng', ?)",
                (version_id, document_id, len(text), "0" * 64, STAMP))
            connection.execute(
                "INSERT INTO page (id, version_id, number, text, method) VALUES (?, ?, 1, ?, "
                "'text')", (str(uuid.uuid4()), version_id, text))
            connection.execute(
                "UPDATE node SET ocr_status = 'succeeded', file_name = 'scan.txt', size = ?, "
                "page_count = 1 WHERE id = ?", (len(text), document_id))
    finally:
        connection.close()


def add_folders_elsewhere(config, owner_id: str, parent_id: str, count: int) -> None:
    """`count` folders written by another process in one transaction: as many outbox rows."""
    connection = sqlite3.connect(config.db_path)
    try:
        with connection:
            connection.executemany(
                "INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at, "
                "updated_at) VALUES (?, ?, ?, 'folder', 'box', 'box', ?, ?)",
                [(str(uuid.uuid4()), owner_id, parent_id, STAMP, STAMP) for _ in range(count)])
    finally:
        connection.close()


def pending(config) -> list[str]:
    """The nodes of the outbox's rows: changes the index does not hold yet."""
    return [node_id for (node_id,) in query_sql(
        config, "SELECT node_id FROM search_outbox ORDER BY seq")]


def own_session(client: Client) -> Client:
    """The same user on a session of its own, for a thread of its own."""
    copy = Client(client.base_url, client.token, client.transport, client.verify)
    copy.user_id, copy.home_id = client.user_id, client.home_id
    return copy


def status(client, document_id: str) -> str:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["ocr_status"]


def found(client, q: str) -> list[str]:
    response = client.get("/api/search/", params={"q": q})
    assert response.status_code == 200, response.text
    return [result["id"] for result in response.json()]


def test_a_document_done_by_another_process_is_found_by_the_next_search(asleep, alice, config):
    document_id = new_document(alice, "Scan 7")
    wait_indexed(config)  # its title is in; the indexer sleeps until something wakes it
    finish_elsewhere(config, document_id, "Stadtwerke Abschlag quokkafjord")

    assert status(alice, document_id) == "succeeded"
    assert pending(config) == [document_id]  # the index lacks the text: done, not yet findable
    assert found(alice, "quokkafjord") == [document_id]


def test_another_users_pending_changes_do_not_hold_a_search(asleep, alice, bob, config):
    mine = new_document(alice, "Quarterly quokkafjord")
    theirs = new_document(bob, "Scan 8")
    wait_indexed(config)
    finish_elsewhere(config, theirs, "quokkafjord as well")
    assert pending(config) == [theirs]

    assert found(alice, "quokkafjord") == [mine]
    # Alice's search neither waited for Bob's change nor woke the indexer for it.
    assert pending(config) == [theirs]
    assert found(bob, "quokkafjord") == [theirs]


def test_a_finished_document_is_found_at_once_while_the_index_lags(asleep, alice, config):
    """The search neither waits for the index nor wakes it: the caller's finished document is
    laid over the index's last commit from an index in memory (dms.search.overlay), its newest
    state only, and ranked before the index's other matches."""
    older = new_document(alice, "quokkafjord quokkafjord report")
    document_id = new_document(alice, "Scan walrusbay")
    wait_indexed(config)
    finish_elsewhere(config, document_id, "Stadtwerke Abschlag quokkafjord")
    execute_sql(config, "UPDATE node SET title = ?, title_sort = ? WHERE id = ?",
                "Letter", "letter", document_id)
    assert pending(config) == [document_id, document_id]

    assert found(alice, "quokkafjord") == [document_id, older]
    assert found(alice, "walrusbay") == []  # the index's commit holds its old title
    assert found(alice, "letter") == [document_id]
    assert pending(config) == [document_id, document_id]  # the index has not taken it


def test_a_page_of_a_search_counts_the_changes_laid_over_the_index(asleep, alice, config):
    """The total of a paged search (api.md, "Search": `page`): the changed nodes as they are
    now, the index's commit for the others — a document that no longer matches is not counted."""
    older = new_document(alice, "quokkafjord report")
    renamed = new_document(alice, "quokkafjord memo")
    document_id = new_document(alice, "Scan 9")
    wait_indexed(config)
    finish_elsewhere(config, document_id, "Stadtwerke Abschlag quokkafjord")
    execute_sql(config, "UPDATE node SET title = ?, title_sort = ? WHERE id = ?",
                "Memo", "memo", renamed)
    assert pending(config) == [document_id, renamed]

    response = alice.get("/api/search/", params={"q": "quokkafjord", "page": "1"})
    assert response.status_code == 200, response.text
    page = response.json()
    assert ([hit["id"] for hit in page["results"]], page["count"], page["pages"]) == (
        [document_id, older], 2, 1)
    assert pending(config) == [document_id, renamed]  # the index has not taken them


def test_words_inside_compounds_rank_last_while_the_index_lags(asleep, alice, config):
    """Laid over the index (dms.search.overlay), the caller's changes are ranked in the tiers
    of api.md §22: whole words and beginnings first (their changed nodes before the index's
    others), then words inside compound words (the same)."""
    prefix = new_document(alice, "Bescheidenheit")
    inner = new_document(alice, "Gebührenbescheid")
    whole, compound = new_document(alice, "Scan 10"), new_document(alice, "Scan 11")
    wait_indexed(config)
    finish_elsewhere(config, whole, "Ihr Bescheid")
    finish_elsewhere(config, compound, "Ihr Steuerbescheid")
    assert pending(config) == [whole, compound]

    assert found(alice, "bescheid") == [whole, prefix, compound, inner]
    response = alice.get("/api/search/", params={"q": "bescheid", "page": "1", "page_size": "2"})
    assert response.json()["count"] == 4
    assert pending(config) == [whole, compound]  # the index has not taken them


def test_a_folder_or_a_document_still_being_read_does_not_hold_a_search(asleep, alice, config):
    """"Done" is the promise: what is not done yet (a folder just made, a document not yet read)
    is found a moment later, as the index follows; a search does not wait for it."""
    document_id = new_document(alice, "Scan 10")
    wait_indexed(config)
    add_folders_elsewhere(config, alice.user_id, alice.home_id, 1)
    execute_sql(config, "UPDATE node SET title = ?, title_sort = ? WHERE id = ?",
                "Letter quokkafjord", "letter quokkafjord", document_id)
    assert status(alice, document_id) == "received"
    assert len(pending(config)) == 2

    assert found(alice, "box") == [] and found(alice, "quokkafjord") == []
    assert len(pending(config)) == 2  # not waited for, and the indexer not woken for them
    new_document(alice, "Scan 11")  # a write of this process wakes the indexer
    wait_indexed(config, timeout=30)
    assert found(alice, "quokkafjord") == [document_id]


def test_a_search_is_not_held_behind_another_users_backlog(asleep, alice, bob, config):
    document_id = new_document(alice, "Scan 9")
    wait_indexed(config)
    # Bob's bulk import (more rows than one look through the outbox takes, outbox.LOOK_ROWS),
    # and Alice's own, larger than one batch of the indexer (indexer.BATCH_ROWS), then her
    # document done: 34,001 changes, Bob's first.
    add_folders_elsewhere(config, bob.user_id, bob.home_id, 30_000)
    add_folders_elsewhere(config, alice.user_id, alice.home_id, 4_000)
    finish_elsewhere(config, document_id, "Stadtwerke Abschlag quokkafjord")
    assert status(alice, document_id) == "succeeded"
    assert len(pending(config)) == 34_001

    # The indexer applies Alice's rows ahead of Bob's, batch after batch: her search waits for
    # hers only, and finds her document and her folders.
    assert found(alice, "quokkafjord") == [document_id]
    assert len(found(alice, "box")) == 100  # the default limit
    wait_indexed(config, timeout=120)
    assert len(found(bob, "box")) == 100  # Bob's are in too, in their turn


@pytest.mark.socket  # uploads, searches and another user's writes at once, on waitress' threads
def test_each_document_is_found_the_moment_its_status_is_final_under_load(alice, bob, config):
    stop = threading.Event()
    errors: list[BaseException] = []

    def bob_writes() -> None:
        """Another user's load: folders through the API, and a bulk import's rows beside."""
        client = own_session(bob)
        try:
            number = 0
            while not stop.is_set():
                response = client.post("/api/nodes/", {"data": {
                    "type": "folders", "attributes": {"title": f"Bob {number}"},
                    "relationships": {"parent": {"data": {"type": "folders",
                                                          "id": bob.home_id}}}}})
                assert response.status_code == 201, response.text
                add_folders_elsewhere(config, bob.user_id, bob.home_id, 500)
                number += 1
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            errors.append(error)

    results: dict[str, tuple[list[str], str, list[str]]] = {}

    def upload_and_search(word: str) -> None:
        client = own_session(alice)
        try:
            document_id = new_document(client, f"Letter {word[:3]}")
            # Plain text: read at once, no OCR, and no PDF reader (one user's PDFs are read
            # one at a time, a second waits, more are refused: dms.files.pdf.process).
            upload_accepted(client, document_id, f"{word}.txt", samples.text(
                f"Invoice from the Stadtwerke, reference {word}, total 93.20 EUR\n"))
            seen = wait_processed(client, document_id)
            results[word] = (seen, document_id, found(client, word))
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            errors.append(error)

    load = threading.Thread(target=bob_writes)
    load.start()
    uploads = [threading.Thread(target=upload_and_search, args=(word,)) for word in WORDS]
    try:
        for thread in uploads:
            thread.start()
        for thread in uploads:
            thread.join(120)
    finally:
        stop.set()
        load.join(60)
    assert errors == []
    assert {word: (seen[-1], hits) for word, (seen, _, hits) in results.items()} == {
        word: ("succeeded", [results[word][1]]) for word in WORDS}


def test_past_a_short_wait_only_two_searches_of_a_user_wait_on_and_others_are_not_counted():
    """The waits themselves (no server): every search of a user may wait SHORT_WAIT_SECONDS for
    the index; past it, two of theirs at a time, each user counted apart."""
    fresh = Freshness()
    results: dict[str, bool] = {}

    def search(name: str, owner: str) -> threading.Thread:
        thread = threading.Thread(target=lambda: results.__setitem__(
            name, fresh.wait(owner, 10, 3600.0, lambda: True, lambda: None)))
        thread.start()
        return thread

    first, second = search("alice 1", "alice"), search("alice 2", "alice")
    wait_for(lambda: fresh._waiting_long.get("alice") == 2, message="alice's two wait on")
    third, bobs = search("alice 3", "alice"), search("bob 1", "bob")
    third.join(30)
    assert results == {"alice 3": False}  # answered from the index as it is
    wait_for(lambda: fresh._waiting_long.get("bob") == 1, message="bob's search waits on")

    fresh.moved(10, "alice")  # Alice's rows are in: her two searches have them
    first.join(30)
    second.join(30)
    assert results == {"alice 1": True, "alice 2": True, "alice 3": False}
    fresh.moved(10)  # every row up to 10
    bobs.join(30)
    assert results == {"alice 1": True, "alice 2": True, "alice 3": False, "bob 1": True}
    assert (fresh._waiting, fresh._waiting_long) == ({}, {})
