"""What a document is about on the web page, end to end in Debian's headless Chromium, by
accessible names as a new user would (docs/api.md, "What a document is about"): correspondents,
document types and custom fields made in Settings; a document's Details (correspondent, type,
date, serial number, an amount, a link to another document) saved in one go, checked through the
API, read back after a reload, the link shown on the other end too; a refused amount shown at its
input with nothing changed and nothing typed lost; notes added and deleted; a folder filtered by
correspondent and date and sorted by document date, kept in the address; the Details form by
keyboard; a phone's Details panel and folded filter bar; axe-core on all of it in light and dark
colours. Screenshots go to tests/screenshots/ (tests/harness/webpage.py). The browser and its
sessions: tests/e2e/conftest.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness.documents import make_folder, new_document
from tests.harness.waiting import wait_for
from tests.harness.webpage import (
    PHONE,
    REFUSED,
    Session,
    axe_violations,
    log_in_home,
    sideways_scroll,
    unnamed_controls,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

MONEY_SENTENCE = ("A value of the monetary field 'Amount' is an amount with at most two decimals, "
                  "after an optional currency code: EUR12.30, -5.00 or 7.5.")
ABOUT = ("correspondent", "document_type", "document_date", "archive_serial_number",
         "custom_fields", "notes_count")


def about(client, document_id: str) -> dict:
    response = client.get(f"/api/documents/{document_id}/")
    assert response.status_code == 200, response.text
    attributes = response.json()["data"]["attributes"]
    return {key: attributes[key] for key in ABOUT}


def listed(client, kind: str) -> dict[str, dict]:
    """The caller's correspondents, document-types or custom-fields by name: {name: resource}."""
    response = client.get(f"/api/{kind}/?page[size]=100")
    assert response.status_code == 200, response.text
    return {item["attributes"]["name"]: item for item in response.json()["data"]}


def created(client, kind: str, **attributes) -> str:
    response = client.post(f"/api/{kind}/", {"data": {"type": kind, "attributes": attributes}})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def patched(client, document_id: str, **attributes) -> None:
    response = client.patch(f"/api/documents/{document_id}/", {"data": {
        "type": "documents", "id": document_id, "attributes": attributes}})
    assert response.status_code == 200, response.text


def open_document(session: Session, document_id: str, title: str):
    page = log_in_home(session, path=f"/#/doc/{document_id}")
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible()
    return page, page.get_by_role("form", name="Details")


def open_settings(page, section: str):
    page.get_by_role("navigation", name="Folders").get_by_role("link", name="Settings").click()
    page.get_by_role("navigation", name="Settings").get_by_role("link", name=section).click()
    expect(page.get_by_role("heading", name=section, level=1)).to_be_visible()


def row(page, title: str):
    return page.get_by_role("row", name=re.compile(rf"\bSelect {re.escape(title)}\b"))


def test_made_in_settings_set_on_a_document_saved_and_linked_both_ways(session, server, alice):
    bill = new_document(alice, "Electricity bill", alice.home_id)
    contract = new_document(alice, "Supply contract", alice.home_id)
    page = log_in_home(session)

    open_settings(page, "Correspondents")
    expect(page.get_by_text("You have no correspondents yet.")).to_be_visible()
    page.get_by_role("button", name="Add correspondent").click()
    form = page.get_by_role("form", name="New correspondent")
    expect(form.get_by_label("Name")).to_be_focused()
    form.get_by_label("Name").fill("Stadtwerke")
    form.get_by_label("Matching").select_option(label="Any of the words")
    form.get_by_label("Words to find").fill("stadtwerke strom")
    form.get_by_role("button", name="Save correspondent").click()
    expect(page.get_by_role("status")).to_have_text("Correspondent added.")
    expect(page.get_by_role("row", name=re.compile("Stadtwerke"))).to_contain_text(
        "Any of the wordsstadtwerke strom0 documents")
    assert {key: value for key, value in listed(alice, "correspondents")["Stadtwerke"][
        "attributes"].items()} == {"name": "Stadtwerke", "match": "stadtwerke strom",
                                   "matching_algorithm": "any", "is_insensitive": True,
                                   "document_count": 0, "last_correspondence": None}

    open_settings(page, "Document types")
    page.get_by_role("button", name="Add document type").click()
    form = page.get_by_role("form", name="New document type")
    form.get_by_label("Name").fill("Bill")
    form.get_by_role("checkbox", name="Ignore case").uncheck()
    form.get_by_role("button", name="Save document type").click()
    expect(page.get_by_role("status")).to_have_text("Document type added.")
    assert listed(alice, "document-types")["Bill"]["attributes"]["is_insensitive"] is False

    open_settings(page, "Custom fields")
    page.get_by_role("button", name="Add custom field").click()
    form = page.get_by_role("form", name="New custom field")
    expect(form.get_by_label("Default currency")).to_be_hidden()
    form.get_by_label("Name").fill("Amount")
    form.get_by_label("Type").select_option(label="Amount of money")
    form.get_by_label("Default currency").fill("eur")
    form.get_by_role("button", name="Save custom field").click()
    expect(page.get_by_role("status")).to_have_text("Custom field added.")
    page.get_by_role("button", name="Add custom field").click()
    form = page.get_by_role("form", name="New custom field")
    form.get_by_label("Name").fill("Related")
    form.get_by_label("Type").select_option(label="Links to documents")
    form.get_by_role("button", name="Save custom field").click()
    expect(page.get_by_role("status")).to_have_text("Custom field added.")
    fields = listed(alice, "custom-fields")
    assert {name: (field["attributes"]["data_type"], field["attributes"]["extra_data"])
            for name, field in fields.items()} == {
        "Amount": ("monetary", {"default_currency": "EUR"}), "Related": ("documentlink", {})}
    # The type is fixed once the field exists.
    page.get_by_role("button", name="Edit: Amount").click()
    expect(page.get_by_role("form", name="Edit custom field").get_by_label("Type")).to_be_disabled()
    session.screenshot("60-desktop-settings-fields.png")
    page.get_by_role("button", name="Cancel").click()

    # The document's Details: every part set, one Save.
    page.goto(f"{server.url}/#/doc/{bill}")
    expect(page.get_by_role("heading", name="Electricity bill", level=1)).to_be_visible()
    details = page.get_by_role("form", name="Details")
    details.get_by_label("Correspondent").select_option(label="Stadtwerke")
    details.get_by_label("Document type").select_option(label="Bill")
    details.get_by_label("Document date").fill("2024-03-12")
    details.get_by_label("Serial number").fill("17")
    details.get_by_label("Add a custom field").select_option(label="Amount")
    details.get_by_role("button", name="Add field").click()
    amount = details.get_by_label("Amount", exact=True)
    expect(amount).to_be_focused()
    expect(details.get_by_label("Amount: currency")).to_have_value("EUR")  # the field's default
    amount.fill("12.30")
    expect(details.get_by_label("Add a custom field")).to_have_value(fields["Related"]["id"])
    details.get_by_role("button", name="Add field").click()
    expect(details.get_by_label("Add a custom field")).to_be_hidden()  # every field is on it
    details.get_by_role("button", name="Link a document…").click()
    picker = page.get_by_role("dialog", name="Link a document: Related")
    # The folder's other documents are offered; the document itself is not.
    expect(picker.get_by_role("radio")).to_have_count(1)
    picker.get_by_role("radio", name="Supply contract").check()
    picker.get_by_role("button", name="Link").click()
    links = details.get_by_role("list", name="Related")
    expect(links.get_by_role("link", name="Supply contract")).to_have_attribute(
        "href", f"#/doc/{contract}")
    session.screenshot("60-desktop-details-filled.png")
    details.get_by_role("button", name="Save details").click()
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    expect(page.get_by_role("button", name="Save details")).to_be_focused()

    ids = {"Stadtwerke": listed(alice, "correspondents")["Stadtwerke"]["id"],
           "Bill": listed(alice, "document-types")["Bill"]["id"]}
    assert about(alice, bill) == {
        "correspondent": ids["Stadtwerke"], "document_type": ids["Bill"],
        "document_date": "2024-03-12", "archive_serial_number": 17,
        "custom_fields": [{"field": fields["Amount"]["id"], "value": "EUR12.30"},
                          {"field": fields["Related"]["id"], "value": [contract]}],
        "notes_count": 0}

    # Read back after a reload.
    page.reload()
    details = page.get_by_role("form", name="Details")
    expect(details.get_by_label("Correspondent")).to_have_value(ids["Stadtwerke"])
    expect(details.get_by_label("Correspondent").locator("option:checked")).to_have_text(
        "Stadtwerke")
    expect(details.get_by_label("Document type")).to_have_value(ids["Bill"])
    expect(details.get_by_label("Document date")).to_have_value("2024-03-12")
    expect(details.get_by_label("Serial number")).to_have_value("17")
    expect(details.get_by_label("Amount: currency")).to_have_value("EUR")
    expect(details.get_by_label("Amount", exact=True)).to_have_value("12.30")
    expect(details.get_by_role("list", name="Related").get_by_role("link")).to_have_text(
        ["Supply contract"])
    expect(page.get_by_role("region", name="History").get_by_role("listitem").first) \
        .to_contain_text("Details changed")
    session.screenshot("60-desktop-details.png")

    # The other end shows the link back.
    details.get_by_role("link", name="Supply contract").click()
    expect(page.get_by_role("heading", name="Supply contract", level=1)).to_be_visible()
    back = page.get_by_role("form", name="Details").get_by_role("list", name="Related")
    expect(back.get_by_role("link")).to_have_text(["Electricity bill"])
    expect(back.get_by_role("link", name="Electricity bill")).to_have_attribute(
        "href", f"#/doc/{bill}")
    assert about(alice, contract)["custom_fields"] == [
        {"field": fields["Related"]["id"], "value": [bill]}]

    # Settings counts the documents, and the count opens them.
    open_settings(page, "Correspondents")
    expect(page.get_by_role("row", name=re.compile("Stadtwerke"))).to_contain_text(
        "1 document")
    expect(page.get_by_role("link", name="1 document: Stadtwerke")).to_have_attribute(
        "href", f"#/search?correspondent={ids['Stadtwerke']}")
    assert session.errors == [] and session.foreign == []


def test_a_refused_amount_is_shown_at_its_input_and_changes_nothing(session, server, alice):
    amount_id = created(alice, "custom-fields", name="Amount", data_type="monetary",
                        extra_data={"default_currency": "EUR"})
    # By name the account number comes first: the amount's pointer names the second element.
    number_id = created(alice, "custom-fields", name="Account number", data_type="string")
    bill = new_document(alice, "Water bill", alice.home_id)
    patched(alice, bill, archive_serial_number=3, custom_fields=[
        {"field": number_id, "value": "K-4711"}, {"field": amount_id, "value": "EUR20.00"}])
    before = about(alice, bill)
    page, details = open_document(session, bill, "Water bill")
    expect(details.get_by_label("Account number", exact=True)).to_have_value("K-4711")

    details.get_by_label("Serial number").fill("5")
    details.get_by_label("Account number", exact=True).fill("K-4712")
    amount = details.get_by_label("Amount", exact=True)
    amount.fill("12.345")
    amount.press("Enter")  # Enter in a field saves the form
    expect(amount).to_have_attribute("aria-invalid", "true")
    expect(amount).to_be_focused()
    expect(amount).to_have_accessible_description(re.compile("^" + re.escape(MONEY_SENTENCE)))
    expect(details.get_by_text(MONEY_SENTENCE)).to_be_visible()
    session.screenshot("61-desktop-details-refused.png")
    assert about(alice, bill) == before
    assert alice.get(f"/api/documents/{bill}/").json()["data"]["attributes"]["title"] \
        == "Water bill"
    # Nothing typed is lost.
    expect(details.get_by_label("Serial number")).to_have_value("5")
    expect(details.get_by_label("Account number", exact=True)).to_have_value("K-4712")
    expect(amount).to_have_value("12.345")

    # Mended, saved; the sentence goes.
    amount.fill("12.34")
    details.get_by_role("button", name="Save details").click()
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    assert about(alice, bill) == {**before, "archive_serial_number": 5, "custom_fields": [
        {"field": number_id, "value": "K-4712"}, {"field": amount_id, "value": "EUR12.34"}]}
    expect(page.get_by_text(MONEY_SENTENCE)).to_have_count(0)

    # A field taken off the document goes with the next Save.
    details = page.get_by_role("form", name="Details")
    details.get_by_role("button", name="Remove field Account number").click()
    expect(details.get_by_label("Add a custom field")).to_be_focused()
    details.get_by_role("button", name="Save details").click()
    # The status already says "Details saved." from the save before: the server is asked.
    wait_for(lambda: about(alice, bill)["custom_fields"] == [
        {"field": amount_id, "value": "EUR12.34"}])
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    assert session.errors == [REFUSED]


def test_details_typed_and_not_saved_outlive_a_redraw_of_the_view(session, server, alice):
    """The document's view is drawn again (a tag added here) while its Details hold values not
    saved yet: they stay, and a field not touched here shows what the server holds now (a
    script set it meanwhile). Save sends them all; after it nothing is carried over."""
    invoice = created(alice, "document-types", name="Invoice")
    reference = created(alice, "custom-fields", name="Reference", data_type="string")
    bill = new_document(alice, "Gas bill", alice.home_id)
    before = about(alice, bill)  # its date: the upload day
    page, details = open_document(session, bill, "Gas bill")
    details.get_by_label("Document date").fill("2026-03-14")
    details.get_by_label("Serial number").fill("77")
    details.get_by_label("Add a custom field").select_option(label="Reference")
    details.get_by_role("button", name="Add field").click()
    details.get_by_label("Reference", exact=True).fill("R-1")
    patched(alice, bill, document_type=invoice)  # meanwhile, from a script

    page.get_by_label("Add a tag").fill("energy")
    page.get_by_role("button", name="Add tag").click()
    expect(page.get_by_role("status")).to_have_text("Tag \u201cenergy\u201d added.")
    details = page.get_by_role("form", name="Details")
    expect(details.get_by_label("Document date")).to_have_value("2026-03-14")
    expect(details.get_by_label("Serial number")).to_have_value("77")
    expect(details.get_by_label("Reference", exact=True)).to_have_value("R-1")
    expect(details.get_by_label("Document type")).to_have_value(invoice)
    assert about(alice, bill) == {**before, "document_type": invoice}  # nothing saved yet

    details.get_by_role("button", name="Save details").click()
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    assert about(alice, bill) == {**before, "document_type": invoice,
                                  "document_date": "2026-03-14", "archive_serial_number": 77,
                                  "custom_fields": [{"field": reference, "value": "R-1"}]}
    # Saved: a redraw shows the server's values, here changed again by the script.
    patched(alice, bill, archive_serial_number=78)
    page.get_by_label("Add a tag").fill("bills")
    page.get_by_role("button", name="Add tag").click()
    expect(page.get_by_role("status")).to_have_text("Tag \u201cbills\u201d added.")
    details = page.get_by_role("form", name="Details")
    expect(details.get_by_label("Serial number")).to_have_value("78")
    assert session.errors == []


def test_add_and_delete_notes(session, server, alice):
    bill = new_document(alice, "Phone bill", alice.home_id)
    page, details = open_document(session, bill, "Phone bill")
    notes = page.get_by_role("region", name="Notes")
    expect(notes.get_by_text("No notes.")).to_be_visible()
    # Something typed in the Details stays while notes come and go.
    details.get_by_label("Serial number").fill("99")

    notes.get_by_label("Add a note").fill("Called them on Monday.\nA new bill is on its way.")
    notes.get_by_role("button", name="Add note").click()
    expect(page.get_by_role("status")).to_have_text("Note added.")
    expect(notes.get_by_label("Add a note")).to_have_value("")
    expect(notes.get_by_label("Add a note")).to_be_focused()
    notes.get_by_label("Add a note").fill("The new bill came.")
    notes.get_by_role("button", name="Add note").click()
    items = notes.get_by_role("list", name="Notes, newest first").get_by_role("listitem")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("The new bill came.")
    expect(items.first).to_contain_text("alice · ")
    expect(items.nth(1)).to_contain_text("Called them on Monday.")
    listed_notes = alice.get(f"/api/documents/{bill}/notes/").json()["data"]
    assert [note["attributes"]["note"] for note in listed_notes] == [
        "The new bill came.", "Called them on Monday.\nA new bill is on its way."]
    notes.scroll_into_view_if_needed()
    session.screenshot("62-desktop-notes.png", full_page=False)

    items.nth(1).get_by_role("button", name=re.compile("^Delete note of ")).click()
    dialog = page.get_by_role("dialog", name="Delete note?")
    expect(dialog).to_contain_text("“Called them on Monday.")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("Note deleted.")
    expect(items).to_have_count(1)
    listed_notes = alice.get(f"/api/documents/{bill}/notes/").json()["data"]
    assert [note["attributes"]["note"] for note in listed_notes] == ["The new bill came."]
    assert about(alice, bill)["notes_count"] == 1
    expect(details.get_by_label("Serial number")).to_have_value("99")
    assert session.errors == []


def furnish(alice) -> dict[str, str]:
    """A folder of bills from two senders and one from nobody known, each with its date."""
    ids = {"Stadtwerke": created(alice, "correspondents", name="Stadtwerke"),
           "Telekom": created(alice, "correspondents", name="Telekom"),
           "Bill": created(alice, "document-types", name="Bill"),
           "Bills": make_folder(alice, "Bills", alice.home_id)}
    for title, sender, day in (("Electricity January", "Stadtwerke", "2024-01-10"),
                               ("Phone March", "Telekom", "2024-03-01"),
                               ("Flyer December", None, "2023-12-01")):
        ids[title] = new_document(alice, title, ids["Bills"])
        patched(alice, ids[title], document_date=day, correspondent=ids.get(sender),
                document_type=ids["Bill"] if sender else None)
    return ids


def test_filter_a_folder_by_correspondent_and_date_and_sort_it(session, server, alice):
    ids = furnish(alice)
    page = log_in_home(session, path=f"/#/folder/{ids['Bills']}")
    expect(page.get_by_role("heading", name="Bills", level=1)).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(3)
    # Rows show who sent it, what it is and its date.
    expect(row(page, "Electricity January")).to_contain_text("StadtwerkeBill")
    expect(row(page, "Electricity January").locator(".col-meta time")).to_have_attribute(
        "datetime", "2024-01-10")

    bar = page.get_by_role("form", name="Filters")
    bar.get_by_label("Correspondent").select_option(label="Stadtwerke")
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(row(page, "Electricity January")).to_be_visible()
    assert f"correspondent={ids['Stadtwerke']}" in page.url
    expect(bar.get_by_label("Correspondent")).to_be_focused()  # a keyboard user stays there
    session.screenshot("63-desktop-folder-filtered.png")
    # The address keeps it: a reload shows the same.
    page.reload()
    bar = page.get_by_role("form", name="Filters")
    expect(bar.get_by_label("Correspondent")).to_have_value(ids["Stadtwerke"])
    expect(page.locator("tbody tr")).to_have_count(1)

    bar.get_by_label("Correspondent").select_option(label="None")
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(row(page, "Flyer December")).to_be_visible()
    page.get_by_role("button", name="Clear filters").click()
    expect(page.locator("tbody tr")).to_have_count(3)
    assert "correspondent" not in page.url

    # A date range: from the first of January, on Enter.
    dated = page.get_by_role("form", name="Filters").get_by_label("Dated from")
    dated.fill("2024-01-01")
    dated.press("Enter")
    expect(page.locator("tbody tr")).to_have_count(2)
    assert "document_date_after=2024-01-01" in page.url
    page.get_by_label("Sort by").select_option(label="Document date, newest first")
    expect(page.locator("tbody tr .node-link")).to_have_text(["Phone March", "Electricity January"])
    page.get_by_label("Sort by").select_option(label="Document date, oldest first")
    expect(page.locator("tbody tr .node-link")).to_have_text(["Electricity January", "Phone March"])
    assert "sort=document_date" in page.url and "document_date_after=2024-01-01" in page.url
    page.reload()
    expect(page.locator("tbody tr .node-link")).to_have_text(["Electricity January", "Phone March"])

    # A search by correspondent, from its count in Settings.
    page.goto(f"{server.url}/#/settings/correspondents")
    page.get_by_role("link", name="1 document: Telekom").click()
    expect(page.get_by_role("form", name="Filters").get_by_label("Correspondent")).to_have_value(
        ids["Telekom"])
    results = page.get_by_role("main").locator(".result")
    expect(results).to_have_count(1)
    expect(results.get_by_role("link")).to_have_text(["Phone March"])
    assert session.errors == []


def test_the_details_form_by_keyboard(session, server, alice):
    ids = furnish(alice)
    document = ids["Flyer December"]
    created(alice, "custom-fields", name="Paid", data_type="boolean")
    page = log_in_home(session, path=f"/#/doc/{document}")
    heading = page.get_by_role("heading", name="Flyer December", level=1)
    expect(heading).to_be_focused()
    details = page.get_by_role("form", name="Details")
    correspondent = details.get_by_label("Correspondent")
    for _ in range(10):  # the toolbar's buttons come first
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "details-correspondent":
            break
    expect(correspondent).to_be_focused()
    page.keyboard.press("ArrowDown")  # — → Stadtwerke
    expect(correspondent).to_have_value(ids["Stadtwerke"])
    page.keyboard.press("Tab")
    expect(details.get_by_label("Document type")).to_be_focused()
    page.keyboard.press("Tab")
    expect(details.get_by_label("Document date")).to_be_focused()
    page.keyboard.type("02292024")  # month, day, year: each part moves on to the next
    for _ in range(2):  # past the date's calendar button
        page.keyboard.press("Tab")
    expect(details.get_by_label("Serial number")).to_be_focused()
    page.keyboard.type("42")
    page.keyboard.press("Tab")
    expect(details.get_by_label("Add a custom field")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Add field: the new box has the focus
    paid = details.get_by_role("checkbox", name="Paid")
    expect(paid).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Shift+Tab")  # the new field comes right after the serial number
    expect(details.get_by_label("Serial number")).to_be_focused()
    page.keyboard.press("Enter")  # saves
    expect(page.get_by_role("status")).to_have_text("Details saved.")
    expect(details.get_by_role("button", name="Save details")).to_be_focused()
    paid_id = listed(alice, "custom-fields")["Paid"]["id"]
    assert about(alice, document) == {
        "correspondent": ids["Stadtwerke"], "document_type": None, "document_date": "2024-02-29",
        "archive_serial_number": 42, "custom_fields": [{"field": paid_id, "value": True}],
        "notes_count": 0}
    assert session.errors == []


def test_the_details_panel_and_the_filter_bar_on_a_phone(browser, server, alice):
    ids = furnish(alice)
    amount = created(alice, "custom-fields", name="Amount to pay by the end of the month",
                     data_type="monetary", extra_data={"default_currency": "EUR"})
    patched(alice, ids["Phone March"], custom_fields=[{"field": amount, "value": "EUR39.99"}])
    session = Session(browser, server.url, **PHONE)
    try:
        page = log_in_home(session, path=f"/#/folder/{ids['Bills']}")
        expect(page.get_by_role("heading", name="Bills", level=1)).to_be_visible()
        bar = page.get_by_role("form", name="Filters")
        toggle = bar.get_by_role("button", name="Filters")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(bar.get_by_label("Correspondent")).to_be_hidden()  # folded away
        session.screenshot("64-phone-folder.png")
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        bar.get_by_label("Correspondent").select_option(label="Telekom")
        expect(page.locator("tbody tr")).to_have_count(1)
        bar = page.get_by_role("form", name="Filters")
        expect(bar.get_by_role("button", name="Filters (1 on)")).to_have_attribute(
            "aria-expanded", "true")  # open while a filter is on
        expect(row(page, "Phone March")).to_be_visible()
        assert sideways_scroll(page) == 0
        session.screenshot("64-phone-folder-filtered.png")

        row(page, "Phone March").get_by_role("link", name="Phone March").click()
        expect(page.get_by_role("heading", name="Phone March", level=1)).to_be_visible()
        details = page.get_by_role("form", name="Details")
        details.scroll_into_view_if_needed()
        amount_input = details.get_by_label("Amount to pay by the end of the month", exact=True)
        expect(amount_input).to_have_value("39.99")
        box = amount_input.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        amount_input.fill("41.50")
        details.get_by_label("Document type").select_option(label="—")
        details.get_by_role("button", name="Save details").click()
        expect(page.get_by_role("status")).to_have_text("Details saved.")
        assert sideways_scroll(page) == 0
        saved = about(alice, ids["Phone March"])
        assert (saved["document_type"], saved["custom_fields"]) == (
            None, [{"field": amount, "value": "EUR41.50"}])
        page.get_by_role("form", name="Details").scroll_into_view_if_needed()
        session.screenshot("64-phone-details.png", full_page=False)
        session.screenshot("64-phone-document.png")
        page.goto(f"{server.url}/#/settings/custom-fields")
        page.get_by_role("button", name="Add custom field").click()
        form = page.get_by_role("form", name="New custom field")
        form.get_by_label("Type").select_option(label="Choice from a list")
        form.get_by_role("button", name="Add option").click()
        assert sideways_scroll(page) == 0
        session.screenshot("64-phone-settings-fields.png")
        assert session.errors == []
    finally:
        session.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_metadata_views_pass_axe_and_name_every_control(browser, server, alice, scheme):
    ids = furnish(alice)
    link = created(alice, "custom-fields", name="Related", data_type="documentlink")
    status = created(alice, "custom-fields", name="Status", data_type="select", extra_data={
        "select_options": [{"label": "Open"}, {"label": "Paid"}]})
    note = created(alice, "custom-fields", name="Remarks", data_type="longtext")
    patched(alice, ids["Phone March"], archive_serial_number=8, custom_fields=[
        {"field": link, "value": [ids["Flyer December"]]}, {"field": status, "value": None},
        {"field": note, "value": "Two lines\nof text"}])
    assert alice.post(f"/api/documents/{ids['Phone March']}/notes/",
                      {"data": {"attributes": {"note": "Paid on the 3rd."}}}).status_code == 201
    # bypass_csp only here: axe is injected into the page, which its CSP would refuse.
    session = Session(browser, server.url, bypass_csp=True, color_scheme=scheme)
    try:
        found = {}
        page = log_in_home(session, path=f"/#/doc/{ids['Phone March']}")
        expect(page.get_by_role("form", name="Details").get_by_role("link")).to_have_text(
            ["Flyer December"])
        found["document"] = axe_violations(page)
        assert unnamed_controls(page) == []
        page.goto(f"{server.url}/#/folder/{ids['Bills']}?correspondent={ids['Telekom']}")
        expect(page.locator("tbody tr")).to_have_count(1)
        found["folder"] = axe_violations(page)
        assert unnamed_controls(page) == []
        for section, heading in (("correspondents", "Correspondents"),
                                 ("document-types", "Document types"),
                                 ("custom-fields", "Custom fields")):
            page.goto(f"{server.url}/#/settings/{section}")
            # The section's own heading: the one before stays until this one is read.
            expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
            expect(page.get_by_role("table")).to_be_visible()
            page.get_by_role("button", name=re.compile("^Add ")).click()
            expect(page.get_by_role("form", name=re.compile("^New "))).to_be_visible()
            found[section] = axe_violations(page)
            assert unnamed_controls(page) == []
        page.get_by_role("button", name="Edit: Status").click()
        expect(page.get_by_role("form", name="Edit custom field").get_by_label(
            "Option 2", exact=True)).to_have_value("Paid")
        found["options"] = axe_violations(page)
        assert unnamed_controls(page) == []
        if scheme == "dark":
            session.screenshot("65-dark-settings-options.png")
        assert {name: violations for name, violations in found.items() if violations} == {}
        assert session.errors == [] and session.foreign == []
    finally:
        session.close()
