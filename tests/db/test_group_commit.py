"""Group commit on SQLite (dms.db.groupsync): writers share the fsyncs of the WAL, none holds the
write lock while the disk works, and none returns before an fsync that began after its commit."""

from __future__ import annotations

import threading

import pytest

from dms.db import database, write_transaction
from dms.db.groupsync import group_sync

pytestmark = pytest.mark.sqlite_only  # SQLite's own journal; PostgreSQL commits as it does

THREADS = 16
WRITES = 25


def test_sqlite_commits_without_waiting_for_the_disk_inside_the_lock(services, config):
    assert database.execute_sql("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    assert database.execute_sql("PRAGMA journal_mode").fetchone() == ("wal",)


def test_sixteen_writers_share_fsyncs_and_each_returns_only_once_durable(services, config):
    database.execute_sql("CREATE TABLE probe (writer INTEGER, number INTEGER)")
    journal = group_sync(str(config.db_path) + "-wal")
    fsyncs_before = journal.fsyncs
    late: list[tuple[int, int]] = []  # (counted before the commit, durable after the return)
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def writer(number: int) -> None:
        try:
            start.wait()
            for write in range(WRITES):
                with write_transaction():
                    counted = journal.counted  # this commit's ticket will be above it
                    database.execute_sql("INSERT INTO probe VALUES (?, ?)", (number, write))
                if journal.durable <= counted:
                    late.append((counted, journal.durable))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and late == []
    rows = database.execute_sql("SELECT writer, number FROM probe ORDER BY writer, number")
    assert rows.fetchall() == [(w, n) for w in range(THREADS) for n in range(WRITES)]
    commits = THREADS * WRITES
    fsyncs = journal.fsyncs - fsyncs_before
    assert journal.durable == journal.counted
    # Shared: while one fsync runs, the others' commits queue behind it and go together.
    assert 1 <= fsyncs < commits
