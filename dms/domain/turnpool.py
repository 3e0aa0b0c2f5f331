"""Runs in the background — runs of rules (dms.domain.rules.runs), splits
(dms.domain.splitruns): their rows' leases (RunLeases), and the threads of one node that work on
them in their owners' turns (TurnPool).

A run's row is queued, then running, then succeeded or failed. A worker of some node claims it
with a lease in the database (`worker_id`, `lease_until`, for DMS_LEASE_SECONDS, as the
processing leases of dms.processing.leases); whoever resumes a run whose worker died takes it
once the lease has expired.

A run is a row with a lease; what one step of it does is the caller's `execute(run_id,
worker_id, stopping)`, which works for a slice and answers when to go on: None when the run has
ended or is no longer this worker's (or `stopping()`, its lease then given back), 0 for its next
slice at once, or seconds to wait first (a busy reader pool or database, a full disk). The next
slice goes behind the runs of other users that wait (dms.files.fairness.FairExecutor: a user's
runs take `per_owner` threads at a time), so one user's long runs never keep another user's run
waiting for them to end. A run is queued once per node; stopping drops the queued ones and gives
their leases back (they are resumed from the database at the next start).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import cast

from dms.db import database, release_connection, write_transaction
from dms.db.models import STORED_DATETIME, new_id, utcnow
from dms.errors import DomainError
from dms.files.fairness import FairExecutor

log = logging.getLogger("dms.runs")

Execute = Callable[[str, str, Callable[[], bool]], "float | None"]
QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
UNFINISHED = (QUEUED, RUNNING)
RESUME_LIMIT = 100  # runs one resume takes up (the rest at the next)
MAX_FORGOTTEN = 1000  # old runs deleted at once (one more each time a run starts: never more)


class RunLeases:
    """The leases of one table of runs (its columns: id, owner_id, state, worker_id,
    lease_until, started_at, finished_at, error, created_at)."""

    def __init__(self, table: str):
        self.table = table

    def under_way(self, owner_id: str) -> int:
        """The owner's runs queued or running."""
        return cast(int, database.execute_sql(
            f"SELECT count(*) FROM {self.table} WHERE owner_id = ? AND state IN (?, ?)",
            (owner_id, *UNFINISHED)).fetchone()[0])

    def forget_finished(self, owner_id: str, keep: int) -> None:
        """In the owner's write transaction: their finished runs but the `keep` newest, gone."""
        database.execute_sql(
            f"DELETE FROM {self.table} WHERE id IN (SELECT id FROM {self.table} WHERE owner_id = ? "
            "AND state NOT IN (?, ?) ORDER BY created_at DESC, id LIMIT ? OFFSET ?)",
            (owner_id, *UNFINISHED, MAX_FORGOTTEN, keep))

    def resumable(self) -> list[tuple[str, str]]:
        """Runs nobody holds, with their owners: queued and never claimed, or their worker's
        lease expired."""
        return cast("list[tuple[str, str]]", database.execute_sql(
            f"SELECT id, owner_id FROM {self.table} WHERE state IN (?, ?) AND (lease_until IS "
            "NULL OR lease_until < ?) ORDER BY created_at LIMIT ?",
            (*UNFINISHED, time.time(), RESUME_LIMIT)).fetchall())

    def release_all(self) -> None:
        """At the start of a process that is the only one (the embedded queue): the leases left
        are its own last run's, cut short by a crash."""
        with write_transaction():
            database.execute_sql(f"UPDATE {self.table} SET worker_id = NULL, lease_until = NULL "
                                 "WHERE state IN (?, ?)", UNFINISHED)

    def claim(self, run_id: str, worker_id: str, lease_seconds: float) -> bool:
        """Take (or renew) the run for `worker_id`, unless another worker's lease holds it."""
        now = time.time()
        with write_transaction():
            return cast(bool, database.execute_sql(
                f"UPDATE {self.table} SET worker_id = ?, lease_until = ?, state = ?, "
                "started_at = COALESCE(started_at, ?) WHERE id = ? AND state IN (?, ?) "
                "AND (lease_until IS NULL OR lease_until < ? OR worker_id = ?)",
                (worker_id, now + lease_seconds, RUNNING, _now(), run_id, *UNFINISHED, now,
                 worker_id)).rowcount == 1)

    def give_back(self, run_id: str, worker_id: str) -> None:
        """The run's lease, released: whoever resumes it next need not wait for it to expire."""
        with write_transaction():
            database.execute_sql(f"UPDATE {self.table} SET worker_id = NULL, lease_until = NULL "
                                 "WHERE id = ? AND worker_id = ?", (run_id, worker_id))

    def finish(self, run_id: str, worker_id: str, state: str, error: str | None = None) -> None:
        with write_transaction():
            database.execute_sql(
                f"UPDATE {self.table} SET state = ?, error = ?, finished_at = ?, worker_id = NULL, "
                "lease_until = NULL WHERE id = ? AND worker_id = ?",
                (state, error, _now(), run_id, worker_id))
        log.info("%s %s %s%s", self.table, run_id, state, f": {error}" if error else "")


def _now() -> str:
    return utcnow().strftime(STORED_DATETIME)


class TurnPool:
    """`threads` threads running `execute` for the runs of `leases` in users' turns (see the
    module docstring)."""

    def __init__(self, name: str, threads: int, execute: Execute, leases: RunLeases,
                 per_owner: int = 1):
        self.name = name
        self.worker_id = new_id()
        self._execute, self._leases = execute, leases
        self._pool = FairExecutor(threads, name, per_owner=per_owner)
        self._queued: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def resume(self) -> None:
        """Take up the runs nobody holds (at start, and periodically)."""
        for run_id, owner_id in self._leases.resumable():
            self.submit(run_id, owner_id)

    def submit(self, run_id: str, owner_id: str) -> None:
        with self._lock:
            if self._stopping.is_set() or run_id in self._queued:
                return
            self._queued.add(run_id)
        try:
            self._pool.submit(owner_id, self._run, run_id, owner_id)
        except RuntimeError:  # stopped meanwhile: resumed from the database at the next start
            with self._lock:
                self._queued.discard(run_id)

    def _run(self, run_id: str, owner_id: str) -> None:
        again = None
        try:
            again = self._execute(run_id, self.worker_id, self._stopping.is_set)
        except Exception:  # the run stays unfinished; its lease expires and it is resumed
            log.exception("%s: run %s stopped", self.name, run_id)
        finally:
            with self._lock:
                self._queued.discard(run_id)
            release_connection()
        if again is not None:
            if again:
                self._stopping.wait(again)
            if self._stopping.is_set():
                self._release(run_id)
            else:
                self.submit(run_id, owner_id)  # its next slice, in its owner's next turn

    def stop(self) -> None:
        """Runs give their lease back after the slice at hand; queued ones are dropped and give
        theirs back."""
        self._stopping.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            dropped = list(self._queued)
            self._queued.clear()
        for run_id in dropped:
            self._release(run_id)

    def _release(self, run_id: str) -> None:
        try:
            self._leases.give_back(run_id, self.worker_id)
        except DomainError as error:  # the database busy or gone: the lease expires instead
            log.warning("%s: run %s keeps its lease until it expires: %s", self.name, run_id,
                        error.message)
