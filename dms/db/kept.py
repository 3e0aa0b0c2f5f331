"""Answers of reads kept until the database changes (SQLite): a listing's count and the
Paperless-ngx dialect's `all` are read again for every page, and at 10,000 documents `all` was
most of a page's time (docs/performance.md). Each thread keeps its own answers beside its own
connection (dms.db.engine: SQLite keeps one a thread for good) and drops them all at once when
that connection sees any change: another connection's commit changes `PRAGMA data_version`, and
its own writes change its `total_changes` — whichever table, row or process.

Nothing is kept inside a transaction (its reads may see writes it has not committed, or roll
back) nor on PostgreSQL, which has no such cheap marker: there every call computes."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from dms.db.engine import database, is_postgresql

T = TypeVar("T")

MOST_ANSWERS = 32  # a thread's kept answers; the oldest goes first
MOST_CHARS = 1_000_000  # a thread's kept text in all (a longer answer is not kept)

_local = threading.local()


def kept_until_change(key: Hashable, compute: Callable[[], T],
                      chars: Callable[[T], int] = lambda _: 0) -> T:
    """`compute()`'s answer, or the one this thread kept for `key` since the database last
    changed. `key` must name everything the answer depends on (the SQL and its parameters);
    `chars` measures an answer's text against MOST_CHARS."""
    marker = _marker()
    if marker is None:
        return compute()
    state: dict[str, Any] = _local.__dict__
    if state.get("marker") != marker:
        state.update(marker=marker, answers={}, chars=0)
    answers: dict[Hashable, Any] = state["answers"]
    if key in answers:
        return answers[key][0]  # type: ignore[no-any-return]
    answer = compute()
    size = chars(answer)
    if size > MOST_CHARS:
        return answer
    while answers and (len(answers) >= MOST_ANSWERS or state["chars"] + size > MOST_CHARS):
        oldest = next(iter(answers))
        state["chars"] -= answers.pop(oldest)[1]
    answers[key] = (answer, size)
    state["chars"] += size
    return answer


def _marker() -> tuple[Any, ...] | None:
    """What this thread's connection has seen: equal twice only if nothing in the database
    changed in between. The connection itself is part of it (held, so that a new connection,
    to another file after a restore, never matches the old one's)."""
    if is_postgresql():
        return None
    connection = database.connection()
    if not isinstance(connection, sqlite3.Connection) or connection.in_transaction:
        return None
    version = connection.execute("PRAGMA data_version").fetchone()[0]
    return (_Same(connection), version, connection.total_changes)


class _Same:
    """Equal only to a marker of the very same connection object."""
    __slots__ = ("connection",)

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.connection is self.connection

    def __hash__(self) -> int:
        return id(self.connection)
