"""A page of documents' facts (dms.domain.documents.facts, behind the Paperless-ngx dialect's
documents): read from a listing's rows they are exactly what reading them by id gives — each
document's pages' text in order, its latest version, the caller's tags, its notes and metadata
— and a folder among the rows is left out."""

from __future__ import annotations

from dms.db import write_transaction
from dms.db.models import DocumentVersion, Page, new_id, utcnow
from dms.domain import listings, tags
from dms.domain.documents import facts
from dms.domain.metadata import document as metadata
from dms.domain.metadata import labels, notes
from dms.domain.rows import DOCUMENT
from tests.harness.database import add_document
from tests.harness.domaintier import home_id, new_document, new_folder, new_user


def add_version(document_id: str, number: int, texts: list[str]) -> None:
    """A newer version of the document with these pages (none: a version without pages)."""
    version_id = new_id()
    with write_transaction():
        DocumentVersion.insert(id=version_id, document=document_id, number=number,
                               file_name=f"v{number}.pdf", mime_type="application/pdf", size=10,
                               page_count=len(texts), sha256=str(number) * 64, lang="eng",
                               created_at=utcnow()).execute()
        for page, text in enumerate(texts, 1):
            Page.insert(id=new_id(), version=version_id, number=page, text=text,
                        method="text").execute()


def test_facts_of_a_listings_rows_are_the_facts_read_by_id(services):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Bills", home_id(alice))
    letter = add_document(alice.id, folder, "Letter", "old text")
    add_version(letter, 2, ["page one", "page two", "page three"])
    plain = add_document(alice.id, folder, "Plain", "one page")
    empty = new_document(services, alice, "Empty", folder)  # no version at all
    scanned = add_document(alice.id, folder, "Scanned", "x")
    add_version(scanned, 2, [])  # its newest version has no pages (yet)
    tags.put_on(letter, [tags.create_tag(alice, {"name": "paid"}).id,
                         tags.create_tag(alice, {"name": "2024"}).id])
    acme = labels.create(labels.CORRESPONDENTS, alice, {"name": "ACME"})
    metadata.update_node(alice, plain, DOCUMENT, {"correspondent": acme.id,
                                                  "document_date": "2024-03-12"})
    notes.add_note(alice, letter, "call them")
    new_folder(services, alice, "Inner", folder)

    rows = listings.of_kind(alice, DOCUMENT).fetch(0, 10) + \
        listings.of_kind(alice, "folder").fetch(0, 10)
    from_rows = facts.facts_of_rows(rows, alice.id)
    by_id = facts.facts([letter, plain, empty, scanned], alice.id)

    assert from_rows == by_id
    assert sorted(from_rows) == sorted([letter, plain, empty, scanned])
    assert from_rows[letter].text == "page one\n\npage two\n\npage three"
    assert from_rows[letter].latest is not None
    assert from_rows[letter].latest.sha256 == "2" * 64
    assert [note.note for note in from_rows[letter].notes] == ["call them"]
    assert len(from_rows[letter].tag_ids) == 2
    assert from_rows[plain].text == "one page"
    assert from_rows[plain].about["correspondent"] == acme.id
    assert from_rows[plain].about["document_date"] == "2024-03-12"
    assert (from_rows[empty].latest, from_rows[empty].text) == (None, "")
    assert from_rows[scanned].latest is not None
    assert (from_rows[scanned].latest.file_name, from_rows[scanned].text) == ("v2.pdf", "")
