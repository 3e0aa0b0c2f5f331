"""The rows of a checked SQLite database (a restore's, at this dms's schema) copied into the
open PostgreSQL database, which must hold no dms data yet: `dms restore --database-url`.

One transaction: all rows or none. Tables go in the order their foreign keys need (referenced
tables first), a folder before what it holds; SQLite's 0/1 flags become booleans; node.seq's
(and event.id's, and the other numbers') identity continues after the highest copied value. The
search rows are written by the database's own triggers as the rows arrive (dms.search.postgres).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from dms.db import database
from dms.ops.backup import BackupError
from dms.ops.backup._rowfiles import NOT_BACKED_UP

BATCH_ROWS = 1000
SKIPPED = NOT_BACKED_UP | {"schema_migrations"}  # the target's migrations wrote its own
# A folder before its children: the tree was checked, so the walk down ends.
NODES_BY_DEPTH = """
    WITH RECURSIVE walk(id, depth) AS (
        SELECT id, 0 FROM node WHERE parent_id IS NULL
        UNION ALL
        SELECT n.id, walk.depth + 1 FROM node AS n JOIN walk ON n.parent_id = walk.id)
    SELECT {columns} FROM node JOIN walk ON walk.id = node.id ORDER BY walk.depth, node.seq"""


def check_empty() -> None:
    """BackupError unless the database holds no users (and so nothing of dms's); a database
    without dms's tables yet is empty."""
    if "user" in database.get_tables() and \
            database.execute_sql('SELECT 1 FROM "user" LIMIT 1').fetchone():
        raise BackupError("The PostgreSQL database already holds dms data; restore into a new, "
                          "empty database.")


IDENTITIES = (("node", "seq"), ("event", "id"), ('"user"', "seq"), ("user_group", "seq"),
              ("tag", "seq"),
              ("correspondent", "seq"), ("document_type", "seq"), ("custom_field", "seq"),
              ("note", "seq"), ("task", "seq"), ("share_link", "seq"),
              ("saved_search", "seq"))  # the numbers of migrations 0027-0031 too


def copy_into_database(path: Path) -> None:
    """The schema (if the database has none yet) and the rows, in one transaction: a refused
    restore leaves the database as it was (PostgreSQL's DDL is transactional)."""
    from dms.db.schema import migrate_schema

    source = sqlite3.connect(path)
    try:
        tables = _in_dependency_order(source)
        with database.atomic():
            migrate_schema()
            check_empty()
            booleans = {(table, column) for table, column in database.execute_sql(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND data_type = 'boolean'")}
            cursor = database.connection().cursor()
            for table in tables:
                columns = [row[1] for row in source.execute(f'PRAGMA table_info("{table}")')]
                flags = [i for i, column in enumerate(columns) if (table, column) in booleans]
                _copy(source, cursor, table, columns, flags)
            for table, column in IDENTITIES:  # they continue after the highest copied value
                database.execute_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                    f"(SELECT coalesce(max({column}), 0) + 1 FROM {table}), false)")
    except sqlite3.DatabaseError as error:
        raise BackupError(f"The restored database cannot be read: {error}.") from None
    except Exception as error:  # psycopg's: a value SQLite took that PostgreSQL's type refuses
        if type(error).__module__.split(".")[0] not in ("psycopg", "peewee"):
            raise
        raise BackupError(f"The backup's rows cannot be written into PostgreSQL: "
                          f"{str(error).splitlines()[0]}.") from None
    finally:
        source.close()


def _copy(source: sqlite3.Connection, cursor: Any, table: str, columns: list[str],
          flags: list[int]) -> None:
    quoted = ", ".join(f'"{column}"' for column in columns)
    if table == "node":
        select = NODES_BY_DEPTH.format(columns=", ".join(f'node."{c}"' for c in columns))
    elif table == "tag":  # parents set once every tag is there (a tag may precede its parent)
        select = "SELECT " + ", ".join("NULL" if c == "parent_id" else f'"{c}"'
                                       for c in columns) + ' FROM "tag"'
    else:
        select = f'SELECT {quoted} FROM "{table}"'
    insert = f'INSERT INTO "{table}" ({quoted}) VALUES ({", ".join(["%s"] * len(columns))})'
    rows = source.execute(select)
    while True:
        batch = rows.fetchmany(BATCH_ROWS)
        if not batch:
            if table == "tag":
                cursor.executemany("UPDATE tag SET parent_id = %s WHERE id = %s", source.execute(
                    "SELECT parent_id, id FROM tag WHERE parent_id IS NOT NULL").fetchall())
            return
        if flags:
            batch = [tuple(bool(value) if i in flags and value is not None else value
                           for i, value in enumerate(row)) for row in batch]
        cursor.executemany(insert, batch)


def _in_dependency_order(source: sqlite3.Connection) -> list[str]:
    """The tables to copy, each after the tables its foreign keys point at."""
    tables = [row[0] for row in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if row[0] not in SKIPPED]
    needs = {table: {row[2] for row in source.execute(f'PRAGMA foreign_key_list("{table}")')}
             - {table} for table in tables}
    ordered: list[str] = []
    while len(ordered) < len(tables):
        ready = [t for t in tables if t not in ordered and needs[t] <= set(ordered)]
        if not ready:
            raise BackupError("The restored database's foreign keys form a cycle.")
        ordered += ready
    return ordered
