"""One duplicate rule for files coming in (api.md §22, "What went wrong is visible"): a file is a
duplicate for a user when a document the user owns, outside the trash, has a current (newest)
version with the same bytes (SHA-256) — or is a part the intake split from a batch with those
bytes. Only the user's own documents count: papers shared with them are another user's, and a
refusal must never name another user's document (or tell that it exists).

A caller chooses what happens (`if_duplicate`): `keep` adds the copy (the API's default, as
before), `refuse` changes nothing and answers with the existing document (errors.Duplicate: 409
naming its title and folder, its id in the error's `meta`). The consume folder follows
DMS_CONSUME_IF_DUPLICATE (default `refuse`, and the refusal is listed among the user's intake
refusals). The rules of the intake's one import function are here too (ImportRule): `dms import`
keeps its older rule, a copy in the same folder (a re-run adds nothing), and mail its own.

Concurrency: the check runs inside the write transaction that adds the file, holding the user's
owner scope (dms.db.owner_scope), so two identical uploads at once make exactly one document —
on SQLite the write lock orders them, on PostgreSQL the scope's advisory lock does."""

from __future__ import annotations

import datetime as dt
from typing import Protocol, cast

from dms.db import database, owner_scope
from dms.db.models import Node, User
from dms.errors import Duplicate, Invalid

CHOICES = ("refuse", "keep")
DEFAULT_CHOICE = "keep"
SPECIAL_NAMES = {Node.HOME: "Home", Node.INBOX: "Inbox"}


def check_choice(value: object, field: str | None = None) -> str:
    """`refuse` or `keep` (None: the default, keep). `field`: None for a query parameter."""
    if value is None:
        return DEFAULT_CHOICE
    if value not in CHOICES:
        raise Invalid(f"if_duplicate must be refuse or keep, not {str(value)[:100]!r}.", field)
    return cast(str, value)


def scope_of(user: User) -> str:
    """The write-transaction scope a check of `user`'s files must hold."""
    return owner_scope(user.id)


def existing_copy(user: User, sha256: str, exclude: str | None = None) -> Node | None:
    """The user's oldest document (not `exclude`) whose newest version has these bytes."""
    # From the versions with these bytes (indexed, migration 0034) to their documents: CROSS
    # JOIN keeps SQLite's planner from walking every document of the owner instead.
    row = database.execute_sql(
        "SELECT n.id FROM document_version AS v CROSS JOIN node AS n "
        "WHERE n.id = v.document_id AND (v.sha256 = ? OR v.source_sha256 = ?) "
        "AND n.owner_id = ? AND n.kind = ? AND n.trash_id IS NULL AND n.id <> ? "
        "AND v.number = (SELECT max(w.number) FROM document_version AS w "
        "WHERE w.document_id = n.id) ORDER BY n.created_at, n.id LIMIT 1",
        (sha256, sha256, user.id, Node.DOCUMENT, exclude or "")).fetchone()
    return cast("Node | None", Node.get_or_none(Node.id == row[0])) if row else None


def describe(document: Node) -> tuple[str, dict[str, object]]:
    """The sentence naming an existing copy, and the error's `meta`."""
    folder = cast(Node, Node.get_by_id(document.parent_id))
    folder_name = SPECIAL_NAMES.get(folder.special or "", folder.title)
    sentence = f"You already have this file: \u201c{document.title}\u201d in {folder_name}."
    meta: dict[str, object] = {"existing": {"id": document.id, "title": document.title,
                                            "folder": {"id": folder.id, "title": folder.title}}}
    return sentence, meta


def made_from(error: Duplicate, file_name: str, written: dt.datetime) -> bool:
    """Was the existing document of `error` made from a file `file_name` last written at
    `written` (UTC)? Its first version has that name and it was made after the file was
    written: the consume folder's own import, seen again (another node, a crash before the
    file's removal)."""
    existing = error.meta.get("existing") if error.meta else None
    if not isinstance(existing, dict):
        return False
    return database.execute_sql(
        "SELECT 1 FROM node AS n JOIN document_version AS v ON v.document_id = n.id "
        "WHERE n.id = ? AND v.number = 1 AND v.file_name = ? AND n.created_at >= ?",
        (existing["id"], file_name, Node.created_at.db_value(written))).fetchone() is not None


def refuse_if_held(user: User, sha256: str, exclude: str | None = None) -> None:
    """Raise Duplicate when the user already has these bytes (inside the write transaction
    holding scope_of(user))."""
    existing = existing_copy(user, sha256, exclude)
    if existing is not None:
        sentence, meta = describe(existing)
        raise Duplicate(sentence, meta)


class ImportRule(Protocol):
    """What makes an imported file a duplicate, and what is written with a new document; both
    run inside the transaction that adds it."""

    def holds(self, user: User, folder_id: str, sha256: str) -> bool: ...

    def added(self, user: User, document: Node, sha256: str) -> None: ...


class SameFolder:
    """`dms import` and the consume folder: a file is a duplicate when a document in the folder
    already holds a version with its SHA-256 (a re-run after an interruption adds nothing)."""

    def holds(self, user: User, folder_id: str, sha256: str) -> bool:
        return folder_holds(user, folder_id, sha256)

    def added(self, user: User, document: Node, sha256: str) -> None:
        pass


SAME_FOLDER = SameFolder()


class AnyCopy:
    """The consume folder under DMS_CONSUME_IF_DUPLICATE=refuse (api.md §22): a file the user
    already has anywhere (the rule above) is refused with a sentence naming the existing
    document, which the intake lists among its refusals — not dropped without a word. Its own
    copy left by a crash between the import and the file's removal is refused the same way."""

    def holds(self, user: User, folder_id: str, sha256: str) -> bool:
        refuse_if_held(user, sha256)
        return False

    def added(self, user: User, document: Node, sha256: str) -> None:
        pass


class KeepCopies:
    """DMS_CONSUME_IF_DUPLICATE=keep: every file becomes a document, copies included."""

    def holds(self, user: User, folder_id: str, sha256: str) -> bool:
        return False

    def added(self, user: User, document: Node, sha256: str) -> None:
        pass


def folder_holds(user: User, folder_id: str, sha256: str) -> bool:
    """Does a document of the user's folder hold a version with these bytes?"""
    return database.execute_sql(
        "SELECT 1 FROM node AS n JOIN document_version AS v ON v.document_id = n.id "
        "WHERE n.parent_id = ? AND n.owner_id = ? AND n.trash_id IS NULL "
        "AND (v.sha256 = ? OR v.source_sha256 = ?) LIMIT 1",
        (folder_id, user.id, sha256, sha256)).fetchone() is not None
