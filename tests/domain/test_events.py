"""The event log is written in the change's own transaction (docs/api.md, "History"): when recording
the event fails, the change it records is rolled back whole — a delete does not reach the trash, a
restore does not leave it, a deleted tag stays on its nodes — and the client gets the server-error
envelope."""

from __future__ import annotations

import pytest

from dms.db import events
from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.waiting import wait_processed


class EventNotWritten(Exception):
    """The failure the test injects into the event log."""


@pytest.fixture
def failing(monkeypatch):
    """failing(action): from then on, recording an event of `action` raises inside the
    transaction of the change (the in-process server calls the patched function)."""
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


def test_a_delete_whose_event_fails_is_rolled_back_whole(alice, config, tree, failing):
    failing(events.DELETED)
    before = snapshot(config)
    response = alice.delete(f"/api/nodes/{tree['bills']}/")
    assert_error(response, 500, "server_error", "A server error occurred.")
    assert snapshot(config) == before
    assert alice.get("/api/trash/").json()["data"] == []
    assert [node["attributes"]["title"] for node in
            alice.get(f"/api/nodes/{tree['year']}/").json()["data"]] == ["letter"]


def test_a_restore_whose_event_fails_leaves_the_deletion_in_the_trash(alice, config, tree,
                                                                      failing):
    assert alice.delete(f"/api/nodes/{tree['bills']}/").status_code == 204
    failing(events.RESTORED)
    before = snapshot(config)
    response = alice.post(f"/api/trash/{tree['bills']}/restore/")
    assert_error(response, 500, "server_error", "A server error occurred.")
    assert snapshot(config) == before
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [tree["bills"]]


def test_a_tag_deletion_whose_events_fail_is_rolled_back_whole(alice, config, tree, monkeypatch):
    for node_id in (tree["bills"], tree["letter"]):
        response = alice.post(f"/api/nodes/{node_id}/tags/", {"tags": ["paid"]}, media=JSON)
        assert response.status_code == 201, response.text
    [tag] = alice.get("/api/tags/").json()["data"]

    def fail(*args, **kwargs):
        raise EventNotWritten(events.UNTAGGED)
    monkeypatch.setattr(events, "record_for_each", fail)
    before = snapshot(config)
    response = alice.delete(f"/api/tags/{tag['id']}/")
    assert_error(response, 500, "server_error", "A server error occurred.")
    assert snapshot(config) == before
    assert alice.get(f"/api/documents/{tree['letter']}/").json()["data"]["attributes"][
        "tags"] == [{"name": "paid", "bg_color": "#c41fff", "fg_color": "#FFFFFF"}]
