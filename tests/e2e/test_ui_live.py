"""The web page's live side end to end, in Debian's headless Chromium, by accessible names: the
page reads the event stream (GET /events/) and shows what a script, the consume folder or another
tab changed without a reload; with the stream refused it falls back to polling and the status
still becomes Done; webhooks are added, tested against a real receiver on loopback, edited and
deleted in the settings. The browser and its sessions: tests/e2e/conftest.py,
tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.documents import new_document, upload_accepted
from tests.harness.webhooks import Receiver, signed
from tests.harness.webpage import log_in_home, sideways_scroll, upload_by_picker

# The browser talks to the socket; the webhooks point at a receiver on loopback, which the
# outbound rule allows only when listed (DMS_OUTBOUND_ALLOW).
pytestmark = [pytest.mark.socket, pytest.mark.config(outbound_allow=("127.0.0.1",))]

PROCESSING_MS = 120_000  # Tesseract on a busy 2-core machine


def open_inbox(page):
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()


def test_changes_made_elsewhere_show_without_a_reload(session, server, alice):
    page = log_in_home(session)
    expect(page.locator("body")).to_have_attribute("data-events", "live")
    open_inbox(page)
    expect(page.get_by_text("This folder is empty.")).to_be_visible()

    # A script adds a document to the inbox: the row and the inbox count appear, and its status
    # follows processing to Done, all from the stream (nothing polls a folder's rows).
    letter = new_document(alice, "Letter from a script", parent=alice.inbox_id)
    upload_accepted(alice, letter, "letter.txt", samples.text("water bill 2026\n"))
    row = page.get_by_role("row", name=re.compile("Letter from a script"))
    expect(row).to_be_visible()
    expect(row.get_by_text("Done")).to_be_visible(timeout=PROCESSING_MS)
    expect(page.get_by_role("link", name="Inbox 1 waiting")).to_be_visible()

    # Renamed and then deleted by the script: the row follows.
    renamed = alice.patch(f"/api/nodes/{letter}/", {"data": {
        "type": "documents", "id": letter, "attributes": {"title": "Water bill"}}})
    assert renamed.status_code == 200, renamed.text
    renamed_row = page.get_by_role("row", name=re.compile("Water bill"))
    expect(renamed_row).to_be_visible()
    # The rename changed the thumbnail's address: it is drawn before the script deletes the
    # document (deleted while the page asks for it, the picture is a 404, logged by Chromium).
    expect(renamed_row.locator("canvas.thumb.is-drawn")).to_have_count(1, timeout=30_000)
    assert alice.delete(f"/api/documents/{letter}/").status_code == 204
    expect(page.get_by_text("This folder is empty.")).to_be_visible()
    expect(page.get_by_role("link", name="Inbox", exact=True)).to_be_visible()
    streams = [url for url in session.requests if url == f"{server.url}/api/events/"]
    assert streams == [f"{server.url}/api/events/"]  # one stream, held open all along
    assert (session.errors, session.refused) == ([], [])


def test_without_the_stream_the_status_is_polled(session, server, alice, tmp_path):
    refused = []

    def refuse(route):
        refused.append(route.request.url)
        route.abort()

    session.context.route(re.compile(r".*/api/events/$"), refuse)
    scan = tmp_path / "receipt.png"
    scan.write_bytes(samples.png("Bakery receipt"))
    page = log_in_home(session)
    expect(page.locator("body")).to_have_attribute("data-events", "polling")
    open_inbox(page)
    upload_by_picker(page, scan, PROCESSING_MS)
    row = page.get_by_role("row", name=re.compile("receipt.png"))
    expect(row.get_by_text("Done")).to_be_visible()
    assert refused and set(refused) == {f"{server.url}/api/events/"}
    # Chromium reports each refused request on the console; nothing else went wrong.
    assert [error for error in session.errors if "ERR_FAILED" not in error] == []


def test_add_test_edit_and_delete_a_webhook(session, server, alice):
    receiver = Receiver()
    try:
        page = log_in_home(session)
        session.menu("Webhooks")
        expect(page.get_by_role("heading", name="Webhooks", level=1)).to_be_visible()
        expect(page.get_by_text("You have no webhooks.")).to_be_visible()

        # Refused by the API: its sentence shows and nothing is made.
        page.get_by_role("button", name="Add webhook").click()
        form = page.get_by_role("form", name="New webhook")
        form.get_by_label("Address (URL)").fill("ftp://example.org/hook")
        form.get_by_role("button", name="Generate a secret").click()
        form.get_by_role("button", name="Save webhook").click()
        expect(page.get_by_role("alert")).to_have_text(
            "url must be an http or https URL, such as https://example.org/dms-hook.")
        assert alice.get("/api/webhooks/").json()["data"] == []

        url = receiver.url()
        form.get_by_label("Address (URL)").fill(url)
        secret = form.get_by_label("Secret").input_value()
        assert re.fullmatch(r"[0-9a-f]{48}", secret)
        expect(form.get_by_label(re.compile(r"A document was read"))).to_be_checked()
        form.get_by_label(re.compile(r"\(node\.moved\)")).check()
        session.screenshot("41-webhook-form.png")
        form.get_by_role("button", name="Save webhook").click()
        expect(page.get_by_role("status")).to_have_text("Webhook added.")
        [webhook] = alice.get("/api/webhooks/").json()["data"]
        assert {key: webhook["attributes"][key] for key in ("url", "events", "enabled")} == {
            "url": url, "events": ["document.processed", "node.moved"], "enabled": True}
        assert "secret" not in webhook["attributes"]

        page.get_by_role("button", name=f"Send a test: {url}").click()
        expect(page.get_by_role("status")).to_have_text(
            re.compile(r"^Test sent: the receiver answered 200 in \d+ ms\.$"))
        [ping] = receiver.wait_for_count(1)
        assert ping.event["type"] == "ping"
        assert ping.headers["X-DMS-Signature"] == signed(ping.body, secret)
        page.set_viewport_size({"width": 390, "height": 844})
        assert sideways_scroll(page) == 0
        session.screenshot("43-webhooks-phone.png")
        page.set_viewport_size({"width": 1280, "height": 800})
        session.screenshot("42-webhooks.png")

        # Edited with the secret left empty: the old one still signs.
        page.get_by_role("button", name=f"Edit: {url}").click()
        form = page.get_by_role("form", name="Edit webhook")
        expect(form.get_by_label("Secret")).to_have_value("")
        form.get_by_label("Send deliveries to this webhook").uncheck()
        form.get_by_role("button", name="Save webhook").click()
        expect(page.get_by_role("status")).to_have_text("Webhook saved.")
        assert alice.get(f"/api/webhooks/{webhook['id']}/").json()["data"]["attributes"][
            "enabled"] is False
        expect(page.get_by_role("row", name=url)).to_contain_text("off")
        page.get_by_role("button", name=f"Send a test: {url}").click()
        expect(page.get_by_role("status")).to_contain_text("Test sent")
        second = receiver.wait_for_count(2)[1]
        assert second.headers["X-DMS-Signature"] == signed(second.body, secret)

        page.get_by_role("button", name=f"Delete: {url}").click()
        page.get_by_role("dialog", name="Delete webhook?").get_by_role(
            "button", name="Delete").click()
        expect(page.get_by_role("status")).to_have_text("Webhook deleted.")
        expect(page.get_by_text("You have no webhooks.")).to_be_visible()
        assert alice.get("/api/webhooks/").json()["data"] == []
        assert session.errors == [
            "Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    finally:
        receiver.stop()
