"""Background processing of uploaded versions: an embedded Huey queue and its consumer, running in
worker threads of the server's own process (no second command, no Redis).

The document row is the source of truth, not the queue (dms.progress): Huey is at-most-once, so a
task lost in a crash is found again by `reconcile()`, which queues every document whose latest
version is still `received` or `started` — at start-up and periodically. Tasks take a version id
and are idempotent.

Fair and bounded (issue 11): a task reads a version for at most `ocr_slice_seconds`, saving pages
as it goes, then puts the rest back in the queue; tasks are queued with a priority that falls with
the number of documents their owner already has waiting, so one user's 3,000-page scan or hundred
uploads do not hold back another user's one-page letter. A document whose processing time passes
`ocr_budget_minutes` fails with a reason. Deleting or replacing a document cancels its reading at
once (the running Tesseract is killed).

Status (api.md §7): `received` -> `started` -> `succeeded`, or `failed` with `ocr_error` after
MAX_ATTEMPTS attempts (or at once when over budget). A failure never blocks other documents.

Concurrency rules: the queue has its own SQLite file (`queue.db`), so queue traffic never waits on
the main database's write lock. Huey's Consumer.start() would install signal handlers, which
belong to the server (`dms.server`): EmbeddedConsumer leaves them alone. When queue.db cannot be
written (a full disk) the queue backs off and says so once, instead of a traceback every second.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time

from huey import Huey, crontab
from huey.consumer import Consumer
from huey.storage import SqliteStorage

from dms import progress, searchable
from dms.config import Config
from dms.errors import StorageFull
from dms.ocr import (Cancelled, CancelToken, PageFailed, PagePdfs, prepare_environment,
                     read_pages)
from dms.storage import FileStore

log = logging.getLogger("dms.processing")

MAX_ATTEMPTS = 3
RETRY_DELAY_SECONDS = 2  # times the attempt number
RECONCILE_EVERY_MINUTES = 5
SHUTDOWN_TIMEOUT_SECONDS = 30  # a graceful stop waits this long for pages being read
SAVE_EVERY_PAGES = 50  # pages are saved in batches this large ...
SAVE_EVERY_SECONDS = 1.0  # ... or this often, whichever comes first
QUEUE_BACKOFF_MAX_SECONDS = 60.0


class EmbeddedConsumer(Consumer):
    """Huey's consumer without its signal handlers: SIGINT and SIGTERM stop the whole server
    (dms.server), which then stops this consumer gracefully. tests/test_processing.py guards
    this override against changes in Huey."""

    def _set_signal_handlers(self):
        pass


class PatientSqliteStorage(SqliteStorage):
    """Huey's SQLite storage, backing off while its file cannot be used (e.g. the disk is full):
    the consumer's polls then return "nothing to do" without touching the file, one warning is
    logged when the trouble starts and one line when it is over."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._retry_at = 0.0
        self._delay = 0.0
        self._guard_lock = threading.Lock()

    def _guarded(self, call, default):
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

    def dequeue(self):
        return self._guarded(super().dequeue, None)

    def enqueue(self, data, priority=None):
        # A task that cannot be queued is not lost: its document stays `received` and the next
        # reconcile() queues it again.
        return self._guarded(lambda: super(PatientSqliteStorage, self).enqueue(data, priority),
                             None)

    def read_schedule(self, ts):
        return self._guarded(lambda: super(PatientSqliteStorage, self).read_schedule(ts), [])


class Processor:
    def __init__(self, config: Config, store: FileStore):
        self.config = config
        self.store = store
        self.huey = Huey("dms", storage_class=PatientSqliteStorage,
                         filename=str(config.data_dir / "queue.db"), results=False,
                         store_none=False, utc=True)
        self.process_task = self.huey.task(name="process_version")(self.process)
        self.huey.periodic_task(crontab(minute=f"*/{RECONCILE_EVERY_MINUTES}"),
                                name="reconcile")(self.reconcile_if_idle)
        self.huey.periodic_task(crontab(day_of_week="0", hour="3", minute="17"),
                                name="weekly_verify")(self.weekly_verify)
        self.consumer: EmbeddedConsumer | None = None
        self._running: dict[str, CancelToken] = {}  # versions a worker of this process reads now
        self._running_lock = threading.Lock()
        self._stopping = threading.Event()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        prepare_environment()
        self._stopping.clear()
        self.reconcile()
        self.consumer = EmbeddedConsumer(
            self.huey, workers=self.config.ocr_workers, worker_type="thread", periodic=True,
            initial_delay=0.1, backoff=1.15, max_delay=1.0, check_worker_health=False,
            shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS)
        self.consumer.start()

    def stop(self) -> None:
        """Workers save the pages read so far and stop after the page they are on; what is left
        stays `received` or `started` in the database and is queued again at the next start."""
        self._stopping.set()
        if self.consumer is not None:
            self.consumer.stop(graceful=True)
            self.consumer = None
        self.huey.storage.close()

    # -- queueing -------------------------------------------------------------------------------
    def enqueue(self, version_id: str, delay: float | None = None) -> None:
        """Queue a version, ahead of the versions of owners with more documents waiting. Never
        raises: if the queue cannot take it, reconcile() finds the document later."""
        owner_id = progress.owner_of(version_id)
        priority = -max(0, progress.pending_count(owner_id) - 1) if owner_id else 0
        try:
            if delay:
                self.process_task.schedule((version_id,), delay=delay, priority=priority)
            else:
                self.process_task(version_id, priority=priority)
        except Exception as error:  # the queue's file: full disk, ...
            log.warning("could not queue version %s (%s); it is queued again later", version_id,
                        error)

    def cancel(self, version_ids: list[str]) -> None:
        """Stop reading these versions now (deleted or replaced documents)."""
        with self._running_lock:
            tokens = [self._running[v] for v in version_ids if v in self._running]
        for token in tokens:
            token.cancel()

    def reconcile(self) -> int:
        """Queue every document whose latest version still waits or was interrupted; each owner's
        documents are counted in turn, so their priorities interleave owners."""
        queued = 0
        for owner_id, version_id in progress.pending_versions():
            with self._running_lock:
                busy = version_id in self._running
            if not busy:
                self.enqueue(version_id)
                queued += 1
        if queued:
            log.info("reconcile: queued %d document(s) for processing", queued)
        return queued

    def reconcile_if_idle(self) -> None:
        """The periodic reconcile: only when the queue is empty, so a long backlog is not
        queued a second time."""
        try:
            idle = self.huey.pending_count() == 0
        except sqlite3.Error:
            idle = True  # the queue is in trouble: queue what the database says is left
        if idle:
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
            running = self._running.get(version_id)
            if running is None:
                token = self._running[version_id] = CancelToken()
        if running is not None:
            if running.cancelled:  # an obsolete run is winding down: come back when it is gone
                self.enqueue(version_id, delay=1)
            return
        try:
            self._process_slice(version_id, token)
        except Cancelled:
            log.info("stopped reading version %s: it was deleted or replaced", version_id)
        except StorageFull:
            log.warning("the disk is full: reading version %s pauses until the next reconcile",
                        version_id)
        finally:
            with self._running_lock:
                self._running.pop(version_id, None)

    def _process_slice(self, version_id: str, token: CancelToken) -> None:
        work = progress.work_for(version_id)
        if work is None or not progress.claim(work):
            return  # deleted, replaced by a newer upload, or already done: nothing to do
        budget = self.config.ocr_budget_minutes * 60
        if work.seconds >= budget:
            self._over_budget(work)
            return
        numbers = progress.unread_pages(work)
        started = last_save = time.monotonic()
        slice_end = started + self.config.ocr_slice_seconds
        read: list = []
        pdfs = None
        if self.config.searchable_pdf:
            pdfs = PagePdfs(self.store.temporary_dir(), self.store.work_dir(version_id))
        pages = read_pages(self.store.path(version_id), work.mime_type, work.lang, work.use_ocr,
                           numbers, self.config.ocr_max_megapixels * 1_000_000, token, pdfs)
        try:
            for page in pages:
                read.append(page)
                now = time.monotonic()
                last = page.number == numbers[-1]
                if len(read) >= SAVE_EVERY_PAGES or now - last_save >= SAVE_EVERY_SECONDS or last:
                    if not progress.save_pages(work, read, now - last_save):
                        return
                    read, last_save = [], now
                if last:
                    break
                if work.seconds >= budget:
                    self._over_budget(work)
                    return
                if now >= slice_end or self._stopping.is_set():
                    if not self._stopping.is_set():
                        self.enqueue(version_id)  # the rest later, after other documents
                    return
        except PageFailed as error:
            progress.save_pages(work, read, time.monotonic() - last_save)  # keep what was read
            self._attempt_failed(work, str(error))
            return
        except Cancelled:
            raise
        except StorageFull:
            raise  # not the document's fault: no attempt is counted
        except Exception as error:
            log.exception("processing version %s failed", version_id)
            self._attempt_failed(work, f"Processing failed: {error}")
            return
        finally:
            pages.close()
            if pdfs is not None:
                shutil.rmtree(pdfs.scratch, ignore_errors=True)
        made = self._searchable_pdf(work)
        if progress.finish(work, made):
            log.info("processed version %s: %d page(s)", version_id, work.page_count)
        elif made is not None:
            searchable.discard(self.store, version_id)

    def _searchable_pdf(self, work: progress.Work) -> tuple[int, str] | None:
        """The version's searchable PDF, if Tesseract read any of its pages. Making it may fail
        (a PDF pdfium cannot write back): the text is kept all the same, without it."""
        try:
            return searchable.build(self.store, work.version_id, work.mime_type,
                                    progress.read_by_tesseract(work))
        except Exception:
            log.exception("version %s: the searchable PDF could not be made", work.version_id)
            searchable.discard(self.store, work.version_id)
            return None

    def _attempt_failed(self, work: progress.Work, reason: str) -> None:
        attempts = progress.record_failure(work, reason, MAX_ATTEMPTS)
        if attempts is None:
            return
        if attempts >= MAX_ATTEMPTS:
            searchable.discard(self.store, work.version_id)
            log.warning("version %s failed after %d attempts: %s", work.version_id, attempts, reason)
        else:
            self.enqueue(work.version_id, delay=RETRY_DELAY_SECONDS * attempts)

    def _over_budget(self, work: progress.Work) -> None:
        reason = (f"Processing took longer than {self.config.ocr_budget_minutes:g} minutes, the "
                  "most one document may take (DMS_OCR_BUDGET_MINUTES); the text read so far "
                  "is kept.")
        progress.record_failure(work, reason, MAX_ATTEMPTS, final=True)
        log.warning("version %s: %s", work.version_id, reason)
