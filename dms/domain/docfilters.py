"""More ways to find documents (the filters Paperless-ngx's clients send, api.md §17), each one
SQL condition on the node row with its parameters, ANDed into a listing
(dms.domain.listings.of_kind's `extra`): words in the title, tags by id (all, any, none, or
whether any), correspondents and types (one, any of some, none of some, or none at all), dates
of the paper and of the upload, the file's type, name and checksum, custom fields present, the
.inbox, a set of ids.

Request values travel only as parameters; each list a filter takes is bounded (MAX_VALUES). Tags
are the caller's own (their tags on shared documents); correspondents, types and fields are
matched by id, so another user's never match the caller's documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dms.db.models import DOCUMENT_DATE, Node, User
from dms.errors import Invalid

MAX_VALUES = 1000


@dataclass(frozen=True)
class Condition:
    where: str
    params: tuple[Any, ...] = ()

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        return f"({self.where})", self.params


def _marks(values: list[Any]) -> str:
    if len(values) > MAX_VALUES:
        raise Invalid(f"At most {MAX_VALUES} values in one filter.")
    return ",".join("?" * len(values)) or "NULL"


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


TITLE_MATCHES = {"contains": ("%", "%"), "starts": ("", "%"), "ends": ("%", ""),
                 "exact": ("", "")}


def title(how: str, words: str) -> Condition:
    """The title contains / starts with / ends with / is `words`, regardless of case."""
    before, after = TITLE_MATCHES[how]
    return Condition("title_sort LIKE ? ESCAPE '\\'",
                     (before + _like(words.casefold()) + after,))


def _carrying(table: str, node: str, column: str, ids: list[str], how: str) -> Condition:
    """The node carries `all`, `any` or `none` of `ids` in `table` (node column, id column)."""
    carriers = f"SELECT {node} FROM {table} WHERE {column} IN ({_marks(ids)})"
    if how == "all":
        return Condition(f"id IN ({carriers} GROUP BY {node} HAVING count(*) = ?)",
                         (*ids, len(set(ids))))
    return Condition(f"id {'NOT ' if how == 'none' else ''}IN ({carriers})", tuple(ids))


def tags(user: User, tag_ids: list[str], how: str) -> Condition:
    """The caller's tags: `all` of them, `any` of them, `none` of them."""
    return _carrying("node_tag", "node_id", "tag_id", tag_ids, how)


def tagged(user: User, yes: bool) -> Condition:
    """Carries any of the caller's tags (or none)."""
    return Condition(f"{'' if yes else 'NOT '}EXISTS (SELECT 1 FROM node_tag AS nt JOIN tag AS t "
                     "ON t.id = nt.tag_id WHERE nt.node_id = node.id AND t.owner_id = ?)",
                     (user.id,))


EVERY = Condition("1 = 1")
LABEL_COLUMNS = {"correspondent": "correspondent_id", "document_type": "document_type_id"}


def label(name: str, ids: list[str], how: str) -> Condition:
    """The correspondent or type is one of `ids` (`in`) or none of them (`none`)."""
    column = LABEL_COLUMNS[name]
    if how == "none" and not ids:
        return EVERY
    if how == "none":
        return Condition(f"({column} IS NULL OR {column} NOT IN ({_marks(ids)}))", tuple(ids))
    return Condition(f"{column} IN ({_marks(ids)})", tuple(ids))


def label_missing(name: str, missing: bool) -> Condition:
    return Condition(f"{LABEL_COLUMNS[name]} IS {'' if missing else 'NOT '}NULL")


COMPARISONS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def paper_date(how: str, day: str) -> Condition:
    """The date on the paper (the upload date where none) compared with `day` (YYYY-MM-DD)."""
    return Condition(f"{DOCUMENT_DATE} {COMPARISONS[how]} ?", (day,))


def paper_year(year: int) -> Condition:
    return Condition(f"substr({DOCUMENT_DATE}, 1, 4) = ?", (f"{year:04d}",))


def added_date(how: str, day: str) -> Condition:
    return Condition(f"substr(created_at, 1, 10) {COMPARISONS[how]} ?", (day,))


def serial_number(asn: int) -> Condition:
    return Condition("asn = ?", (asn,))


LATEST = ("(SELECT {column} FROM document_version WHERE document_id = node.id "
          "ORDER BY number DESC LIMIT 1)")


def mime_type(value: str) -> Condition:
    return Condition(f"{LATEST.format(column='mime_type')} = ?", (value,))


def checksum(value: str) -> Condition:
    """The SHA-256 or the MD5 of the latest version's file (an MD5 is known for the files
    received since migration 0028)."""
    return Condition(f"(? IN ({LATEST.format(column='sha256')}, {LATEST.format(column='md5')}))",
                     (value.lower(),))


def file_name(value: str) -> Condition:
    return Condition("lower(file_name) = lower(?)", (value,))


def fields(field_ids: list[str], how: str) -> Condition:
    """Carries a value of `all` / `any` / `none` of these custom fields."""
    return _carrying("custom_field_value", "document_id", "field_id", field_ids, how)


def has_fields(yes: bool) -> Condition:
    return Condition(f"{'' if yes else 'NOT '}EXISTS (SELECT 1 FROM custom_field_value "
                     "WHERE document_id = node.id)")


INBOX_TAGS = "SELECT id FROM tag WHERE owner_id = ? AND is_inbox_tag = ?"


def in_inbox(user: User, yes: bool) -> Condition:
    """In the caller's inbox: carrying one of their inbox tags, or, for a caller with none,
    directly in their .inbox folder."""
    inbox = (f"((EXISTS ({INBOX_TAGS}) AND id IN (SELECT node_id FROM node_tag WHERE tag_id IN "
             f"({INBOX_TAGS}))) OR (NOT EXISTS ({INBOX_TAGS}) AND parent_id = (SELECT id "
             "FROM node WHERE owner_id = ? AND special = ?)))")
    return Condition(inbox if yes else f"NOT {inbox}",
                     (user.id, True, user.id, True, user.id, True, user.id, Node.INBOX))


def among(ids: list[str]) -> Condition:
    return Condition(f"id IN ({_marks(ids)})", tuple(ids))


def owners(user_ids: list[str], how: str) -> Condition:
    """Owned by one of these users (`in`) or by none of them (`none`)."""
    if how == "none" and not user_ids:
        return EVERY
    return Condition(f"owner_id {'NOT ' if how == 'none' else ''}IN ({_marks(user_ids)})",
                     tuple(user_ids))


def shared_by(user_ids: list[str]) -> Condition:
    """Owned by one of these users and shared by them: a grant on it or on a folder above it."""
    marks = _marks(user_ids)
    return Condition(f"""owner_id IN ({marks}) AND id IN (WITH RECURSIVE below(id, kind) AS (
            SELECT n.id, n.kind FROM node_grant AS g JOIN node AS n ON n.id = g.node_id
            WHERE n.owner_id IN ({marks})
            UNION
            SELECT n.id, n.kind FROM below JOIN node AS n ON n.parent_id = below.id
            WHERE below.kind = 'folder'
        ) SELECT id FROM below)""", (*user_ids, *user_ids))
