"""Writing: the one write-transaction helper, its scopes, callbacks after a commit, and the disk
space set aside for writes that must work on a full disk.

Concurrency rules (every module that writes follows them):
- Every write runs inside `write_transaction(*scopes)`. SQLite: a process-wide FIFO lock, then
  `BEGIN IMMEDIATE`; after the COMMIT the lock goes, and the write returns once an fsync shared with
  the other writers made it durable (group commit, dms.db.groupsync). PostgreSQL (READ COMMITTED): a
  transaction that first takes one transaction-scoped advisory lock per scope, in sorted order (so
  two writers never wait for each other crosswise); every check-then-write names the scope its check
  reads (`USERS`, what one user owns, one document), so two such writes of one scope run one after
  the other on every node. On SQLite the scopes cost nothing: the one writer holds them all. Writers
  of this process queue fairly in arrival order instead of meeting in SQLite's busy handler (which
  backs off in sleeps and let the 16-writer p99 reach 1-2 s); the IMMEDIATE lock still serialises
  against other processes (the CLI beside a running server), waiting up to busy_timeout. Reads
  inside the transaction see the state the writes build on, so check-then-write sequences (a move's
  cycle check, unique names, the last superuser) hold.
- A write changes only the columns it means to: `UPDATE ... SET col = ?`, never `save()` of a row
  read earlier, which would write back stale values over a concurrent change.
- A write that records events of a user's nodes holds that user's scope (`owner_scope`;
  dms.db.events checks it): on PostgreSQL an event's id is handed out at its INSERT, before the
  commit, so two writers of one owner's events at once could commit their ids out of order, and a
  reader of "that owner's events after id N" (webhooks, the event stream) would skip one. Under
  the scope, each owner's events commit in the order of their ids.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import TypeVar

from peewee import DatabaseError, OperationalError

from dms.db.engine import (
    WRITE_WAIT_SECONDS,
    advisory_key,
    database,
    is_postgresql,
    sqlstate,
)
from dms.db.fifolock import FifoLock
from dms.db.groupsync import GroupSync, group_sync
from dms.errors import StorageFull, Unavailable

log = logging.getLogger("dms.db")
T = TypeVar("T")

# Scopes of write_transaction() (see the module docstring).
USERS = "users"  # usernames, the last active superuser, the first superuser


def owner_scope(owner_id: str) -> str:
    """What one user owns: the folder tree (moves' cycle check, depth), tags (unique names),
    tokens (the cap per user)."""
    return f"owner:{owner_id}"


def document_scope(document_id: str) -> str:
    """One document: its version numbers, its processing state."""
    return f"document:{document_id}"


WRITE_LOCK = FifoLock()
# How an ENOSPC or EDQUOT of Rust's std::io (tantivy) reads once turned into a Python error:
# "(os error 28)" as displayed, "code: 28, kind: StorageFull" as debug-printed.
RUST_DISK_FULL = re.compile(r"os error (?:28|122)\b|\bcode: (?:28|122)\b")
_held = threading.local()  # the scopes this thread's write transaction holds


def holds_scope(scope: str) -> bool:
    """Does this thread's write transaction hold `scope`? (Always False outside one.)"""
    return scope in getattr(_held, "scopes", ())


@contextlib.contextmanager
def _holding(scopes: tuple[str, ...]) -> Iterator[None]:
    held = getattr(_held, "scopes", None)
    if held is None:
        held = _held.scopes = set()
    added = set(scopes) - held
    held |= added
    try:
        yield
    finally:
        held -= added


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
        if isinstance(error, ValueError) and RUST_DISK_FULL.search(str(error)):
            return True  # tantivy's (Rust's std::io) ENOSPC or EDQUOT, as text in a ValueError
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


@contextlib.contextmanager
def write_transaction(*scopes: str) -> Iterator[None]:
    """The one way to write: see the module docstring. Nested calls join the outer transaction
    (as a savepoint), so domain functions can be combined. Raises StorageFull when the disk is
    full and Unavailable when the write lock cannot be had in time; either way nothing changed."""
    if is_postgresql():
        with _postgresql_transaction(scopes), _holding(scopes):
            yield
        return
    if WRITE_LOCK.held_by_me():
        with database.atomic(), _holding(scopes):
            yield
        return
    started = time.monotonic()
    if not WRITE_LOCK.acquire(timeout=WRITE_WAIT_SECONDS):
        raise Unavailable("The server is busy writing; try again in a moment.")
    try:
        waited = time.monotonic() - started
        if waited > 1.0:
            log.info("a write waited %.1f s for its turn", waited)
        with database.atomic("IMMEDIATE"), _holding(scopes):
            yield
        journal = group_sync(database.obj.database + "-wal")
        ticket = journal.ticket()  # before the lock goes: tickets in the order of commits
    except (sqlite3.OperationalError, OperationalError) as error:
        if is_disk_full(error):
            raise StorageFull() from None
        if "database is locked" in str(error):
            raise Unavailable("The database is locked by another program; try again in a "
                              "moment.") from None
        raise
    finally:
        WRITE_LOCK.release()
    _make_durable(journal, ticket)
    for callback in list(_after_commit):
        callback()


def _make_durable(journal: GroupSync, ticket: int) -> None:
    """Wait for the fsync that covers this commit (dms.db.groupsync), outside the write lock."""
    try:
        journal.wait(ticket)
    except OSError as error:
        log.error("the disk refused to sync the database's journal: %s", error)
        if is_disk_full(error):
            raise StorageFull() from None
        raise Unavailable("The disk could not save the change for certain; check the "
                          "server's disk and try again.") from None


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



# SQLSTATEs: https://www.postgresql.org/docs/current/errcodes-appendix.html
_PG_DISK_FULL = ("53100",)
_PG_RETRY = ("40001", "40P01", "55P03")  # serialization failure, deadlock, lock not available
_PG_GONE = ("08000", "08003", "08006", "57P01", "57P02", "57P03")


def _postgresql_error(error: DatabaseError) -> BaseException:
    """The domain error a PostgreSQL failure means, or the error itself (IntegrityError, ...)."""
    state = sqlstate(error)
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


def take_turns_by(turn_of: Callable[[], Hashable]) -> None:
    """Whom a writer works for (dms.files.fairness.current_owner; set by the composition root):
    the write lock takes users in turns by it (dms.db.fifolock)."""
    WRITE_LOCK.turn_of = turn_of


def register_space_reserve(release: Callable[[], bool] | None) -> None:
    """How to free the disk space set aside for writes that must work on a full disk
    (dms.files.storage.FileStore.release_reserve; set by create_app)."""
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

