"""Format 2 of a backup (dms.ops.backup): its table files loaded into a new SQLite database in the
restore's work folder, made by this dms's own migrations at the backup's schema version. Each
file's columns must be the table's, its row count the manifest's, each line a row of plain
values (dms.ops.backup._rowfiles); foreign keys, the tree and the files are checked afterwards, on
the loaded database, by the checks format 1 has too (dms.ops.backup.restore)."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dms.ops.backup import DATABASE, BackupError
from dms.ops.backup._rowfiles import NOT_BACKED_UP, RowFileError, read_table

NEWER_DATABASE = ("This backup's database is newer than this dms understands; "
                  "upgrade dms to restore it.")


def load_tables(work: Path, manifest: dict[str, Any], latest_schema: int) -> None:
    """Format 2: make `work/dms.db` with this dms's migrations up to the backup's own, and load
    the table files into it (foreign keys are checked afterwards, by _check_rows)."""
    from dms.db import sqlite_engine
    from dms.db.schema import runner_for, shipped_migrations

    tables = manifest["tables"]
    shipped = shipped_migrations()
    names = sorted({str(row[0]) for row in _rows(work, "schema_migrations", ["name"])})
    if any(int(name.split("_", 1)[0]) > latest_schema for name in names
           if re.match(r"\d+_", name)):
        raise BackupError(NEWER_DATABASE)
    if not names or names != shipped[:len(names)]:
        raise BackupError("The backup's database is damaged: its schema_migrations table does "
                          "not list this dms's migrations in order.")
    schema = sqlite_engine(work / DATABASE)
    quiet = logging.getLogger("peewee.migrations")
    level, quiet.level = quiet.level, logging.WARNING  # a scratch schema, not the user's upgrade
    try:
        schema.connect()
        runner_for(schema).up(target=names[-1])
    finally:
        quiet.level = level
        schema.close()
    connection = sqlite3.connect(work / DATABASE, isolation_level=None)
    try:
        connection.execute("PRAGMA foreign_keys = OFF")
        connection.execute("BEGIN")
        present = {row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")} - NOT_BACKED_UP
        missing = sorted(present - set(tables))
        if missing:
            raise BackupError(f"The backup's database is damaged: it lacks the table "
                              f"{missing[0]}.")
        for table in sorted(tables):
            if table not in present:
                raise BackupError(f"The backup holds a table this dms does not know: {table}.")
            info = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
            columns = [row[1] for row in info]
            count = _load(connection, work, table, columns, [row[2].upper() for row in info])
            if count != tables[table]:
                raise BackupError(f"The backup's table {table} holds {count} rows, its manifest "
                                  f"says {tables[table]}: the backup is damaged.")
        connection.execute("COMMIT")
    finally:
        connection.close()


def _rows(work: Path, table: str, columns: list[str]) -> Iterator[list[Any]]:
    """The rows of a table file, checked to have exactly `columns` (in any order)."""
    name = f"tables/{table}.jsonl"
    try:
        header, rows = read_table(work / name, name)
    except RowFileError as error:
        raise BackupError(f"The backup is damaged: {error}") from None
    if not set(columns) <= set(header) or (table != "schema_migrations"
                                           and set(header) != set(columns)):
        rows.close()
        raise BackupError(f"The backup's table {table} has the columns {', '.join(header)}, "
                          f"not those of this dms's {table}: the backup is damaged.")
    order = [header.index(column) for column in columns]
    try:
        for row in rows:
            yield [row[i] for i in order]
    except RowFileError as error:
        raise BackupError(f"The backup is damaged: {error}") from None


# What a JSON value of a column of each declared type may be (SQLite would quietly turn an
# integer into the text of a title, which the API would have refused).
JSON_TYPES: dict[str, type | tuple[type, ...]] = {"TEXT": str, "INTEGER": int,
                                                   "REAL": (int, float)}


def _load(connection: sqlite3.Connection, work: Path, table: str, columns: list[str],
          types: list[str]) -> int:
    """Insert a table file's rows (schema_migrations: only counted, the migrations wrote it)."""
    quoted = ", ".join(f'"{column}"' for column in columns)
    insert = f'INSERT INTO "{table}" ({quoted}) VALUES ({", ".join("?" * len(columns))})'
    wanted = [JSON_TYPES.get(kind) for kind in types]
    count, batch = 0, list[list[Any]]()
    for row in _rows(work, table, columns):
        count += 1
        for column, value, kind in zip(columns, row, wanted, strict=True):
            if value is not None and kind is not None and (
                    not isinstance(value, kind) or isinstance(value, bool) and kind is str):
                raise BackupError(f"The backup's table {table} cannot be restored: line "
                                  f"{count + 1} has a {column} of the wrong type "
                                  f"({value!r:.40}).")
        if table != "schema_migrations":
            batch.append(row)
        if len(batch) >= 1000:
            _insert(connection, insert, table, batch)
            batch = []
    _insert(connection, insert, table, batch)
    return count


def _insert(connection: sqlite3.Connection, insert: str, table: str,
            batch: list[list[Any]]) -> None:
    try:
        connection.executemany(insert, batch)
    except sqlite3.DatabaseError as error:  # a duplicate key, a NOT NULL or CHECK violation
        raise BackupError(f"The backup's table {table} cannot be restored: {error}.") from None
