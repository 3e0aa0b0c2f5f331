"""The schema migrations: numbered scripts in dms/db/migrations/, applied in order at every start
(or by `dms migrate`) to the open database, once even when several dms processes start together.
On PostgreSQL an empty database first gets postgresql_baseline.sql, equal to SQLite's schema
after POSTGRESQL_BASELINE; every later migration runs on both engines."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peewee import DatabaseError, DatabaseProxy, OperationalError
from playhouse.migrations import Runner

from dms.db.engine import (
    DatabaseUnavailable,
    advisory_key,
    database,
    is_postgresql,
    open_configured,
)

if TYPE_CHECKING:
    from dms.config import Config

log = logging.getLogger("dms.db")

MIGRATIONS_TABLE = "schema_migrations"
# On PostgreSQL, a new database gets this schema, equal to SQLite's after the migration named
# here; the migrations up to it are recorded as applied, every later one runs on both engines.
POSTGRESQL_BASELINE = "0009_recent_documents"
MIGRATION_LOCK = "schema migrations"


def open_migrated(config: Config) -> DatabaseProxy:
    """The database the config names, opened and brought up to date: what every command and the
    server start with (a restore opens without migrating: its schema comes with the rows)."""
    open_configured(config)
    migrate_schema()
    return database


def migrate_schema() -> list[str]:
    """Apply the migrations this database lacks, once even when several dms processes start
    together (PostgreSQL: a session advisory lock; SQLite: a lock file beside dms.db)."""
    applied: list[str]
    if is_postgresql():
        key = advisory_key(MIGRATION_LOCK)
        database.execute_sql("SELECT pg_advisory_lock(%s)", (key,))
        try:
            runner = migration_runner()
            if not runner.applied():
                _apply_postgresql_baseline(runner)
            applied = runner.up()
        except DatabaseError as error:
            raise DatabaseUnavailable(_schema_refused(error)) from None
        finally:
            database.execute_sql("SELECT pg_advisory_unlock(%s)", (key,))
    else:
        with _migration_file_lock(Path(database.obj.database)):
            applied = migration_runner().up()
        if any(name.startswith(VACUUM_AFTER) for name in applied):
            _vacuum()
    log_applied(applied)
    return applied


def log_applied(applied: list[str]) -> None:
    """One line for the migrations just applied, however many (peewee's own line per migration
    is quieted by the command line): what a start and a restore of an older backup say."""
    if applied:
        span = applied[0] if len(applied) == 1 else f"{applied[0]} to {applied[-1]}"
        log.info("applied %d schema migration(s): %s", len(applied), span)


@contextlib.contextmanager
def _migration_file_lock(db_path: Path) -> Iterator[None]:
    """SQLite: two processes starting on one new data dir must not both create the tables (the
    second failed with "table user already exists"). An exclusive lock on a file beside the
    database, held while the migrations run; the second process then finds them applied."""
    import fcntl

    with open(db_path.with_name(db_path.name + ".migrate-lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _schema_refused(error: DatabaseError) -> str:
    """One line for a schema change PostgreSQL refused: usually a role without the right."""
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    state = getattr(getattr(error, "__cause__", None), "sqlstate", None) or \
        getattr(getattr(error, "__context__", None), "sqlstate", None)
    if state == "42501":  # insufficient_privilege
        return (f"PostgreSQL refused to create dms's tables ({first}); make dms's role the "
                "owner of its database: createdb --owner ROLE DATABASE.")
    return f"PostgreSQL refused to create or upgrade dms's tables: {first}."


def _apply_postgresql_baseline(runner: Runner) -> None:
    if database.get_tables():
        names = ", ".join(database.get_tables()[:5])
        raise DatabaseUnavailable(f"the PostgreSQL database already holds tables that are not "
                                  f"dms's ({names}); give dms an empty database of its own.")
    script = (migrations_dir() / "postgresql_baseline.sql").read_text()
    with database.atomic():  # PostgreSQL's DDL is transactional: all of it, or none
        for statement in _sql_statements(script):
            database.execute_sql(statement)
        runner.up(target=POSTGRESQL_BASELINE, fake=True)
    log.info("created the PostgreSQL schema (baseline %s)", POSTGRESQL_BASELINE)


def _sql_statements(script: str) -> list[str]:
    """The statements of a plain SQL file: comment lines dropped, split at semicolons that end a
    line outside a $$-quoted function body."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    statements, current = [], ""
    for part in "\n".join(lines).split(";\n"):
        current = f"{current};\n{part}" if current else part
        if current.count("$$") % 2 == 0:
            statements.append(current)
            current = ""
    return [statement.strip() for statement in statements if statement.strip().rstrip(";")]


def migrations_dir() -> Path:
    """The numbered migration scripts shipped inside the package (also inside a PyInstaller
    build)."""
    return Path(str(resources.files("dms.db.migrations")))


def shipped_migrations() -> list[str]:
    """The names of the migrations this dms ships, in order."""
    return sorted(path.stem for path in migrations_dir().glob("[0-9]*.py"))


def runner_for(engine: Any) -> Runner:
    """The migration runner of a peewee database: the engine itself, not the proxy (the runner
    picks its schema migrator by the engine's class)."""
    return Runner(engine, str(migrations_dir()), table_name=MIGRATIONS_TABLE)


# Migrations that free much of the file (0006 drops the full-text copy of every text): the
# space is given back to the file system once, right after them.
VACUUM_AFTER = "0006_"


def _vacuum() -> None:
    """VACUUM needs free space the size of the database; without it, SQLite keeps the pages for
    its own reuse, which is fine too."""
    try:
        database.execute_sql("VACUUM")
        log.info("compacted the database after the upgrade")
    except (sqlite3.OperationalError, OperationalError) as error:
        log.warning("could not compact the database after the upgrade (%s); its free pages "
                    "are reused as it grows", error)


def migration_runner() -> Runner:
    """The runner of the open database."""
    return runner_for(database.obj)


def schema_version() -> int:
    """The number of the newest applied migration (0 for an empty database)."""
    applied = migration_runner().applied()
    return max((int(name.split("_", 1)[0]) for name in applied), default=0)


def latest_schema_version() -> int:
    """The number of the newest migration this dms ships."""
    return int(shipped_migrations()[-1].split("_", 1)[0])
