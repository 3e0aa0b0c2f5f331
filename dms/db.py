"""The SQLite database: one peewee database object, its pragmas, and the schema migrations.

Concurrency: peewee keeps one connection per thread (each waitress worker keeps its own, opened
on first use and reused). WAL lets readers run beside the one writer; busy_timeout makes a second
writer wait instead of failing. Transactions that read and then write use
`database.atomic("IMMEDIATE")` so two writers never both read stale rows and then collide.
"""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from peewee import SqliteDatabase
from playhouse.migrations import Runner

log = logging.getLogger("dms.db")

# Bound to a file by open_database(); models refer to it (deferred, so importing has no effect).
database = SqliteDatabase(None)

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    # Milliseconds a writer waits for the lock before "database is locked".
    "busy_timeout": 10_000,
    # FULL: a commit that was acknowledged survives a power cut, not only a killed process.
    "synchronous": "full",
    "temp_store": "memory",
}

MIGRATIONS_TABLE = "schema_migrations"


def migrations_dir() -> Path:
    """The numbered migration scripts shipped inside the package (also inside a PyInstaller build)."""
    return Path(str(resources.files("dms.migrations")))


def open_database(path: Path, migrate: bool = True) -> SqliteDatabase:
    """Point the shared database object at `path`, create it if needed and bring its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not database.is_closed():
        database.close()
    database.init(str(path), pragmas=PRAGMAS, check_same_thread=False)
    database.connect(reuse_if_open=True)
    if migrate:
        applied = migration_runner().up()
        for name in applied:
            log.info("applied schema migration %s", name)
    return database


def migration_runner() -> Runner:
    return Runner(database, str(migrations_dir()), table_name=MIGRATIONS_TABLE)


def schema_version() -> int:
    """The number of the newest applied migration (0 for an empty database)."""
    applied = migration_runner().applied()
    return max((int(name.split("_", 1)[0]) for name in applied), default=0)
