"""The threads of one node that work on runs in the background — runs of rules
(dms.domain.rules.runs), splits (dms.domain.splitruns) — in their owners' turns (issue 38).

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
from typing import Callable

from dms.db import release_connection
from dms.db.models import new_id
from dms.errors import DomainError
from dms.files.fairness import FairExecutor

log = logging.getLogger("dms.runs")

Execute = Callable[[str, str, Callable[[], bool]], "float | None"]


class TurnPool:
    """`threads` threads running `execute` for runs in users' turns (see the module
    docstring); `resumable()` lists (run id, owner id) of the runs nobody holds, `give_back(run
    id, worker id)` releases a run's lease."""

    def __init__(self, name: str, threads: int, execute: Execute,
                 resumable: Callable[[], list[tuple[str, str]]],
                 give_back: Callable[[str, str], None], per_owner: int = 1):
        self.name = name
        self.worker_id = new_id()
        self._execute, self._resumable, self._give_back = execute, resumable, give_back
        self._pool = FairExecutor(threads, name, per_owner=per_owner)
        self._queued: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def resume(self) -> None:
        """Take up the runs nobody holds (at start, and periodically)."""
        for run_id, owner_id in self._resumable():
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
            self._give_back(run_id, self.worker_id)
        except DomainError as error:  # the database busy or gone: the lease expires instead
            log.warning("%s: run %s keeps its lease until it expires: %s", self.name, run_id,
                        error.message)
