"""What a new document gets by itself once read (api.md §16), on the fast tier with the queue's
workers reading real files: the correspondent and type whose match finds something in the text,
the date printed on the paper (German and English letters), each only where nobody set one, with
its `metadata_changed` event by dms itself; a name matching `none` is never chosen."""

from __future__ import annotations

from dms.domain import tree
from dms.domain.metadata import document as metadata
from dms.domain.metadata import labels
from tests.harness import samples
from tests.harness.domaintier import (
    events_of,
    new_document,
    new_user,
    read_document,
    upload_file,
    wait_read,
)

GERMAN_LETTER = ("Stadtwerke Musterstadt GmbH, Kundennummer 123456, Tel. 0221 12 03 2024\n"
                 "Köln, den 12.03.2024\n\nRechnung Nr. 4711 für März\nFällig am 30.04.2024\n")
ENGLISH_LETTER = samples.pdf([["Acme Insurance Ltd", "Policy 998-221",
                               "London, 5 March 2024", "Your renewal notice"]])


def about(document_id: str) -> dict:
    return metadata.about([document_id])[document_id]


def names(alice):
    power = labels.create(labels.CORRESPONDENTS, alice, {
        "name": "Stadtwerke", "match": "stadtwerke", "matching_algorithm": "any"})
    insurer = labels.create(labels.CORRESPONDENTS, alice, {
        "name": "Acme", "match": "acme insurance", "matching_algorithm": "exact"})
    labels.create(labels.CORRESPONDENTS, alice, {"name": "Musterstadt", "match": "musterstadt"})
    bill = labels.create(labels.DOCUMENT_TYPES, alice, {
        "name": "Rechnung", "match": r"Rechnung Nr\. \d+", "matching_algorithm": "regex",
        "is_insensitive": False})
    return power, insurer, bill


def test_a_german_letter_gets_its_sender_type_and_date(reading):
    alice = new_user("alice")
    power, _, bill = names(alice)
    document = read_document(reading, alice, "Brief", "brief.txt", GERMAN_LETTER.encode())
    found = about(document)
    assert found == {
        "correspondent": power.id, "document_type": bill.id, "document_date": "2024-03-12",
        "archive_serial_number": None, "custom_fields": [], "notes_count": 0,
        "paperless_id": found["paperless_id"]}
    assert isinstance(found["paperless_id"], int) and found["paperless_id"] > 0
    changed = [details for action, details in events_of(alice, document)
               if action == "metadata_changed"]
    created_day = changed[0]["changes"]["document_date"]["from"]
    assert changed == [{"changes": {
        "correspondent": {"from": None, "to": "Stadtwerke"},
        "document_type": {"from": None, "to": "Rechnung"},
        "document_date": {"from": created_day, "to": "2024-03-12"}}}]


def test_an_english_letter_gets_its_date_and_what_a_person_set_stays(reading):
    alice = new_user("alice")
    power, insurer, _ = names(alice)
    document = new_document(reading, alice, "Renewal")
    # Set by hand before the file is read: the reading must not undo it.
    metadata.update_node(alice, document, "document", {"correspondent": power.id,
                                                        "document_date": "2024-01-01"})
    upload_file(reading, alice, document, "renewal.pdf", ENGLISH_LETTER)
    assert wait_read(document)[-1] == "succeeded"
    assert (about(document)["correspondent"], about(document)["document_date"]) == (
        power.id, "2024-01-01")
    other = read_document(reading, alice, "Renewal 2", "renewal.pdf", ENGLISH_LETTER)
    assert (about(other)["correspondent"], about(other)["document_type"],
            about(other)["document_date"]) == (insurer.id, None, "2024-03-05")


def test_a_letter_without_a_readable_date_keeps_the_upload_date(reading):
    alice = new_user("alice")
    document = read_document(reading, alice, "Notiz", "notiz.txt",
                             b"Einkaufsliste: Milch, Brot, 2 kg Mehl\nam 04/05/2024 abholen\n")
    created = tree.owned_node(alice, document).created_at
    assert about(document)["document_date"] == created.date().isoformat()  # the upload day
    assert [action for action, _ in events_of(alice, document)
            if action == "metadata_changed"] == []
