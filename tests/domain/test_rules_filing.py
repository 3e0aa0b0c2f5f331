"""Rules at work on new documents (docs/api.md, "Rules"), on the fast tier with the queue's workers
(the domain's functions, no server) reading real documents: each algorithm (a regular expression
finding an invoice number, a fuzzy match of what Tesseract read from a scan with OCR's
misreadings), each action, `order`, `stop`, `enabled`, `sources` (an upload and a legacy upload
are `api`), the history's `rule_applied` naming the rule, what a person changed by hand, a later
version left alone, the catastrophic regex."""

from __future__ import annotations

import io

import pytest

from dms.db.models import Node
from dms.domain import documents, trash, tree, uploads
from tests.harness import samples
from tests.harness.domaintier import (
    events_of,
    filed,
    home_id,
    inbox_id,
    new_document,
    new_folder,
    new_user,
    read_document,
    rules_applied,
    upload_file,
    wait_read,
)
from tests.harness.rules import make_rule

INVOICE = samples.pdf([["ACME Tools GmbH", "Invoice INV-2026-0042", "Total 118.00 EUR"],
                       ["Payment within 14 days"]])



def test_each_algorithm_on_a_processed_document(reading):
    alice = new_user("alice")
    for name, algorithm, pattern, case_sensitive in (
            ("any word", "any", "Quote invoice", False),
            ("any word case", "any", "INVOICE", True),
            ("all words", "all", "payment acme", False),
            ("all words missing", "all", "payment acme refund", False),
            ("exact phrase", "exact", "tools gmbh invoice", False),
            ("exact wrong order", "exact", "gmbh tools", False),
            ("invoice number", "regex", r"INV-(\d{4}-\d{4})", True),
            ("regex case", "regex", r"inv-\d+", True)):
        make_rule(alice, name, pattern, algorithm=algorithm, case_sensitive=case_sensitive,
                  actions={"add_tags": [name]})
    document = read_document(reading, alice, "Scan", "acme.pdf", INVOICE)
    assert filed(alice, document)[2] == ["all words", "any word", "exact phrase",
                                         "invoice number"]
    assert [(d["rule"]["name"], d["field"], d["tags"]) for d in rules_applied(alice, document)] \
        == [("all words", "text", ["all words"]), ("any word", "text", ["any word"]),
            ("exact phrase", "text", ["exact phrase"]),
            ("invoice number", "text", ["invoice number"])]


def test_a_regex_names_the_invoice_by_its_number_and_date(reading):
    alice = new_user("alice")
    rule = make_rule(alice, "Invoices", r"INV-(\d{4}-\d{4})", algorithm="regex",
                     actions={"add_tags": ["invoice"],
                              "set_title": "Invoice {match} of {created:%d.%m.%Y} ({title})"})
    document = read_document(reading, alice, "scan 7", "acme.pdf", INVOICE)
    day = tree.owned_node(alice, document).created_at.strftime("%d.%m.%Y")
    title = f"Invoice 2026-0042 of {day} (scan 7)"
    assert filed(alice, document) == (title, inbox_id(alice), ["invoice"])
    assert [action for action, _ in events_of(alice, document)] == \
        ["created", "uploaded", "processed", "rule_applied"]
    assert rules_applied(alice, document) == [{
        "rule": {"id": rule.id, "name": "Invoices"}, "field": "text", "tags": ["invoice"],
        "renamed": {"from": "scan 7", "to": title}}]


def test_a_fuzzy_rule_matches_what_tesseract_read_with_ocr_misreadings(reading):
    # The scan itself carries a misreading's marks (a letter missing, rn for m): Tesseract reads
    # it as printed, so the words are not spelt as the patterns spell them.
    alice = new_user("alice")
    letter = samples.png("Alianz Versicherungs-AG Polcy nurnber 7781")
    insurer = make_rule(alice, "Insurance", "Allianz Versicherungs AG", algorithm="fuzzy",
                        actions={"add_tags": ["insurance"]})
    make_rule(alice, "Policy", "policy number", algorithm="fuzzy",
              actions={"add_tags": ["policy"]})
    make_rule(alice, "Near miss", "Alliance Verwaltung", algorithm="fuzzy",
              actions={"add_tags": ["wrong"]})
    make_rule(alice, "Not fuzzy", "Allianz", algorithm="any", actions={"add_tags": ["exact"]})
    document = read_document(reading, alice, "Scan", "letter.png", letter)
    text = documents.latest_text(document)
    assert "Allianz" not in text and "Policy" not in text, text
    assert filed(alice, document)[2] == ["insurance", "policy"]
    assert rules_applied(alice, document)[0]["rule"] == {"id": insurer.id, "name": "Insurance"}


def test_actions_run_in_order_each_rule_seeing_the_title_before_it(reading):
    alice = new_user("alice")
    bills = new_folder(reading, alice, "Bills", home_id(alice))
    archive = new_folder(reading, alice, "Archive", home_id(alice))
    make_rule(alice, "b second", "invoice", order=2,
              actions={"set_title": "{title} [{file_name}]", "move_to": archive})
    make_rule(alice, "a first", "acme", order=1,
              actions={"set_title": "ACME {match}", "move_to": bills, "add_tags": ["acme"]})
    make_rule(alice, "c sees the new title", "ACME", field="title", algorithm="exact", order=3,
              case_sensitive=True, actions={"add_tags": ["seen"]})
    make_rule(alice, "d disabled", "invoice", order=4, enabled=False,
              actions={"add_tags": ["disabled"]})
    document = read_document(reading, alice, "Scan", "acme.pdf", INVOICE)
    assert filed(alice, document) == ("ACME ACME [acme.pdf]", archive, ["acme", "seen"])
    steps = rules_applied(alice, document)
    assert [step["rule"]["name"] for step in steps] == ["a first", "b second",
                                                        "c sees the new title"]
    assert steps[0]["moved"] == {"from": {"id": inbox_id(alice), "title": ".inbox"},
                                 "to": {"id": bills, "title": "Bills"}}
    assert steps[1]["moved"] == {"from": {"id": bills, "title": "Bills"},
                                 "to": {"id": archive, "title": "Archive"}}
    assert steps[1]["renamed"] == {"from": "ACME ACME", "to": "ACME ACME [acme.pdf]"}


def test_stop_ends_the_run_of_later_rules(reading):
    alice = new_user("alice")
    make_rule(alice, "1 tag", "acme", order=1, actions={"add_tags": ["first"]})
    make_rule(alice, "2 stop", "invoice", order=2, actions={"stop": True})
    make_rule(alice, "3 never", "acme", order=3, actions={"add_tags": ["never"]})
    make_rule(alice, "0 no match", "nothing-like-this", order=0,
              actions={"stop": True, "add_tags": ["no"]})
    document = read_document(reading, alice, "Scan", "acme.pdf", INVOICE)
    assert filed(alice, document)[2] == ["first"]
    # The stop rule changed nothing: only the rule that did is in the history.
    assert [step["rule"]["name"] for step in rules_applied(alice, document)] == ["1 tag"]


def test_sources_a_mail_only_rule_leaves_api_uploads_alone(reading):
    alice = new_user("alice")
    make_rule(alice, "From mail", "acme", sources=["mail", "consume"],
              actions={"add_tags": ["mail"]})
    make_rule(alice, "From the API", "acme", sources=["api"], actions={"add_tags": ["api"]})
    document = read_document(reading, alice, "Scan", "acme.pdf", INVOICE)
    assert filed(alice, document)[2] == ["api"]
    # The legacy upload (PUT /document/upload/legacy.pdf) into the .inbox.
    legacy = uploads.upload_to_inbox(reading, alice, io.BytesIO(INVOICE), len(INVOICE),
                                     "legacy.pdf").id
    wait_read(legacy)
    assert filed(alice, legacy) == ("legacy.pdf", inbox_id(alice), ["api"])


def test_a_document_renamed_by_hand_before_its_reading_ended_keeps_its_title(reading, config):
    """The rule for what a person changed: a `renamed` (`moved`) event with an actor, at any
    time before the rules ran, keeps the title (the folder); tags are added all the same."""
    alice = new_user("alice")
    bills = new_folder(reading, alice, "Bills", home_id(alice))
    mine = new_folder(reading, alice, "Mine", home_id(alice))
    make_rule(alice, "Bills", "Stadtwerke", algorithm="fuzzy",
              actions={"set_title": "Bill {created:%Y}", "move_to": bills,
                       "add_tags": ["bill"]})
    scan = samples.tiff(["Stadtwerke electricity bill", "Meter reading 4711",
                         "Thank you for your payment"])
    document = new_document(reading, alice, "Scan")
    upload_file(reading, alice, document, "scan.tiff", scan)
    renamed = tree.update_node(alice, document, Node.DOCUMENT, {"title": "My own title"},
                               Node.DOCUMENT)
    # Three pages for Tesseract take seconds: the rename came while it read them.
    assert renamed.ocr_status in ("received", "started")
    tree.move_nodes(alice, [document], mine, config.max_tree_depth)
    assert wait_read(document)[-1] == "succeeded"
    assert filed(alice, document) == ("My own title", mine, ["bill"])
    assert [(d["rule"]["name"], d.get("renamed"), d.get("moved"), d["tags"])
            for d in rules_applied(alice, document)] == [("Bills", None, None, ["bill"])]


def test_a_later_version_and_a_later_rule_leave_a_filed_document_alone(reading):
    alice = new_user("alice")
    make_rule(alice, "Invoices", "invoice", actions={"add_tags": ["invoice"],
                                                     "set_title": "Invoice ({title})"})
    document = read_document(reading, alice, "acme", "acme.pdf", INVOICE)
    assert filed(alice, document)[:3:2] == ("Invoice (acme)", ["invoice"])
    make_rule(alice, "Later", "acme", actions={"add_tags": ["later"]})
    upload_file(reading, alice, document, "acme-2.pdf", INVOICE)
    assert wait_read(document)[-1] == "succeeded"
    assert filed(alice, document)[:3:2] == ("Invoice (acme)", ["invoice"])
    assert len(rules_applied(alice, document)) == 1


def test_a_template_with_nothing_left_keeps_the_title_and_names_become_valid_titles(reading):
    alice = new_user("alice")
    make_rule(alice, "Empty", "acme", order=1, actions={"set_title": "{mail_subject}"})
    make_rule(alice, "Slashes", "acme", order=2,
              actions={"set_title": "{title} / {file_name}\\x"})
    document = read_document(reading, alice, "Letter", "acme.pdf", INVOICE)
    assert filed(alice, document)[0] == "Letter - acme.pdf-x"
    assert [step["rule"]["name"] for step in rules_applied(alice, document)] == ["Slashes"]


@pytest.mark.config(rules_max_text_chars=1_000_000)
def test_the_catastrophic_regex_finishes_at_once_on_a_long_text(reading):
    """`(a+)+$` against 500,000 a's followed by a b: Python's `re` would backtrack for ages;
    RE2 answers in linear time, and the document's reading ends."""
    alice = new_user("alice")
    make_rule(alice, "Catastrophic", "(a+)+$", algorithm="regex",
              actions={"add_tags": ["never"]})
    make_rule(alice, "Afterwards", "b", algorithm="regex", actions={"add_tags": ["after"]})
    document = read_document(reading, alice, "aaa", "a.txt", samples.text("a" * 500_000 + "b"),
                             timeout=60)
    assert filed(alice, document)[2] == ["after"]


def test_a_document_deleted_while_read_gets_its_rules_once_restored(reading):
    alice = new_user("alice")
    make_rule(alice, "Meters", "meter", actions={"add_tags": ["meter"]})
    scan = samples.tiff(["Meter reading 4711", "Water supply", "Thank you"])
    document = new_document(reading, alice, "Scan")
    upload_file(reading, alice, document, "scan.tiff", scan)
    trash.delete(reading, alice, document, Node.DOCUMENT)
    trash.restore(reading, alice, document)
    assert wait_read(document)[-1] == "succeeded"
    assert filed(alice, document) == ("Scan", inbox_id(alice), ["meter"])
    assert [step["rule"]["name"] for step in rules_applied(alice, document)] == ["Meters"]
