"""What went wrong is visible (api.md §22), in Debian's headless Chromium, by accessible names:
files the consume folder refused — a program, and a copy of a document the user has — show as a
count in the top bar and a list with each one's source, name, reason and time, dismissed one by
one or all at once; an upload of a file the user already has asks "keep both / open the existing
one". The browser and its sessions: tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import dataclasses
import re

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.consume import CONSUME, EXE
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.waiting import wait_for, wait_processed
from tests.harness.webpage import PHONE, Session, log_in_home, sideways_scroll

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

PROCESSING_MS = 120_000
CONFLICT = "Failed to load resource: the server responded with a status of 409 (Conflict)"
UNSUPPORTED = ("This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text "
               "file.")


@pytest.fixture
def config(config, tmp_path):
    """The test's server polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


@pytest.fixture
def consume_dir(config):
    return config.consume_dir


def refusals(client) -> list[str]:
    return [item["attributes"]["name"] for item in
            client.get("/api/intake/refusals/").json()["data"]]


def test_refused_files_show_with_their_reason_and_are_dismissed(session, server, alice,
                                                                consume_dir):
    bills = make_folder(alice, "Bills", alice.home_id)
    filed = new_document(alice, "March invoice", bills)
    scan = samples.pdf(["Stadtwerke invoice 4711"])
    upload_accepted(alice, filed, "invoice.pdf", scan)
    page = log_in_home(session)
    badge = page.get_by_role("button", name=re.compile("^Refused files"))
    expect(badge).to_be_hidden()

    (consume_dir / alice.username).mkdir(parents=True)
    (consume_dir / alice.username / "program.exe").write_bytes(EXE)
    wait_for(lambda: refusals(alice) == ["program.exe"])
    (consume_dir / alice.username / "scan-again.pdf").write_bytes(scan)
    wait_for(lambda: refusals(alice) == ["scan-again.pdf", "program.exe"])
    # The count is read at each view.
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("button", name="Refused files: 2 not seen")).to_have_text("2")
    session.screenshot("refusals-badge.png", full_page=False)

    page.get_by_role("button", name="Refused files: 2 not seen").click()
    dialog = page.get_by_role("dialog", name="Refused files")
    items = dialog.get_by_role("list", name="Refused files").get_by_role("listitem")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("scan-again.pdf")
    expect(items.nth(0)).to_contain_text("Consume folder")
    expect(items.nth(0)).to_contain_text(
        "You already have this file: \u201cMarch invoice\u201d in Bills.")
    expect(items.nth(1)).to_contain_text("program.exe")
    expect(items.nth(1)).to_contain_text(UNSUPPORTED)
    expect(items.nth(1).locator("time")).to_be_visible()
    session.screenshot("refusals-list.png", full_page=False)

    dialog.get_by_role("button", name="Dismiss program.exe").click()
    expect(items).to_have_count(1)
    assert refusals(alice) == ["scan-again.pdf"]
    expect(page.get_by_role("button", name="Refused files: 1 not seen")).to_have_text("1")
    dialog.get_by_role("button", name="Dismiss all").click()
    expect(dialog.get_by_text("Nothing refused.")).to_be_visible()
    assert refusals(alice) == []
    dialog.get_by_role("button", name="Close").click()
    expect(badge).to_be_hidden()
    assert session.errors == [] and session.foreign == []


def test_an_upload_of_a_file_you_have_asks_keep_both_or_open_the_existing_one(
        session, server, alice, tmp_path):
    scan = tmp_path / "invoice.png"
    scan.write_bytes(samples.png("Stadtwerke Invoice 4711"))
    first = new_document(alice, "invoice.png", alice.inbox_id)
    upload_accepted(alice, first, "invoice.png", scan.read_bytes())
    wait_processed(alice, first)
    page = log_in_home(session)
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()

    def upload_again():
        page.get_by_role("button", name="Upload", exact=True).click()
        dialog = page.get_by_role("dialog", name="Upload files")
        with page.expect_file_chooser() as chooser:
            dialog.get_by_label("Files").click()
        chooser.value.set_files(str(scan))
        dialog.get_by_role("button", name="Upload").click()
        question = page.get_by_role("dialog", name="Already uploaded")
        expect(question).to_contain_text(
            "You already have this file: \u201cinvoice.png\u201d in Inbox.")
        return question

    question = upload_again()
    session.screenshot("duplicate-question.png", full_page=False)
    question.get_by_role("button", name="Keep both").click()
    item = page.get_by_role("complementary", name="Uploads").get_by_role("listitem").first
    expect(item).to_contain_text("Done", timeout=PROCESSING_MS)
    inbox = alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"]
    assert [node["attributes"]["title"] for node in inbox] == ["invoice.png", "invoice.png"]

    question = upload_again()
    question.get_by_role("button", name="Open the existing one").click()
    expect(page.get_by_role("heading", name="invoice.png", level=1)).to_be_visible()
    assert page.url.endswith(f"#/doc/{first}")
    # The document made for the refused copy is gone, not left empty or in the trash.
    wait_for(lambda: len(alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"]) == 2)
    assert alice.get("/api/trash/").json()["data"] == []
    # The browser's console notes each refused first try; the page asked instead.
    assert session.errors == [CONFLICT, CONFLICT] and session.foreign == []


def test_the_refused_files_on_a_phone(browser, server, alice, consume_dir):
    (consume_dir / alice.username).mkdir(parents=True)
    (consume_dir / alice.username / "a-rather-long-name-of-a-program-file.exe").write_bytes(EXE)
    wait_for(lambda: refusals(alice) == ["a-rather-long-name-of-a-program-file.exe"])
    session = Session(browser, server.url, **PHONE)
    try:
        page = log_in_home(session)
        page.get_by_role("button", name="Refused files: 1 not seen").click()
        expect(page.get_by_role("dialog", name="Refused files")).to_contain_text(UNSUPPORTED)
        assert sideways_scroll(page) == 0
        session.screenshot("refusals-phone.png", full_page=False)
    finally:
        session.close()
