"""What GET /health reports: whether this node can serve (its database and its queue reachable),
and for admins how the whole installation is doing."""

from __future__ import annotations

import datetime as dt
import logging
import time

from peewee import PeeweeException

from dms.db import database
from dms.db.models import utcnow
from dms.domain import refusals
from dms.domain.services import Services
from dms.errors import Unavailable
from dms.ops import verify
from dms.processing import cluster
from dms.processing.processor import Processor

log = logging.getLogger("dms.health")


def check(queue: Processor) -> None:
    """Unavailable (503) with the reason when this node cannot reach its database or queue."""
    try:
        database.execute_sql("SELECT 1").fetchone()
    except PeeweeException:
        log.exception("health check: the database is not reachable")
        raise Unavailable("The database is not reachable.") from None
    problem = queue.queue_problem()
    if problem:
        raise Unavailable(problem)


def details(services: Services, queue: Processor) -> dict:
    """The last `dms verify` result, the search index's state, the queue's length, every
    worker with its host, languages and last heartbeat, and the file store (a bucket: whether it
    answers)."""
    now = time.time()
    return {"verify": verify.last_result(),
            "search": services.search.status(),
            "queue": {"engine": "sqlite" if services.config.embedded_queue else "redis",
                      "pending": queue.pending()},
            "workers": [worker.as_dict(now) for worker in cluster.workers()],
            "intake": {"refused_last_24_hours": refusals.counts_since(
                utcnow() - dt.timedelta(hours=24))},
            "storage": services.store.status()}
