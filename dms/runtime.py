"""The composition root: what one dms process is made of, built and wired in one place.

`open_installation(config)` opens and migrates the database and readies the file store;
`Runtime(config, store)` builds the long-lived parts and hands the domain its Services with the
implementations of the interfaces it declares (dms.domain.services: the processing queue as its
JobQueue, a search engine as its SearchEngine); `start()`/`stop()` run the background work in
the one order that is safe. `dms serve` (dms.web.server), `dms worker` and `dms import`
(dms.cli) all go through it, so each queues and processes work the same way.

PERIODIC_JOBS is the ONE table of periodic jobs: each runs once per period for the whole
cluster (the first worker to claim a period runs it, dms.processing.cluster), its period set by
its setting. A new job is a row here; job modules stay unaware of each other.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import peewee

from dms import search
from dms.config import Config
from dms.db import database, on_commit, register_space_reserve, take_turns_by
from dms.db.schema import open_migrated
from dms.domain import splitruns, trash
from dms.domain.credentials import LoginThrottle, max_failures
from dms.domain.documents import referenced_version_ids
from dms.domain.rules import filing as rule_filing
from dms.domain.rules import runs as rule_runs
from dms.domain.secretkey import key_problem
from dms.domain.services import Services
from dms.errors import DomainError
from dms.files import modes
from dms.files.fairness import current_owner
from dms.files.pdf.process import PdfReaders, ReaderTimes
from dms.files.storage import FileStore, StoreUnavailable, open_store
from dms.intake.consume import ConsumeFolder
from dms.intake.mail.checker import MailChecker, release_claims
from dms.notify.deliverer import Deliverer
from dms.notify.streams import StreamHub
from dms.ops import verify
from dms.processing import languages
from dms.processing.processor import Processor

log = logging.getLogger("dms.app")

MINUTE, HOUR = 60.0, 3600.0


@dataclass(frozen=True)
class PeriodicJob:
    name: str  # also its row in the cluster's claims (table periodic_job): never rename one
    setting: str  # the Config field (DMS_<SETTING>) that sets the period, in `unit`s
    unit: float  # seconds
    run: Callable[[Runtime], None]
    # At the start of a process that is the only worker (the embedded queue): undo what a crash
    # of its last run left (claims of work it was doing).
    clean_up: Callable[[Runtime], None] | None = None

    def seconds(self, config: Config) -> float:
        return getattr(config, self.setting) * self.unit


def sweep(store: FileStore, config: Config) -> None:
    """Interrupted uploads and files no row points at (a crash between storing a file and
    committing its row, or between a delete's commit and its file removal), once they are older
    than the grace period (another node may be committing its row now); in a bucket, objects no
    row names for a day (dms.files.storage.s3.store)."""
    store.sweep(referenced_version_ids(), config.sweep_grace_minutes * MINUTE)
    collect_garbage = getattr(store, "collect_garbage", None)
    if collect_garbage is not None:
        try:
            collect_garbage()
        except StoreUnavailable as error:  # the next sweep tries again
            log.warning("the bucket's garbage collection waits: %s", error)


PERIODIC_JOBS = (
    # Queue documents whose task was lost (Huey is at-most-once; the rows are the truth).
    PeriodicJob("reconcile", "reconcile_minutes", MINUTE,
                lambda runtime: runtime.processor.reconcile_if_idle()),
    # `dms verify` in a worker; GET /health shows the last result.
    PeriodicJob("verify", "verify_hours", HOUR,
                lambda runtime: verify.run_periodically(runtime.config)),
    # Users' mail accounts, checked in the background (dms.intake.mail.checker).
    PeriodicJob("mail", "mail_check_minutes", MINUTE, lambda runtime: runtime.mail.check_all(),
                clean_up=lambda runtime: release_claims()),
    # What a crash left in the file store (also at every start: open_installation).
    PeriodicJob("sweep", "sweep_minutes", MINUTE,
                lambda runtime: sweep(runtime.services.store, runtime.config)),
    # Deletions older than DMS_TRASH_DAYS, gone for good with their files.
    PeriodicJob("trash", "trash_purge_minutes", MINUTE,
                lambda runtime: trash.purge_expired(runtime.services)),
    # Runs of rules over existing documents whose node stopped (also at every start).
    PeriodicJob("rule-runs", "rule_runs_minutes", MINUTE,
                lambda runtime: runtime.rule_runs.resume(),
                clean_up=lambda runtime: rule_runs.LEASES.release_all()),
    # Splits too large for one request whose node stopped (also at every start).
    PeriodicJob("split-runs", "split_runs_minutes", MINUTE,
                lambda runtime: runtime.split_runs.resume(),
                clean_up=lambda runtime: splitruns.LEASES.release_all()),
)


class CannotStart(Exception):
    """Why `dms serve` or `dms worker` could not start, in one line for the person starting it."""


def start_failure(error: Exception, config: Config) -> str | None:
    """One line for what stops a start before it works (a data dir it cannot write, a full disk,
    a database file it cannot open), or None for what is a bug (a traceback says more)."""
    if isinstance(error, OSError):
        where = f": {error.filename}" if getattr(error, "filename", None) else ""
        return f"cannot start: {error.strerror or error}{where}"
    if isinstance(error, (sqlite3.OperationalError, peewee.OperationalError)):
        return f"cannot open the database {config.db_path}: {error}"
    if isinstance(error, DomainError):  # a full disk (StorageFull), the database busy
        return f"cannot start: {error.message}"
    return None


def open_installation(config: Config) -> FileStore:
    """Open (and migrate) the configured database and ready the file store: what was left by a
    crash swept, the disk space for deletes and logins on a full disk set aside."""
    config.data_dir.mkdir(parents=True, exist_ok=True)
    tightened = modes.tighten(modes.installation_paths(config.data_dir, config.files_path))
    if tightened:
        log.warning("other local users could read %d entries of the data dir; they are owner-only "
                    "now: %s", len(tightened), ", ".join(str(path) for path in tightened[:10]))
    open_migrated(config)
    store = open_store(config)
    check = getattr(store, "check", None)  # a bucket: it answers and lets dms in
    if check is not None:
        check()
    sweep(store, config)  # before the first request; then periodically
    store.ensure_reserve()
    register_space_reserve(store.release_reserve)
    take_turns_by(current_owner)  # the write lock takes users in turns
    return store


# Reader processes for everything but OCR (uploads, previews, page operations, the intake),
# shared by users' turns; the OCR workers have one each of their own, so a user's upload never waits
# for a document being read, theirs or anyone's.
SHARED_PDF_READERS = 2


def pdf_waiting_per_user(config: Config) -> int:
    """A user's calls waiting for a shared reader: with the one they hold, half of the request
    threads (a script's parallel uploads wait their turn; a stream of bombs cannot hold more
    than half the threads), and at least two (the web page renders two previews at once beside
    a page operation)."""
    return max(2, config.threads // 2 - 1)


def reader_times(config: Config) -> ReaderTimes:
    return ReaderTimes(page=config.pdf_page_seconds, preview=config.pdf_preview_seconds,
                       inspect=config.pdf_inspect_seconds)


class Runtime:
    """The long-lived parts of one process, on the database already open."""

    def __init__(self, config: Config, store: FileStore | None = None):
        if not config.ocr_lang:  # DMS_OCR_LANG unset: what this node's Tesseract has installed
            config = dataclasses.replace(config, ocr_lang=languages.default_lang())
        self.config = config
        store = store or open_store(config)
        self.pdf = PdfReaders(SHARED_PDF_READERS, config.pdf_memory_mb, reader_times(config),
                              fair=True, waiting_per_user=pdf_waiting_per_user(config))
        # A web-only node reads nothing for OCR: its pool stays empty (children start on demand).
        self.ocr_pdf = PdfReaders(config.ocr_workers, config.pdf_memory_mb, reader_times(config))
        self.processor = Processor(config, store, self.ocr_pdf)
        # A new document's rules run in the job that read it (api.md, "How rules run").
        self.processor.when_read = functools.partial(rule_filing.prepare, config)
        self.rule_runs = rule_runs.RunPool(config)
        self.search = search.engine(config.data_dir)
        self.services = Services(config, store, self.processor, self.search, self.pdf,
                                 LoginThrottle(max_failures=max_failures(config)))
        self.mail = MailChecker(self.services)
        self.split_runs = splitruns.SplitPool(self.services)
        self.consume = ConsumeFolder(self.services) if config.consume_dir else None
        # Webhooks' deliveries and the event streams (dms.notify): run by `dms serve` only.
        self.webhooks = Deliverer(config)
        self.streams = StreamHub(config)
        self._notifying: list[Callable[[], None]] = []  # their on_commit hooks, while they run
        for job in PERIODIC_JOBS:
            clean_up = functools.partial(job.clean_up, self) if job.clean_up else None
            self.processor.add_periodic(job.name, job.seconds(config),
                                        functools.partial(job.run, self), clean_up)
        self._unregister: Callable[[], None] | None = None  # the indexer, while it runs
        self._consuming = False

    def start(self, index: bool = True, read_pages: bool = True, notify: bool = False) -> None:
        """The background work: the search indexer (`index`: the web server keeps it), the
        workers that read pages (`read_pages`; without, this process only queues), the consume
        folder, and (`notify`: every `dms serve`) the webhooks' deliverer and the event streams'
        watch."""
        problem = key_problem(self.config.data_dir)
        if problem:
            log.error("%s", problem)
        if index:
            self._unregister = on_commit(self.search.notify)
            self.search.start()
        if notify:
            self.streams.start()
            self.webhooks.start(alone=self.config.embedded_queue)
            self._notifying = [on_commit(self.streams.notify), on_commit(self.webhooks.notify)]
        self.processor.start(consume=read_pages)
        self.rule_runs.resume()  # what a stopped node left (after the clean-ups of its start)
        self.split_runs.resume()
        if self.consume is not None:
            self.consume.start()
            self._consuming = True

    def stop(self, close_database: bool = True) -> None:
        """Whatever runs, in the one safe order: the consume folder, the event streams and the
        webhooks' deliveries (a POST in flight ends within its timeout), mail checks, rule runs and
        splits (after the batch at hand), the workers (the pages being read may finish), the PDF
        readers, the indexer; then the database. Also right for a command that only queued work
        (dms import)."""
        if self._consuming:
            self.consume.stop()
            self._consuming = False
        if self._notifying:
            self.streams.stop()
            self.webhooks.stop()
            for unregister in self._notifying:
                unregister()
            self._notifying = []
        self.mail.stop()
        self.rule_runs.stop()
        self.split_runs.stop()
        self.processor.stop()
        self.pdf.stop()
        self.ocr_pdf.stop()
        if self._unregister is not None:
            self.search.stop()
            self._unregister()
            self._unregister = None
        if close_database:
            database.close()
