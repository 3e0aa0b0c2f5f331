"""Answers kept until the database changes (dms.db.kept): a thread gets its kept answer back
while nothing changed, and a new one after any change — its own write, another thread's commit,
another process' (another connection to the file) — never inside a transaction, within its
bounds; on PostgreSQL nothing is kept."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from dms.db import database, is_postgresql, kept_until_change, write_transaction
from dms.db.kept import MOST_ANSWERS, MOST_CHARS


class Counted:
    """The probe table's row count, read through kept_until_change, with each real read noted."""

    def __init__(self, key: str = "probe"):
        self.key, self.reads = key, 0

    def __call__(self) -> int:
        return kept_until_change(("count", self.key), self.read)

    def read(self) -> int:
        self.reads += 1
        return database.execute_sql("SELECT count(*) FROM probe").fetchone()[0]


@pytest.fixture
def probe(services):
    database.execute_sql("CREATE TABLE probe (n INTEGER)")
    return Counted()


def insert(n: int) -> None:
    with write_transaction():
        database.execute_sql("INSERT INTO probe VALUES (?)", (n,))


@pytest.mark.sqlite_only
def test_an_answer_is_kept_until_the_same_thread_writes(probe):
    assert (probe(), probe(), probe.reads) == (0, 0, 1)
    insert(1)
    assert (probe(), probe(), probe.reads) == (1, 1, 2)


@pytest.mark.sqlite_only
def test_another_threads_commit_or_another_connection_makes_it_read_again(probe, config):
    assert probe() == 0
    writer = threading.Thread(target=insert, args=(1,))
    writer.start()
    writer.join()
    assert (probe(), probe.reads) == (1, 2)
    other = sqlite3.connect(config.db_path)  # as another process would
    try:
        other.execute("INSERT INTO probe VALUES (2)")
        other.commit()
    finally:
        other.close()
    assert (probe(), probe(), probe.reads) == (2, 2, 3)


def test_inside_a_transaction_nothing_is_kept(probe):
    assert probe() == 0
    with pytest.raises(RuntimeError), database.atomic():
        database.execute_sql("INSERT INTO probe VALUES (1)")
        reads = probe.reads
        assert (probe(), probe(), probe.reads) == (1, 1, reads + 2)  # its own, uncommitted write
        raise RuntimeError("rolled back")
    assert probe() == 0
    assert (probe(), probe.reads) == (0, reads + 3 + is_postgresql())


@pytest.mark.sqlite_only
def test_the_oldest_answer_goes_first_and_a_long_text_is_not_kept(probe):
    counters = [Counted(f"key {n}") for n in range(MOST_ANSWERS + 1)]
    assert [counter() for counter in counters] == [0] * (MOST_ANSWERS + 1)
    assert [counter() for counter in counters[1:]] == [0] * MOST_ANSWERS
    assert [counter.reads for counter in counters] == [1] * (MOST_ANSWERS + 1)
    assert (counters[0](), counters[0].reads) == (0, 2)  # it had gone: read again
    long, reads = "x" * (MOST_CHARS + 1), []

    def text() -> str:
        reads.append(1)
        return long

    assert [kept_until_change("long", text, len) for _ in range(2)] == [long, long]
    assert len(reads) == 2


@pytest.mark.postgresql_only
def test_on_postgresql_every_call_reads(probe):
    assert (probe(), probe(), probe.reads) == (0, 0, 2)
