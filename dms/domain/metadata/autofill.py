"""What a new document gets by itself once its text is known (api.md §16): the correspondent and
the document type whose `match` finds something in the text, and the date printed on the paper
(dms.domain.metadata.dates) — each only where neither a rule nor a person set one — and the tags
whose `match` finds something, and the inbox tags (added to the tags it has).

`suggest` works outside any transaction, in the worker that read the document (rules' `prepare`,
dms.domain.rules.filing, calls it after the rules are worked out); `apply` runs in the transaction
that ends the reading, after the rules' steps, and writes a column only while it is still unset,
in the same UPDATE, so a person's change committed meanwhile is never overwritten. Names are
tried in name order, the first that matches wins (as Paperless-ngx picks one); matching stops at
the deadline the rules have (DMS_RULES_MAX_SECONDS), the names not yet tried are skipped."""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from dms.db import database, events
from dms.domain import matching, tagtree
from dms.domain.metadata.dates import read_document_date
from dms.domain.metadata.labels import CORRESPONDENTS, DOCUMENT_TYPES, UNMATCHED, Kind
from dms.errors import DomainError

log = logging.getLogger("dms.metadata")


@dataclass(frozen=True)
class Suggestion:
    """What the text suggests: (id, name) of a correspondent and a type, the date read, and the
    tags the document gets (those whose pattern matches, and the inbox tags)."""
    correspondent: tuple[str, str] | None = None
    document_type: tuple[str, str] | None = None
    document_date: str | None = None
    tags: tuple[tuple[str, str], ...] = ()


def suggest(owner_id: str, text: matching.Words, today: dt.date, deadline: float) -> Suggestion:
    found = {kind.attribute: _first_match(kind, owner_id, text, deadline)
             for kind in (CORRESPONDENTS, DOCUMENT_TYPES)}
    date = read_document_date(text.text, today)
    return Suggestion(found["correspondent"], found["document_type"],
                      date.isoformat() if date else None, _tags(owner_id, text, deadline))


def _tags(owner_id: str, text: matching.Words, deadline: float) -> tuple[tuple[str, str], ...]:
    """Every tag of the owner's whose pattern finds something in the text (unlike a
    correspondent, not only the first), and every inbox tag, by name."""
    chosen = []
    for tag_id, name, pattern, algorithm, insensitive, inbox in database.execute_sql(
            "SELECT id, name, match, matching_algorithm, is_insensitive, is_inbox_tag FROM tag "
            "WHERE owner_id = ? AND (is_inbox_tag = ? OR (matching_algorithm NOT IN (?, ?) "
            "AND match <> '')) ORDER BY name_key, id", (owner_id, True, *UNMATCHED)):
        if inbox:
            chosen.append((tag_id, name))
            continue
        if time.monotonic() > deadline:
            log.warning("tags of user %s not all tried: the time of DMS_RULES_MAX_SECONDS ran "
                        "out", owner_id)
            continue
        try:
            hit = matching.find(matching.Pattern("text", algorithm, pattern, not insensitive),
                                {"text": text})
        except DomainError as error:  # a pattern this RE2 refuses (saved by another version)
            log.warning("tag %s could not be matched: %s", tag_id, error.message)
            continue
        if hit is not None:
            chosen.append((tag_id, name))
    return tuple(chosen)


def _first_match(kind: Kind, owner_id: str, text: matching.Words,
                 deadline: float) -> tuple[str, str] | None:
    rows = database.execute_sql(
        f"SELECT id, name, match, matching_algorithm, is_insensitive FROM {kind.table} "
        "WHERE owner_id = ? AND matching_algorithm NOT IN (?, ?) AND match <> '' "
        "ORDER BY name_key, id", (owner_id, *UNMATCHED)).fetchall()
    for label_id, name, pattern, algorithm, insensitive in rows:
        if time.monotonic() > deadline:
            log.warning("%ss of user %s not all tried: the time of DMS_RULES_MAX_SECONDS ran "
                        "out", kind.noun, owner_id)
            return None
        try:
            hit = matching.find(matching.Pattern("text", algorithm, pattern, not insensitive),
                                {"text": text})
        except DomainError as error:  # a pattern this RE2 refuses (saved by another version)
            log.warning("%s %s could not be matched: %s", kind.noun, label_id, error.message)
            continue
        if hit is not None:
            return label_id, name
    return None


def apply(owner_id: str, document_id: str, suggestion: Suggestion) -> dict[str, Any]:
    """Inside the transaction that ends the reading (owner scope): set what is still unset;
    one `metadata_changed` event (dms itself the actor) with what it set."""
    changes: dict[str, Any] = {}
    for kind, found in ((CORRESPONDENTS, suggestion.correspondent),
                        (DOCUMENT_TYPES, suggestion.document_type)):
        if found is not None and _set_if_unset(kind.column, found[0], document_id):
            changes[kind.attribute] = {"from": None, "to": found[1]}
    if suggestion.document_date is not None:
        row = database.execute_sql("SELECT substr(created_at, 1, 10) FROM node WHERE id = ?",
                                   (document_id,)).fetchone()
        if row is not None and _set_if_unset("document_date", suggestion.document_date,
                                             document_id):
            changes["document_date"] = {"from": row[0], "to": suggestion.document_date}
    if changes:
        events.record(owner_id, document_id, events.METADATA_CHANGED, None, changes=changes)
    wanted = dict(suggestion.tags)  # and the tags above them (dms.domain.tagtree)
    wanted.update(tagtree.names(tagtree.above(list(wanted))))
    added = [name for tag_id, name in wanted.items() if database.execute_sql(
        "INSERT INTO node_tag (node_id, tag_id) SELECT id, ? FROM node WHERE id = ? "
        "AND trash_id IS NULL ON CONFLICT DO NOTHING", (tag_id, document_id)).rowcount]
    if added:
        events.record(owner_id, document_id, events.TAGGED, None, tags=added)
    return changes


def _set_if_unset(column: str, value: str, document_id: str) -> bool:
    cursor = database.execute_sql(
        f"UPDATE node SET {column} = ? WHERE id = ? AND {column} IS NULL AND trash_id IS NULL",
        (value, document_id))
    return bool(cursor.rowcount)
