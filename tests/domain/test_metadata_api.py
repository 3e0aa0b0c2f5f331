"""What a document is about (api.md §16) through the API: correspondents and document types,
custom fields of every type read back exactly, every refusal changing nothing, links kept both
ways (the trash included), notes, history, and another user's names unknown."""

from __future__ import annotations

import pytest

from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document


def body(kind, **attributes):
    return {"data": {"type": kind, "attributes": attributes}}


def created(client, kind, **attributes):
    response = client.post(f"/api/{kind}/", body(kind, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def patch_document(client, document_id, **attributes):
    return client.patch(f"/api/documents/{document_id}/", body("documents", **attributes))


def about(client, document_id):
    attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    return {key: attributes[key] for key in ("correspondent", "document_type", "document_date",
                                             "archive_serial_number", "custom_fields",
                                             "notes_count")}


def upload_day(client, document_id):
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "created_at"][:10]


@pytest.mark.parametrize("kind", ["correspondents", "document-types"])
def test_names_are_created_listed_changed_and_deleted_per_user(alice, bob, kind):
    made = created(alice, kind, name="Stadtwerke", match="stadtwerke",
                   matching_algorithm="any")
    expected = {"name": "Stadtwerke", "match": "stadtwerke", "matching_algorithm": "any",
                "is_insensitive": True, "document_count": 0}
    if kind == "correspondents":
        expected["last_correspondence"] = None
    assert made == {"type": kind, "id": made["id"], "attributes": expected}
    assert_error(alice.post(f"/api/{kind}/", body(kind, name="STADTWERKE")), 400, "invalid",
                 f"A {kind[:-1].replace('-', ' ')} with this name already exists.",
                 "/data/attributes/name")
    assert_error(alice.post(f"/api/{kind}/", body(kind, name="x", matching_algorithm="learned")),
                 400, "invalid", "matching_algorithm must be one of none, any, all, exact, "
                 "regex, fuzzy, auto.", "/data/attributes/matching_algorithm")
    assert_error(alice.post(f"/api/{kind}/", body(kind, name="x", matching_algorithm="regex",
                                                  match="(a")), 400, "invalid",
                 "The regular expression is not valid for RE2: missing ): (a. (RE2 has no "
                 "backreferences or lookaround; see the guide.)", "/data/attributes/match")
    listed = alice.get(f"/api/{kind}/").json()["data"]
    assert [item["attributes"]["name"] for item in listed] == ["Stadtwerke"]
    assert bob.get(f"/api/{kind}/").json()["data"] == []
    assert bob.get(f"/api/{kind}/{made['id']}/").json() == NOT_FOUND
    assert bob.delete(f"/api/{kind}/{made['id']}/").status_code == 404
    changed = alice.patch(f"/api/{kind}/{made['id']}/", body(kind, name="Stadtwerk Köln"))
    assert changed.json()["data"]["attributes"]["name"] == "Stadtwerk Köln"
    assert alice.delete(f"/api/{kind}/{made['id']}/").status_code == 204
    assert alice.get(f"/api/{kind}/").json()["data"] == []


def test_a_documents_correspondent_type_date_and_number_are_set_counted_and_cleared(alice, bob):
    sender = created(alice, "correspondents", name="Finanzamt")
    kind = created(alice, "document-types", name="Bescheid")
    document = new_document(alice, "Steuerbescheid")
    other = new_document(alice, "Brief")
    assert about(alice, document) == {
        "correspondent": None, "document_type": None, "document_date": upload_day(alice, document),
        "archive_serial_number": None, "custom_fields": [], "notes_count": 0}
    response = patch_document(alice, document, correspondent=sender["id"],
                              document_type=kind["id"], document_date="2024-03-12",
                              archive_serial_number=17)
    assert response.status_code == 200, response.text
    assert about(alice, document) == {
        "correspondent": sender["id"], "document_type": kind["id"],
        "document_date": "2024-03-12", "archive_serial_number": 17, "custom_fields": [],
        "notes_count": 0}
    counted = alice.get(f"/api/correspondents/{sender['id']}/").json()["data"]["attributes"]
    assert (counted["document_count"], counted["last_correspondence"]) == (1, "2024-03-12")
    # A duplicate number, another user's name, an impossible date: 400, and nothing changes.
    before = about(alice, other)
    assert_error(patch_document(alice, other, title="Neu", archive_serial_number=17), 400,
                 "invalid", "Archive serial number 17 is already used by another of your "
                 "documents (the trash included).", "/data/attributes/archive_serial_number")
    bobs = created(bob, "correspondents", name="Finanzamt")
    assert_error(patch_document(alice, other, correspondent=bobs["id"]), 400, "invalid",
                 "You have no correspondent with this id.", "/data/attributes/correspondent")
    assert_error(patch_document(alice, other, document_date="2024-02-30"), 400, "invalid",
                 "document_date must be a real date written YYYY-MM-DD; '2024-02-30' is not.",
                 "/data/attributes/document_date")
    assert about(alice, other) == before
    assert alice.get(f"/api/documents/{other}/").json()["data"]["attributes"]["title"] == "Brief"
    # Deleting the correspondent clears it; the document stays, with its event.
    assert alice.delete(f"/api/correspondents/{sender['id']}/").status_code == 204
    assert about(alice, document)["correspondent"] is None
    history = alice.get(f"/api/nodes/{document}/history/").json()["data"]
    assert [(e["attributes"]["action"], e["attributes"]["details"]) for e in history[:2]] == [
        ("metadata_changed", {"changes": {"correspondent": {"from": "Finanzamt", "to": None}}}),
        ("metadata_changed", {"changes": {
            "correspondent": {"from": None, "to": "Finanzamt"},
            "document_type": {"from": None, "to": "Bescheid"},
            "document_date": {"from": upload_day(alice, document), "to": "2024-03-12"},
            "archive_serial_number": {"from": None, "to": 17}}}),
    ]
    # null sets the date back to the upload date.
    patch_document(alice, document, document_date=None)
    assert about(alice, document)["document_date"] == upload_day(alice, document)


FIELDS = [  # (data_type, extra_data, value sent, value answered)
    ("string", {}, "Vertrag 4711", "Vertrag 4711"),
    ("longtext", {}, "Zeile 1\nZeile 2", "Zeile 1\nZeile 2"),
    ("longtext", {}, "Ä" * 65_536, "Ä" * 65_536),  # far past an index entry of PostgreSQL's
    ("url", {}, "https://example.org/vertrag?id=1", "https://example.org/vertrag?id=1"),
    ("date", {}, "2024-12-31", "2024-12-31"),
    ("boolean", {}, False, False),
    ("integer", {}, -2147483648, -2147483648),
    ("float", {}, 3.25, 3.25),
    ("monetary", {}, "EUR12.3", "EUR12.30"),
    ("monetary", {"default_currency": "USD"}, "12.30", "USD12.30"),
    ("monetary", {}, "-7.5", "-7.50"),
]


def test_every_type_reads_back_in_its_encoding(alice):
    document = new_document(alice, "Vertrag")
    sent, answered = [], []
    for index, (data_type, extra, value, expected) in enumerate(FIELDS):
        field = created(alice, "custom-fields", name=f"f{index:02d}", data_type=data_type,
                        extra_data=extra)
        sent.append({"field": field["id"], "value": value})
        answered.append({"field": field["id"], "value": expected})
    response = patch_document(alice, document, custom_fields=sent)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["attributes"]["custom_fields"] == answered
    assert about(alice, document)["custom_fields"] == answered


REFUSED = [  # (data_type, extra_data, value, the sentence)
    ("monetary", {}, "EUR12.345", "A value of the monetary field 'f' is an amount with at most "
     "two decimals, after an optional currency code: EUR12.30, -5.00 or 7.5."),
    ("date", {}, "2024-02-30", "A value of the date field 'f' must be a real date written "
     "YYYY-MM-DD; '2024-02-30' is not."),
    ("integer", {}, 2 ** 31, "A value of the integer field 'f' is a whole number from "
     "-2,147,483,648 to 2,147,483,647."),
    ("integer", {}, True, "A value of the integer field 'f' is a whole number from "
     "-2,147,483,648 to 2,147,483,647."),
    ("url", {}, "javascript:alert(1)", "A value of the url field 'f' must be an absolute http "
     "or https address, such as https://example.org/contract."),
    ("select", {"select_options": [{"id": "a", "label": "Offen"}]}, "b",
     "'b' is not an option of the select field 'f'."),
    ("boolean", {}, "yes", "A value of the boolean field 'f' is true or false."),
    ("string", {}, "x" * 129, "A value of the string field 'f' is text of at most 128 "
     "characters."),
]


@pytest.mark.parametrize("data_type,extra,value,sentence", REFUSED,
                         ids=[f"{r[0]}-{r[2]!s:.12}" for r in REFUSED])
def test_a_refused_value_names_its_element_and_changes_nothing(alice, config, data_type, extra,
                                                               value, sentence):
    document = new_document(alice, "Vertrag")
    kept = created(alice, "custom-fields", name="kept", data_type="string")
    assert patch_document(alice, document, custom_fields=[
        {"field": kept["id"], "value": "bleibt"}]).status_code == 200
    field = created(alice, "custom-fields", name="f", data_type=data_type, extra_data=extra)
    before, rows = about(alice, document), snapshot(config)
    response = patch_document(alice, document, title="Neu", archive_serial_number=1,
                              custom_fields=[{"field": field["id"], "value": value}])
    assert_error(response, 400, "invalid", sentence,
                 "/data/attributes/custom_fields/0/value")
    assert (about(alice, document), snapshot(config)) == (before, rows)
    assert alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["title"] \
        == "Vertrag"


def test_another_users_field_or_document_is_unknown(alice, bob):
    document = new_document(alice, "Vertrag")
    bobs_field = created(bob, "custom-fields", name="Betrag", data_type="monetary")
    bobs_document = new_document(bob, "Bobs")
    assert bob.get(f"/api/custom-fields/{bobs_field['id']}/").status_code == 200
    assert alice.get(f"/api/custom-fields/{bobs_field['id']}/").json() == NOT_FOUND
    assert_error(patch_document(alice, document, custom_fields=[
        {"field": bobs_field["id"], "value": "EUR1.00"}]), 400, "invalid",
        "You have no custom field with this id.", "/data/attributes/custom_fields/0/field")
    link = created(alice, "custom-fields", name="Bezug", data_type="documentlink")
    assert_error(patch_document(alice, document, custom_fields=[
        {"field": link["id"], "value": [bobs_document]}]), 400, "invalid",
        "You have no document with this id.", "/data/attributes/custom_fields/0/value/0")
    assert about(alice, document)["custom_fields"] == []


def test_links_are_kept_both_ways_and_hidden_while_an_end_is_in_the_trash(alice):
    policy, letter, bill = (new_document(alice, title) for title in ("Police", "Brief", "Rechnung"))
    link = created(alice, "custom-fields", name="Bezug", data_type="documentlink")

    def links_of(document):
        return [item["value"] for item in about(alice, document)["custom_fields"]]

    assert patch_document(alice, policy, custom_fields=[
        {"field": link["id"], "value": [letter, bill]}]).status_code == 200
    assert (links_of(policy), links_of(letter), links_of(bill)) == (
        [[letter, bill]], [[policy]], [[policy]])
    assert alice.delete(f"/api/documents/{letter}/").status_code == 204
    assert (links_of(policy), links_of(bill)) == ([[bill]], [[policy]])
    assert alice.post(f"/api/trash/{letter}/restore/").status_code == 200
    assert (links_of(policy), links_of(letter)) == ([[letter, bill]], [[policy]])
    # Taking a link away on one end takes it away on the other.
    assert patch_document(alice, bill, custom_fields=[
        {"field": link["id"], "value": []}]).status_code == 200
    assert (links_of(policy), links_of(bill)) == ([[letter]], [None])
    # The field taken off the document entirely: its links go both ways too.
    assert patch_document(alice, policy, custom_fields=[]).status_code == 200
    assert (links_of(policy), links_of(letter)) == ([], [None])
    assert_error(patch_document(alice, policy, custom_fields=[
        {"field": link["id"], "value": [policy]}]), 400, "invalid",
        "A document cannot link to itself.", "/data/attributes/custom_fields/0/value/0")


def test_select_options_get_ids_and_a_removed_option_clears_its_values(alice):
    field = created(alice, "custom-fields", name="Status", data_type="select",
                    extra_data={"select_options": [{"label": "Offen"}, {"id": "paid",
                                                                         "label": "Bezahlt"}]})
    options = field["attributes"]["extra_data"]["select_options"]
    assert [option["label"] for option in options] == ["Offen", "Bezahlt"]
    assert options[1]["id"] == "paid" and len(options[0]["id"]) == 16
    document = new_document(alice, "Rechnung")
    patch_document(alice, document, custom_fields=[{"field": field["id"], "value": "paid"}])
    assert about(alice, document)["custom_fields"] == [{"field": field["id"], "value": "paid"}]
    assert_error(alice.patch(f"/api/custom-fields/{field['id']}/", body(
        "custom-fields", data_type="string")), 400, "invalid",
        "A custom field's data_type cannot change; create a new field.",
        "/data/attributes/data_type")
    response = alice.patch(f"/api/custom-fields/{field['id']}/", body(
        "custom-fields", extra_data={"select_options": [options[0]]}))
    assert response.status_code == 200, response.text
    assert about(alice, document)["custom_fields"] == [{"field": field["id"], "value": None}]


def test_notes_are_added_listed_newest_first_and_deleted(alice, bob):
    document = new_document(alice, "Vertrag")
    first = alice.post(f"/api/documents/{document}/notes/",
                       {"data": {"attributes": {"note": "Gekündigt am 3. Mai"}}})
    assert first.status_code == 201, first.text
    note = first.json()["data"]
    assert note == {"type": "notes", "id": note["id"], "attributes": {
        "note": "Gekündigt am 3. Mai", "created_at": note["attributes"]["created_at"],
        "user": "alice"}}
    alice.post(f"/api/documents/{document}/notes/",
               {"data": {"type": "notes", "attributes": {"note": "Bestätigung kam"}}})
    listed = alice.get(f"/api/documents/{document}/notes/").json()["data"]
    assert [n["attributes"]["note"] for n in listed] == ["Bestätigung kam", "Gekündigt am 3. Mai"]
    assert about(alice, document)["notes_count"] == 2
    assert bob.get(f"/api/documents/{document}/notes/").json() == NOT_FOUND
    assert bob.delete(f"/api/notes/{note['id']}/").json() == NOT_FOUND
    assert_error(alice.post(f"/api/documents/{document}/notes/",
                            {"data": {"attributes": {"note": "  "}}}), 400, "invalid",
                 "A note is text that is not blank.", "/data/attributes/note")
    assert alice.delete(f"/api/notes/{note['id']}/").status_code == 204
    assert about(alice, document)["notes_count"] == 1
