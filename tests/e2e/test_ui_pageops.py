"""The web page's page tools end to end (docs/api.md, "Page operations"), in Debian's headless
Chromium, by accessible names as a new user would: a 3-page PDF uploaded through the file picker, a
page turned (its /Rotate in the new version), deleted, moved by drag and drop and from the keyboard;
pages extracted into a folder, moved into another document, a document merged in and one split; the
API's sentence for a refusal, and a view read again when the document changed behind its back; the
status of a turned scan read again; axe-core, phones and screenshots. What the API made is checked
through the API: the downloaded PDF's pages (tests/harness/pdfops.py). The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.client import JSON
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_indexed, wait_processed
from tests.harness.webpage import (
    PHONE,
    Session,
    axe_violations,
    log_in_home,
    sideways_scroll,
    unnamed_controls,
    upload_by_picker,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

# Tesseract on a busy 2-core machine: the status may take a while to become Done.
PROCESSING_MS = 120_000
TEXTS = ["Alpha page one", "Bravo page two", "Charlie page three"]


def latest(client, document_id: str) -> dict:
    response = client.get(f"/api/documents/{document_id}/")
    assert response.status_code == 200, response.text
    return response.json()["data"]["attributes"]["versions"][-1]


def version_count(client, document_id: str) -> int:
    response = client.get(f"/api/documents/{document_id}/")
    return len(response.json()["data"]["attributes"]["versions"])


def pdf_of(client, document_id: str) -> bytes:
    response = client.get(f"/api/documents/{document_id}/download/")
    assert response.status_code == 200, response.text
    return response.content


def children(client, folder_id: str) -> list[str]:
    response = client.get(f"/api/nodes/{folder_id}/?page[size]=100")
    assert response.status_code == 200, response.text
    return [node["attributes"]["title"] for node in response.json()["data"]]


def child_id(client, folder_id: str, title: str) -> str:
    response = client.get(f"/api/nodes/{folder_id}/?page[size]=100")
    [found] = [node["id"] for node in response.json()["data"]
               if node["attributes"]["title"] == title]
    return found


def pdf_document(client, title: str, texts: list[str], parent: str) -> str:
    """A document with a born-digital PDF of one page per text, read (no Tesseract needed)."""
    document = new_document(client, title, parent)
    upload_accepted(client, document, f"{title}.pdf", samples.pdf(texts))
    assert wait_processed(client, document)[-1] == "succeeded"
    return document


def pages_heading(page, pages: int):
    return page.get_by_role("heading", name=f"{pages} pages" if pages != 1 else "1 page")


def open_document(page, title: str, pages: int) -> None:
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible()
    expect(pages_heading(page, pages)).to_be_visible()


def changed_to(page, message: str, pages: int, version: int) -> None:
    """The call's message, with the view read again: its new version listed."""
    expect(page.get_by_role("region", name="Versions").get_by_role(
        "button", name=f"Download version {version}")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(message)
    expect(pages_heading(page, pages)).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)  # no error shown


def test_rotate_delete_and_reorder_pages(session, server, alice, tmp_path):
    scan = tmp_path / "letters.pdf"
    scan.write_bytes(samples.pdf(TEXTS))
    page = log_in_home(session)
    item = upload_by_picker(page, scan, PROCESSING_MS)
    item.get_by_role("link", name="Open letters.pdf").click()
    open_document(page, "letters.pdf", 3)
    document = child_id(alice, alice.home_id, "letters.pdf")
    first = latest(alice, document)

    # Turn page 1: a new version whose first page has /Rotate 90, the others untouched.
    page.get_by_role("button", name="Rotate page 1 clockwise").click()
    changed_to(page, "Page 1 turned clockwise.", 3, 2)
    rotated = latest(alice, document)
    assert rotated["number"] == 2 and rotated["short_description"]
    assert {p["id"] for p in rotated["pages"]}.isdisjoint(p["id"] for p in first["pages"])
    assert [rotation for rotation, _ in bytes_layout(pdf_of(alice, document))] == [90, 0, 0]
    expect(page.get_by_role("button", name="Rotate page 1 clockwise")).to_be_focused()
    # The view shows the new version's pages.
    expect(page.locator("figure.page").first).to_have_attribute("data-page-id",
                                                                rotated["pages"][0]["id"])

    page.get_by_role("button", name="Delete page 2").click()
    changed_to(page, "Page 2 deleted. The version before is kept under Versions.", 2, 3)
    assert latest(alice, document)["page_count"] == 2
    data = pdf_of(alice, document)
    assert page_texts(data) == ["Alpha page one", "Charlie page three"]
    assert [rotation for rotation, _ in bytes_layout(data)] == [90, 0]

    # Drag and drop: page 2 dropped onto page 1 takes its place. First the previews are drawn: a
    # preview drawn during the drag (a busy machine) moves the figures from under the mouse.
    expect(page.locator("canvas.preview.is-loading")).to_have_count(0)
    page.get_by_role("figure", name="Page 2").drag_to(page.get_by_role("figure", name="Page 1"))
    changed_to(page, "Page 2 moved to place 1.", 2, 4)
    assert page_texts(pdf_of(alice, document)) == ["Charlie page three", "Alpha page one"]

    # From the keyboard: the Move button with Enter, then Shift+→ on a page.
    page.get_by_role("button", name="Move page 2 earlier").focus()
    page.keyboard.press("Enter")
    changed_to(page, "Page 2 moved to place 1.", 2, 5)
    assert page_texts(pdf_of(alice, document)) == ["Alpha page one", "Charlie page three"]
    # Page 1 has no "earlier": the focus goes to its checkbox, still on the moved page.
    expect(page.get_by_role("checkbox", name="Select page 1")).to_be_focused()
    page.keyboard.press("Shift+ArrowRight")
    changed_to(page, "Page 1 moved to place 2.", 2, 6)
    assert page_texts(pdf_of(alice, document)) == ["Charlie page three", "Alpha page one"]
    expect(page.get_by_role("checkbox", name="Select page 2")).to_be_focused()
    # r turns the page that has the focus; the page's /Rotate goes with it.
    page.keyboard.press("r")
    changed_to(page, "Page 2 turned clockwise.", 2, 7)
    assert [rotation for rotation, _ in bytes_layout(pdf_of(alice, document))] == [0, 180]

    # Delete on a page deletes that page (not the document, as elsewhere in the view).
    page.get_by_role("checkbox", name="Select page 1").focus()
    page.keyboard.press("Delete")
    changed_to(page, "Page 1 deleted. The version before is kept under Versions.", 1, 8)
    assert page_texts(pdf_of(alice, document)) == ["Alpha page one"]
    expect(page.get_by_role("checkbox", name="Select page 1")).to_be_focused()
    versions = page.get_by_role("region", name="Versions")
    expect(versions.get_by_role("button", name=re.compile(r"^Download version"))).to_have_count(8)
    assert version_count(alice, document) == 8
    history = page.get_by_role("region", name="History")
    expect(history.get_by_role("listitem").first).to_contain_text("alice")
    assert session.errors == [] and session.foreign == []


def test_extract_a_page_into_a_folder_and_split_the_rest(session, server, alice):
    receipts = make_folder(alice, "Receipts", alice.home_id)
    batch = pdf_document(alice, "Batch", TEXTS, alice.home_id)
    page = log_in_home(session, path=f"/#/doc/{batch}")
    open_document(page, "Batch", 3)
    toolbar = page.get_by_role("toolbar", name="Page actions")
    expect(toolbar.get_by_role("button", name="Extract to folder")).to_be_disabled()

    page.get_by_role("checkbox", name="Select page 3").check()
    expect(toolbar.get_by_text("1 of 3 selected")).to_be_visible()
    toolbar.get_by_role("button", name="Extract to folder").click()
    dialog = page.get_by_role("dialog", name="Extract 1 page")
    # The document's folder is chosen at first.
    expect(dialog.get_by_role("radio", name="Home", exact=True)).to_be_checked()
    dialog.get_by_role("radio", name="Home / Receipts").check()
    dialog.get_by_label("Title of the new document (optional)").fill("Receipt")
    session.screenshot("50-extract-dialog.png", full_page=False)
    dialog.get_by_role("button", name="Extract here").click()
    changed_to(page, "Page 3 extracted into the new document “Receipt.pdf” in Receipts.", 2,
               2)
    assert children(alice, receipts) == ["Receipt.pdf"]
    receipt = child_id(alice, receipts, "Receipt.pdf")
    assert page_texts(pdf_of(alice, receipt)) == ["Charlie page three"]
    assert page_texts(pdf_of(alice, batch)) == ["Alpha page one", "Bravo page two"]

    # Split after page 1: two documents in Home, Batch in the Trash.
    page.get_by_role("checkbox", name="Select page 1").check()
    toolbar.get_by_role("button", name="Split document").click()
    dialog = page.get_by_role("dialog", name="Split the document")
    expect(dialog.get_by_role("radio", name="After page 1")).to_be_checked()
    session.screenshot("51-split-dialog.png", full_page=False)
    dialog.get_by_role("button", name="Split").click()
    expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        "Split into 2 documents: “Batch-1.pdf”, “Batch-2.pdf”. “Batch” is in the Trash.")
    assert children(alice, alice.home_id) == ["Receipts", "Batch-1.pdf", "Batch-2.pdf"]
    for title, texts in (("Batch-1.pdf", ["Alpha page one"]), ("Batch-2.pdf", ["Bravo page two"])):
        assert page_texts(pdf_of(alice, child_id(alice, alice.home_id, title))) == texts
    trash = alice.get("/api/trash/").json()["data"]
    assert [(node["id"], node["attributes"]["title"]) for node in trash] == [(batch, "Batch")]
    page.get_by_role("link", name="Trash").click()
    expect(page.get_by_role("heading", name="Trash", level=1)).to_be_visible()
    expect(page.get_by_role("button", name="Restore Batch", exact=True)).to_be_visible()
    assert session.errors == [] and session.foreign == []


def test_move_pages_to_another_document_and_merge_one_in(session, server, config, alice):
    letters = make_folder(alice, "Letters", alice.home_id)
    source = pdf_document(alice, "Source", ["Source first", "Source second"], alice.home_id)
    target = pdf_document(alice, "Target", ["Target only"], alice.home_id)
    extra = pdf_document(alice, "Appendix", ["Appendix zulu"], letters)
    wait_indexed(config)
    page = log_in_home(session, path=f"/#/doc/{source}")
    open_document(page, "Source", 2)

    # The picker lists the folder's other documents.
    page.get_by_role("checkbox", name="Select page 2").check()
    page.get_by_role("button", name="Move to document").click()
    dialog = page.get_by_role("dialog", name="Move page 2 to another document")
    expect(dialog.get_by_role("radio")).to_have_count(1)
    dialog.get_by_role("radio", name="Target").check()
    dialog.get_by_role("button", name="Move here").click()
    changed_to(page, "Page 2 moved to the end of “Target”.", 1, 2)
    assert page_texts(pdf_of(alice, target)) == ["Target only", "Source second"]
    assert page_texts(pdf_of(alice, source)) == ["Source first"]

    # Merge: a document found by searching, its pages after this one's; it goes to the Trash.
    # Nothing is chosen at first: Merge waits for the user's pick (issue 44).
    page.get_by_role("button", name="Merge a document in").click()
    dialog = page.get_by_role("dialog", name="Merge a document into this one")
    merge = dialog.get_by_role("button", name="Merge")
    expect(dialog.get_by_role("radio", name="Target")).not_to_be_checked()
    expect(merge).to_be_disabled()
    session.screenshot("53-merge-nothing-chosen.png", full_page=False)
    dialog.get_by_role("radio", name="Target").check()
    expect(merge).to_be_enabled()
    dialog.get_by_label("Find a document").fill("zulu")
    choice = dialog.get_by_role("radio", name=re.compile(r"^Appendix"))
    expect(choice).not_to_be_checked()
    expect(merge).to_be_disabled()  # the choice went with the list it was in
    expect(dialog.get_by_role("radiogroup", name="Documents")).to_contain_text(
        "Appendix — Home / Letters")
    choice.check()
    expect(merge).to_be_enabled()
    session.screenshot("52-document-picker.png", full_page=False)
    merge.click()
    changed_to(page, "“Appendix” merged in: its pages are at the end, and it is in the Trash.",
               2, 3)
    assert page_texts(pdf_of(alice, source)) == ["Source first", "Appendix zulu"]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [extra]

    # Moving every page away: the document goes to the Trash and the view opens where they went.
    page.get_by_role("checkbox", name="Select all pages").check()
    page.get_by_role("button", name="Move to document").click()
    dialog = page.get_by_role("dialog", name="Move pages 1 and 2 to another document")
    dialog.get_by_role("radio", name="Target").check()
    dialog.get_by_role("button", name="Move here").click()
    expect(page.get_by_role("heading", name="Target", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        "Pages 1 and 2 moved to the end of “Target”."
        " “Source” had no page left and is in the Trash.")
    assert page_texts(pdf_of(alice, target)) == [
        "Target only", "Source second", "Source first", "Appendix zulu"]
    assert {node["id"] for node in alice.get("/api/trash/").json()["data"]} == {extra, source}
    assert session.errors == [] and session.foreign == []


def test_refusals_show_the_api_sentence_and_a_changed_document_is_read_again(session, server,
                                                                              alice):
    document = pdf_document(alice, "Contract", TEXTS, alice.home_id)
    page = log_in_home(session, path=f"/#/doc/{document}")
    open_document(page, "Contract", 3)

    # Deleting every page: the API's sentence, nothing changed.
    page.get_by_role("checkbox", name="Select all pages").check()
    page.get_by_role("button", name="Delete selected").click()
    expect(page.get_by_role("alert")).to_have_text("A document keeps at least one page.")
    assert version_count(alice, document) == 1
    assert page_texts(pdf_of(alice, document)) == TEXTS
    expect(page.get_by_role("checkbox", name="Select all pages")).to_be_checked()

    # The document changes behind the page's back: the page's ids are an older version's now.
    pages = latest(alice, document)["pages"]
    turned = alice.post("/api/pages/rotate/", {"pages": [{"id": pages[2]["id"], "angle": 180}]},
                        media=JSON)
    assert turned.status_code == 204, turned.text
    page.get_by_role("button", name="Delete page 1").click()
    expect(page.get_by_role("alert")).to_have_text(
        "Pages of an older version cannot be changed. The document is shown as it is now.")
    newest = latest(alice, document)
    expect(page.locator("figure.page").first).to_have_attribute("data-page-id",
                                                                newest["pages"][0]["id"])
    assert version_count(alice, document) == 2
    assert page_texts(pdf_of(alice, document)) == TEXTS
    # Now it works.
    page.get_by_role("button", name="Delete page 1").click()
    changed_to(page, "Page 1 deleted. The version before is kept under Versions.", 2, 3)
    assert page_texts(pdf_of(alice, document)) == TEXTS[1:]
    # Refused 400s and the 409 show in the console as failed requests; nothing else may.
    assert [error for error in session.errors if "400" not in error] == []


def test_a_turned_scan_is_read_again_and_its_status_shown(session, server, alice):
    document = new_document(alice, "Scan", alice.home_id)
    upload_accepted(alice, document, "scan.png", samples.png("Stadtwerke Invoice 4711"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    page = log_in_home(session, path=f"/#/doc/{document}")
    open_document(page, "Scan", 1)
    head = page.get_by_role("main")
    expect(head.get_by_text("Done", exact=True)).to_be_visible()

    page.get_by_role("button", name="Rotate page 1 counter-clockwise").click()
    expect(page.get_by_role("status")).to_have_text("Page 1 turned counter-clockwise.")
    # Tesseract reads the turned page again (the rotation's answer came after the document went
    # back to `received`); a one-line page can be read before the page looks at its status, so
    # the reading is awaited through the API, then the page must show it Done.
    assert wait_processed(alice, document)[-1] == "succeeded"
    expect(head.get_by_text("Done", exact=True)).to_be_visible(timeout=PROCESSING_MS)
    attributes = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
    assert (attributes["ocr_status"], len(attributes["versions"])) == ("succeeded", 2)
    assert [rotation for rotation, _ in bytes_layout(pdf_of(alice, document))] == [270]
    actions = [event["attributes"]["action"]
               for event in alice.get(f"/api/nodes/{document}/history/").json()["data"]]
    assert actions[:2] == ["processed", "pages_changed"]
    assert session.errors == []


def open_with_page_2_selected(session, document: str, title: str):
    """The document view of a 3-page document, page 2 selected, every preview drawn."""
    page = log_in_home(session, path=f"/#/doc/{document}")
    open_document(page, title, 3)
    page.get_by_role("checkbox", name="Select page 2").check()
    for preview in page.get_by_role("img").all():
        expect(preview).to_have_attribute("aria-busy", "false")
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_page_tools_pass_axe_and_name_every_control(browser, server, alice, scheme):
    document = pdf_document(alice, "Electricity bill", TEXTS, alice.home_id)
    pdf_document(alice, "Water bill", ["Water"], alice.home_id)
    # bypass_csp only here: axe is injected into the page, which its CSP would refuse.
    session = Session(browser, server.url, bypass_csp=True, color_scheme=scheme)
    try:
        page = open_with_page_2_selected(session, document, "Electricity bill")
        found = {"view": axe_violations(page)}
        assert unnamed_controls(page) == []
        for button, dialog_name in (("Extract to folder", "Extract 1 page"),
                                    ("Move to document", "Move page 2 to another document"),
                                    ("Split document", "Split the document")):
            page.get_by_role("button", name=button).click()
            dialog = page.get_by_role("dialog", name=dialog_name)
            expect(dialog.get_by_role("radio").first).to_be_visible()
            found[button] = axe_violations(page)
            assert unnamed_controls(page) == [], button
            page.keyboard.press("Escape")
            expect(dialog).to_have_count(0)
        assert {name: violations for name, violations in found.items() if violations} == {}
        assert session.errors == [] and session.foreign == []
    finally:
        session.close()


def test_page_tools_on_a_desktop_and_on_a_phone(browser, server, alice):
    """Screenshots for a human to look at; at 390 × 844 nothing scrolls sideways."""
    document = pdf_document(alice, "Electricity bill with a long name, November", TEXTS,
                            alice.home_id)
    for device, options in (("desktop", {}), ("phone", PHONE)):
        session = Session(browser, server.url, **options)
        try:
            page = open_with_page_2_selected(session, document,
                                             "Electricity bill with a long name, November")
            # A focus ring where a keyboard user would see it.
            page.get_by_role("checkbox", name="Select page 3").focus()
            page.keyboard.press("Tab")
            turn = page.get_by_role("button", name="Rotate page 3 counter-clockwise")
            expect(turn).to_be_focused()
            page.evaluate("() => window.scrollTo(0, 0)")
            session.screenshot(f"53-{device}-page-tools.png")
            assert sideways_scroll(page) == 0, f"the page tools scroll sideways on the {device}"
            page.get_by_role("button", name="Split document").click()
            expect(page.get_by_role("dialog", name="Split the document")).to_be_visible()
            session.screenshot(f"54-{device}-split-dialog.png", full_page=False)
            assert sideways_scroll(page) == 0
            assert session.errors == [] and session.foreign == []
        finally:
            session.close()
