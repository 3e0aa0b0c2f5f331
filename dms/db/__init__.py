"""The database: one peewee database object on SQLite (the default, `<data-dir>/dms.db`) or
PostgreSQL (`DMS_DATABASE_URL`) and the one write-transaction helper; the schema migrations are
dms.db.schema's.
Every difference between the two engines lives here and in the search engines (dms.search):
the domain writes one SQL, with `?` placeholders and `"user"` quoted, that runs on both.

Concurrency rules (every module that writes follows them):
- Every write runs inside `write_transaction(*scopes)`. SQLite: a process-wide FIFO lock, then
  `BEGIN IMMEDIATE`. PostgreSQL (READ COMMITTED): a transaction that first takes one
  transaction-scoped advisory lock per scope, in sorted order (so two writers never wait for each
  other crosswise); every check-then-write names the scope its check reads (`USERS`, what one
  user owns, one document), so two such writes of one scope run one after the other on every node.
  On SQLite the scopes cost nothing: the one writer holds them all. Writers of this process queue fairly in arrival order instead of meeting in
  SQLite's busy handler (which backs off in sleeps and let the 16-writer p99 reach 1-2 s); the
  IMMEDIATE lock still serialises against other processes (the CLI beside a running server),
  waiting up to busy_timeout. Reads inside the transaction see the state the writes build on, so
  check-then-write sequences (a move's cycle check, unique names, the last superuser) hold.
- A write changes only the columns it means to: `UPDATE ... SET col = ?`, never `save()` of a row
  read earlier, which would write back stale values over a concurrent change.
- peewee keeps one connection per thread; WAL lets readers run beside the one writer. On
  PostgreSQL the connections come from a bounded pool (DMS_DB_POOL_SIZE) and go back to it at the
  end of each request (release_connection).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from peewee import DatabaseError, DatabaseProxy, OperationalError

from dms.errors import StorageFull, Unavailable
from dms.db.fifolock import FifoLock
from dms.db.sqlite import PRAGMAS, SqliteEngine

log = logging.getLogger("dms.db")
T = TypeVar("T")

# Bound to SQLite or PostgreSQL by open_database(); models refer to it (a proxy, so importing has
# no effect).
database = DatabaseProxy()

# Scopes of write_transaction() (see the module docstring).
USERS = "users"  # usernames, the last active superuser, the first superuser


def owner_scope(owner_id: str) -> str:
    """What one user owns: the folder tree (moves' cycle check, depth), tags (unique names),
    tokens (the cap per user)."""
    return f"owner:{owner_id}"


def document_scope(document_id: str) -> str:
    """One document: its version numbers, its processing state."""
    return f"document:{document_id}"

WRITE_WAIT_SECONDS = 30.0  # a writer queued longer than this gets "busy, try again" (503)


WRITE_LOCK = FifoLock()


def is_disk_full(error: BaseException | None) -> bool:
    """ENOSPC from the OS, or SQLite's SQLITE_FULL ("database or disk is full"), also where it
    caused the error at hand (a failed COMMIT makes peewee's ROLLBACK fail in turn)."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(error, (sqlite3.OperationalError, OperationalError)) and \
                "database or disk is full" in str(error):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


@contextlib.contextmanager
def write_transaction(*scopes: str) -> Iterator[None]:
    """The one way to write: see the module docstring. Nested calls join the outer transaction
    (as a savepoint), so domain functions can be combined. Raises StorageFull when the disk is
    full and Unavailable when the write lock cannot be had in time; either way nothing changed."""
    if is_postgresql():
        with _postgresql_transaction(scopes):
            yield
        return
    if WRITE_LOCK.held_by_me():
        with database.atomic():
            yield
        return
    started = time.monotonic()
    committed = False
    if not WRITE_LOCK.acquire(timeout=WRITE_WAIT_SECONDS):
        raise Unavailable("The server is busy writing; try again in a moment.")
    try:
        waited = time.monotonic() - started
        if waited > 1.0:
            log.info("a write waited %.1f s for its turn", waited)
        with database.atomic("IMMEDIATE"):
            yield
        committed = True
    except (sqlite3.OperationalError, OperationalError) as error:
        if is_disk_full(error):
            raise StorageFull() from None
        if "database is locked" in str(error):
            raise Unavailable("The database is locked by another program; try again in a "
                              "moment.") from None
        raise
    finally:
        WRITE_LOCK.release()
        if committed:
            for callback in list(_after_commit):
                callback()


_transaction_depth = threading.local()


@contextlib.contextmanager
def _postgresql_transaction(scopes: tuple[str, ...]) -> Iterator[None]:
    depth = getattr(_transaction_depth, "value", 0)
    _transaction_depth.value = depth + 1
    committed = False
    try:
        with database.atomic():
            for scope in sorted(set(scopes)):
                database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (advisory_key(scope),))
            yield
        committed = depth == 0
    except DatabaseError as error:
        raise _postgresql_error(error) from None
    finally:
        _transaction_depth.value = depth
    if committed:
        for callback in list(_after_commit):
            callback()


def advisory_key(scope: str) -> int:
    """A scope's 64-bit advisory lock number (the same on every node and every version)."""
    return int.from_bytes(hashlib.blake2b(scope.encode(), digest_size=8).digest(), "big",
                          signed=True)


# SQLSTATEs: https://www.postgresql.org/docs/current/errcodes-appendix.html
_PG_DISK_FULL = ("53100",)
_PG_RETRY = ("40001", "40P01", "55P03")  # serialization failure, deadlock, lock not available
_PG_GONE = ("08000", "08003", "08006", "57P01", "57P02", "57P03")


def _postgresql_error(error: DatabaseError) -> BaseException:
    """The domain error a PostgreSQL failure means, or the error itself (IntegrityError, ...)."""
    state = getattr(getattr(error, "__cause__", None), "sqlstate", None) or \
        getattr(getattr(error, "__context__", None), "sqlstate", None)
    if state in _PG_DISK_FULL:
        return StorageFull()
    if state in _PG_RETRY:
        return Unavailable("The server is busy writing; try again in a moment.")
    if state in _PG_GONE or (state is None and isinstance(error, OperationalError)):
        log.error("PostgreSQL failed: %s", error)
        return Unavailable("The database is not reachable; try again in a moment.")
    return error


_after_commit: list[Callable[[], None]] = []


def on_commit(callback: Callable[[], None]) -> Callable[[], None]:
    """Call `callback` (quick, never raising) after every committed write transaction of this
    process; returns a function that unregisters it. The search indexer wakes up this way."""
    _after_commit.append(callback)
    return lambda: _after_commit.remove(callback)


_release_space_reserve: Callable[[], bool] | None = None


def register_space_reserve(release: Callable[[], bool] | None) -> None:
    """How to free the disk space set aside for writes that must work on a full disk
    (dms.files.store.FileStore.release_reserve; set by create_app)."""
    global _release_space_reserve
    _release_space_reserve = release


def with_space_reserve(action: Callable[[], T]) -> T:
    """Run `action`, a write that must work even on a full disk (deleting, which frees space, and
    logging in, which deleting needs); if the disk is full, free the reserve once and retry."""
    try:
        return action()
    except StorageFull:
        if _release_space_reserve is None or not _release_space_reserve():
            raise
        return action()


# -- the engines ------------------------------------------------------------------------------


def is_postgresql() -> bool:
    return isinstance(database.obj, PostgresqlEngine) if database.obj is not None else False


class DatabaseUnavailable(Exception):
    """The configured database cannot be used (wrong URL, unreachable, no privileges): one line
    for the person starting dms."""


@functools.lru_cache(maxsize=2048)
def _postgresql_sql(sql: str) -> str:
    """The domain's SQL with psycopg's placeholders: `?` outside quotes becomes %s, and a literal
    % is doubled."""
    out, quote = [], None
    for char in sql:
        if quote:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        if char == "%":
            out.append("%%")
            continue
        out.append(char)
    return "".join(out)


def _postgresql_engine_class():
    """Imported on demand: psycopg is an optional extra (dms[postgres])."""
    try:
        from playhouse.pool import MaxConnectionsExceeded
        from playhouse.postgres_ext import PooledPsycopg3Database
        import psycopg  # noqa: F401
    except ImportError:
        raise DatabaseUnavailable("DMS_DATABASE_URL names PostgreSQL, but psycopg is not "
                                  "installed: pip install 'dms[postgres]'.") from None

    class Engine(PooledPsycopg3Database, PostgresqlEngine):
        def connect(self, reuse_if_open=False):
            try:
                return super().connect(reuse_if_open)
            except MaxConnectionsExceeded:  # waited for a free connection in vain
                raise Unavailable("Every database connection of this server is in use "
                                  "(DMS_DB_POOL_SIZE); try again in a moment.") from None

        def execute_sql(self, sql, params=None, **options):
            # The domain writes `?` (SQLite's style); peewee's own queries already use %s.
            if "?" in sql:
                sql = _postgresql_sql(sql)
            elif not params and "%" in sql:
                sql = sql.replace("%", "%%")  # psycopg reads % as a placeholder even then
            return super().execute_sql(sql, params, **options)

    return Engine


class PostgresqlEngine:
    """Marks the PostgreSQL engine (its class is made on demand, see above)."""


def describe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{user}{host}{port}{parts.path}"


def open_configured(config, migrate: bool = True):
    """The database the config names: PostgreSQL if `database_url` is set, else SQLite in the data
    directory."""
    if config.database_url:
        return open_database(config.database_url, migrate, pool_size=config.db_pool_size)
    return open_database(config.db_path, migrate)


def open_database(target: Path | str, migrate: bool = True, pool_size: int = 10):
    """Point the shared database object at `target` (an SQLite file, created if needed, or a
    PostgreSQL URL) and bring its schema up to date. Raises DatabaseUnavailable with one line."""
    if database.obj is not None and not database.is_closed():
        database.close()
    if isinstance(target, str):
        engine = _open_postgresql(target, pool_size)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        engine = SqliteEngine(str(target), pragmas=PRAGMAS, check_same_thread=False)
    database.initialize(engine)
    database.connect(reuse_if_open=True)
    if migrate:
        from dms.db.schema import migrate_schema  # it builds on this module

        migrate_schema()
    return database


def _open_postgresql(url: str, pool_size: int):
    engine = _postgresql_engine_class()(
        None, max_connections=pool_size, stale_timeout=300, timeout=WRITE_WAIT_SECONDS)
    engine.init(url, max_connections=pool_size, stale_timeout=300, timeout=WRITE_WAIT_SECONDS,
                connect_timeout=10, application_name="dms")
    where = describe_url(url)
    try:
        engine.connect()
        version = engine.execute_sql("SHOW server_version_num").fetchone()[0]
    except Exception as error:  # psycopg's message says what failed: refused, auth, no database
        reason = str(getattr(error, "__cause__", None) or error).strip().splitlines()
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: "
                                  f"{reason[0] if reason else type(error).__name__}") from None
    if int(version) < 150000:
        raise DatabaseUnavailable(f"PostgreSQL at {where} is version {int(version) // 10000}; "
                                  "dms needs 15 or newer.")
    engine.close()
    return engine


def release_connection() -> None:
    """Give this thread's connection back to the pool (PostgreSQL; called after each request).
    SQLite keeps one connection per thread for good: opening one costs more than a query."""
    if is_postgresql() and not database.is_closed() and not database.in_transaction():
        database.close()
