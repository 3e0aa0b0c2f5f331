"""The web page's reading languages end to end (api.md §22, "Languages"), in Debian's headless
Chromium, by accessible names: Settings › Reading sets German beside English, the upload dialog
starts from that choice and a German letter comes back with its umlauts and ß (real Tesseract on
the test's server); "Read again" in English alone loses them. The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.webpage import log_in_home, sideways_scroll

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

# Tesseract on a busy 2-core machine: the status may take a while to become Done.
PROCESSING_MS = 120_000
FIRST_LINE, _, LAST_LINE = samples.GERMAN_LETTER


def preference(client) -> str:
    return client.get("/api/preferences/ocr__language/").json()["data"]["attributes"]["value"]


def test_german_and_english_chosen_in_settings_read_a_german_letter(session, server, alice,
                                                                    tmp_path):
    letter = tmp_path / "bescheid.png"
    letter.write_bytes(samples.letter())
    page = log_in_home(session)
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Settings").click()
    page.get_by_role("navigation", name="Settings").get_by_role("link", name="Reading").click()
    expect(page.get_by_role("heading", name="Reading", level=1)).to_be_visible()
    form = page.get_by_role("form", name="Languages")
    # The server's default for this test server is English (DMS_OCR_LANG=eng).
    expect(form.get_by_role("checkbox", name="English")).to_be_checked()
    expect(form.get_by_role("checkbox", name="German")).not_to_be_checked()
    # None at all is refused on the page, and nothing is sent.
    form.get_by_role("checkbox", name="English").uncheck()
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_have_text("Choose at least one language.")
    assert preference(alice) == "eng"
    form.get_by_role("checkbox", name="German").check()
    form.get_by_role("checkbox", name="English").check()
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("New documents are read in German and English.")
    assert preference(alice) == "deu+eng"
    session.screenshot("reading-settings.png")

    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
    page.get_by_role("button", name="Upload").click()
    dialog = page.get_by_role("dialog", name="Upload files")
    expect(dialog.get_by_role("checkbox", name="German")).to_be_checked()
    expect(dialog.get_by_role("checkbox", name="English")).to_be_checked()
    with page.expect_file_chooser() as chooser:
        dialog.get_by_label("Files").click()
    chooser.value.set_files(str(letter))
    session.screenshot("upload-dialog.png", full_page=False)
    dialog.get_by_role("button", name="Upload").click()
    item = page.get_by_role("complementary", name="Uploads").get_by_role("listitem").filter(
        has_text="bescheid.png")
    expect(item).to_contain_text("Done", timeout=PROCESSING_MS)
    [document] = alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"]
    assert document["attributes"]["lang"] == "deu+eng"

    item.get_by_role("link", name="Open bescheid.png").click()
    text = page.get_by_role("region", name="Text")
    expect(text).to_contain_text(FIRST_LINE)
    expect(text).to_contain_text(LAST_LINE)

    # Read again in English alone: the same scan loses its umlauts and ß.
    page.get_by_role("button", name="Read again…").click()
    again = page.get_by_role("dialog", name="Read again")
    expect(again.get_by_role("checkbox", name="German")).to_be_checked()
    again.get_by_role("checkbox", name="German").uncheck()
    session.screenshot("read-again-dialog.png", full_page=False)
    again.get_by_role("button", name="Read again").click()
    expect(page.get_by_role("status")).to_have_text("Reading bescheid.png again in English.")
    expect(text).to_contain_text("berechnen wir die Gebuhren wie folgt.", timeout=PROCESSING_MS)
    english = alice.get(f"/api/documents/{document['id']}/ocr-text").json()["text"]
    assert not any(letter in english for letter in "äöüß")
    assert session.errors == [] and session.foreign == []


def test_the_upload_dialog_on_a_phone(browser, server, alice):
    from tests.harness.webpage import PHONE, Session
    session = Session(browser, server.url, **PHONE)
    try:
        page = log_in_home(session)
        page.get_by_role("button", name="Folders").click()
        page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
        page.get_by_role("button", name="Upload").click()
        dialog = page.get_by_role("dialog", name="Upload files")
        dialog.get_by_role("button", name="Upload").click()
        expect(dialog.get_by_role("alert")).to_have_text("Choose one or more files.")
        assert sideways_scroll(page) == 0
        session.screenshot("upload-dialog-phone.png", full_page=False)
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        assert alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"] == []
    finally:
        session.close()
