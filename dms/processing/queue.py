"""The processing queue: Huey on the embedded SQLite storage (`<data-dir>/queue.db`, consumed by
worker threads inside `dms serve`) or on Redis (DMS_QUEUE_URL, consumed by `dms worker` processes on
any machine), both with priorities (dms.processing queues a user's documents behind other users').

Huey is at-most-once: the database is the source of truth and reconcile() queues again what a lost
task leaves unfinished (dms.processing). So a queue that cannot be reached never fails a request:
enqueueing logs and moves on, and the consumer backs off (Huey's own back-off for Redis,
PatientSqliteStorage's for the SQLite file, e.g. on a full disk).

Huey's Consumer.start() would install signal handlers, which belong to the server or the worker
command: EmbeddedConsumer leaves them alone. Its idle workers poll the SQLite queue at most a second
apart, and a task queued by this same process (an upload to `dms serve`) wakes them at once
(WakingWorker).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from huey import Huey, PriorityRedisHuey
from huey.consumer import Consumer, Worker
from huey.storage import SqliteStorage

from dms.config import Config

log = logging.getLogger("dms.queue")

QUEUE_NAME = "dms"
QUEUE_BACKOFF_MAX_SECONDS = 60.0
REDIS_CONNECT_TIMEOUT = 3.0  # seconds: a node that cannot reach Redis says so quickly
REDIS_SOCKET_TIMEOUT = 10.0  # above Huey's blocking read of 1 s


class QueueUnavailable(Exception):
    """The configured queue cannot be used; one line for the person starting dms."""


def make_huey(config: Config) -> Huey:
    common = {"results": False, "store_none": False, "utc": True}
    if config.embedded_queue:
        return Huey(QUEUE_NAME, storage_class=PatientSqliteStorage,
                    filename=str(config.data_dir / "queue.db"), **common)
    try:
        from redis import ConnectionPool
    except ImportError:
        raise QueueUnavailable("DMS_QUEUE_URL needs the Redis client: scripts/setup.sh --extras "
                               "redis in dms's checkout installs it.") from None
    assert config.queue_url is not None  # not embedded_queue
    pool = ConnectionPool.from_url(config.queue_url, socket_connect_timeout=REDIS_CONNECT_TIMEOUT,
                                   socket_timeout=REDIS_SOCKET_TIMEOUT, health_check_interval=30)
    return PriorityRedisHuey(QUEUE_NAME, connection_pool=pool, **common)


def queue_problem(huey: Huey) -> str | None:
    """Why the queue cannot be used now, in a sentence; None when it can."""
    if not isinstance(huey, PriorityRedisHuey):
        return None
    from redis.exceptions import RedisError

    try:
        huey.storage.conn.ping()
    except RedisError as error:
        log.warning("the queue (Redis) is not reachable: %s", error)
        return "The queue (Redis) is not reachable."
    return None


def pending(huey: Huey) -> int | None:
    """Tasks waiting in the queue (not counting those scheduled for later); None if unknown."""
    try:
        count: int = huey.pending_count()
        return count
    except Exception:  # Redis unreachable, queue.db unusable: /health says so elsewhere
        return None


class WakingWorker(Worker):
    """Huey's worker, woken as soon as this process queues a task instead of at its next poll:
    an idle worker polls every `max_delay` (1 s), which a document uploaded after a quiet moment
    waited for, half a second on average. Tasks that other processes queue are still found by
    the poll. After a wake-up the worker reads the queue until it is empty before it sleeps
    again, so a wake-up that comes while it is awake loses nothing."""

    delay: float  # Worker's, for the type checker (Huey has no type information)

    def sleep(self) -> None:
        queued = getattr(self.huey.storage, "queued", None)
        if queued is None:  # Redis: its reads block until a task comes
            super().sleep()
            return
        self.delay = min(self.delay, self.max_delay)
        if queued.wait(self.delay):
            queued.clear()
            self.delay = self.default_delay
        else:
            self.delay *= self.backoff


class EmbeddedConsumer(Consumer):
    """Huey's consumer without its signal handlers: SIGINT and SIGTERM stop the whole server
    (dms.web.server), which then stops this consumer gracefully; its workers wake when this
    process queues a task (WakingWorker).
    tests/processing/test_processing.py and test_queue_wake.py guard these overrides against
    changes in Huey."""

    worker_class = WakingWorker

    def _set_signal_handlers(self) -> None:
        pass

    def stop(self, graceful: bool = False) -> None:
        self.stop_flag.set()
        queued = getattr(self.huey.storage, "queued", None)
        if queued is not None:  # sleeping workers see the stop flag now, not at their next poll
            queued.set()
        super().stop(graceful)


class PatientSqliteStorage(SqliteStorage):
    """Huey's SQLite storage, backing off while its file cannot be used (e.g. the disk is full):
    the consumer's polls then return "nothing to do" without touching the file, one warning is
    logged when the trouble starts and one line when it is over."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._retry_at = 0.0
        self._delay = 0.0
        self._guard_lock = threading.Lock()
        self.queued = threading.Event()  # set by each enqueue: wakes this process' workers

    def _guarded(self, call: Callable[[], Any], default: Any) -> Any:
        if time.monotonic() < self._retry_at:
            return default
        try:
            result = call()
        except sqlite3.Error as error:
            with self._guard_lock:
                if not self._delay:
                    log.warning("the queue's database cannot be used (%s); retrying with back-off",
                                error)
                self._delay = min(max(self._delay * 2, 1.0), QUEUE_BACKOFF_MAX_SECONDS)
                self._retry_at = time.monotonic() + self._delay
            return default
        if self._delay:
            with self._guard_lock:
                if self._delay:
                    log.info("the queue's database works again")
                    self._delay = 0.0
        return result

    def dequeue(self) -> Any:
        return self._guarded(super().dequeue, None)

    def enqueue(self, data: bytes, priority: int | None = None) -> Any:
        # A task that cannot be queued is not lost: its document stays `received` and the next
        # reconcile() queues it again.
        result = self._guarded(
            lambda: super(PatientSqliteStorage, self).enqueue(data, priority), None)
        self.queued.set()
        return result

    def read_schedule(self, ts: Any) -> Any:
        return self._guarded(lambda: super(PatientSqliteStorage, self).read_schedule(ts), [])


