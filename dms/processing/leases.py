"""Leases: which worker is reading which version, in the database (table `lease`, migration
0010), so that across every process of a cluster no version is read by two workers at once.

A worker takes the lease before it reads a version and gives it back when its slice ends; its
heartbeat (dms.processing.cluster) renews the leases it holds. A lease not renewed for
`lease_seconds` (its worker was killed, or lost its machine) has expired: the next heartbeat of any
worker takes it away and queues the version again, and the next worker resumes at the first unsaved
page. Saving pages checks the lease in the same transaction (dms.processing.progress), so a worker
that lost its lease while it was stalled never writes over its successor.

Times are seconds since the epoch by the nodes' own clocks (kept by NTP); a lease is tens of
seconds, so a clock a second off changes nothing.
"""

from __future__ import annotations

import time

from peewee import IntegrityError

from dms.db import database, write_transaction


def take(version_id: str, worker_id: str, seconds: float) -> bool:
    """Take the lease on a version for `seconds`: True if it was free, expired or already ours;
    False if another worker holds it (or the version is gone)."""
    now = time.time()
    try:
        with write_transaction():
            database.execute_sql(
                "INSERT INTO lease (version_id, worker_id, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (version_id) DO UPDATE SET worker_id = excluded.worker_id, "
                "expires_at = excluded.expires_at "
                "WHERE lease.expires_at < ? OR lease.worker_id = excluded.worker_id",
                (version_id, worker_id, now + seconds, now))
            row = database.execute_sql("SELECT worker_id FROM lease WHERE version_id = ?",
                                       (version_id,)).fetchone()
    except IntegrityError:  # the version was deleted a moment ago
        return False
    return row is not None and row[0] == worker_id


def holds(version_id: str, worker_id: str) -> bool:
    """Does this worker still hold the lease? (Asked inside the transaction that saves.)"""
    return database.execute_sql(
        "SELECT 1 FROM lease WHERE version_id = ? AND worker_id = ?",
        (version_id, worker_id)).fetchone() is not None


def release(version_id: str, worker_id: str) -> None:
    with write_transaction():
        database.execute_sql("DELETE FROM lease WHERE version_id = ? AND worker_id = ?",
                             (version_id, worker_id))


def renew(worker_id: str, seconds: float) -> set[str]:
    """Extend every lease this worker holds; returns the versions it still holds (a lease is
    gone when its version was deleted, or when it expired and another worker took it)."""
    with write_transaction():
        database.execute_sql("UPDATE lease SET expires_at = ? WHERE worker_id = ?",
                             (time.time() + seconds, worker_id))
        return {row[0] for row in database.execute_sql(
            "SELECT version_id FROM lease WHERE worker_id = ?", (worker_id,))}


def take_over_expired() -> list[str]:
    """Remove the expired leases and return their versions, to be queued again. Exactly one
    caller gets each version: the rows are deleted in the same statement that reads them."""
    with write_transaction():
        return [row[0] for row in database.execute_sql(
            "DELETE FROM lease WHERE expires_at < ? RETURNING version_id", (time.time(),))]


def release_all() -> int:
    """Remove every lease: for the one process that consumes an embedded queue, at its start
    (whoever held them was this installation's previous run)."""
    with write_transaction():
        removed: int = database.execute_sql("DELETE FROM lease").rowcount
        return removed


def leased_versions() -> set[str]:
    """Versions some worker is reading now (reconcile leaves them alone)."""
    return {row[0] for row in database.execute_sql(
        "SELECT version_id FROM lease WHERE expires_at >= ?", (time.time(),))}
