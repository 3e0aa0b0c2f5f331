"""What a delivery cannot send, to a real receiver on loopback: a URL stored before dms wrote URLs
in ASCII (put into the database behind the server's back) is sent in ASCII, or fails as any delivery
fails (`last_error`, back-off, disabled after failures in a row) without a traceback, and POST
.../test/ answers with the failure; an error of dms itself in a turn (a row broken behind its back)
is logged once per try and counts as a failed delivery, or, when the webhook's row cannot be read at
all, waits for its lease: never tried again at once, in a loop (898 tracebacks in 20 s before)."""

from __future__ import annotations

import logging

import pytest

from tests.harness.database import execute_sql, query_sql
from tests.harness.documents import create_node
from tests.harness.waiting import wait_for
from tests.harness.webhooks import Receiver, add_webhook, webhook

FAST = dict(outbound_allow=("127.0.0.1",), webhook_retry_seconds=0.2, webhook_timeout_seconds=1,
            webhook_max_failures=3)
UNUSABLE = ("The URL cannot be used: the host name ☃.example is not a valid domain name (IDNA, "
            "UTS #46).")
UNEXPECTED = "An error of dms stopped the delivery; the server's log has the details."


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.stop()


def disabled(client, webhook_id) -> dict:
    seen = {}

    def done():
        seen.update(webhook(client, webhook_id))
        return not seen["enabled"]

    wait_for(done, timeout=30, interval=0.05, message=lambda: f"the webhook: {seen}")
    return {k: seen[k] for k in ("last_status", "last_error", "failures_in_a_row")}


def tracebacks(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.exc_info]


@pytest.mark.config(**FAST)
def test_urls_stored_before_are_sent_in_ascii_or_fail_as_deliveries_do(alice, receiver, config,
                                                                       caplog):
    caplog.set_level(logging.INFO)
    sent = add_webhook(alice, receiver.url("/sent"), ["node.created"])
    unusable = add_webhook(alice, receiver.url("/never"), ["node.created"])
    for webhook_id, url in ((sent, f"http://127。0。0。1:{receiver.port}/dokumente/über"),
                            (unusable, "http://☃.example/hook")):
        execute_sql(config, "UPDATE webhook SET url = ? WHERE id = ?", url, webhook_id)
    ping = alice.post(f"/api/webhooks/{unusable}/test/")
    assert ping.status_code == 200, ping.text
    attributes = ping.json()["data"]["attributes"]
    assert (attributes["ok"], attributes["status"], attributes["error"]) == (False, None, UNUSABLE)

    create_node(alice, "folders", "Bücher", alice.home_id)
    assert disabled(alice, unusable) == {
        "last_status": None, "failures_in_a_row": 3,
        "last_error": f"Disabled after 3 failed deliveries in a row; the last: {UNUSABLE}"}
    [delivery] = receiver.wait_for_count(1)
    assert (delivery.path, delivery.headers["Host"], delivery.event["node"]["title"]) == (
        "/dokumente/%C3%BCber", f"127.0.0.1:{receiver.port}", "Bücher")
    assert tracebacks(caplog) == []
    assert [r.getMessage() for r in caplog.records if r.name == "dms.webhooks"] == [
        f"webhook {unusable} disabled after 3 failed deliveries in a row"]


@pytest.mark.config(**FAST)
def test_an_error_of_dms_in_a_turn_counts_as_a_failed_delivery(alice, receiver, config, caplog):
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    execute_sql(config, "UPDATE webhook SET next_attempt_at = ? WHERE id = ?", 1e12, webhook_id)
    create_node(alice, "folders", "Unreadable", alice.home_id)
    [(event_id,)] = query_sql(config, "SELECT max(id) FROM event WHERE owner_id = ?",
                              alice.user_id)
    execute_sql(config, "UPDATE event SET details = ? WHERE id = ?", "{not json", event_id)
    execute_sql(config, "UPDATE webhook SET next_attempt_at = ? WHERE id = ?", 0, webhook_id)
    assert disabled(alice, webhook_id) == {
        "last_status": None, "failures_in_a_row": 3,
        "last_error": f"Disabled after 3 failed deliveries in a row; the last: {UNEXPECTED}"}
    assert tracebacks(caplog) == [f"delivering webhook {webhook_id} failed"] * 3
    assert receiver.deliveries == []


# The lease lasts 2 x 60 + 30 s: far longer than the deliveries the test waits for.
@pytest.mark.config(outbound_allow=("127.0.0.1",), webhook_timeout_seconds=60)
def test_a_webhook_whose_row_cannot_be_read_waits_for_its_lease(alice, receiver, config, caplog):
    broken = add_webhook(alice, receiver.url("/broken"), ["node.created"])
    add_webhook(alice, receiver.url("/fine"), ["node.created"])
    execute_sql(config, "UPDATE webhook SET events = ? WHERE id = ?", "[not json", broken)
    for number in range(3):  # each a look for due webhooks, and a turn of the one that works
        create_node(alice, "folders", f"Folder {number}", alice.home_id)
        receiver.wait_for_count(number + 1)
    assert [(d.path, d.event["node"]["title"]) for d in receiver.deliveries] == [
        ("/fine", f"Folder {number}") for number in range(3)]
    assert tracebacks(caplog) == [f"delivering webhook {broken} failed"]
    assert [r.getMessage() for r in caplog.records if r.name == "dms.webhooks"] == [
        f"delivering webhook {broken} failed",
        f"webhook {broken} waits for its lease to expire (150 s)"]
    [(holder,)] = query_sql(config, "SELECT lease_holder FROM webhook WHERE id = ?", broken)
    assert holder is not None
