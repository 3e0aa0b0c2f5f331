"""`dms worker`: a process that only reads pages (OCR, text layers, searchable PDFs) of the
documents the web nodes queue in Redis (and imports the consume folder, if one is set), on any
machine with Tesseract, the database, the queue and the file store (README, "Several machines").
SIGTERM or Ctrl-C: the pages being read are finished and saved, the rest of their documents queued
again, and the process exits."""

from __future__ import annotations

import logging
import signal
import threading

from dms.cli.status import ExitStatus
from dms.config import Config
from dms.db import describe_url, release_connection
from dms.db.schema import open_migrated
from dms.runtime import CannotStart, Runtime, start_failure

log = logging.getLogger("dms.worker")


def run_worker(config: Config) -> ExitStatus:
    try:
        config.data_dir.mkdir(parents=True, exist_ok=True)
        open_migrated(config)
        runtime = Runtime(config)
    except Exception as error:
        reason = start_failure(error, config)
        if reason is None:
            raise
        raise CannotStart(reason) from None
    stop = threading.Event()

    def on_signal(signum, frame):
        log.info("received %s, finishing the pages being read", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    runtime.start(index=False)  # the web nodes keep the search index
    release_connection()  # this thread now only waits for a signal
    where = describe_url(config.database_url) if config.database_url else str(config.db_path)
    log.info("dms worker %s reading with %d thread(s) (database %s, files in %s)",
             runtime.processor.worker_id, config.ocr_workers, where, config.files_path.resolve())
    try:
        while not stop.wait(1.0):
            pass
    finally:
        runtime.stop()
        log.info("dms worker stopped")
    return ExitStatus.DONE
