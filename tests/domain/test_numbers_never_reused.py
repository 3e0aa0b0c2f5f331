"""A number of the Paperless-ngx dialect names one object for ever (api.md §17, migration 0042):
after the object with the highest number is deleted — a document purged from the trash, a tag or
a note deleted — the next one gets a higher number, never the freed one, on both engines."""

from __future__ import annotations

from dms.db import database, is_postgresql
from dms.domain import numbers, tags, trash
from dms.domain.metadata import notes
from tests.harness.domaintier import home_id, new_document, new_user


def number_of(kind: str, object_id: str) -> int:
    return numbers.numbers_of(kind, [object_id])[object_id]


def test_a_purged_documents_number_is_not_given_again(services):
    alice = new_user("alice")
    first = new_document(services, alice, "First", home_id(alice))
    last = new_document(services, alice, "Last", home_id(alice))
    freed = number_of("document", last)
    trash.delete(services, alice, last)
    trash.purge(services, alice, last)
    assert numbers.ids_of("document", [freed]) == {}

    again = new_document(services, alice, "Again", home_id(alice))
    assert number_of("document", again) == freed + 1
    then = new_document(services, alice, "Then", home_id(alice))
    assert number_of("document", then) == freed + 2
    assert numbers.ids_of("document", [number_of("document", first), freed, freed + 1]) == {
        number_of("document", first): first, freed + 1: again}


def test_a_deleted_tags_and_notes_numbers_are_not_given_again(services):
    alice = new_user("alice")
    document = new_document(services, alice, "Letter", home_id(alice))
    kept, last = tags.create_tag(alice, {"name": "kept"}), tags.create_tag(alice, {"name": "last"})
    freed = number_of("tag", last.id)
    tags.delete_tag(alice, last.id)
    assert number_of("tag", tags.create_tag(alice, {"name": "new"}).id) == freed + 1
    # A row below the highest deleted: the next number is still one more than the highest.
    tags.delete_tag(alice, kept.id)
    assert number_of("tag", tags.create_tag(alice, {"name": "newer"}).id) == freed + 2

    note = notes.add_note(alice, document, "call them")
    freed_note = number_of("note", note.id)
    notes.delete_note(alice, note.id)
    assert number_of("note", notes.add_note(alice, document, "called").id) == freed_note + 1


def test_sqlite_keeps_only_the_highest_deleted_number(services):
    """What SQLite keeps for it: one row per table, written when the highest row goes."""
    if is_postgresql():
        assert "number_high" not in database.get_tables()  # identity columns keep it
        return
    alice = new_user("alice")
    names = [tags.create_tag(alice, {"name": f"t{n}"}) for n in range(3)]
    tags.delete_tag(alice, names[0].id)  # not the highest: nothing kept
    assert database.execute_sql("SELECT name, high FROM number_high WHERE name = 'tag'"
                                ).fetchall() == []
    top = number_of("tag", names[2].id)
    tags.delete_tag(alice, names[2].id)
    assert database.execute_sql("SELECT name, high FROM number_high WHERE name = 'tag'"
                                ).fetchall() == [("tag", top)]
