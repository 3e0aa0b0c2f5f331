"""The web page's folders end to end, in Debian's headless Chromium, by accessible names as a new
user would: a new folder, a document moved into it by drag and drop (onto a row and onto the
tree), several selected and moved through the dialog, renamed from the keyboard; deleted, found
in the Trash, restored, deleted for good; the inbox count, paging and sorting. The browser and its
sessions: tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness.documents import make_folder, new_document
from tests.harness.webpage import log_in_home, sideways_scroll

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too


def children(client, folder_id: str) -> list[str]:
    response = client.get(f"/api/nodes/{folder_id}/?page[size]=100")
    assert response.status_code == 200, response.text
    return [node["attributes"]["title"] for node in response.json()["data"]]


def row(page, title: str):
    return page.get_by_role("row", name=re.compile(rf"\bSelect {re.escape(title)}\b"))


def test_create_a_folder_and_move_a_document_into_it_by_drag_and_drop(session, server, alice):
    new_document(alice, "Letter from the bank", alice.home_id)
    page = log_in_home(session)
    page.get_by_role("button", name="New folder").click()
    dialog = page.get_by_role("dialog", name="New folder")
    dialog.get_by_label("Folder name").fill("Taxes")
    dialog.get_by_role("button", name="Create").click()
    expect(page.get_by_role("status")).to_have_text("Folder “Taxes” created.")
    tree = page.get_by_role("navigation", name="Folders")
    expect(tree.get_by_role("link", name="Taxes")).to_be_visible()
    assert children(alice, alice.home_id) == ["Taxes", "Letter from the bank"]

    row(page, "Letter from the bank").drag_to(row(page, "Taxes"))
    expect(page.get_by_role("status")).to_have_text("Moved “Letter from the bank” to Taxes.")
    expect(row(page, "Letter from the bank")).to_have_count(0)
    [taxes] = [n for n in alice.get(f"/api/nodes/{alice.home_id}/").json()["data"]]
    assert children(alice, taxes["id"]) == ["Letter from the bank"]

    # And back, onto Home in the tree.
    tree.get_by_role("link", name="Taxes").click()
    expect(page.get_by_role("heading", name="Taxes", level=1)).to_be_visible()
    row(page, "Letter from the bank").drag_to(tree.get_by_role("link", name="Home"))
    expect(page.get_by_role("status")).to_have_text("Moved “Letter from the bank” to Home.")
    expect(page.get_by_text("This folder is empty.")).to_be_visible()
    assert children(alice, alice.home_id) == ["Taxes", "Letter from the bank"]
    assert session.errors == []


def test_select_several_move_them_by_dialog_and_rename_from_the_keyboard(session, server, alice):
    archive = make_folder(alice, "Archive", alice.home_id)
    for title in ("Gas 2024", "Gas 2025", "Water 2025"):
        new_document(alice, title, alice.home_id)
    page = log_in_home(session)
    expect(page.get_by_role("button", name="Move")).to_be_disabled()
    row(page, "Gas 2024").get_by_role("checkbox").check()
    row(page, "Gas 2025").get_by_role("checkbox").check()
    expect(page.get_by_text("2 selected")).to_be_visible()
    expect(page.get_by_role("button", name="Rename")).to_be_disabled()
    page.get_by_role("button", name="Move").click()
    dialog = page.get_by_role("dialog", name="Move 2 items")
    dialog.get_by_label("Filter folders").fill("arch")
    dialog.get_by_role("radio", name="Home / Archive").check()
    session.screenshot("30-move-dialog.png")
    dialog.get_by_role("button", name="Move here").click()
    expect(page.get_by_role("status")).to_have_text("Moved 2 items to Archive.")
    assert children(alice, archive) == ["Gas 2024", "Gas 2025"]
    assert children(alice, alice.home_id) == ["Archive", "Water 2025"]

    # F2 renames the selected row; Escape in the dialog changes nothing.
    row(page, "Water 2025").get_by_role("checkbox").check()
    page.keyboard.press("F2")
    dialog = page.get_by_role("dialog", name="Rename document")
    expect(dialog.get_by_label("New name")).to_have_value("Water 2025")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert children(alice, alice.home_id) == ["Archive", "Water 2025"]
    row(page, "Water 2025").get_by_role("checkbox").focus()
    page.keyboard.press("F2")
    rename = page.get_by_role("dialog", name="Rename document")
    rename.get_by_label("New name").fill("Water bill 2025")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Renamed to “Water bill 2025”.")
    assert children(alice, alice.home_id) == ["Archive", "Water bill 2025"]
    # A refused name: the API's sentence, nothing changed.
    row(page, "Water bill 2025").get_by_role("checkbox").check()
    page.get_by_role("button", name="Rename").click()
    page.get_by_role("dialog", name="Rename document").get_by_label("New name").fill("a/b")
    page.get_by_role("dialog", name="Rename document").get_by_role("button", name="Rename").click()
    expect(page.get_by_role("alert")).to_contain_text("/")
    assert children(alice, alice.home_id) == ["Archive", "Water bill 2025"]
    errors = [error for error in session.errors if "400" not in error]
    assert errors == []


def test_delete_find_it_in_the_trash_and_restore_it(session, server, alice):
    document = new_document(alice, "Old bill", alice.home_id)
    page = log_in_home(session)
    row(page, "Old bill").get_by_role("checkbox").check()
    page.keyboard.press("Delete")
    dialog = page.get_by_role("dialog", name="Delete “Old bill”?")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("“Old bill” moved to the Trash.")
    expect(row(page, "Old bill")).to_have_count(0)
    assert children(alice, alice.home_id) == []

    page.get_by_role("link", name="Trash").click()
    expect(page.get_by_role("heading", name="Trash", level=1)).to_be_visible()
    trashed = page.get_by_role("row", name=re.compile("Old bill"))
    expect(trashed).to_contain_text("Home")
    session.screenshot("31-trash.png")
    trashed.get_by_role("button", name="Restore Old bill").click()
    expect(page.get_by_role("status")).to_have_text("“Old bill” restored to Home.")
    expect(page.get_by_text("The trash is empty.")).to_be_visible()
    assert children(alice, alice.home_id) == ["Old bill"]

    # Deleted for good, and the trash emptied.
    assert alice.delete(f"/api/nodes/{document}/").status_code == 204
    other = new_document(alice, "Flyer", alice.home_id)
    assert alice.delete(f"/api/nodes/{other}/").status_code == 204
    page.reload()
    page.get_by_role("button", name="Delete for good: Old bill").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete for good").click()
    expect(page.get_by_role("status")).to_have_text("“Old bill” deleted for good.")
    assert alice.get(f"/api/nodes/{document}/history/").status_code == 404
    page.get_by_role("button", name="Empty trash").click()
    empty = page.get_by_role("dialog", name="Empty the trash?")
    empty.get_by_role("button", name="Empty trash").click()
    expect(page.get_by_role("status")).to_have_text("The trash is empty.")
    expect(page.get_by_role("button", name="Empty trash")).to_be_disabled()
    assert alice.get("/api/trash/").json()["meta"]["pagination"]["count"] == 0
    assert session.errors == []


def test_inbox_count_paging_and_sorting(session, server, alice):
    for title in ("Scan 1", "Scan 2", "Scan 3"):
        new_document(alice, title, alice.inbox_id)
    big = make_folder(alice, "Big", alice.home_id)
    for number in range(105):
        new_document(alice, f"Receipt {number:03}", big)
    page = log_in_home(session)
    tree = page.get_by_role("navigation", name="Folders")
    expect(tree.get_by_role("link", name="Inbox 3 waiting")).to_be_visible()

    tree.get_by_role("link", name="Big").click()
    expect(page.get_by_text("Page 1 of 2 (105 items)")).to_be_visible()
    expect(page.get_by_role("row")).to_have_count(101)  # the header and 100 rows
    page.get_by_role("button", name="Next page").click()
    expect(page.get_by_text("Page 2 of 2 (105 items)")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(5)
    expect(page.locator("tbody tr").first).to_contain_text("Receipt 100")
    assert "page=2" in page.url

    page.get_by_label("Sort by").select_option(label="Name, Z to A")
    expect(page.get_by_text("Page 1 of 2 (105 items)")).to_be_visible()
    expect(page.locator("tbody tr").first).to_contain_text("Receipt 104")
    assert "sort=-title" in page.url
    # Select everything on the page from the keyboard, and clear it again.
    page.get_by_role("heading", name="Big").focus()
    page.keyboard.press("a")
    expect(page.get_by_text("100 selected")).to_be_visible()
    expect(page.get_by_role("checkbox", name="Select all")).to_be_checked()
    page.keyboard.press("Escape")
    expect(page.get_by_text("100 selected")).to_have_count(0)
    assert session.errors == []


def test_a_long_title_in_the_trash_is_one_line_with_the_whole_title_as_its_tooltip(
        session, server, alice):
    """Issue 44: long titles wrapped to three lines in the trash's name column."""
    long_title = ("Kontoauszug Girokonto Sparkasse Musterstadt Januar bis Dezember 2025 mit "
                  "allen Anlagen und Belegen für die Steuererklärung.pdf")
    for title in (long_title, "Flyer"):
        node = new_document(alice, title, alice.home_id)
        assert alice.delete(f"/api/nodes/{node}/").status_code == 204
    page = log_in_home(session, path="/#/trash")
    expect(page.get_by_role("heading", name="Trash", level=1)).to_be_visible()
    name = page.get_by_role("row", name=re.compile("^Kontoauszug")).locator(".truncate")
    expect(name).to_have_text(long_title)  # whole in the page: read out whole
    expect(name).to_have_attribute("title", long_title)
    line = name.evaluate("n => parseFloat(getComputedStyle(n).lineHeight)")
    box = name.bounding_box()
    assert box is not None and box["height"] < 1.5 * line  # one line
    assert name.evaluate("n => n.scrollWidth > n.clientWidth")  # cut, with its ellipsis
    expect(name).to_have_css("text-overflow", "ellipsis")
    flyer = page.get_by_role("row", name=re.compile("Flyer")).locator(".truncate")
    assert not flyer.evaluate("n => n.scrollWidth > n.clientWidth")
    # The row's buttons stay whole on the screen.
    for button in page.get_by_role("button", name=re.compile("^(Restore|Delete for good)")).all():
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280
    session.screenshot("32-trash-long-title.png", full_page=False)
    # On a phone each row is a card: the name still one line, nothing scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    name = page.locator(".truncate", has_text="Kontoauszug")  # rows are no table rows there
    expect(name).to_be_visible()
    box = name.bounding_box()
    assert box is not None and box["height"] < 1.5 * line and box["x"] + box["width"] <= 390
    assert sideways_scroll(page) == 0
    session.screenshot("33-trash-long-title-phone.png", full_page=False)
    assert session.errors == []
