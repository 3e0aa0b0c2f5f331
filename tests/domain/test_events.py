"""The event log is written in the change's own transaction (docs/api.md, "History"): when recording
the event fails, the change it records is rolled back whole — a delete does not reach the trash, a
restore does not leave it, a deleted tag stays on its nodes (on the fast tier: the domain's
functions with the queue's workers, no server) — and the client gets the server-error envelope
(through the API)."""

from __future__ import annotations

import pytest

from dms.db import events
from dms.domain import tags, trash
from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.domaintier import (
    home_id,
    new_folder,
    new_user,
    read_document,
)
from tests.harness.waiting import wait_processed


class EventNotWritten(Exception):
    """The failure the test injects into the event log."""


@pytest.fixture
def failing(monkeypatch):
    """failing(action): from then on, recording an event of `action` raises inside the
    transaction of the change (the in-process server and the domain called directly both call
    the patched function)."""
    record = events.record

    def fail_on(action: str) -> None:
        def patched(owner_id, node_id, recorded_action, *args, **details):
            if recorded_action == action:
                raise EventNotWritten(action)
            return record(owner_id, node_id, recorded_action, *args, **details)
        monkeypatch.setattr(events, "record", patched)

    return fail_on


@pytest.fixture
def tree(alice):
    """.home/Bills/2026/letter.txt, the letter uploaded and read (nothing changes meanwhile)."""
    bills = make_folder(alice, "Bills", alice.home_id)
    year = make_folder(alice, "2026", bills)
    letter = new_document(alice, "letter", year)
    assert upload(alice, letter, "letter.txt", samples.text("a letter\n")).status_code == 201
    assert wait_processed(alice, letter)[-1] == "succeeded"
    return {"bills": bills, "year": year, "letter": letter}



@pytest.fixture
def papers(reading):
    """The fast tier's `tree`: alice and her .home/Bills/2026/letter.txt, the letter uploaded and
    read (nothing changes meanwhile)."""
    alice = new_user("alice")
    bills = new_folder(reading, alice, "Bills", home_id(alice))
    year = new_folder(reading, alice, "2026", bills)
    letter = read_document(reading, alice, "letter", "letter.txt", samples.text("a letter\n"),
                           year)
    return alice, {"bills": bills, "year": year, "letter": letter}


def test_a_delete_whose_event_fails_is_rolled_back_whole(alice, config, tree, failing):
    failing(events.DELETED)
    before = snapshot(config)
    response = alice.delete(f"/api/nodes/{tree['bills']}/")
    assert_error(response, 500, "server_error", "A server error occurred.")
    assert snapshot(config) == before
    assert alice.get("/api/trash/").json()["data"] == []
    assert [node["attributes"]["title"] for node in
            alice.get(f"/api/nodes/{tree['year']}/").json()["data"]] == ["letter"]


def trashed(user) -> list[str]:
    return [node.id for node, _ in trash.trashed(user).fetch(0, 100)]


def test_a_restore_whose_event_fails_leaves_the_deletion_in_the_trash(reading, config, papers,
                                                                      failing):
    alice, nodes = papers
    trash.delete(reading, alice, nodes["bills"])
    failing(events.RESTORED)
    before = snapshot(config)
    with pytest.raises(EventNotWritten):
        trash.restore(reading, alice, nodes["bills"])
    assert snapshot(config) == before
    assert trashed(alice) == [nodes["bills"]]


def test_a_tag_deletion_whose_events_fail_is_rolled_back_whole(config, papers, monkeypatch):
    alice, nodes = papers
    for node_id in (nodes["bills"], nodes["letter"]):
        tags.change_node_tags(alice, node_id, ["paid"], "replace")
    [tag] = tags.tags_of_user(alice)

    def fail(*args, **kwargs):
        raise EventNotWritten(events.UNTAGGED)
    monkeypatch.setattr(events, "record_for_each", fail)
    before = snapshot(config)
    with pytest.raises(EventNotWritten):
        tags.delete_tag(alice, tag.id)
    assert snapshot(config) == before
    assert tags.tags_of([nodes["letter"]], alice.id)[nodes["letter"]] == \
        [{"name": "paid", "bg_color": "#c41fff", "fg_color": "#FFFFFF"}]
