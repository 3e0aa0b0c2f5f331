"""No event skipped, none twice (api.md, "The event stream", dms.db.events): one user's events,
written at once by many request threads and by the workers that read documents (whose `processed` is
written under the document's scope and the owner's), reach a stream in the order of their ids, each
exactly once, and a stream resumed again and again with Last-Event-ID sees the same. On PostgreSQL
an event's id is handed out before its transaction commits, so this holds only because each owner's
events are written in that owner's write scope; writing one outside it is refused."""

from __future__ import annotations

import threading

import pytest

from dms.db import events, owner_scope, write_transaction
from dms.db.events import OutsideOwnerScope
from tests.harness import samples
from tests.harness.client import JSON
from tests.harness.database import query_sql
from tests.harness.documents import create_node, upload_accepted
from tests.harness.waiting import wait_for
from tests.harness.webhooks import EventStream

pytestmark = pytest.mark.socket  # many requests at once, through waitress' threads

THREADS, FOLDERS, DOCUMENTS = 8, 3, 2


def busy_user(client, number: int, failures: list) -> None:
    """Folders made, renamed and tagged, documents made and uploaded (then read by a worker)."""
    try:
        for index in range(FOLDERS):
            folder = create_node(client, "folders", f"t{number}-{index}", client.home_id)
            assert client.patch(f"/api/folders/{folder}/", {"data": {
                "type": "folders", "id": folder, "attributes": {"title": f"r{number}-{index}"}}}
            ).status_code == 200
            assert client.post(f"/api/nodes/{folder}/tags/", {"tags": [f"tag{number}"]},
                               media=JSON).status_code in (200, 201)
        for index in range(DOCUMENTS):
            document = create_node(client, "documents", f"d{number}-{index}", client.home_id)
            upload_accepted(client, document, "note.txt", samples.text(f"note {number}\n"))
    except BaseException as error:
        failures.append(error)


class Resuming:
    """Reads a user's stream, and every `every` events closes it and opens a new one with
    Last-Event-ID: what a client that keeps losing its connection sees."""

    def __init__(self, url: str, token: str, every: int):
        self.url, self.token, self.every = url, token, every
        self.ids: list[int] = []
        self.stream = EventStream(url, token)

    def read(self, until: int) -> None:
        while len(self.ids) < until:
            for _ in range(min(self.every, until - len(self.ids))):
                event_id, _ = self.stream.next_event()
                self.ids.append(int(event_id))
            self.stream.close()
            self.stream = wait_for(self._reopen, timeout=30, interval=0.2)

    def _reopen(self) -> EventStream | None:
        """A new stream after the last event seen; None while the caps (5 per user, 8 for the
        test's server) still count the ones just closed (the server notices within a second that
        their clients left)."""
        stream = EventStream(self.url, self.token, last_event_id=str(self.ids[-1]))
        if stream.response.status_code in (429, 503):
            stream.close()
            return None
        return stream

    def close(self) -> None:
        self.stream.close()


def test_a_resumed_stream_sees_every_event_exactly_once_in_order(server, alice, config):
    start = query_sql(config, "SELECT coalesce(max(id), 0) FROM event")[0][0]
    whole = EventStream(server.url, alice.token)
    resuming = Resuming(server.url, alice.token, every=7)
    failures: list = []
    threads = [threading.Thread(target=busy_user, args=(alice, number, failures))
               for number in range(THREADS)]
    for thread in threads:
        thread.start()
    # Read while they write: the stream that reconnects keeps up as the events come.
    reader = threading.Thread(target=resuming.read, args=(THREADS * 4,))
    reader.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    processed = THREADS * DOCUMENTS
    wait_for(lambda: query_sql(config, "SELECT count(*) FROM event WHERE owner_id = ? AND "
                                       "action = 'processed'", alice.user_id)[0][0] == processed,
             timeout=180, interval=0.2)
    expected = [row[0] for row in query_sql(
        config, "SELECT id FROM event WHERE owner_id = ? AND id > ? ORDER BY id",
        alice.user_id, start)]
    assert len(expected) == THREADS * (FOLDERS * 3 + DOCUMENTS * 3)
    reader.join(120)
    try:
        resuming.read(len(expected))
        assert resuming.ids == expected
        assert [int(event_id) for event_id, _ in whole.events(len(expected))] == expected
    finally:
        whole.close()
        resuming.close()


def test_an_event_outside_its_owners_scope_is_refused(server, alice, config):
    folder = create_node(alice, "folders", "Mine", alice.home_id)
    before = query_sql(config, "SELECT count(*) FROM event")
    with pytest.raises(OutsideOwnerScope):
        with write_transaction():
            events.record(alice.user_id, folder, events.RENAMED, alice.user_id, title="x")
    with pytest.raises(OutsideOwnerScope):
        with write_transaction(owner_scope("someone else")):
            events.record(alice.user_id, folder, events.RENAMED, alice.user_id, title="x")
    assert query_sql(config, "SELECT count(*) FROM event") == before
    with write_transaction(owner_scope(alice.user_id)):
        events.record(alice.user_id, folder, events.RENAMED, alice.user_id, title="x")
    assert query_sql(config, "SELECT node_kind, node_title, parent_id FROM event "
                             "ORDER BY id DESC LIMIT 1") == [("folder", "Mine", alice.home_id)]


def test_one_owners_events_commit_one_after_another(server, alice, config):
    """While a transaction holding an uncommitted event of alice's is open, her next event
    waits for it: its id is larger and it commits later, so no reader sees it first."""
    folder = create_node(alice, "folders", "Mine", alice.home_id)
    stream = EventStream(server.url, alice.token)
    made: list[str] = []
    later = threading.Thread(target=lambda: made.append(
        create_node(alice, "folders", "Later", alice.home_id)))
    try:
        with write_transaction(owner_scope(alice.user_id)):
            events.record(alice.user_id, folder, events.RENAMED, alice.user_id, title="Mine")
            later.start()
            later.join(1.0)
            assert later.is_alive() and made == []  # waiting for this transaction's scope
        later.join(60)
        assert [(data["type"], data["node"]["title"]) for _, data in stream.events(2)] == [
            ("node.renamed", "Mine"), ("node.created", "Later")]
    finally:
        stream.close()
