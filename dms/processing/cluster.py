"""The processes that read pages, as every node sees them (table `worker`, migration 0010): each
`dms worker`, and each `dms serve` running its embedded workers, registers with its host, pid,
OCR languages and concurrency, and its heartbeat keeps the row live. GET /health lists them; web
nodes accept the OCR languages the live workers share (dms.processing.languages).

Also the periodic jobs' claims: a job's time is cut into periods (counted from PERIOD_ANCHOR) and
the first worker to claim a period runs the job for it; every other worker's claim of that period
fails, so each job runs once per period for the whole cluster, however many workers there are.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from dms.db import database, write_transaction

# A worker row nobody renewed for this long is removed (its process is long gone).
FORGET_AFTER_SECONDS = 24 * 3600
# Periods are counted from a Sunday 03:17 UTC: with the default 168 hours the weekly verify
# starts Sundays at 03:17 UTC, as it did before several processes shared the jobs.
PERIOD_ANCHOR = dt.datetime(2024, 1, 7, 3, 17, tzinfo=dt.UTC).timestamp()


@dataclass(frozen=True)
class Worker:
    id: str
    host: str
    pid: int
    languages: tuple[str, ...]
    concurrency: int
    started_at: float
    heartbeat_at: float
    live_until: float

    def is_live(self, now: float) -> bool:
        return self.live_until >= now

    def as_dict(self, now: float) -> dict[str, Any]:
        def stamp(seconds: float) -> str:
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)
            return moment.isoformat(timespec="seconds") + "Z"
        return {"id": self.id, "host": self.host, "pid": self.pid,
                "languages": list(self.languages), "concurrency": self.concurrency,
                "started_at": stamp(self.started_at), "last_heartbeat": stamp(self.heartbeat_at),
                "live": self.is_live(now)}


def register(worker_id: str, languages: tuple[str, ...], concurrency: int,
             live_seconds: float) -> None:
    now = time.time()
    with write_transaction():
        database.execute_sql(
            "INSERT INTO worker (id, host, pid, languages, concurrency, started_at, heartbeat_at, "
            "live_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (worker_id, socket.gethostname(), os.getpid(), " ".join(languages), concurrency, now,
             now, now + live_seconds))


def beat(worker_id: str, live_seconds: float) -> bool:
    """Renew this worker's row; False if it is gone (forgotten after a long stall: register
    again)."""
    now = time.time()
    with write_transaction():
        cursor = database.execute_sql(
            "UPDATE worker SET heartbeat_at = ?, live_until = ? WHERE id = ?",
            (now, now + live_seconds, worker_id))
        database.execute_sql("DELETE FROM worker WHERE live_until < ?",
                             (now - FORGET_AFTER_SECONDS,))
    updated: bool = cursor.rowcount == 1
    return updated


def deregister(worker_id: str) -> None:
    with write_transaction():
        database.execute_sql("DELETE FROM worker WHERE id = ?", (worker_id,))


def workers() -> list[Worker]:
    rows = database.execute_sql(
        "SELECT id, host, pid, languages, concurrency, started_at, heartbeat_at, live_until "
        "FROM worker ORDER BY host, started_at, id").fetchall()
    return [Worker(row[0], row[1], row[2], tuple(row[3].split()), *row[4:]) for row in rows]


def shared_languages() -> tuple[str, ...] | None:
    """The OCR languages every live worker can read (a document may land on any of them); when
    none is live, those of every worker seen lately; None when no worker ever registered."""
    known = workers()
    if not known:
        return None
    now = time.time()
    chosen = [w for w in known if w.is_live(now)] or known
    common = set(chosen[0].languages)
    for worker in chosen[1:]:
        common &= set(worker.languages)
    return tuple(sorted(common))


def period_of(length_seconds: float, now: float | None = None) -> int:
    """The number of the period `now` falls in, for periods of `length_seconds`."""
    return int(((time.time() if now is None else now) - PERIOD_ANCHOR) // length_seconds)


def claim_period(name: str, period: int) -> bool:
    """True for the one caller that claims this period of job `name` first. The first claim a
    cluster ever makes for a job only records the period: a new installation does not start
    with a week's verify."""
    with write_transaction():
        cursor = database.execute_sql(
            "UPDATE periodic_job SET period = ? WHERE name = ? AND period < ?",
            (period, name, period))
        if cursor.rowcount == 1:
            return True
        database.execute_sql(
            "INSERT INTO periodic_job (name, period) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (name, period))
    return False
