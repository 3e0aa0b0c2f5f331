"""The web page's documents end to end, in Debian's headless Chromium, by accessible names as a
new user would: upload through the file picker and watch the status become Done (real Tesseract
on the test's server), the preview and the text, downloads of the original and of the
searchable PDF; search as you type with safe snippets, tag filters and the hit opened; tags added
and removed; an older version restored. The browser and its sessions: tests/e2e/conftest.py,
tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.client import JSON
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.waiting import wait_indexed, wait_processed
from tests.harness.webpage import choose_upload, log_in_home

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

# Tesseract on a busy 2-core machine: the status may take a while to become Done.
PROCESSING_MS = 120_000


def test_upload_through_the_picker_and_see_it_read(session, server, alice, tmp_path):
    scan = tmp_path / "invoice.png"
    scan.write_bytes(samples.png("Stadtwerke Invoice 4711"))
    page = log_in_home(session)
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Inbox").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
    expect(page.get_by_text("This folder is empty.")).to_be_visible()

    choose_upload(page, scan)
    uploads = page.get_by_role("complementary", name="Uploads")
    item = uploads.get_by_role("listitem").filter(has_text="invoice.png")
    expect(item.get_by_role("progressbar", name="invoice.png: upload progress")).to_have_attribute(
        "value", "100")
    expect(item).to_contain_text("Done", timeout=PROCESSING_MS)
    session.screenshot("20-upload-done.png")

    # The folder shows it, read, and the inbox counts it.
    row = page.get_by_role("row", name=re.compile("invoice.png"))
    expect(row.get_by_text("Done")).to_be_visible()
    expect(page.get_by_role("link", name="Inbox 1 waiting")).to_be_visible()
    [document] = alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"]
    attributes = document["attributes"]
    assert (attributes["title"], attributes["file_name"], attributes["ocr_status"]) == (
        "invoice.png", "invoice.png", "succeeded")

    item.get_by_role("link", name="Open invoice.png").click()
    expect(page.get_by_role("heading", name="invoice.png", level=1)).to_be_visible()
    assert page.url.endswith(f"#/doc/{document['id']}")
    preview = page.get_by_role("img", name="Page 1 of invoice.png")
    expect(preview).to_have_attribute("aria-busy", "false")
    # Drawn from the server's JPEG as wide as it is shown (~250 px at 1280 × 800), rounded up.
    expect(preview).to_have_attribute("width", "480")
    expect(page.get_by_role("region", name="Text")).to_contain_text("Invoice 4711")
    session.screenshot("21-document.png")

    with page.expect_download() as original:
        page.get_by_role("button", name="Download", exact=True).click()
    assert original.value.suggested_filename == "invoice.png"
    assert original.value.path().read_bytes() == scan.read_bytes()
    with page.expect_download() as searchable:
        page.get_by_role("button", name="Download searchable PDF").click()
    assert searchable.value.suggested_filename == "invoice.pdf"
    assert searchable.value.path().read_bytes()[:5] == b"%PDF-"
    assert session.errors == [] and session.foreign == []


def test_search_as_you_type_and_open_the_hit(session, server, config, alice):
    invoices = make_folder(alice, "Invoices", alice.home_id)
    tagged = new_document(alice, "Electricity", invoices)
    # Markup in a document's text must come out as text, never as elements.
    upload_accepted(alice, tagged, "bill.txt",
                    samples.text("Stadtwerke electricity invoice <b>4711</b> & more\n"))
    other = new_document(alice, "Electric car", alice.home_id)
    upload_accepted(alice, other, "car.txt", samples.text("Stadtwerke charging station\n"))
    for document in (tagged, other):
        assert wait_processed(alice, document)[-1] == "succeeded"
    assert alice.patch(f"/api/nodes/{tagged}/tags/", {"tags": ["paid"]}, media=JSON).ok
    wait_indexed(config)

    page = log_in_home(session)
    search = page.get_by_role("searchbox", name="Search")
    search.press_sequentially("stadtw", delay=40)
    results = page.get_by_role("main").get_by_role("list").first
    expect(page.get_by_role("heading", name="Results for “stadtw”", level=1)).to_be_visible()
    expect(page.get_by_text("2 results")).to_be_visible()
    link = page.get_by_role("link", name="Electricity", exact=True)
    hit = page.locator(".result").filter(has=link)
    expect(hit.locator("mark")).to_have_text(["Stadtwerke"])
    expect(hit).to_contain_text("Stadtwerke electricity invoice <b>4711</b> & more")
    expect(results.locator("b")).to_have_count(0)
    expect(hit).to_contain_text("Home / Invoices")
    expect(search).to_be_focused()  # typing never lost the focus
    session.screenshot("22-search.png")

    # A tag filter narrows the results.
    page.get_by_role("group", name="Filter by tags").get_by_label("paid").check()
    expect(page.get_by_text("1 result", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Electric car")).to_have_count(0)
    assert "tags=paid" in page.url

    hit.get_by_role("link", name="Electricity", exact=True).click()
    expect(page.get_by_role("heading", name="Electricity", level=1)).to_be_visible()
    assert page.url.endswith(f"#/doc/{tagged}")
    searches = [url for url in session.requests if "/api/search/" in url]
    assert searches and all("q=" in url for url in searches)
    # Searching waits for a pause in the typing: fewer requests than keys.
    assert len([url for url in searches if "tags=" not in url]) < len("stadtw")
    assert session.errors == []


def test_add_create_and_remove_tags(session, server, alice):
    document = new_document(alice, "Water bill", alice.home_id)
    assert alice.post("/api/tags/", {"data": {"type": "tags",
                                              "attributes": {"name": "household"}}}).ok
    page = log_in_home(session, path=f"/#/doc/{document}")
    expect(page.get_by_role("heading", name="Water bill", level=1)).to_be_visible()
    tags = page.get_by_role("region", name="Tags")
    expect(tags.get_by_text("No tags.")).to_be_visible()

    tags.get_by_label("Add a tag").fill("household")
    tags.get_by_role("button", name="Add tag").click()
    expect(page.get_by_role("status")).to_have_text("Tag “household” added.")
    # A new name creates the tag.
    page.get_by_role("region", name="Tags").get_by_label("Add a tag").fill("2026")
    page.get_by_role("region", name="Tags").get_by_role("button", name="Add tag").click()
    expect(page.get_by_role("status")).to_have_text("Tag “2026” added.")
    expect(page.get_by_role("list", name="Tags").get_by_role("listitem")).to_have_text(
        ["2026×", "household×"])
    node = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
    assert [tag["name"] for tag in node["tags"]] == ["2026", "household"]
    names = sorted(tag["attributes"]["name"] for tag in alice.get("/api/tags/").json()["data"])
    assert names == ["2026", "household"]

    page.get_by_role("button", name="Remove tag household").click()
    expect(page.get_by_role("status")).to_have_text("Tag “household” removed.")
    expect(page.get_by_role("list", name="Tags").get_by_role("listitem")).to_have_text(["2026×"])
    node = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
    assert [tag["name"] for tag in node["tags"]] == ["2026"]
    assert session.errors == []


def test_restore_an_older_version(session, server, alice):
    document = new_document(alice, "Contract", alice.home_id)
    first, second = samples.text("first draft of the contract\n"), samples.text("signed copy\n")
    upload_accepted(alice, document, "draft.txt", first)
    wait_processed(alice, document)
    upload_accepted(alice, document, "signed.txt", second)
    wait_processed(alice, document)

    page = log_in_home(session, path=f"/#/doc/{document}")
    versions = page.get_by_role("region", name="Versions")
    expect(page.get_by_role("region", name="Text")).to_contain_text("signed copy")
    with page.expect_download() as download:
        versions.get_by_role("button", name="Download version 1").click()
    assert download.value.suggested_filename == "draft.txt"
    assert download.value.path().read_bytes() == first

    versions.get_by_role("button", name="Restore version 1").click()
    dialog = page.get_by_role("dialog", name="Restore version 1?")
    expect(dialog).to_contain_text("Its file becomes the newest version (3)")
    session.screenshot("23-restore-version.png")
    dialog.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_have_text("Version 1 restored as version 3.")
    expect(page.get_by_role("region", name="Text")).to_contain_text("first draft of the contract")
    expect(versions.get_by_role("button", name=re.compile("Restore version"))).to_have_count(2)

    attributes = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]
    assert [(v["number"], v["file_name"]) for v in attributes["versions"]] == [
        (1, "draft.txt"), (2, "signed.txt"), (3, "draft.txt")]
    assert alice.get(f"/api/documents/{document}/download/").content == first
    history = page.get_by_role("region", name="History")
    expect(history.get_by_role("listitem").first).to_contain_text(
        "Version 1 restored as version 3 — alice")
    assert session.errors == []
