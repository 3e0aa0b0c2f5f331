"""Correspondents and document types (api.md §16): each user's names for who sent a document and
what it is, with Paperless-ngx's automatic matching.

Both kinds behave alike; `Kind` says which table and words. A name is unique for its owner
regardless of case and width (as tags are: `name_key`), 1-128 characters (Paperless-ngx's
limit). `matching_algorithm` is `none` (the default: never matched), one of the rule engine's
algorithms (dms.domain.matching: any, all, exact, regex with RE2, fuzzy) over the document's
text, or `auto` (Paperless-ngx's learned matching: kept, never matched); an empty `match` never
matches (Paperless-ngx's apps create names that way). Deleting one clears it from its documents
(the column's ON DELETE SET NULL), each getting a `metadata_changed` event in the same
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dms.db import database, events, owner_scope, write_transaction
from dms.db.models import DOCUMENT_DATE, Correspondent, DocumentType, User, new_id, utcnow
from dms.domain.matching import ALGORITHMS, check_pattern
from dms.domain.ownership import owned
from dms.domain.tagfilter import name_key
from dms.errors import Invalid
from dms.text import has_refused_characters, required_text

MAX_NAME_LENGTH = 128
MAX_MATCH_LENGTH = 256
MAX_PER_USER = 10_000
NONE = "none"
# Paperless-ngx's learned matching: kept as a client set it, never matched (dms does not learn).
AUTO = "auto"
MATCHING_ALGORITHMS = (NONE, *ALGORITHMS, AUTO)
UNMATCHED = (NONE, AUTO)


@dataclass(frozen=True)
class Kind:
    """Correspondents or document types: the model, the document's column, words for people."""
    model: type[Correspondent] | type[DocumentType]
    column: str  # node.<column>
    noun: str  # "correspondent"
    attribute: str  # the document's attribute and the history's key

    @property
    def table(self) -> str:
        return self.column.removesuffix("_id")


CORRESPONDENTS = Kind(Correspondent, "correspondent_id", "correspondent", "correspondent")
DOCUMENT_TYPES = Kind(DocumentType, "document_type_id", "document type", "document_type")


def check_attributes(kind: Kind, attributes: dict[str, Any], partial: bool) -> dict[str, Any]:
    """The columns a POST (`partial` False) or PATCH sets; Invalid for the first thing wrong."""
    values: dict[str, Any] = {}
    if "name" in attributes or not partial:
        name = required_text(attributes.get("name"), "name", f"{kind.noun} name",
                             MAX_NAME_LENGTH)
        if has_refused_characters(name):
            raise Invalid(f"A {kind.noun} name may not contain control characters or invisible "
                          "formatting characters.", "name")
        values.update(name=name, name_key=name_key(name))
    values.update(check_matching(attributes))
    return values


def check_matching(attributes: dict[str, Any]) -> dict[str, Any]:
    """The matching columns a body sets (correspondents, document types, tags)."""
    values: dict[str, Any] = {}
    if "matching_algorithm" in attributes:
        algorithm = attributes["matching_algorithm"]
        if algorithm not in MATCHING_ALGORITHMS:
            raise Invalid("matching_algorithm must be one of "
                          f"{', '.join(MATCHING_ALGORITHMS)}.", "matching_algorithm")
        values["matching_algorithm"] = algorithm
    if "match" in attributes:
        match = attributes["match"] if attributes["match"] is not None else ""
        if not isinstance(match, str) or len(match) > MAX_MATCH_LENGTH or "\x00" in match:
            raise Invalid(f"match must be text of at most {MAX_MATCH_LENGTH} characters, "
                          "without null characters.", "match")
        values["match"] = match
    if "is_insensitive" in attributes:
        if not isinstance(attributes["is_insensitive"], bool):
            raise Invalid("is_insensitive must be true or false.", "is_insensitive")
        values["is_insensitive"] = attributes["is_insensitive"]
    return values


def check_pattern_of(row: Any, values: dict[str, Any]) -> None:
    """The match as it will be saved can be matched with its algorithm."""
    algorithm = values.get("matching_algorithm", getattr(row, "matching_algorithm", NONE))
    match = values.get("match", getattr(row, "match", ""))
    insensitive = values.get("is_insensitive", getattr(row, "is_insensitive", True))
    if algorithm not in UNMATCHED and match:
        try:
            check_pattern(algorithm, match, not insensitive, "match")
        except Invalid as error:  # the rule engine names a rule's field
            raise Invalid(error.message, "match") from None


def of_user(kind: Kind, user: User) -> Any:
    return kind.model.select().where(kind.model.owner == user.id) \
        .order_by(kind.model.name_key, kind.model.id)


def owned_label(kind: Kind, user: User, label_id: object) -> Any:
    return owned(kind.model, user, label_id)


def _name_taken(kind: Kind, user: User, key: str, except_id: str | None = None) -> bool:
    query = kind.model.select().where(kind.model.owner == user.id, kind.model.name_key == key)
    if except_id is not None:
        query = query.where(kind.model.id != except_id)
    return bool(query.exists())


def _duplicate(kind: Kind) -> Invalid:
    return Invalid(f"A {kind.noun} with this name already exists.", "name")


def create(kind: Kind, user: User, attributes: dict[str, Any]) -> Any:
    values = check_attributes(kind, attributes, partial=False)
    check_pattern_of(None, values)
    with write_transaction(owner_scope(user.id)):
        if _name_taken(kind, user, values["name_key"]):
            raise _duplicate(kind)
        if kind.model.select().where(kind.model.owner == user.id).count() >= MAX_PER_USER:
            raise Invalid(f"One user may have at most {MAX_PER_USER} {kind.noun}s; delete unused "
                          "ones first.")
        label_id = new_id()
        kind.model.insert(id=label_id, owner=user.id, created_at=utcnow(), **values).execute()
    return kind.model.get_by_id(label_id)


def update(kind: Kind, user: User, label_id: str, attributes: dict[str, Any]) -> Any:
    values = check_attributes(kind, attributes, partial=True)
    with write_transaction(owner_scope(user.id)):
        row = owned_label(kind, user, label_id)
        check_pattern_of(row, values)
        if "name_key" in values and _name_taken(kind, user, values["name_key"], row.id):
            raise _duplicate(kind)
        if values:
            kind.model.update(**values).where(kind.model.id == row.id).execute()
    return kind.model.get_by_id(label_id)


def delete(kind: Kind, user: User, label_id: str) -> None:
    """The name goes; its documents stay, without it, each with its event (one INSERT ...
    SELECT however many documents)."""
    with write_transaction(owner_scope(user.id)):
        row = owned_label(kind, user, label_id)
        events.record_for_each(
            user.id, f"SELECT id AS node_id FROM node WHERE {kind.column} = ?", (row.id,),
            events.METADATA_CHANGED, user.id,
            changes={kind.attribute: {"from": row.name, "to": None}})
        kind.model.delete().where(kind.model.id == row.id).execute()


def counts(kind: Kind, label_ids: list[str]) -> dict[str, tuple[int, str | None]]:
    """{id: (live documents carrying it, the latest of their document dates)}."""
    if not label_ids:
        return {}
    marks = ",".join("?" * len(label_ids))
    rows = database.execute_sql(
        f"SELECT {kind.column}, count(*), max({DOCUMENT_DATE}) FROM node "
        f"WHERE {kind.column} IN ({marks}) AND trash_id IS NULL GROUP BY {kind.column}",
        label_ids)
    return {label_id: (count, latest) for label_id, count, latest in rows}

