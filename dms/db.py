"""The database: one peewee database object, its pragmas, the one write-transaction helper, and
the schema migrations.

Concurrency rules (every module that writes follows them):
- Every write runs inside `write_transaction()`: a process-wide FIFO lock, then SQLite's
  `BEGIN IMMEDIATE`. Writers of this process queue fairly in arrival order instead of meeting in
  SQLite's busy handler (which backs off in sleeps and let the 16-writer p99 reach 1-2 s); the
  IMMEDIATE lock still serialises against other processes (the CLI beside a running server),
  waiting up to busy_timeout. Reads inside the transaction see the state the writes build on, so
  check-then-write sequences (a move's cycle check, unique names, the last superuser) hold.
- A write changes only the columns it means to: `UPDATE ... SET col = ?`, never `save()` of a row
  read earlier, which would write back stale values over a concurrent change.
- peewee keeps one connection per thread; WAL lets readers run beside the one writer.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import sqlite3
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from peewee import OperationalError, SqliteDatabase
from playhouse.migrations import Runner

from dms.errors import StorageFull, Unavailable

log = logging.getLogger("dms.db")
T = TypeVar("T")

# Bound to a file by open_database(); models refer to it (deferred, so importing has no effect).
database = SqliteDatabase(None)

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    # Milliseconds a writer waits for another process' write lock before "database is locked".
    "busy_timeout": 10_000,
    # FULL: a commit that was acknowledged survives a power cut, not only a killed process.
    "synchronous": "full",
    "temp_store": "memory",
}

MIGRATIONS_TABLE = "schema_migrations"
WRITE_WAIT_SECONDS = 30.0  # a writer queued longer than this gets "busy, try again" (503)


class FifoLock:
    """A re-entrant lock handed to waiters in the order they arrived (threading.Lock is unfair:
    a thread that just released it often takes it again before a waiter wakes up)."""

    def __init__(self):
        self._mutex = threading.Lock()
        self._waiters: collections.deque[tuple[int, threading.Event]] = collections.deque()
        self._owner: int | None = None
        self._depth = 0

    def held_by_me(self) -> bool:
        return self._owner == threading.get_ident()

    def acquire(self, timeout: float | None = None) -> bool:
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._waiters:
                self._owner, self._depth = me, 1
                return True
            entry = (me, threading.Event())
            self._waiters.append(entry)
        if entry[1].wait(timeout):
            return True
        with self._mutex:
            if self._owner == me:  # handed over just as the wait timed out
                return True
            self._waiters.remove(entry)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._owner != threading.get_ident():
                raise RuntimeError("release of a FifoLock this thread does not hold")
            self._depth -= 1
            if self._depth:
                return
            if self._waiters:
                owner, event = self._waiters.popleft()
                self._owner, self._depth = owner, 1
                event.set()
            else:
                self._owner = None


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
def write_transaction() -> Iterator[None]:
    """The one way to write: see the module docstring. Nested calls join the outer transaction
    (as a savepoint), so domain functions can be combined. Raises StorageFull when the disk is
    full and Unavailable when the write lock cannot be had in time; either way nothing changed."""
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


_after_commit: list[Callable[[], None]] = []


def on_commit(callback: Callable[[], None]) -> Callable[[], None]:
    """Call `callback` (quick, never raising) after every committed write transaction of this
    process; returns a function that unregisters it. The search indexer wakes up this way."""
    _after_commit.append(callback)
    return lambda: _after_commit.remove(callback)


_release_space_reserve: Callable[[], bool] | None = None


def register_space_reserve(release: Callable[[], bool] | None) -> None:
    """How to free the disk space set aside for writes that must work on a full disk
    (dms.storage.FileStore.release_reserve; set by create_app)."""
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


@contextlib.contextmanager
def interruptible(should_stop: Callable[[], bool], every: int = 10_000) -> Iterator[None]:
    """Let SQLite abort the statements run inside when `should_stop()` turns true (a deadline
    passed, the client went away): it is asked every `every` virtual-machine steps, and a query
    so stopped raises `OperationalError: interrupted`."""
    connection = database.connection()
    connection.set_progress_handler(lambda: 1 if should_stop() else 0, every)
    try:
        yield
    finally:
        connection.set_progress_handler(None, every)


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
        if any(name.startswith(VACUUM_AFTER) for name in applied):
            _vacuum()
    return database


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
    return Runner(database, str(migrations_dir()), table_name=MIGRATIONS_TABLE)


def schema_version() -> int:
    """The number of the newest applied migration (0 for an empty database)."""
    applied = migration_runner().applied()
    return max((int(name.split("_", 1)[0]) for name in applied), default=0)


def latest_schema_version() -> int:
    """The number of the newest migration this dms ships."""
    return max(int(p.name.split("_", 1)[0]) for p in migrations_dir().glob("[0-9]*.py"))
