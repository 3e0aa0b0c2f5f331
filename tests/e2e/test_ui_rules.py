"""Settings › Rules end to end, in Debian's headless Chromium, by accessible names as a new user
would (docs/api.md, "Rules"): a rule made in the dialog (a word of a processed document, a tag,
a folder from the folder picker), its dry run listing that document with what it would get, applied
and its counts followed, the document then filed (checked through the API); a refusal shown next to
the field its pointer names, with nothing created; a rule edited, applied from its card, deleted; a
rule dms disabled saying why, enabled again with another folder; Escape; a session that ends under
the dialog; axe-core on the list and the dialogs in light and dark colours, nothing unnamed, nothing
sideways on a phone, and screenshots for a human to look at. What a rule sets of a document's
metadata (correspondent, type, a custom field's value in that field's input, the date read from
the text) chosen in the dialog, shown on the card and in the dialog again, a refused value shown
beside its input. The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness import samples
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.rules import add_rule, filed, rule_body
from tests.harness.waiting import wait_processed
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

# A run goes through the documents in the background; on a busy machine it may take a while.
RUN_MS = 60_000
# What the browser's console says of each refused request (the page shows the API's sentence).
ELECTRICITY = "Electricity bills from the municipal utility"  # a rule's name that wraps

# A rule that sets nothing of a document's metadata (api.md §16): the dialog sends them so.
NO_METADATA = {"set_correspondent": None, "set_document_type": None, "set_custom_field": None,
               "set_document_date_from_text": False}


def rules_of(client) -> list[dict]:
    response = client.get("/api/rules/")
    assert response.status_code == 200, response.text
    return response.json()["data"]


def processed_document(client, title: str, parent: str, text: str) -> str:
    document = new_document(client, title, parent)
    upload_accepted(client, document, f"{title}.pdf", samples.pdf([text]))
    assert wait_processed(client, document)[-1] == "succeeded"
    return document


def open_rules(session: Session):
    page = log_in_home(session)
    session.menu("Rules")
    expect(page.get_by_role("heading", name="Rules", level=1)).to_be_visible()
    return page


def new_rule_dialog(page):
    page.get_by_role("button", name="New rule").click()
    return page.get_by_role("dialog", name="New rule")


def test_create_try_and_apply_a_rule(session, server, alice):
    bills = make_folder(alice, "Bills", alice.home_id)
    scan = processed_document(alice, "Scan 0815", alice.inbox_id,
                              "Stadtwerke electricity invoice 4711")
    other = processed_document(alice, "Shopping list", alice.inbox_id, "Milk bread cheese")
    page = open_rules(session)
    expect(page.get_by_text("You have no rules yet.")).to_be_visible()
    expect(page.get_by_role("link", name="Inbox 2 waiting")).to_be_visible()

    dialog = new_rule_dialog(page)
    expect(dialog.get_by_label("Name", exact=True)).to_be_focused()
    expect(dialog.get_by_text(re.compile("^You have no"))).to_have_text(
        "You have no correspondents, document types and custom fields yet: make them in Settings.")
    dialog.get_by_label("Name", exact=True).fill("Electricity")
    dialog.get_by_label("Look in").select_option(label="Any field")
    expect(dialog.get_by_label("How")).to_have_value("any")
    dialog.get_by_label("Pattern").fill("electricity")
    dialog.get_by_label("Add tags").fill("energy")
    dialog.get_by_role("button", name="Add tag").click()
    expect(dialog.get_by_role("button", name="Remove tag energy")).to_be_visible()
    expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text(
        "It stays where it is.")
    dialog.get_by_role("button", name="Choose folder…").click()
    picker = page.get_by_role("dialog", name="Move matched documents to")
    picker.get_by_role("radio", name="Home / Bills").check()
    picker.get_by_role("button", name="Choose").click()
    expect(picker).to_have_count(0)
    expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text("Home / Bills")
    expect(dialog.get_by_role("button", name="Choose folder…")).to_be_focused()
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Electricity” created.")
    expect(dialog).to_have_count(0)

    [rule] = rules_of(alice)
    attributes = rule["attributes"]
    assert {key: attributes[key] for key in ("name", "enabled", "order", "match", "sources",
                                             "actions", "last_error")} == {
        "name": "Electricity", "enabled": True, "order": 0,
        "match": {"field": "any", "algorithm": "any", "pattern": "electricity",
                  "case_sensitive": False},
        "sources": ["api", "import", "consume", "mail"],
        "actions": {"add_tags": ["energy"], "move_to": bills, "set_title": None, "stop": False,
                    **NO_METADATA},
        "last_error": None}
    card = page.get_by_role("article", name="Electricity")
    expect(card).to_contain_text(
        "EnabledOrder0MatchesAny field has one of the words electricity"
        "Looks atAll new documentsDoesAdd tags: energyMove to: Home / Bills")

    # The dry run: the scan, with the tag and the folder it would get; nothing changes.
    card.get_by_role("button", name="Try it: Electricity").click()
    trial = page.get_by_role("dialog", name="Try “Electricity”")
    expect(trial).to_contain_text("It matches 1 document. All 2 documents whose reading has ended "
                                  "were looked at.")
    matched = trial.get_by_role("list", name="Matched documents")
    expect(matched.get_by_role("link")).to_have_text(["Scan 0815"])
    expect(trial.get_by_role("list", name="Changes to Scan 0815").get_by_role("listitem")) \
        .to_have_text(["Tags to add: energy", "Move to: Bills"])
    expect(trial).to_contain_text("Found in the text: “electricity”")
    assert filed(alice, scan) == ("Scan 0815", alice.inbox_id, [])

    # Applied: the counts are followed to the end, and the document is filed.
    trial.get_by_role("button", name="Apply to existing documents").click()
    expect(trial).to_have_count(0)
    expect(page.get_by_role("status").first).to_have_text(
        "“Electricity” applied: 1 matched, 1 changed.", timeout=RUN_MS)
    expect(card.get_by_text(re.compile("^Applied to existing"))).to_have_text(
        "Applied to existing documents: 2 documents looked at, 1 matched, 1 changed.")
    # The tree shows the document gone from the inbox.
    tree = page.get_by_role("navigation", name="Folders")
    expect(tree.get_by_role("link", name="Inbox 1 waiting")).to_be_visible()
    session.screenshot("50-desktop-rule-applied.png")
    assert filed(alice, scan) == ("Scan 0815", bills, ["energy"])
    assert filed(alice, other) == ("Shopping list", alice.inbox_id, [])
    assert session.errors == [] and session.foreign == []


def test_a_refusal_is_shown_next_to_its_field_and_creates_nothing(session, server, alice):
    # The sentence the API gives for this pattern, and its pointer.
    refused = alice.post("/api/rules/", rule_body("Broken", "INV-(\\d+", algorithm="regex",
                                                  actions={"add_tags": ["invoice"]}))
    assert refused.status_code == 400, refused.text
    [error] = refused.json()["errors"]
    assert error["source"] == {"pointer": "/data/attributes/match/pattern"}
    assert error["detail"].startswith("The regular expression is not valid for RE2: ")
    page = open_rules(session)
    dialog = new_rule_dialog(page)
    dialog.get_by_label("Name", exact=True).fill("Broken")
    dialog.get_by_label("How").select_option("regex")
    dialog.get_by_label("Add tags").fill("invoice")
    pattern = dialog.get_by_label("Pattern")
    pattern.fill("INV-(\\d+")
    pattern.press("Enter")  # Enter in a field saves the rule
    expect(pattern).to_have_attribute("aria-invalid", "true")
    expect(pattern).to_be_focused()
    expect(pattern).to_have_accessible_description(re.compile("^" + re.escape(error["detail"])))
    expect(dialog.get_by_text(error["detail"])).to_be_visible()
    assert rules_of(alice) == []

    # A title template the API refuses: beside the title field; the pattern's error is gone.
    pattern.fill("INV-(\\d+)")
    title = dialog.get_by_label("New title")
    title.fill("Invoice {number}")
    dialog.get_by_role("button", name="Save rule").click()
    expect(title).to_have_attribute("aria-invalid", "true")
    expect(title).to_be_focused()
    expect(pattern).not_to_have_attribute("aria-invalid", "true")
    template_error = alice.post("/api/rules/", rule_body(
        "Broken", "INV-(\\d+)", algorithm="regex",
        actions={"add_tags": ["invoice"], "set_title": "Invoice {number}"})).json()["errors"][0]
    assert template_error["source"] == {"pointer": "/data/attributes/actions/set_title"}
    expect(title).to_have_accessible_description(
        re.compile("^" + re.escape(template_error["detail"])))
    assert rules_of(alice) == []

    # No source at all: the sentence is beside the sources.
    title.fill("Invoice {match}")
    for source in ("Uploads", "dms import", "The consume folder", "Mail attachments"):
        dialog.get_by_role("checkbox", name=source).uncheck()
    dialog.get_by_role("button", name="Save rule").click()
    uploads = dialog.get_by_role("checkbox", name="Uploads")
    expect(uploads).to_be_focused()
    expect(uploads).to_have_accessible_description(
        "`sources` must be a list of one or more of api, import, consume, mail.")
    assert rules_of(alice) == []

    dialog.get_by_role("checkbox", name="Mail attachments").check()
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Broken” created.")
    [rule] = rules_of(alice)
    assert (rule["attributes"]["match"], rule["attributes"]["sources"],
            rule["attributes"]["actions"]) == (
        {"field": "text", "algorithm": "regex", "pattern": "INV-(\\d+)", "case_sensitive": False},
        ["mail"],
        {"add_tags": ["invoice"], "move_to": None, "set_title": "Invoice {match}", "stop": False,
         **NO_METADATA})
    assert session.errors == [REFUSED] * 3


def test_edit_apply_and_delete_a_rule_and_escape_closes_the_dialog(session, server, alice):
    letters = make_folder(alice, "Letters", alice.home_id)
    add_rule(alice, "Insurance", "Allianz Versicherung", algorithm="fuzzy", order=5,
             sources=["api", "mail"], actions={"add_tags": ["insurance", "paper"],
                                               "move_to": letters, "stop": True})
    page = open_rules(session)
    card = page.get_by_role("article", name="Insurance")
    expect(card).to_contain_text("Order5MatchesThe text has words close to Allianz Versicherung"
                                 "Looks atUploads, Mail attachmentsDoesAdd tags: insurance, paper"
                                 "Move to: Home / LettersStop: later rules leave it alone")

    # Escape closes the dialog, nothing is saved, the focus is back on the button.
    new = page.get_by_role("button", name="New rule")
    new.click()
    expect(page.get_by_role("dialog", name="New rule")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(new).to_be_focused()
    assert [rule["attributes"]["name"] for rule in rules_of(alice)] == ["Insurance"]

    # Applied from the card, after a confirmation: nothing to file.
    card.get_by_role("button", name="Apply to existing documents: Insurance").click()
    page.get_by_role("dialog", name="Apply “Insurance”?").get_by_role("button",
                                                                      name="Apply").click()
    expect(card.get_by_text(re.compile("^Applied to existing"))).to_have_text(
        "Applied to existing documents: 0 documents looked at, 0 matched, 0 changed.",
        timeout=RUN_MS)

    card.get_by_role("button", name="Edit: Insurance").click()
    dialog = page.get_by_role("dialog", name="Edit rule “Insurance”")
    expect(dialog.get_by_label("Name", exact=True)).to_have_value("Insurance")
    expect(dialog.get_by_label("Order")).to_have_value("5")
    expect(dialog.get_by_label("How")).to_have_value("fuzzy")
    expect(dialog.get_by_role("checkbox", name="Case-sensitive")).to_be_disabled()
    expect(dialog.get_by_label("Pattern")).to_have_value("Allianz Versicherung")
    expect(dialog.get_by_role("checkbox", name="Uploads")).to_be_checked()
    expect(dialog.get_by_role("checkbox", name="dms import")).not_to_be_checked()
    expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text("Home / Letters")
    expect(dialog.get_by_role("checkbox", name=re.compile("^Stop: later rules"))).to_be_checked()
    dialog.get_by_label("Name", exact=True).fill("Insurance letters")
    dialog.get_by_role("checkbox", name="Enabled: files new documents").uncheck()
    dialog.get_by_label("How").select_option("exact")
    dialog.get_by_role("checkbox", name="Case-sensitive").check()
    dialog.get_by_role("button", name="Remove tag paper").click()
    expect(dialog.get_by_label("Add tags")).to_be_focused()
    dialog.get_by_role("button", name="Don’t move").click()
    expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text(
        "It stays where it is.")
    dialog.get_by_label("New title").fill("{created:%Y} {title}")
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Insurance letters” saved.")
    [rule] = rules_of(alice)
    attributes = rule["attributes"]
    assert {key: attributes[key] for key in ("name", "enabled", "order", "match", "sources",
                                             "actions")} == {
        "name": "Insurance letters", "enabled": False, "order": 5,
        "match": {"field": "text", "algorithm": "exact", "pattern": "Allianz Versicherung",
                  "case_sensitive": True},
        "sources": ["api", "mail"],
        "actions": {"add_tags": ["insurance"], "move_to": None,
                    "set_title": "{created:%Y} {title}", "stop": True, **NO_METADATA}}
    card = page.get_by_role("article", name="Insurance letters")
    expect(card).to_contain_text("Disabled")
    expect(page.get_by_role("button", name="Edit: Insurance letters")).to_be_focused()

    card.get_by_role("button", name="Delete: Insurance letters").click()
    page.get_by_role("dialog", name="Delete rule?").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Insurance letters” deleted.")
    expect(page.get_by_text("You have no rules yet.")).to_be_visible()
    assert rules_of(alice) == []
    assert session.errors == []


def labels_of(alice) -> dict[str, dict]:
    """A correspondent, a document type and custom fields of three kinds; a link field, which a
    rule cannot set and the dialog does not offer."""
    made = {}
    for path, kind, attributes in (
            ("/api/correspondents/", "correspondents", {"name": "Stadtwerke"}),
            ("/api/document-types/", "document-types", {"name": "Invoice"}),
            ("/api/custom-fields/", "custom-fields", {"name": "Amount", "data_type": "monetary",
                                                      "extra_data": {"default_currency": "EUR"}}),
            ("/api/custom-fields/", "custom-fields", {"name": "Status", "data_type": "select",
                                                      "extra_data": {"select_options": [
                                                          {"label": "To pay"},
                                                          {"label": "Paid"}]}}),
            ("/api/custom-fields/", "custom-fields", {"name": "Checked", "data_type": "boolean"}),
            ("/api/custom-fields/", "custom-fields", {"name": "Related",
                                                      "data_type": "documentlink"})):
        response = alice.post(path, {"data": {"type": kind, "attributes": attributes}})
        assert response.status_code == 201, response.text
        made[attributes["name"]] = response.json()["data"]
    return made


def test_what_a_rule_sets_is_chosen_shown_and_refused_beside_its_input(session, server, alice):
    labels = labels_of(alice)
    to_pay = labels["Status"]["attributes"]["extra_data"]["select_options"][0]["id"]
    bill = processed_document(alice, "Power bill", alice.inbox_id,
                              "Stadtwerke invoice of 12 March 2024")
    # Another date than the text's (the reading set that one), so that the rule would change it.
    assert alice.patch(f"/api/documents/{bill}/", {"data": {
        "type": "documents", "id": bill, "attributes": {"document_date": "2020-01-01"}}}
    ).status_code == 200
    page = open_rules(session)
    dialog = new_rule_dialog(page)
    expect(dialog.get_by_text(re.compile("^You have no"))).to_have_count(0)
    dialog.get_by_label("Name", exact=True).fill("Power bills")
    dialog.get_by_label("Pattern").fill("Stadtwerke")
    dialog.get_by_label("Correspondent").select_option(label="Stadtwerke")
    dialog.get_by_label("Document type").select_option(label="Invoice")
    fields = dialog.get_by_label("Custom field")
    assert fields.locator("option").all_inner_texts() == [
        "— (left as it is)", "Amount", "Checked", "Status"]  # no link field
    expect(dialog.get_by_label("Amount: currency")).to_have_count(0)
    fields.select_option(label="Amount")
    expect(dialog.get_by_label("Amount: currency")).to_have_value("EUR")
    dialog.get_by_label("Amount", exact=True).fill("12,30")  # a comma: refused by the API
    dialog.get_by_role("checkbox", name=re.compile("^Set the date on the paper")).check()
    dialog.get_by_role("button", name="Save rule").click()
    value = dialog.get_by_label("Amount", exact=True)
    expect(value).to_have_attribute("aria-invalid", "true")
    expect(value).to_be_focused()
    expect(value).to_have_accessible_description(
        "A value of the monetary field 'Amount' is an amount with at most two decimals, after an "
        "optional currency code: EUR12.30, -5.00 or 7.5. A currency code such as EUR, and an "
        "amount such as 12.30.")
    assert rules_of(alice) == []  # nothing was created

    value.fill("12.30")
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Power bills” created.")
    [rule] = rules_of(alice)
    assert rule["attributes"]["actions"] == {
        "add_tags": [], "move_to": None, "set_title": None, "stop": False,
        "set_correspondent": labels["Stadtwerke"]["id"],
        "set_document_type": labels["Invoice"]["id"],
        "set_custom_field": {"field": labels["Amount"]["id"], "value": "EUR12.30"},
        "set_document_date_from_text": True}
    card = page.get_by_role("article", name="Power bills")
    expect(card).to_contain_text(
        "DoesSet the correspondent: StadtwerkeSet the document type: InvoiceSet Amount: EUR12.30"
        "Set the date on the paper to the date read from the text")
    session.screenshot("50-desktop-rule-metadata-card.png")

    # Edited: the dialog shows what the rule sets; another field, a choice of its list.
    card.get_by_role("button", name="Edit: Power bills").click()
    dialog = page.get_by_role("dialog", name="Edit rule “Power bills”")
    expect(dialog.get_by_label("Correspondent")).to_have_value(labels["Stadtwerke"]["id"])
    expect(dialog.get_by_label("Document type")).to_have_value(labels["Invoice"]["id"])
    expect(dialog.get_by_label("Custom field")).to_have_value(labels["Amount"]["id"])
    expect(dialog.get_by_label("Amount", exact=True)).to_have_value("12.30")
    expect(dialog.get_by_role("checkbox", name=re.compile("^Set the date on the paper"))
           ).to_be_checked()
    dialog.get_by_label("Custom field").select_option(label="Status")
    expect(dialog.get_by_label("Amount: currency")).to_have_count(0)
    dialog.get_by_label("Status", exact=True).select_option(label="To pay")
    dialog.get_by_label("Document type").select_option(label="— (left as it is)")
    dialog.get_by_role("button", name="Save rule").scroll_into_view_if_needed()
    session.screenshot("50-desktop-rule-metadata.png", full_page=False)
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Power bills” saved.")
    [rule] = rules_of(alice)
    assert rule["attributes"]["actions"] == {
        "add_tags": [], "move_to": None, "set_title": None, "stop": False,
        "set_correspondent": labels["Stadtwerke"]["id"], "set_document_type": None,
        "set_custom_field": {"field": labels["Status"]["id"], "value": to_pay},
        "set_document_date_from_text": True}
    expect(page.get_by_role("article", name="Power bills")).to_contain_text(
        "DoesSet the correspondent: StadtwerkeSet Status: To paySet the date on the paper")

    # Tried: what it would set in the document it matches, in words.
    page.get_by_role("button", name="Try it: Power bills").click()
    trial = page.get_by_role("dialog", name="Try “Power bills”")
    changes = trial.get_by_role("list", name="Changes to Power bill")
    expect(changes).to_contain_text("Correspondent: StadtwerkeStatus: To payDate on the paper: ")
    expect(changes.locator("time")).to_have_attribute("datetime", "2024-03-12")
    session.screenshot("50-desktop-rule-metadata-try.png", full_page=False)
    trial.get_by_role("button", name="Close").click()
    expect(trial).to_have_count(0)

    # A yes-or-no field; then nothing set at all.
    page.get_by_role("button", name="Edit: Power bills").click()
    dialog = page.get_by_role("dialog", name="Edit rule “Power bills”")
    expect(dialog.get_by_label("Status", exact=True)).to_have_value(to_pay)
    dialog.get_by_label("Custom field").select_option(label="Checked")
    dialog.get_by_role("checkbox", name="Checked", exact=True).check()
    dialog.get_by_role("button", name="Save rule").click()
    # The status says the same as after the save before: the dialog closes once this one is done.
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("status").first).to_have_text("Rule “Power bills” saved.")
    assert rules_of(alice)[0]["attributes"]["actions"]["set_custom_field"] == {
        "field": labels["Checked"]["id"], "value": True}
    expect(page.get_by_role("article", name="Power bills")).to_contain_text("Set Checked: yes")
    page.get_by_role("button", name="Edit: Power bills").click()
    dialog = page.get_by_role("dialog", name="Edit rule “Power bills”")
    dialog.get_by_label("Correspondent").select_option(label="— (left as it is)")
    dialog.get_by_label("Custom field").select_option(label="— (left as it is)")
    dialog.get_by_role("checkbox", name=re.compile("^Set the date on the paper")).uncheck()
    dialog.get_by_label("Add tags").fill("energy")
    dialog.get_by_role("button", name="Save rule").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("status").first).to_have_text("Rule “Power bills” saved.")
    assert rules_of(alice)[0]["attributes"]["actions"] == {
        "add_tags": ["energy"], "move_to": None, "set_title": None, "stop": False,
        **NO_METADATA}
    assert session.errors == [REFUSED]


def test_a_session_ended_while_the_dialog_is_open_shows_the_login(session, server, alice):
    page = open_rules(session)
    dialog = new_rule_dialog(page)
    dialog.get_by_label("Name", exact=True).fill("Too late")
    dialog.get_by_label("Pattern").fill("invoice")
    dialog.get_by_label("Add tags").fill("invoice")
    # Signed out everywhere by a script (the page's login is a session: not among API tokens).
    assert alice.delete("/api/auth/sessions/").status_code == 204
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text(
        "Your session has ended: Invalid token. Please log in again.")
    assert rules_of(alice) == []
    assert 1 <= len(session.errors) <= 2 and all("401" in error for error in session.errors)


def furnish(alice) -> None:
    """Rules as a person has them: one filing into a folder, one dms disabled (its folder was
    deleted), and a document for the dry run."""
    bills = make_folder(alice, "Bills and other papers with a long name", alice.home_id)
    gone = make_folder(alice, "Old letters", alice.home_id)
    processed_document(alice, "Scan 0815", alice.inbox_id, "Stadtwerke electricity invoice 4711")
    labels = labels_of(alice)
    add_rule(alice, ELECTRICITY, "electricity invoice",
             field="any", order=10, actions={
                 "add_tags": ["energy", "to pay"], "move_to": bills,
                 "set_title": "{created:%Y-%m} {title}",
                 "set_correspondent": labels["Stadtwerke"]["id"],
                 "set_custom_field": {"field": labels["Amount"]["id"], "value": "EUR12.30"}})
    add_rule(alice, "Letters", "INV-(\\d{4})", algorithm="regex", case_sensitive=True,
             sources=["mail"], actions={"move_to": gone, "stop": True})
    assert alice.delete(f"/api/nodes/{gone}/").status_code == 204


def test_a_rule_dms_disabled_says_why_and_is_enabled_with_another_folder(session, server, alice):
    furnish(alice)
    [letters, _] = rules_of(alice)
    reason = letters["attributes"]["last_error"]
    assert reason == ("Disabled: the folder 'Old letters' this rule moved documents to was "
                      "deleted. Choose another folder (or restore it) and enable the rule again.")
    page = open_rules(session)
    card = page.get_by_role("article", name="Letters")
    expect(card).to_contain_text(f"Disabled{reason}Order0")
    expect(card).to_contain_text("Move to: a deleted folder")
    card.get_by_role("button", name="Edit: Letters").click()
    dialog = page.get_by_role("dialog", name="Edit rule “Letters”")
    expect(dialog.get_by_text(reason)).to_be_visible()
    expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text("A deleted folder")
    dialog.get_by_role("checkbox", name="Enabled: files new documents").check()
    dialog.get_by_role("button", name="Save rule").click()
    # The folder's refusal beside the folder's buttons.
    choose = dialog.get_by_role("button", name="Choose folder…")
    expect(choose).to_be_focused()
    expect(choose).to_have_accessible_description(re.compile(
        r"^Invalid folder '[0-9a-f-]{36}': the folder does not exist\. A deleted folder$"))
    assert rules_of(alice)[0]["attributes"] == letters["attributes"]
    choose.click()
    picker = page.get_by_role("dialog", name="Move matched documents to")
    picker.get_by_role("radio", name="Home / Bills and other papers with a long name").check()
    picker.get_by_role("button", name="Choose").click()
    dialog.get_by_role("button", name="Save rule").click()
    expect(page.get_by_role("status").first).to_have_text("Rule “Letters” saved.")
    card = page.get_by_role("article", name="Letters")
    expect(card).to_contain_text("LettersEnabledOrder0")
    expect(card).to_contain_text("Move to: Home / Bills and other papers with a long name")
    attributes = rules_of(alice)[0]["attributes"]
    assert (attributes["enabled"], attributes["last_error"]) == (True, None)
    assert session.errors == [REFUSED]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_rules_pass_axe_and_name_every_control(browser, server, alice, scheme):
    furnish(alice)
    # bypass_csp only here: axe is injected into the page, which its CSP would refuse.
    session = Session(browser, server.url, bypass_csp=True, color_scheme=scheme)
    try:
        page = open_rules(session)
        [disabled, _] = rules_of(alice)  # by order: Letters (0) runs before Electricity (10)
        assert disabled["attributes"]["last_error"].startswith("Disabled: ")
        expect(page.get_by_role("article", name="Letters")).to_contain_text(
            disabled["attributes"]["last_error"])
        found = {"list": axe_violations(page)}
        assert unnamed_controls(page) == []
        page.get_by_role("button", name=f"Edit: {ELECTRICITY}").click()
        dialog = page.get_by_role("dialog", name=f"Edit rule “{ELECTRICITY}”")
        expect(dialog.get_by_role("status", name="Move to a folder")).to_have_text(
            "Home / Bills and other papers with a long name")
        found["dialog"] = axe_violations(page)
        assert unnamed_controls(page) == []
        dialog.get_by_label("Pattern").fill("")
        dialog.get_by_role("button", name="Save rule").click()
        expect(dialog.get_by_label("Pattern")).to_have_attribute("aria-invalid", "true")
        found["refusal"] = axe_violations(page)
        page.keyboard.press("Escape")
        page.get_by_role("button", name=f"Try it: {ELECTRICITY}").click()
        trial = page.get_by_role("dialog", name=f"Try “{ELECTRICITY}”")
        expect(trial.get_by_role("link", name="Scan 0815")).to_be_visible()
        found["trial"] = axe_violations(page)
        assert unnamed_controls(page) == []
        assert {name: violations for name, violations in found.items() if violations} == {}
        assert session.errors == [REFUSED] and session.foreign == []
    finally:
        session.close()


def test_rules_on_a_desktop_and_on_a_phone(browser, server, alice):
    """Screenshots for a human to look at; at 390 × 844 nothing scrolls sideways; the dialog is
    reached and left with the keyboard."""
    furnish(alice)
    for device, options in (("desktop", {}), ("phone", PHONE)):
        session = Session(browser, server.url, **options)
        try:
            page = open_rules(session)
            expect(page.get_by_role("article")).to_have_count(2)
            session.screenshot(f"50-{device}-rules.png")
            assert sideways_scroll(page) == 0, device
            new = page.get_by_role("button", name="New rule")
            new.focus()
            page.keyboard.press("Enter")
            dialog = page.get_by_role("dialog", name="New rule")
            expect(dialog.get_by_label("Name", exact=True)).to_be_focused()
            page.keyboard.press("Tab")
            expect(dialog.get_by_label("Order")).to_be_focused()
            session.screenshot(f"50-{device}-rule-new.png", full_page=False)
            assert sideways_scroll(page) == 0, device
            page.keyboard.press("Escape")
            expect(new).to_be_focused()
            page.get_by_role("button", name=f"Edit: {ELECTRICITY}").click()
            dialog = page.get_by_role("dialog", name=re.compile("^Edit rule"))
            dialog.get_by_role("button", name="Save rule").scroll_into_view_if_needed()
            session.screenshot(f"50-{device}-rule-actions.png", full_page=False)
            dialog.get_by_label("Pattern").fill("(")
            dialog.get_by_label("How").select_option("regex")
            dialog.get_by_role("button", name="Save rule").click()
            expect(dialog.get_by_label("Pattern")).to_have_attribute("aria-invalid", "true")
            session.screenshot(f"50-{device}-rule-refused.png", full_page=False)
            assert sideways_scroll(page) == 0, device
            page.keyboard.press("Escape")
            page.get_by_role("button", name=f"Try it: {ELECTRICITY}").click()
            trial = page.get_by_role("dialog", name=re.compile("^Try"))
            expect(trial.get_by_role("link", name="Scan 0815")).to_be_visible()
            session.screenshot(f"50-{device}-rule-try.png", full_page=False)
            assert sideways_scroll(page) == 0, device
            page.keyboard.press("Escape")
            expect(trial).to_have_count(0)
            assert session.errors == [REFUSED] and session.foreign == []
        finally:
            session.close()
