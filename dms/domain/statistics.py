"""A user's library in numbers (what Paperless-ngx's apps and Home Assistant show: GET
/paperless/api/statistics/, api.md §17): their own live documents, by file type, the characters of
their text, the documents in their .inbox and those carrying an inbox tag, their tags,
correspondents and document types, and the highest archive serial number. Each a count over the
owner's indexes; the characters read the text of every latest version (what Paperless-ngx does
too), again only after the user's library changed."""

from __future__ import annotations

from typing import NamedTuple

from dms.db import database
from dms.db.models import Node, User
from dms.domain.access.following import newest_event
from dms.domain.tree import LIVE

MAX_REMEMBERED = 1000  # users whose characters this process remembers
# {user id: (their newest event id then, characters)}; per process, checked against the database.
_CHARACTERS: dict[str, tuple[int, int]] = {}
LATEST = ("v.number = (SELECT max(number) FROM document_version WHERE document_id = n.id)")


class Library(NamedTuple):
    documents: int
    in_inbox: int
    file_types: list[tuple[str, int]]  # (MIME type, documents), the most common first
    characters: int
    tags: int
    correspondents: int
    document_types: int
    highest_asn: int | None
    inbox_tags: list[str]  # the ids of the user's inbox tags, by name
    with_inbox_tag: int  # their documents carrying one


def library_of(user: User) -> Library:
    mine = f"n.owner_id = ? AND n.kind = 'document' AND n.{LIVE}"
    file_types = [(mime, count) for mime, count in database.execute_sql(
        f"SELECT v.mime_type, count(*) FROM node AS n JOIN document_version AS v "
        f"ON v.document_id = n.id AND {LATEST} WHERE {mine} GROUP BY v.mime_type "
        "ORDER BY count(*) DESC, v.mime_type", (user.id,))]
    characters = _characters(user, mine)
    counts = database.execute_sql(
        f"SELECT (SELECT count(*) FROM node AS n WHERE {mine}), "
        f"(SELECT count(*) FROM node AS n WHERE {mine} AND n.parent_id = (SELECT id FROM node "
        "WHERE owner_id = ? AND special = ?)), "
        "(SELECT count(*) FROM tag WHERE owner_id = ?), "
        "(SELECT count(*) FROM correspondent WHERE owner_id = ?), "
        "(SELECT count(*) FROM document_type WHERE owner_id = ?), "
        f"(SELECT max(n.asn) FROM node AS n WHERE {mine})",
        (user.id, user.id, user.id, Node.INBOX, user.id, user.id, user.id, user.id)).fetchone()
    documents, in_inbox, tags, correspondents, document_types, highest_asn = counts
    inbox_tags = [tag_id for (tag_id,) in database.execute_sql(
        "SELECT id FROM tag WHERE owner_id = ? AND is_inbox_tag = ? ORDER BY name_key, id",
        (user.id, True))]
    with_inbox_tag = database.execute_sql(
        f"SELECT count(*) FROM node AS n WHERE {mine} AND n.id IN (SELECT node_id FROM node_tag "
        "WHERE tag_id IN (SELECT id FROM tag WHERE owner_id = ? AND is_inbox_tag = ?))",
        (user.id, user.id, True)).fetchone()[0] if inbox_tags else 0
    return Library(documents, in_inbox, file_types, int(characters), tags, correspondents,
                   document_types, highest_asn, inbox_tags, with_inbox_tag)


def _characters(user: User, mine: str) -> int:
    """The characters of the text of the user's documents' latest versions: read again only
    when the user's newest event changed since (every upload, reading, page operation,
    deletion and restore is one), as Home Assistant asks every few minutes and the sum reads
    every page's text."""
    newest = newest_event(user.id)
    known = _CHARACTERS.get(user.id)
    if known is not None and known[0] == newest:
        return known[1]
    characters = int(database.execute_sql(
        f"SELECT coalesce(sum(length(p.text)), 0) FROM node AS n JOIN document_version AS v "
        f"ON v.document_id = n.id AND {LATEST} JOIN page AS p ON p.version_id = v.id "
        f"WHERE {mine}", (user.id,)).fetchone()[0])
    if len(_CHARACTERS) >= MAX_REMEMBERED and user.id not in _CHARACTERS:
        _CHARACTERS.pop(next(iter(_CHARACTERS)), None)  # the longest remembered goes
    _CHARACTERS[user.id] = (newest, characters)
    return characters


def highest_asn(user: User) -> int | None:
    """The highest archive serial number of the user's documents (in the trash too: a number
    stays taken)."""
    highest = database.execute_sql("SELECT max(asn) FROM node WHERE owner_id = ? "
                                   "AND asn IS NOT NULL", (user.id,)).fetchone()[0]
    return int(highest) if highest is not None else None
