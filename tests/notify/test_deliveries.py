"""Webhooks' deliveries (api.md, "Webhooks") to a real HTTP receiver on loopback
(tests/harness/webhooks.py), allowed by the test server's DMS_OUTBOUND_ALLOW: every event type a
real action makes, signed byte for byte, the same bytes as the event stream's; retries after 500s
and timeouts with the same event, delivery and signature; given up after the retry window;
disabled after failures in a row and started afresh when enabled again; redirects not followed;
the ping of POST .../test/; a URL in other scripts sent in ASCII; a name resolving to loopback
refused for a user, not a superuser."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest

from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.documents import create_node, upload_accepted
from tests.harness.waiting import wait_for, wait_processed
from tests.harness.webhooks import SECRET, EventStream, Receiver, add_webhook, signed, webhook

ALL = ["node.created", "document.uploaded", "document.processed", "node.renamed", "node.moved",
       "node.tagged", "node.deleted", "node.restored", "document.pages_changed", "rule.applied",
       "document.updated", "node.access_changed"]
FAST = dict(outbound_allow=("127.0.0.1",), webhook_retry_seconds=0.2, webhook_timeout_seconds=1)
BODY_KEYS = ["id", "type", "at", "user_id", "node", "details"]


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.stop()


def wait_webhook(client, webhook_id, condition, timeout=30):
    """The webhook's attributes once `condition(attributes)` holds."""
    seen = {}

    def holds():
        seen.update(webhook(client, webhook_id))
        return condition(seen)

    wait_for(holds, timeout=timeout, interval=0.05, message=lambda: f"the webhook: {seen}")
    return dict(seen)


@pytest.mark.config(**FAST)
def test_every_event_type_is_delivered_signed_as_the_stream_sends_it(alice, bob, receiver,
                                                                    server, caplog):
    caplog.set_level(logging.DEBUG)
    webhook_id = add_webhook(alice, receiver.url(), ALL)
    add_webhook(bob, receiver.url("/bob"), ALL)
    folder = create_node(alice, "folders", "Bills", alice.home_id)
    document = create_node(alice, "documents", "letter", folder)
    upload_accepted(alice, document, "letter.txt", samples.text("Invoice 4711\n"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert alice.patch(f"/api/documents/{document}/", {"data": {
        "type": "documents", "id": document, "attributes": {"title": "letter 2026"}}}
    ).status_code == 200
    assert alice.patch(f"/api/documents/{document}/", {"data": {
        "type": "documents", "id": document, "attributes": {"document_date": "2024-03-12"}}}
    ).status_code == 200
    assert alice.post("/api/nodes/move/", {"nodes": [{"id": document}], "target_parent": {
        "id": alice.home_id}}, media=JSON).status_code == 200
    for method in ("POST", "DELETE"):
        assert alice.request(method, f"/api/nodes/{document}/tags/", json_body={
            "tags": ["paid"]}, media=JSON).status_code in (200, 201, 204)
    first = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["versions"][0]
    upload_accepted(alice, document, "letter-2.txt", samples.text("Invoice 4712\n"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert alice.post(f"/api/documents/{document}/versions/{first['id']}/restore/"
                      ).status_code == 201
    assert alice.delete(f"/api/documents/{document}/").status_code == 204
    assert alice.post(f"/api/trash/{document}/restore/").status_code == 200
    shared = alice.post(f"/api/nodes/{document}/access/", {"user": bob.user_id,
                                                          "role": "viewer"}, media=JSON)
    assert shared.status_code == 201, shared.text
    assert alice.delete(f"/api/nodes/{document}/access/{shared.json()['data']['id']}/"
                        ).status_code == 204
    legacy = alice.put("/api/document/upload/scan.txt", data=samples.text("Receipt\n"))
    assert legacy.status_code == 201, legacy.text
    assert wait_processed(alice, legacy.json()["id"])[-1] == "succeeded"
    create_node(bob, "folders", "Bob's", bob.home_id)

    expected = [
        ("node.created", "created", "Bills", folder),
        ("node.created", "created", "letter", document),
        ("document.uploaded", "uploaded", "letter", document),
        ("document.processed", "processed", "letter", document),
        ("node.renamed", "renamed", "letter 2026", document),
        ("document.updated", "metadata_changed", "letter 2026", document),
        ("node.moved", "moved", "letter 2026", document),
        ("node.tagged", "tagged", "letter 2026", document),
        ("node.tagged", "untagged", "letter 2026", document),
        ("document.uploaded", "uploaded", "letter 2026", document),
        ("document.processed", "processed", "letter 2026", document),
        ("document.uploaded", "version_restored", "letter 2026", document),
        ("node.deleted", "deleted", "letter 2026", document),
        ("node.restored", "restored", "letter 2026", document),
        ("node.access_changed", "access_granted", "letter 2026", document),
        ("node.access_changed", "access_revoked", "letter 2026", document),
        ("node.created", "imported", "scan.txt", legacy.json()["id"]),
        ("document.processed", "processed", "scan.txt", legacy.json()["id"]),
    ]
    wait_for(lambda: len([d for d in receiver.deliveries if d.path == "/hook"]) >= len(expected)
             and any(d.event["user_id"] == bob.user_id for d in receiver.deliveries
                     if d.path == "/bob"), timeout=30, interval=0.05)
    deliveries = list(receiver.deliveries)
    mine = [d for d in deliveries if d.path == "/hook"]
    assert [(d.event["type"], d.event["details"]["action"], d.event["node"]["title"],
             d.event["node"]["id"]) for d in mine] == expected
    theirs = [d.event for d in deliveries if d.path == "/bob"]
    assert [(e["type"], e["user_id"], e["node"]["title"]) for e in theirs
            if e["user_id"] == bob.user_id] == [("node.created", bob.user_id, "Bob's")]
    # While the letter was shared with bob his webhook may have got its grant (api.md §21:
    # events reach everyone with access), if it was read before the revocation; nothing else.
    assert [(e["type"], e["details"]["action"]) for e in theirs
            if e["user_id"] != bob.user_id] in ([], [("node.access_changed", "access_granted")])
    ids = [int(d.event["id"]) for d in mine]
    assert ids == sorted(set(ids))
    for delivery in mine:
        event = delivery.event
        assert list(event) == BODY_KEYS and event["user_id"] == alice.user_id
        assert {name: delivery.headers[name] for name in (
            "Content-Type", "X-DMS-Event", "X-DMS-Signature")} == {
            "Content-Type": "application/json", "X-DMS-Event": event["type"],
            "X-DMS-Signature": signed(delivery.body)}
        assert uuid.UUID(delivery.headers["X-DMS-Delivery"])
    assert len({d.headers["X-DMS-Delivery"] for d in mine}) == len(mine)
    # Whole bodies, as the history recorded them, with the node as the change left it.
    renamed, updated, moved = mine[4].event, mine[5].event, mine[6].event
    assert renamed["node"] == {"id": document, "type": "documents", "title": "letter 2026",
                               "parent_id": folder}
    assert renamed["details"] == {"title": "letter 2026", "previous": "letter",
                                  "action": "renamed"}
    assert updated["details"] == {"changes": {"document_date": {
        "from": updated["at"][:10], "to": "2024-03-12"}}, "action": "metadata_changed"}
    assert moved["node"]["parent_id"] == alice.home_id
    assert moved["details"] == {"title": "letter 2026", "from": {"id": folder, "title": "Bills"},
                                "to": {"id": alice.home_id, "title": ".home"},
                                "action": "moved"}
    assert mine[0].event["node"] == {"id": folder, "type": "folders", "title": "Bills",
                                     "parent_id": alice.home_id}
    assert mine[16].event["details"]["source"] == "api"
    assert [mine[n].event["details"] for n in (14, 15)] == [
        {"user": "bob", "role": "viewer", "action": "access_granted"},
        {"user": "bob", "role": "viewer", "action": "access_revoked"}]
    assert mine[3].event["details"]["status"] == "succeeded"
    assert mine[0].event["at"].endswith("Z")

    # The event stream sends exactly the same bytes (the same JSON, the same id).
    stream = EventStream(server.url, alice.token, query="?since=0")
    try:
        streamed = stream.events(len(expected))
    finally:
        stream.close()
    assert [(event_id, data) for event_id, data in streamed] == [
        (d.event["id"], d.event) for d in mine]
    attributes = webhook(alice, webhook_id)
    assert (attributes["last_status"], attributes["last_error"], attributes["failures_in_a_row"]
            ) == (200, None, 0)
    assert SECRET not in caplog.text


@pytest.mark.config(**FAST)
def test_a_webhook_gets_only_the_types_it_asked_for_from_its_creation_on(alice, receiver):
    create_node(alice, "folders", "Before", alice.home_id)
    add_webhook(alice, receiver.url(), ["node.renamed"])
    folder = create_node(alice, "folders", "Old", alice.home_id)
    assert alice.patch(f"/api/folders/{folder}/", {"data": {
        "type": "folders", "id": folder, "attributes": {"title": "New"}}}).status_code == 200
    [delivery] = receiver.wait_for_count(1)
    assert (delivery.event["type"], delivery.event["node"]["title"]) == ("node.renamed", "New")
    create_node(alice, "folders", "Later", alice.home_id)
    assert alice.patch(f"/api/folders/{folder}/", {"data": {
        "type": "folders", "id": folder, "attributes": {"title": "Newer"}}}).status_code == 200
    assert [e["node"]["title"] for e in
            (d.event for d in receiver.wait_for_count(2))] == ["New", "Newer"]


@pytest.mark.config(**FAST)
def test_failed_deliveries_are_tried_again_with_the_same_event(alice, receiver):
    answers = iter([500, 503, (2.0, 200)])  # 2 s: past the timeout of 1 s
    receiver.answer = lambda delivery: next(answers, 200)
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    create_node(alice, "folders", "First", alice.home_id)
    create_node(alice, "folders", "Second", alice.home_id)
    deliveries = receiver.wait_for_count(5)
    first, second = deliveries[:4], deliveries[4]
    assert [d.event["node"]["title"] for d in deliveries] == ["First"] * 4 + ["Second"]
    assert len({(d.body, d.headers["X-DMS-Delivery"], d.headers["X-DMS-Signature"])
                for d in first}) == 1
    assert second.event["id"] != first[0].event["id"]
    attributes = wait_webhook(alice, webhook_id, lambda a: a["failures_in_a_row"] == 0
                              and a["last_status"] == 200)
    # The latest failure stays told; failures_in_a_row says it is over.
    assert attributes["last_error"] == (
        f"No HTTP answer from 127.0.0.1:{receiver.port} within 1 s: the connection was refused, "
        "cut or not answered, or what answered was not an HTTP server.")
    assert attributes["enabled"] is True


@pytest.mark.config(**FAST, webhook_max_failures=3)
def test_a_webhook_failing_too_often_is_disabled_and_starts_afresh_when_enabled(alice, receiver):
    receiver.answer = lambda delivery: 500
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    create_node(alice, "folders", "Lost", alice.home_id)
    attributes = wait_webhook(alice, webhook_id, lambda a: not a["enabled"])
    assert (attributes["last_error"], attributes["failures_in_a_row"], attributes["last_status"]
            ) == ("Disabled after 3 failed deliveries in a row; the last: The receiver answered "
                  "500.", 3, 500)
    assert len(receiver.deliveries) == 3
    create_node(alice, "folders", "While disabled", alice.home_id)
    receiver.answer = lambda delivery: 200
    enabled = alice.patch(f"/api/webhooks/{webhook_id}/", {"data": {
        "type": "webhooks", "attributes": {"enabled": True}}}).json()["data"]["attributes"]
    assert (enabled["enabled"], enabled["last_error"], enabled["failures_in_a_row"]) == (
        True, None, 0)
    create_node(alice, "folders", "After", alice.home_id)
    deliveries = receiver.wait_for_count(4)
    assert [d.event["node"]["title"] for d in deliveries] == ["Lost"] * 3 + ["After"]


@pytest.mark.config(**FAST, webhook_retry_hours=0.0003)  # about a second
def test_an_event_failing_past_the_retry_window_is_given_up(alice, receiver):
    receiver.answer = lambda delivery: 500 if delivery.event["node"]["title"] == "Bad" else 200
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    create_node(alice, "folders", "Bad", alice.home_id)
    create_node(alice, "folders", "Good", alice.home_id)
    wait_for(lambda: any(d.event["node"]["title"] == "Good" for d in receiver.deliveries),
             timeout=30, interval=0.05)
    titles = [d.event["node"]["title"] for d in receiver.deliveries]
    assert titles[-1] == "Good" and set(titles[:-1]) == {"Bad"} and len(titles) > 2
    attributes = wait_webhook(alice, webhook_id, lambda a: a["last_status"] == 200)
    bad_id = receiver.deliveries[0].event["id"]
    assert (attributes["last_error"], attributes["failures_in_a_row"]) == (
        f"Event {bad_id} (node.created) was given up after 0.0003 hours of failed deliveries; "
        "the last: The receiver answered 500.", 0)


@pytest.mark.config(**FAST)
def test_redirects_are_not_followed(alice, receiver):
    receiver.answer = lambda delivery: 302
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    create_node(alice, "folders", "Moved away", alice.home_id)
    attributes = wait_webhook(alice, webhook_id, lambda a: a["last_error"] is not None)
    assert (attributes["last_status"], attributes["last_error"]) == (
        302, "The receiver answered 302, a redirect (dms does not follow redirects: give the "
             "webhook its final URL).")


@pytest.mark.config(**FAST)
def test_a_ping_is_sent_now_and_changes_nothing(alice, receiver):
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    answer = alice.post(f"/api/webhooks/{webhook_id}/test/")
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["attributes"]["duration_ms"] >= 0
    del data["attributes"]["duration_ms"]
    assert data == {"type": "webhook-deliveries", "id": data["id"], "attributes": {
        "event": "ping", "ok": True, "status": 200, "error": None}}
    [ping] = receiver.deliveries
    assert ping.event["at"].endswith("Z")
    assert {k: v for k, v in ping.event.items() if k != "at"} == {
        "id": data["id"], "type": "ping", "user_id": alice.user_id, "node": None,
        "details": {"webhook_id": webhook_id}}
    assert (ping.headers["X-DMS-Event"], ping.headers["X-DMS-Delivery"],
            ping.headers["X-DMS-Signature"]) == ("ping", data["id"], signed(ping.body))
    receiver.answer = lambda delivery: 500
    failed = alice.post(f"/api/webhooks/{webhook_id}/test/").json()["data"]["attributes"]
    assert (failed["ok"], failed["status"], failed["error"]) == (
        False, 500, "The receiver answered 500.")
    attributes = webhook(alice, webhook_id)
    assert (attributes["last_delivery_at"], attributes["last_status"], attributes["last_error"],
            attributes["failures_in_a_row"]) == (None, None, None, 0)


@pytest.mark.config(**FAST)
def test_a_url_in_other_scripts_is_delivered_in_ascii(alice, receiver):
    """Regression: such a URL made every delivery raise in the client, retried at once in a loop,
    and the ping answer 500."""
    webhook_id = add_webhook(alice, f"http://127。0。0。1:{receiver.port}/dokumente/über"
                                    f"?name=Bücher", ["node.created"])
    path = "/dokumente/%C3%BCber?name=B%C3%BCcher"
    assert webhook(alice, webhook_id)["url"] == f"http://127.0.0.1:{receiver.port}{path}"
    ping = alice.post(f"/api/webhooks/{webhook_id}/test/")
    assert ping.status_code == 200, ping.text
    assert ping.json()["data"]["attributes"]["ok"] is True
    create_node(alice, "folders", "Bücher", alice.home_id)
    deliveries = receiver.wait_for_count(2)
    assert [(d.path, d.headers["Host"], d.event["type"]) for d in deliveries] == [
        (path, f"127.0.0.1:{receiver.port}", "ping"),
        (path, f"127.0.0.1:{receiver.port}", "node.created")]
    assert deliveries[1].event["node"]["title"] == "Bücher"


@pytest.mark.config(outbound_allow=("127.0.0.1",))
def test_a_user_runs_at_most_two_pings_at_once(alice, receiver, anon):
    release = threading.Event()
    receiver.answer = lambda delivery: (0, 200) if release.wait(20) else 500
    webhook_id = add_webhook(alice, receiver.url(), ["node.created"])
    path = f"/api/webhooks/{webhook_id}/test/"
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(alice.post(path)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    receiver.wait_for_count(2)
    assert_error(alice.post(path), 429, "throttled",
                 "At most 2 tests of webhooks run at once; try again when one has ended.")
    release.set()
    for thread in threads:
        thread.join(30)
    assert [a.json()["data"]["attributes"]["ok"] for a in answers] == [True, True]
    assert alice.post(path).json()["data"]["attributes"]["ok"] is True


# No DMS_OUTBOUND_ALLOW: a name that resolves to loopback is refused at delivery for a user, and
# nothing reaches the receiver; a superuser may target loopback.
def test_a_name_resolving_to_loopback_is_refused_for_a_user(alice, admin, receiver):
    refused = ("localhost resolves to 127.0.0.1, which is an internal address (loopback, "
               "private, link-local or a cloud's metadata service): dms connects there only for a "
               "superuser or when the administrator allows it (DMS_OUTBOUND_ALLOW).")
    webhook_id = add_webhook(alice, receiver.url(host="localhost"), ["node.created"])
    ping = alice.post(f"/api/webhooks/{webhook_id}/test/").json()["data"]["attributes"]
    assert (ping["ok"], ping["status"], ping["error"]) == (False, None, refused)
    create_node(alice, "folders", "Private", alice.home_id)
    attributes = wait_webhook(alice, webhook_id, lambda a: a["failures_in_a_row"] >= 2)
    assert (attributes["last_error"], attributes["last_status"]) == (refused, None)
    assert receiver.deliveries == []

    add_webhook(admin, receiver.url(host="localhost"), ["node.created"])
    create_node(admin, "folders", "Admin's", admin.home_id)
    [delivery] = receiver.wait_for_count(1)
    assert (delivery.event["user_id"], delivery.event["node"]["title"]) == (
        admin.user_id, "Admin's")
