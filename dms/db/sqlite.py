"""SQLite as dms opens it: the connection settings and a peewee database class whose set-up
survives other processes opening the same new file at once (dms.db binds it)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from peewee import SqliteDatabase

PRAGMAS: dict[str, Any] = {
    # Milliseconds a writer waits for another process' write lock before "database is locked";
    # first, so that the pragmas after it wait too.
    "busy_timeout": 10_000,
    "journal_mode": "wal",
    "foreign_keys": 1,
    # NORMAL: a COMMIT does not wait for the disk; write_transaction does, outside the write
    # lock and together with the other writers (dms.db.groupsync), so that an acknowledged
    # write survives a power cut, not only a killed process, as with FULL.
    "synchronous": "normal",
    "temp_store": "memory",
}



class SqliteEngine(SqliteDatabase):
    """peewee's SQLite database with a connection set-up that survives other processes opening
    the same new file at the same moment: switching a database to WAL needs its exclusive lock,
    and SQLite answers "database is locked" at once, without the busy handler, when two
    connections each hold a shared lock and want it (it would deadlock). So the pragmas are tried
    again for up to busy_timeout."""

    def _set_pragmas(self, conn: sqlite3.Connection) -> None:
        deadline = time.monotonic() + PRAGMAS["busy_timeout"] / 1000
        while True:
            try:
                # A private method of peewee's, absent from its stubs.
                return super()._set_pragmas(conn)  # type: ignore[misc, no-any-return]
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
