"""Notes on a document (api.md §16): text a person adds to a document, newest first, searchable
(the search heading's metadata words, migration 0021). Adding or deleting one is a change of the
document: a `metadata_changed` event, and `document.updated` for webhooks."""

from __future__ import annotations

from typing import Any, cast

from peewee import JOIN

from dms.db import database, events
from dms.db.models import Node, Note, User, new_id, utcnow
from dms.domain.access.rule import VIEWER, changing, reach
from dms.errors import Invalid, NotFound
from dms.text import has_refused_characters

MAX_NOTE_LENGTH = 65_536
MAX_NOTES_PER_DOCUMENT = 1000
PREVIEW_CHARS = 80  # of a note, in its event: events name things, they do not carry them


def notes_of(user: User, document_id: str) -> Any:
    """The notes of a live document the caller may read, newest first (a query to paginate)."""
    reach(user, document_id, VIEWER, Node.DOCUMENT)
    return (Note.select(Note, User.username.alias("username"))
            .join(User, on=(User.id == Note.user), join_type=JOIN.LEFT_OUTER)
            .where(Note.document == document_id)
            .order_by(Note.created_at.desc(), Note.id.desc()).objects())


def check_note(value: object) -> str:
    if value is None:
        raise Invalid("A note is required.", "note", code="required")
    if not isinstance(value, str) or not value.strip():
        raise Invalid("A note is text that is not blank.", "note")
    if len(value) > MAX_NOTE_LENGTH:
        raise Invalid(f"A note has at most {MAX_NOTE_LENGTH:,} characters.", "note")
    if has_refused_characters(value.replace("\n", "").replace("\r", "").replace("\t", "")):
        raise Invalid("A note may not contain control characters or invisible formatting "
                      "characters.", "note")
    return value.strip()


def add_note(user: User, document_id: str, value: object) -> Note:
    text = check_note(value)
    with changing(user, document_id, Node.DOCUMENT) as reached:
        document = reached.node
        if Note.select().where(Note.document == document.id).count() >= MAX_NOTES_PER_DOCUMENT:
            raise Invalid(f"A document has at most {MAX_NOTES_PER_DOCUMENT} notes; delete old "
                          "ones first.", "note")
        note_id = new_id()
        Note.insert(id=note_id, document=document.id, user=user.id, note=text,
                    created_at=utcnow()).execute()
        events.record(document.owner_id, document.id, events.METADATA_CHANGED, user.id,
                      notes={"added": note_id, "text": text[:PREVIEW_CHARS]})
    return with_author(note_id)


def delete_note(user: User, note_id: str) -> None:
    """Any note on a live document of the caller's, or shared with them as editor."""
    note = Note.get_or_none(Note.id == note_id)
    if note is None:
        raise NotFound()
    with changing(user, note.document_id, Node.DOCUMENT) as reached:
        if Note.get_or_none(Note.id == note_id) is None:  # deleted meanwhile
            raise NotFound()
        Note.delete().where(Note.id == note.id).execute()
        events.record(reached.node.owner_id, note.document_id, events.METADATA_CHANGED, user.id,
                      notes={"deleted": note.id, "text": note.note[:PREVIEW_CHARS]})


def with_author(note_id: str) -> Note:
    """The note with `username`, its author's (None once that account is gone)."""
    return cast(Note, Note.select(Note, User.username.alias("username"))
                .join(User, on=(User.id == Note.user), join_type=JOIN.LEFT_OUTER)
                .where(Note.id == note_id).objects().get())


def note_ids_of(document_id: str) -> set[str]:
    """The ids of the document's notes."""
    return {str(row[0]) for row in database.execute_sql(
        "SELECT id FROM note WHERE document_id = ?", (document_id,))}
