"""Group commit for SQLite: the writers of this process share the fsyncs that make their commits
durable, and none of them holds the write lock while the disk works.

SQLite runs with `synchronous=NORMAL` in WAL mode (dms.db.sqlite): a COMMIT appends the
transaction's frames to `dms.db-wal` without waiting for the disk, so the write lock is held only
while SQLite works in memory. Before the write is acknowledged, `write_transaction` makes it
durable here: after the COMMIT, still holding the lock, it takes a ticket (commits are counted in
the order they were appended); after letting the lock go, it waits until an fsync of the WAL that
started after its ticket has ended. One fsync covers every commit counted before it began, so
while the disk works on one, the commits of every other writer queue up behind it and are made
durable together by the next: sixteen writers cost a few fsyncs, not sixteen in a row, and a
writer never waits for the disk while holding the lock that everyone else needs.

What `synchronous=FULL` promised stays true: nothing is acknowledged before its frames are on
the disk (fsync of the file flushes every descriptor's writes to it; SQLite itself fsyncs the
WAL before each checkpoint and the database after it). A reader of another thread may see a
commit a moment before it is durable; a power cut in that moment loses it, as it loses the
writer's unacknowledged answer. A killed process loses nothing: the frames are in the kernel.
"""

from __future__ import annotations

import os
import threading


class GroupSync:
    """The commits to one WAL file and the fsyncs that made them durable."""

    def __init__(self, wal_path: str) -> None:
        self.wal_path = wal_path
        self._counting = threading.Lock()
        self._syncing = threading.Lock()  # one fsync at a time; the others queue behind it
        self._counted = 0  # commits appended to the WAL (tickets handed out)
        self._durable = 0  # every ticket up to this one is on the disk
        self.fsyncs = 0  # how many fsyncs made them so (the tests count them)

    @property
    def counted(self) -> int:
        return self._counted

    @property
    def durable(self) -> int:
        return self._durable

    def ticket(self) -> int:
        """Count a commit just appended to the WAL (call it before the write lock is let go, so
        that tickets follow the order of the commits)."""
        with self._counting:
            self._counted += 1
            return self._counted

    def wait(self, ticket: int) -> None:
        """Return once the commit of `ticket` is on the disk: at once if a later fsync already
        covered it, else after the fsync this call (or the one running) does. OSError if the
        disk refused (the write is committed but may not survive a power cut)."""
        with self._syncing:
            if self._durable >= ticket:
                return
            with self._counting:
                covered = self._counted
            _fsync(self.wal_path)
            self.fsyncs += 1
            self._durable = covered


_journals: dict[str, GroupSync] = {}
_journals_lock = threading.Lock()


def group_sync(wal_path: str) -> GroupSync:
    """The one GroupSync of this WAL file in this process (one database in production; the
    tests serve one data dir after another)."""
    with _journals_lock:
        journal = _journals.get(wal_path)
        if journal is None:
            journal = _journals[wal_path] = GroupSync(wal_path)
        return journal


def _fsync(path: str) -> None:
    """fsync the file at `path`. None there: no WAL file, so nothing to sync (SQLite removes it
    only after checkpointing every frame into the database file, which it syncs first)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
