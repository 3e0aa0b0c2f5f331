"""Numbers: the stable positive integers by which the Paperless-ngx dialect (api.md §17) knows
documents, users, groups, tags, correspondents, document types, custom fields, notes, saved
searches and share links (their `seq`, migrations 0004, 0027 and 0031), beside the UUIDs of dms's
own API. A number names one object for ever; what it finds is still only what the caller may
reach (each kind's own rule)."""

from __future__ import annotations

from typing import Any

from dms.db import database

# kind: (table, the condition that keeps other rows of the table out)
KINDS = {
    "document": ("node", "kind = 'document'"), "user": ('"user"', "1 = 1"),
    "group": ("user_group", "1 = 1"),
    "tag": ("tag", "1 = 1"), "correspondent": ("correspondent", "1 = 1"),
    "document_type": ("document_type", "1 = 1"), "custom_field": ("custom_field", "1 = 1"),
    "note": ("note", "1 = 1"), "saved_search": ("saved_search", "1 = 1"),
    "share_link": ("share_link", "1 = 1"),
}
MAX_NUMBER = 2**63 - 1
MAX_AT_ONCE = 10_000  # numbers translated by one call (a client's id__in=)


def numbers_of(kind: str, ids: list[str]) -> dict[str, int]:
    """{UUID: number} of these objects of `kind` (those that exist)."""
    return dict(_pairs(kind, "id, seq", "id", ids))


def ids_of(kind: str, numbers: list[int]) -> dict[int, str]:
    """{number: UUID} of the objects of `kind` that have these numbers (unknown ones left out).
    At most MAX_AT_ONCE numbers (the caller bounds what a client sends)."""
    wanted = [n for n in dict.fromkeys(numbers) if 0 < n <= MAX_NUMBER][:MAX_AT_ONCE]
    return dict(_pairs(kind, "seq, id", "seq", wanted))


def _pairs(kind: str, columns: str, by: str, values: list[Any]) -> list[tuple[Any, Any]]:
    table, only = KINDS[kind]
    found: list[tuple[Any, Any]] = []
    for start in range(0, len(values), 500):
        part = values[start:start + 500]
        found += database.execute_sql(
            f"SELECT {columns} FROM {table} WHERE {only} AND {by} IN "
            f"({','.join('?' * len(part))})", part).fetchall()
    return found


def id_of(kind: str, number: int) -> str | None:
    return ids_of(kind, [number]).get(number)
