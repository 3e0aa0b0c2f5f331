"""Rules that set a document's metadata (api.md §16 and "Rules"), on the fast tier with the
queue's workers reading real files: a correspondent, a type, a custom field's value and the date
read from the text, named in `rule_applied`; what a person set by hand stays; the dry run shows
it; a rule naming another user's names, a documentlink field or a value its field refuses is
refused with a pointer and nothing is saved."""

from __future__ import annotations

from dms.db.models import Rule
from dms.domain.metadata import document as metadata
from dms.domain.metadata import fields, labels
from dms.domain.rules import preview, store
from tests.harness.domaintier import (
    assert_refused,
    new_document,
    new_user,
    read_document,
    rules_applied,
    upload_file,
    wait_read,
)
from tests.harness.rules import make_rule, rule_body

LETTER = ("Stadtwerke Musterstadt\nKöln, 14. März 2024\n\nIhre Jahresabrechnung 2023\n"
          "Nachzahlung: 80,00 EUR\n").encode()


def setup(alice):
    power = labels.create(labels.CORRESPONDENTS, alice, {"name": "Stadtwerke"})
    bill = labels.create(labels.DOCUMENT_TYPES, alice, {"name": "Abrechnung"})
    amount = fields.create_field(alice, {"name": "Betrag", "data_type": "monetary"})
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={
        "set_correspondent": power.id, "set_document_type": bill.id,
        "set_custom_field": {"field": amount.id, "value": "EUR80.00"},
        "set_document_date_from_text": True})
    return power, bill, amount, rule


def test_a_rule_sets_the_metadata_of_a_new_document(reading):
    alice = new_user("alice")
    power, bill, amount, rule = setup(alice)
    document = read_document(reading, alice, "Brief", "brief.txt", LETTER)
    found = metadata.about([document])[document]
    assert found == {
        "correspondent": power.id, "document_type": bill.id, "document_date": "2024-03-14",
        "archive_serial_number": None, "notes_count": 0, "paperless_id": found["paperless_id"],
        "custom_fields": [{"field": amount.id, "value": "EUR80.00"}]}
    assert rules_applied(alice, document) == [{
        "rule": {"id": rule.id, "name": "Strom"}, "field": "text",
        "correspondent": {"from": None, "to": "Stadtwerke"},
        "document_type": {"from": None, "to": "Abrechnung"},
        "document_date": {"from": rules_applied(alice, document)[0]["document_date"]["from"],
                          "to": "2024-03-14"},
        "custom_fields": {"Betrag": {"from": None, "to": "EUR80.00"}}}]


def test_what_a_person_set_stays_and_the_dry_run_shows_the_rest(reading):
    alice = new_user("alice")
    power, bill, amount, rule = setup(alice)
    other = labels.create(labels.CORRESPONDENTS, alice, {"name": "Vermieter"})
    document = new_document(reading, alice, "Brief")
    metadata.update_node(alice, document, "document", {"correspondent": other.id})
    upload_file(reading, alice, document, "brief.txt", LETTER)
    assert wait_read(document)[-1] == "succeeded"
    about = metadata.about([document])[document]
    assert (about["correspondent"], about["document_type"]) == (other.id, bill.id)
    # The dry run over the document as it is now: only what would still change.
    metadata.update_node(alice, document, "document", {"custom_fields": [],
                                                        "document_type": None})
    result = preview.preview(reading, alice, rule.id)
    assert [hit.changes for hit in result.hits] == [{
        "add_tags": [], "move_to": None, "set_title": None, "set_correspondent": "Stadtwerke",
        "set_document_type": "Abrechnung",
        "set_custom_field": {"field": "Betrag", "value": "EUR80.00"},
        "set_document_date": None}]


def test_a_rule_naming_what_is_not_the_owners_or_a_refused_value_is_refused(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    bobs = labels.create(labels.CORRESPONDENTS, bob, {"name": "Bobs"})
    link = fields.create_field(alice, {"name": "Bezug", "data_type": "documentlink"})
    amount = fields.create_field(alice, {"name": "Betrag", "data_type": "monetary"})
    for actions, detail, field in (
            ({"set_correspondent": bobs.id}, "You have no correspondent with this id.",
             "actions/set_correspondent"),
            ({"set_custom_field": {"field": link.id, "value": []}},
             "A rule cannot set a documentlink field: links name documents.",
             "actions/set_custom_field/field"),
            ({"set_custom_field": {"field": amount.id, "value": "EUR1.234"}},
             "A value of the monetary field 'Betrag' is an amount with at most two decimals, "
             "after an optional currency code: EUR12.30, -5.00 or 7.5.",
             "actions/set_custom_field/value")):
        body = rule_body("n", "x", actions=actions)["data"]["attributes"]
        assert_refused(config, lambda body=body: store.create_rule(alice, body), "invalid",
                       detail, field)
    assert Rule.select().count() == 0
