"""Background processing of uploaded versions: versions are queued (dms.processing.queue: the
embedded SQLite queue, or Redis) and read by worker threads, either inside `dms serve` or in `dms
worker` processes on other machines.

The document row is the source of truth, not the queue (dms.processing.progress): Huey is
at-most-once, so a task lost in a crash is found again by `reconcile()`, which queues every document
whose latest version is still `received` or `started` — at a worker's start and periodically. Tasks
take a version id and are idempotent.

Several workers, one version at a time (dms.processing.leases): a worker takes a version's lease
before it reads and gives it back after its slice; its heartbeat renews it. A worker killed
mid-document leaves an expired lease, which another worker's heartbeat takes over and queues again.
The heartbeat also cancels the reading of a version that was deleted or replaced on another node,
and claims the periodic jobs that the composition root registers (dms.runtime's PERIODIC_JOBS),
each run once per period for the whole cluster (dms.processing.cluster).

Fair and bounded: a task reads a version for at most `ocr_slice_seconds`, saving pages as it goes,
then puts the rest back in the queue; tasks are queued with a priority that falls with the number of
documents their owner already has waiting, so one user's 3,000-page scan or hundred uploads do not
hold back another user's one-page letter. A document whose processing time passes
`ocr_budget_minutes` fails with a reason. Deleting or replacing a document cancels its reading (at
once on this node, within a heartbeat on another).

Status (api.md, "OCR status"): `received` -> `started` -> `succeeded`, or `failed` with `ocr_error`
after MAX_ATTEMPTS attempts (or at once when over budget). A failure never blocks other documents.
What the composition root hooks in as `when_read` (a new document's rules) is worked out once the
text is known and applied in the transaction that marks the reading ended.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator

from dms.config import Config
from dms.db import release_connection
from dms.db.models import new_id
from dms.errors import StorageFull
from dms.files.pdf.process import PdfReaders
from dms.files.storage import Blob, FileMissing, FileStore, StoreUnavailable
from dms.processing import cluster, ending, leases, ocr, progress, searchable
from dms.processing.languages import installed_languages
from dms.processing.queue import EmbeddedConsumer, make_huey, pending, queue_problem
from dms.text import ranges

log = logging.getLogger("dms.processing")

MAX_ATTEMPTS = 3
RETRY_DELAY_SECONDS = 2  # times the attempt number
STORE_RETRY_SECONDS = 10  # the file store unreachable: the reading waits this long
SHUTDOWN_TIMEOUT_SECONDS = 30  # a graceful stop waits this long for pages being read
PERIODIC_PRIORITY = 1000  # a claimed periodic job runs before the documents waiting
RECONCILE_NAMED = 10  # versions a reconcile names in its log line (what a crash left over)


class Processor:
    """Queues versions for reading; once started with `consume`, also reads them in worker
    threads of this process, registered as a worker of the cluster with a heartbeat."""

    def __init__(self, config: Config, store: FileStore, readers: PdfReaders):
        self.config = config
        self.store = store
        self.readers = readers
        self.budget_seconds = config.ocr_budget_minutes * 60  # the most one document may take
        self.huey = make_huey(config)
        self.process_task = self.huey.task(name="process_version")(self.process)
        self.periodic_task = self.huey.task(name="periodic_job")(self.run_periodic)
        self.worker_id = new_id()
        self.consumer: EmbeddedConsumer | None = None
        self._running: dict[str, ocr.CancelToken] = {}  # versions this process's workers read now
        self._leased: set[str] = set()  # ... of which this process holds the lease
        self._running_lock = threading.Lock()
        self._stopping = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._jobs: dict[str, tuple[float, Callable[[], None]]] = {}  # the periodic jobs
        self._start_jobs: list[Callable[[], None]] = []  # ... and what they leave at a crash
        # Called with a document's id once its text is known, outside any transaction, before
        # its reading is marked ended; what it returns runs inside the transaction that marks it,
        # so that what it does happens exactly once with the end of the reading. The composition
        # root wires the domain's rules here (dms.domain.rules.filing.prepare); processing never
        # imports the domain.
        self.when_read: Callable[[str], Callable[[], None] | None] | None = None

    def add_periodic(self, name: str, seconds: float, job: Callable[[], None],
                     clean_up: Callable[[], None] | None = None) -> None:
        """Run `job` once per period of `seconds` in the whole cluster (as reconcile);
        `clean_up` runs at the start of a process that is the only worker (embedded queue)."""
        self._jobs[name] = (seconds, job)
        if clean_up is not None:
            self._start_jobs.append(clean_up)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, consume: bool = True) -> None:
        """Without `consume` (a web-only node) this process only queues."""
        if not consume:
            return
        ocr.prepare_environment()
        self._stopping.clear()
        cluster.register(self.worker_id, installed_languages(), self.config.ocr_workers,
                         self.config.lease_seconds)
        if self.config.embedded_queue:  # the only consumer: leases left are its last run's
            leases.release_all()
            for job in self._start_jobs:
                job()
        self.reconcile()
        self.consumer = EmbeddedConsumer(
            self.huey, workers=self.config.ocr_workers, worker_type="thread", periodic=False,
            initial_delay=0.1, backoff=1.15, max_delay=1.0, check_worker_health=False,
            shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS)
        self.consumer.start()
        self._heartbeat = threading.Thread(target=self._beat, name="dms-heartbeat", daemon=True)
        self._heartbeat.start()

    def stop(self) -> None:
        """Workers save the pages read so far, stop after the page they are on and queue the
        rest (another worker, or this one at its next start, continues)."""
        self._stopping.set()
        if self.consumer is not None:
            self.readers.interrupt()  # a page being rendered would hold the stop up to minutes
            self.consumer.stop(graceful=True)
            self.consumer = None
            assert self._heartbeat is not None  # started with the consumer
            self._heartbeat.join()
            self._heartbeat = None
            try:
                cluster.deregister(self.worker_id)
            except Exception as error:  # the database is gone: the row is forgotten later
                log.warning("could not deregister this worker: %s", error)
        self.huey.storage.close()

    # -- queueing -------------------------------------------------------------------------------
    def enqueue(self, version_id: str, delay: float | None = None) -> None:
        """Queue a version, ahead of the versions of owners with more documents waiting. Never
        raises: if the queue cannot take it, reconcile() finds the document later."""
        try:
            owner_id = progress.owner_of(version_id)
            priority = -max(0, progress.pending_count(owner_id) - 1) if owner_id else 0
            if delay:
                self.process_task.schedule((version_id,), delay=delay, priority=priority)
            else:
                self.process_task(version_id, priority=priority)
        except Exception as error:  # the queue's file on a full disk, Redis unreachable, ...
            log.warning("could not queue version %s (%s); it is queued again later", version_id,
                        error)

    def queue_problem(self) -> str | None:
        """Why the queue cannot be used now, in a sentence; None when it can."""
        return queue_problem(self.huey)

    def pending(self) -> int | None:
        """Tasks waiting in the queue (not those scheduled for later); None if unknown."""
        return pending(self.huey)

    def cancel(self, version_ids: list[str]) -> None:
        """Stop reading these versions now (deleted or replaced documents)."""
        with self._running_lock:
            tokens = [self._running[v] for v in version_ids if v in self._running]
        for token in tokens:
            token.cancel()

    def reconcile(self) -> int:
        """Queue every document whose latest version waits or was interrupted and that no worker
        reads (each owner's in turn, so that priorities interleave owners); the log names them."""
        queued: list[str] = []
        leased = leases.leased_versions()
        for _owner_id, version_id in progress.pending_versions():
            with self._running_lock:
                busy = version_id in self._running
            if not busy and version_id not in leased:
                self.enqueue(version_id)
                queued.append(version_id)
        if queued:
            log.info("reconcile: queued %d document(s) for processing (versions %s%s)", len(queued),
                     ", ".join(queued[:RECONCILE_NAMED]), " …" * (len(queued) > RECONCILE_NAMED))
        return len(queued)

    # -- the heartbeat and the periodic jobs -----------------------------------------------------
    def _beat(self) -> None:
        interval = self.config.lease_seconds / 3
        failing = False
        while not self._stopping.wait(interval):
            try:
                self.heartbeat()
            except Exception as error:  # the database is unreachable: leases may expire
                if not failing:
                    log.warning("the worker's heartbeat failed (%s); retrying", error)
                failing = True
            else:
                if failing:
                    log.info("the worker's heartbeat works again")
                failing = False
            finally:
                release_connection()  # idle until the next beat: the pool gets it back

    def heartbeat(self) -> None:
        """Keep this worker and its leases live, stop reading versions that are gone, queue
        versions whose worker died, and claim the periodic jobs that are due."""
        seconds = self.config.lease_seconds
        if not cluster.beat(self.worker_id, seconds):
            cluster.register(self.worker_id, installed_languages(), self.config.ocr_workers,
                             seconds)
        held = leases.renew(self.worker_id, seconds)
        with self._running_lock:
            mine = [(v, self._running[v]) for v in self._leased if v in self._running]
        for version_id, token in mine:
            if version_id not in held or progress.work_for(version_id) is None:
                token.cancel()  # deleted or replaced (maybe on another node), or lease lost
        for version_id in leases.take_over_expired():
            log.info("version %s: its worker stopped renewing its lease; queued again",
                     version_id)
            self.enqueue(version_id)
        for name, seconds in self._periods().items():
            period = cluster.period_of(seconds)
            if cluster.claim_period(name, period):
                try:
                    self.periodic_task(name, period, priority=PERIODIC_PRIORITY)
                except Exception as error:
                    log.warning("could not queue the periodic job %s: %s", name, error)

    def _periods(self) -> dict[str, float]:
        return {name: seconds for name, (seconds, _) in self._jobs.items()}

    def run_periodic(self, name: str, period: int) -> None:
        log.info("periodic job %s, period %d", name, period)
        try:
            if name in self._jobs:
                self._jobs[name][1]()
        finally:
            release_connection()

    def reconcile_if_idle(self) -> None:
        """The periodic reconcile, when the queue is empty: a backlog is never queued twice."""
        if self.pending() in (0, None):  # None: the queue is in trouble; queue what is left
            self.reconcile()

    # -- the task -------------------------------------------------------------------------------
    def process(self, version_id: str) -> None:
        try:
            self._process(version_id)
        finally:
            release_connection()  # a worker thread may wait long for its next task

    def _process(self, version_id: str) -> None:
        with self._running_lock:
            running = self._running.get(version_id)
            if running is None:
                token = self._running[version_id] = ocr.CancelToken()
        if running is not None:
            if running.cancelled:  # an obsolete run is winding down: come back when it is gone
                self.enqueue(version_id, delay=1)
            return
        again = None
        try:
            if not leases.take(version_id, self.worker_id, self.config.lease_seconds):
                return  # another worker reads it, and queues what its slice leaves
            with self._running_lock:
                self._leased.add(version_id)
            try:
                again = self._process_slice(version_id, token)
            finally:
                with self._running_lock:
                    self._leased.discard(version_id)
                self._release(version_id)
        except ocr.Cancelled:
            log.info("stopped reading version %s: it was deleted or replaced", version_id)
        except StorageFull:
            log.warning("the disk is full: reading version %s pauses until the next reconcile",
                        version_id)
        except StoreUnavailable:
            log.warning("the file store cannot be reached: reading version %s waits %d s",
                        version_id, STORE_RETRY_SECONDS)
            again = STORE_RETRY_SECONDS
        finally:
            with self._running_lock:
                self._running.pop(version_id, None)
        if again is not None:  # only now: with the lease given back, any worker may take it
            self.enqueue(version_id, delay=again or None)

    def _release(self, version_id: str) -> None:
        try:
            leases.release(version_id, self.worker_id)
        except Exception as error:  # it expires instead, and another worker takes it over
            log.warning("could not give back the lease of version %s: %s", version_id, error)

    def _process_slice(self, version_id: str, token: ocr.CancelToken) -> float | None:
        """Read the version's unread pages for one slice. Returns when to queue it again (0: at
        once, after the documents waiting; seconds: a retry) or None when nothing is left."""
        work = progress.claimed_work(version_id, self.worker_id)
        if work is None:
            return None  # deleted, replaced by a newer upload, or already done: nothing to do
        if work.seconds >= self.budget_seconds:
            self._over_budget(work)
            return None
        read_all, again = self._read_slice(work, token)
        if read_all:
            self._end_reading(work)
        return again

    def _read_slice(self, work: progress.Work, token: ocr.CancelToken) -> tuple[bool, float | None]:
        """Read and save unread pages until none is left, the slice's time is up or this worker
        stops: (True, None) when every page was read, else (False, what _process_slice returns).
        A page that fails counts an attempt, after the pages read before it are saved."""
        numbers = progress.unread_pages(work)
        if not numbers:  # read before, its end not recorded (the store was down): end it now
            return True, None
        batch = progress.PageBatch(work)
        pdfs = None
        if self.config.searchable_pdf:
            pdfs = ocr.PagePdfs(self.store.work_dir(work.version_id))
        with contextlib.ExitStack() as stack:
            scratch = self.store.temporary_dir()
            stack.callback(shutil.rmtree, scratch, ignore_errors=True)
            try:
                original = stack.enter_context(self.store.fetched(Blob(work.version_id,
                                                                       work.sha256)))
            except FileMissing:
                return False, self._attempt_failed(
                    work, "The file of this version is missing from the store; run `dms verify`.",
                    final=True)
            pages = ocr.read_pages(original, work.mime_type, work.lang, work.use_ocr, numbers,
                                   self.config.ocr_max_megapixels * 1_000_000, token,
                                   self.readers, scratch, pdfs)
            stack.callback(pages.close)
            try:
                return self._save_as_read(work, pages, numbers, batch)
            except ocr.PageFailed as error:
                self._save(work, batch, time.monotonic())  # keep what was read
                return False, self._attempt_failed(work, str(error), final=error.final)
            except (ocr.Cancelled, StorageFull, StoreUnavailable):
                raise  # not the document's fault: no attempt is counted
            except Exception as error:
                log.exception("processing version %s failed", work.version_id)
                return False, self._attempt_failed(work, f"Processing failed: {error}")
            finally:
                if batch.done:  # one line per slice: the pages a worker read and saved
                    log.info("version %s: read page(s) %s", work.version_id, ranges(batch.done))

    def _save_as_read(self, work: progress.Work, pages: Iterator[ocr.PageText], numbers: list[int],
                      batch: progress.PageBatch) -> tuple[bool, float | None]:
        """Each page into the batch, saved when due and after the last page. Over the budget,
        or the version gone: (False, None); the slice's time up or stopping: (False, 0)."""
        slice_end = batch.last_save + self.config.ocr_slice_seconds
        for page in pages:
            batch.read.append(page)
            now = time.monotonic()
            last = page.number == numbers[-1]
            if (batch.due(now) or last) and not self._save(work, batch, now):
                return False, None
            if last:
                break
            if work.seconds >= self.budget_seconds:
                self._over_budget(work)
                return False, None
            if now >= slice_end or self._stopping.is_set():
                if batch.read and not self._save(work, batch, now):
                    return False, None
                return False, 0  # the rest later, after other documents (or by another worker)
        return True, None

    def _save(self, work: progress.Work, batch: progress.PageBatch, now: float) -> bool:
        """Save the batch's pages: their page PDFs where any worker finds them, then their text."""
        if self.config.searchable_pdf:
            self.store.share_work(work.version_id, [f"{page.number}.pdf" for page in batch.read])
        return batch.save(now)

    def _end_reading(self, work: progress.Work) -> None:
        ending.end_reading(self.store, self.readers, work, self._when_read(work))

    def _attempt_failed(self, work: progress.Work, reason: str,
                        final: bool = False) -> float | None:
        """Count the failed attempt; returns the delay of the next one, None after the last
        (at once if `final`: another attempt would fail the same way)."""
        ends = final or work.attempts + 1 >= MAX_ATTEMPTS
        attempts = progress.record_failure(work, reason, MAX_ATTEMPTS, final,
                                           self._when_read(work) if ends else None)
        if attempts is None:
            return None
        if attempts >= MAX_ATTEMPTS or final:
            searchable.discard(self.store, work.version_id)
            log.warning("version %s failed after %d attempts: %s", work.version_id, attempts,
                        reason)
            return None
        return RETRY_DELAY_SECONDS * attempts

    def _over_budget(self, work: progress.Work) -> None:
        reason = (f"Processing took longer than {self.config.ocr_budget_minutes:g} minutes, the "
                  "most one document may take (DMS_OCR_BUDGET_MINUTES); the text read so far "
                  "is kept.")
        progress.record_failure(work, reason, MAX_ATTEMPTS, final=True,
                                inside=self._when_read(work))
        log.warning("version %s: %s", work.version_id, reason)

    def _when_read(self, work: progress.Work) -> Callable[[], None] | None:
        """What runs when the reading of `work` ends (the rules of a new document), if any."""
        return self.when_read(work.document_id) if self.when_read is not None else None

