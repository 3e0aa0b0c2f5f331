"""Background processing of uploaded versions: an embedded Huey queue and its consumer, running in
worker threads of the server's own process (no second command, no Redis).

The document row is the source of truth, not the queue: Huey is at-most-once, so a task lost in a
crash is found again by `reconcile()`, which queues every document whose latest version is still
`received` or `started` — at start-up and periodically. Tasks take a version id and are idempotent:
running one twice gives the same pages, text and status.

Status (api.md §7): `received` (uploaded, waiting) -> `started` (a worker has it) -> `succeeded`,
or `failed` with `ocr_error` after MAX_ATTEMPTS attempts. A failure never blocks other documents.

Concurrency rules: the queue has its own SQLite file (`queue.db`), so queue traffic never waits on
the main database's write lock. Huey's Consumer.start() would install signal handlers, which
belong to the server (`dms.server`): EmbeddedConsumer leaves them alone.
"""

from __future__ import annotations

import logging
import threading

from huey import SqliteHuey, crontab
from huey.consumer import Consumer

from dms import documents, search
from dms.documents import PAGE_SEPARATOR
from dms.config import Config
from dms.db import database
from dms.models import DocumentVersion, Node, new_id
from dms.ocr import PageFailed, prepare_environment, read_pages
from dms.storage import FileStore

log = logging.getLogger("dms.processing")

MAX_ATTEMPTS = 3
RETRY_DELAY_SECONDS = 2  # times the attempt number
RECONCILE_EVERY_MINUTES = 5
SHUTDOWN_TIMEOUT_SECONDS = 30  # a graceful stop waits this long for pages being read

PENDING_DOCUMENTS = """
    SELECT n.id, (SELECT v.id FROM document_version AS v WHERE v.document_id = n.id
                  ORDER BY v.number DESC LIMIT 1)
    FROM node AS n WHERE n.ocr_status IN ('received', 'started') AND n.kind = 'document'"""


class EmbeddedConsumer(Consumer):
    """Huey's consumer without its signal handlers: SIGINT and SIGTERM stop the whole server
    (dms.server), which then stops this consumer gracefully. tests/test_processing.py guards
    this override against changes in Huey."""

    def _set_signal_handlers(self):
        pass


class Processor:
    def __init__(self, config: Config, store: FileStore):
        self.config = config
        self.store = store
        self.huey = SqliteHuey("dms", filename=str(config.data_dir / "queue.db"), results=False,
                               store_none=False, utc=True)
        self.process_task = self.huey.task(name="process_version")(self.process)
        self.huey.periodic_task(crontab(minute=f"*/{RECONCILE_EVERY_MINUTES}"),
                                name="reconcile")(self.reconcile_if_idle)
        self.huey.periodic_task(crontab(day_of_week="0", hour="3", minute="17"),
                                name="weekly_verify")(self.weekly_verify)
        self.consumer: EmbeddedConsumer | None = None
        self._running: set[str] = set()  # versions a worker of this process is reading now
        self._running_lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        prepare_environment()
        self.reconcile()
        self.consumer = EmbeddedConsumer(
            self.huey, workers=self.config.ocr_workers, worker_type="thread", periodic=True,
            initial_delay=0.1, backoff=1.15, max_delay=1.0, check_worker_health=False,
            shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS)
        self.consumer.start()

    def stop(self) -> None:
        """Let the pages being read finish (bounded); what is not done stays `received` or
        `started` in the database and is queued again at the next start."""
        if self.consumer is not None:
            self.consumer.stop(graceful=True)
            self.consumer = None
        self.huey.storage.close()

    # -- queueing -------------------------------------------------------------------------------
    def enqueue(self, version_id: str, delay: float | None = None) -> None:
        if delay:
            self.process_task.schedule((version_id,), delay=delay)
        else:
            self.process_task(version_id)

    def reconcile(self) -> int:
        """Queue every document whose latest version still waits or was interrupted."""
        queued = 0
        for document_id, version_id in database.execute_sql(PENDING_DOCUMENTS).fetchall():
            with self._running_lock:
                busy = version_id in self._running
            if version_id is not None and not busy:
                self.enqueue(version_id)
                queued += 1
        if queued:
            log.info("reconcile: queued %d document(s) for processing", queued)
        return queued

    def reconcile_if_idle(self) -> None:
        """The periodic reconcile: only when the queue is empty, so a long backlog is not
        queued a second time."""
        if self.huey.pending_count() == 0:
            self.reconcile()

    def weekly_verify(self) -> None:
        """`dms verify` inside the server, Sundays at 03:17; GET /health shows the result."""
        from dms import verify

        report = verify.run(self.config.data_dir)
        verify.save(self.config.data_dir, report)
        (log.info if report.ok else log.warning)("weekly verify: %s", report.lines()[-1])

    # -- the task -------------------------------------------------------------------------------
    def process(self, version_id: str) -> None:
        with self._running_lock:
            if version_id in self._running:
                return
            self._running.add(version_id)
        try:
            self._process(version_id)
        finally:
            with self._running_lock:
                self._running.discard(version_id)

    def _process(self, version_id: str) -> None:
        version = DocumentVersion.get_or_none(DocumentVersion.id == version_id)
        document = version and Node.get_or_none(Node.id == version.document_id)
        if document is None or not self._is_latest(version) or \
                document.ocr_status not in ("received", "started"):
            return  # deleted, replaced by a newer upload, or already done: nothing to do
        Node.update(ocr_status="started").where(Node.id == document.id).execute()
        try:
            pages = list(read_pages(self.store.path(version.id), version.mime_type, document.lang,
                                    bool(document.ocr)))
        except PageFailed as error:
            self._attempt_failed(document, version, str(error))
            return
        except Exception as error:
            log.exception("processing version %s failed", version.id)
            self._attempt_failed(document, version, f"Processing failed: {error}")
            return
        with database.atomic("IMMEDIATE"):
            if not self._is_latest(version):
                return
            for page in pages:
                database.execute_sql(
                    "INSERT INTO page (id, version_id, number, text, method) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (version_id, number) DO UPDATE SET text = excluded.text, "
                    "method = excluded.method", (new_id(), version.id, page.number, page.text,
                                                 page.method))
            search.set_document_text(document.id, PAGE_SEPARATOR.join(p.text for p in pages))
            DocumentVersion.update(lang=document.lang).where(DocumentVersion.id == version.id).execute()
            Node.update(ocr_status="succeeded", ocr_error=None).where(Node.id == document.id).execute()
        log.info("processed version %s: %d page(s)", version.id, len(pages))

    def _attempt_failed(self, document: Node, version: DocumentVersion, reason: str) -> None:
        attempts = document.ocr_attempts + 1
        with database.atomic("IMMEDIATE"):
            if not self._is_latest(version):
                return
            if attempts >= MAX_ATTEMPTS:
                Node.update(ocr_status="failed", ocr_error=reason, ocr_attempts=attempts) \
                    .where(Node.id == document.id).execute()
            else:
                Node.update(ocr_attempts=attempts).where(Node.id == document.id).execute()
        if attempts >= MAX_ATTEMPTS:
            log.warning("version %s failed after %d attempts: %s", version.id, attempts, reason)
        else:
            self.enqueue(version.id, delay=RETRY_DELAY_SECONDS * attempts)

    @staticmethod
    def _is_latest(version: DocumentVersion) -> bool:
        latest = documents.latest_version(version.document_id)
        return latest is not None and latest.id == version.id
