"""The building blocks of a backup's value checks (dms.ops.backup._rowchecks and
_metadatarows): reading a table in batches, and a refusal naming the table, the row and what is
wrong, in the API's own words where the API has a check."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from dms.errors import DomainError
from dms.ops.backup import BackupError

BATCH = 1000


def rows(execute: Callable[..., Any], sql: str) -> Iterator[tuple[Any, ...]]:
    cursor = execute(sql)
    while True:
        batch = cursor.fetchmany(BATCH)
        if not batch:
            return
        yield from batch


def refuse(table: str, row_id: object, what: str) -> BackupError:
    shown = row_id if isinstance(row_id, str) and row_id.isprintable() else repr(row_id)
    return BackupError(f"The backup's table {table} cannot be restored: row {shown[:80]} {what}.")


def rule(table: str, row_id: object, column: str, value: Any,
         check: Callable[..., Any]) -> None:
    """`check` is the API's check of that value; a refusal is told in the API's words."""
    if not isinstance(value, str):
        raise refuse(table, row_id, f"has a {column} that is not text ({value!r:.40})")
    try:
        check(value)
    except DomainError as error:
        raise refuse(table, row_id, f"has a {column} the API would refuse "
                                     f"({error.message.rstrip('.')})") from None


def api(table: str, row_id: object, what: str, check: Callable[..., object],
        *args: Any) -> None:
    """`check(*args)` is the API's; a refusal is told in the API's words, after `what` ("has a
    document_date", "is a correspondent")."""
    try:
        check(*args)
    except DomainError as error:
        raise refuse(table, row_id, f"{what} the API would refuse "
                                     f"({error.message.rstrip('.')})") from None


def moment(table: str, row_id: object, column: str, value: Any,
           nullable: bool = False) -> None:
    if value is None and nullable:
        return
    try:
        dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise refuse(table, row_id, f"has a {column} that is not a time ({value!r:.40})") from None
