"""Rules at work on new documents (docs/api.md, "Rules"), through the API on real processed
documents: each algorithm (a regular expression finding an invoice number, a fuzzy match of what
Tesseract read from a scan with OCR's misreadings), each action, `order`, `stop`, `enabled`,
`sources` (an API upload and a legacy upload are `api`), the history's `rule_applied` naming the
rule, what a person changed by hand, a later version left alone, the catastrophic regex."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.harness import samples
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.rules import actions, add_rule, applied, filed
from tests.harness.waiting import wait_processed

INVOICE = samples.pdf([["ACME Tools GmbH", "Invoice INV-2026-0042", "Total 118.00 EUR"],
                       ["Payment within 14 days"]])


def new(client, data: bytes, name: str, title: str = "Scan", parent: str | None = None) -> str:
    """A document made with POST /nodes/ and its first file uploaded, read to the end."""
    document_id = new_document(client, title, parent or client.inbox_id)
    assert upload(client, document_id, name, data).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id


def test_each_algorithm_on_a_processed_document(alice):
    for name, algorithm, pattern, case_sensitive in (
            ("any word", "any", "Quote invoice", False),
            ("any word case", "any", "INVOICE", True),
            ("all words", "all", "payment acme", False),
            ("all words missing", "all", "payment acme refund", False),
            ("exact phrase", "exact", "tools gmbh invoice", False),
            ("exact wrong order", "exact", "gmbh tools", False),
            ("invoice number", "regex", r"INV-(\d{4}-\d{4})", True),
            ("regex case", "regex", r"inv-\d+", True)):
        add_rule(alice, name, pattern, algorithm=algorithm, case_sensitive=case_sensitive,
                 actions={"add_tags": [name]})
    document = new(alice, INVOICE, "acme.pdf")
    assert filed(alice, document)[2] == ["all words", "any word", "exact phrase",
                                         "invoice number"]
    assert [(d["rule"]["name"], d["field"], d["tags"]) for d in applied(alice, document)] == [
        ("all words", "text", ["all words"]), ("any word", "text", ["any word"]),
        ("exact phrase", "text", ["exact phrase"]), ("invoice number", "text", ["invoice number"])]


def test_a_regex_names_the_invoice_by_its_number_and_date(alice):
    rule = add_rule(alice, "Invoices", r"INV-(\d{4}-\d{4})", algorithm="regex",
                    actions={"add_tags": ["invoice"],
                             "set_title": "Invoice {match} of {created:%d.%m.%Y} ({title})"})
    document = new(alice, INVOICE, "acme.pdf", title="scan 7")
    created = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["created_at"]
    day = dt.datetime.fromisoformat(created.rstrip("Z")).strftime("%d.%m.%Y")
    title = f"Invoice 2026-0042 of {day} (scan 7)"
    assert filed(alice, document) == (title, alice.inbox_id, ["invoice"])
    assert actions(alice, document) == ["created", "uploaded", "processed", "rule_applied"]
    assert applied(alice, document) == [{
        "rule": {"id": rule["id"], "name": "Invoices"}, "field": "text", "tags": ["invoice"],
        "renamed": {"from": "scan 7", "to": title}}]


def test_a_fuzzy_rule_matches_what_tesseract_read_with_ocr_misreadings(alice):
    # The scan itself carries a misreading's marks (a letter missing, rn for m): Tesseract reads
    # it as printed, so the words are not spelt as the patterns spell them.
    letter = samples.png("Alianz Versicherungs-AG Polcy nurnber 7781")
    insurer = add_rule(alice, "Insurance", "Allianz Versicherungs AG", algorithm="fuzzy",
                       actions={"add_tags": ["insurance"]})
    add_rule(alice, "Policy", "policy number", algorithm="fuzzy",
             actions={"add_tags": ["policy"]})
    add_rule(alice, "Near miss", "Alliance Verwaltung", algorithm="fuzzy",
             actions={"add_tags": ["wrong"]})
    add_rule(alice, "Not fuzzy", "Allianz", algorithm="any", actions={"add_tags": ["exact"]})
    document = new(alice, letter, "letter.png")
    text = alice.get(f"/api/documents/{document}/ocr-text").json()["text"]
    assert "Allianz" not in text and "Policy" not in text, text
    assert filed(alice, document)[2] == ["insurance", "policy"]
    assert applied(alice, document)[0]["rule"] == {"id": insurer["id"], "name": "Insurance"}


def test_actions_run_in_order_each_rule_seeing_the_title_before_it(alice):
    bills = make_folder(alice, "Bills", alice.home_id)
    archive = make_folder(alice, "Archive", alice.home_id)
    add_rule(alice, "b second", "invoice", order=2,
             actions={"set_title": "{title} [{file_name}]", "move_to": archive})
    add_rule(alice, "a first", "acme", order=1,
             actions={"set_title": "ACME {match}", "move_to": bills, "add_tags": ["acme"]})
    add_rule(alice, "c sees the new title", "ACME", field="title", algorithm="exact", order=3,
             case_sensitive=True, actions={"add_tags": ["seen"]})
    add_rule(alice, "d disabled", "invoice", order=4, enabled=False,
             actions={"add_tags": ["disabled"]})
    document = new(alice, INVOICE, "acme.pdf")
    assert filed(alice, document) == ("ACME ACME [acme.pdf]", archive, ["acme", "seen"])
    steps = applied(alice, document)
    assert [step["rule"]["name"] for step in steps] == ["a first", "b second",
                                                        "c sees the new title"]
    assert steps[0]["moved"] == {"from": {"id": alice.inbox_id, "title": ".inbox"},
                                 "to": {"id": bills, "title": "Bills"}}
    assert steps[1]["moved"] == {"from": {"id": bills, "title": "Bills"},
                                 "to": {"id": archive, "title": "Archive"}}
    assert steps[1]["renamed"] == {"from": "ACME ACME", "to": "ACME ACME [acme.pdf]"}


def test_stop_ends_the_run_of_later_rules(alice):
    add_rule(alice, "1 tag", "acme", order=1, actions={"add_tags": ["first"]})
    add_rule(alice, "2 stop", "invoice", order=2, actions={"stop": True})
    add_rule(alice, "3 never", "acme", order=3, actions={"add_tags": ["never"]})
    add_rule(alice, "0 no match", "nothing-like-this", order=0,
             actions={"stop": True, "add_tags": ["no"]})
    document = new(alice, INVOICE, "acme.pdf")
    assert filed(alice, document)[2] == ["first"]
    # The stop rule changed nothing: only the rule that did is in the history.
    assert [step["rule"]["name"] for step in applied(alice, document)] == ["1 tag"]


def test_sources_a_mail_only_rule_leaves_api_uploads_alone(alice):
    add_rule(alice, "From mail", "acme", sources=["mail", "consume"],
             actions={"add_tags": ["mail"]})
    add_rule(alice, "From the API", "acme", sources=["api"], actions={"add_tags": ["api"]})
    document = new(alice, INVOICE, "acme.pdf")
    assert filed(alice, document)[2] == ["api"]
    response = alice.put("/api/document/upload/legacy.pdf", data=INVOICE,
                         headers={"Content-Type": "application/pdf"})
    assert response.status_code == 201, response.text
    legacy = response.json()["id"]
    wait_processed(alice, legacy)
    assert filed(alice, legacy) == ("legacy.pdf", alice.inbox_id, ["api"])


def test_a_document_renamed_by_hand_before_its_reading_ended_keeps_its_title(alice):
    """The rule for what a person changed: a `renamed` (`moved`) event with an actor, at any
    time before the rules ran, keeps the title (the folder); tags are added all the same."""
    bills = make_folder(alice, "Bills", alice.home_id)
    mine = make_folder(alice, "Mine", alice.home_id)
    add_rule(alice, "Bills", "Stadtwerke", algorithm="fuzzy",
             actions={"set_title": "Bill {created:%Y}", "move_to": bills,
                      "add_tags": ["bill"]})
    scan = samples.tiff(["Stadtwerke electricity bill", "Meter reading 4711",
                         "Thank you for your payment"])
    document = new_document(alice, "Scan", alice.inbox_id)
    assert upload(alice, document, "scan.tiff", scan).status_code == 201
    patch = {"data": {"type": "documents", "attributes": {"title": "My own title"}}}
    response = alice.patch(f"/api/documents/{document}/", patch)
    assert response.status_code == 200, response.text
    # Three pages for Tesseract take seconds: the rename came while it read them.
    assert response.json()["data"]["attributes"]["ocr_status"] in ("received", "started")
    move = alice.post("/api/nodes/move/", {"nodes": [{"id": document}],
                                          "target_parent": {"id": mine}},
                      media="application/json")
    assert move.status_code == 200, move.text
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("My own title", mine, ["bill"])
    assert [(d["rule"]["name"], d.get("renamed"), d.get("moved"), d["tags"])
            for d in applied(alice, document)] == [("Bills", None, None, ["bill"])]


def test_a_later_version_and_a_later_rule_leave_a_filed_document_alone(alice):
    add_rule(alice, "Invoices", "invoice", actions={"add_tags": ["invoice"],
                                                    "set_title": "Invoice ({title})"})
    document = new(alice, INVOICE, "acme.pdf", title="acme")
    assert filed(alice, document)[:3:2] == ("Invoice (acme)", ["invoice"])
    add_rule(alice, "Later", "acme", actions={"add_tags": ["later"]})
    assert upload(alice, document, "acme-2.pdf", INVOICE).status_code == 201
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document)[:3:2] == ("Invoice (acme)", ["invoice"])
    assert len(applied(alice, document)) == 1


def test_a_template_with_nothing_left_keeps_the_title_and_names_become_valid_titles(alice):
    add_rule(alice, "Empty", "acme", order=1, actions={"set_title": "{mail_subject}"})
    add_rule(alice, "Slashes", "acme", order=2,
             actions={"set_title": "{title} / {file_name}\\x"})
    document = new(alice, INVOICE, "acme.pdf", title="Letter")
    assert filed(alice, document)[0] == "Letter - acme.pdf-x"
    assert [step["rule"]["name"] for step in applied(alice, document)] == ["Slashes"]


@pytest.mark.config(rules_max_text_chars=1_000_000)
def test_the_catastrophic_regex_finishes_at_once_on_a_long_text(alice):
    """`(a+)+$` against 500,000 a's followed by a b: Python's `re` would backtrack for ages;
    RE2 answers in linear time, and the document's reading ends."""
    add_rule(alice, "Catastrophic", "(a+)+$", algorithm="regex",
             actions={"add_tags": ["never"]})
    add_rule(alice, "Afterwards", "b", algorithm="regex", actions={"add_tags": ["after"]})
    document = new_document(alice, "aaa", alice.inbox_id)
    assert upload(alice, document, "a.txt", samples.text("a" * 500_000 + "b")).status_code == 201
    assert wait_processed(alice, document, timeout=60)[-1] == "succeeded"
    assert filed(alice, document)[2] == ["after"]


def test_a_document_deleted_while_read_gets_its_rules_once_restored(alice):
    add_rule(alice, "Meters", "meter", actions={"add_tags": ["meter"]})
    scan = samples.tiff(["Meter reading 4711", "Water supply", "Thank you"])
    document = new_document(alice, "Scan", alice.inbox_id)
    assert upload(alice, document, "scan.tiff", scan).status_code == 201
    assert alice.delete(f"/api/documents/{document}/").status_code == 204
    response = alice.post(f"/api/trash/{document}/restore/")
    assert response.status_code == 200, response.text
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("Scan", alice.inbox_id, ["meter"])
    assert [step["rule"]["name"] for step in applied(alice, document)] == ["Meters"]
