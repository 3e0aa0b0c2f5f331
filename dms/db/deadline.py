"""A deadline for the statements of one read (a search): on PostgreSQL each statement inside
statement_deadline() may run at most the given time (statement_timeout, waits for locks
included), so that a search the planner gets wrong — or a table another session holds locked —
gives its connection and its CPU back when the search's own timeout has passed, instead of
running on after the request has been answered. On SQLite nothing is set: its searches are
tantivy's, whose loops check the deadline themselves (dms.search.service)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from peewee import DatabaseError

from dms.db.engine import database, is_postgresql, sqlstate

QUERY_CANCELED = "57014"  # SQLSTATE of a statement stopped by statement_timeout


class DeadlinePassed(Exception):
    """A statement ran past the deadline statement_deadline() set; it was stopped."""


@contextlib.contextmanager
def statement_deadline(seconds: float) -> Iterator[None]:
    """Every statement inside runs at most `seconds` (at least a millisecond) on PostgreSQL, or
    raises DeadlinePassed. For reads only: the settings live in a transaction (or a savepoint
    of the caller's) opened here and rolled back at the end."""
    if not is_postgresql():
        yield
        return
    with database.atomic() as scope:
        database.execute_sql("SELECT set_config('statement_timeout', ?, true)",
                             (str(max(1, round(seconds * 1000))),))
        try:
            yield
        except DatabaseError as error:
            if sqlstate(error) == QUERY_CANCELED:
                raise DeadlinePassed() from None
            raise
        scope.rollback()
