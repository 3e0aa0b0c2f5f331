"""create_app(config): the Bottle application, wired to its database, file store, processing
queue and route tables. Nothing starts running here: dms.web.server starts the queue's workers."""

from __future__ import annotations

import logging

from dms.intake import mailcheck
from dms import search
from dms.web.api import ROUTE_TABLES
from dms.config import Config
from dms.intake.mailchecker import MailChecker
from dms.db import open_configured, register_space_reserve
from dms.domain.documents import referenced_version_ids
from dms.files.pdfprocess import PdfReaders
from dms.processing.processor import Processor
from dms.files.store import DirectoryStore
from dms.domain.services import Services
from dms.web.endpoints import DmsBottle, bottle_rule, endpoint

log = logging.getLogger("dms.app")


def build_services(config: Config, store: DirectoryStore | None = None) -> Services:
    """The long-lived parts, on the database already open: also what CLI commands that add
    documents (dms import) use, so they queue work as the server does."""
    store = store or DirectoryStore(config.files_path, config.data_dir)
    readers = PdfReaders(pdf_readers(config), config.pdf_memory_mb)
    services = Services(config, store, Processor(config, store, readers),
                        search.engine(config.data_dir), readers)
    services.mail = MailChecker(services)
    services.processor.add_periodic("mail", config.mail_check_minutes * 60,
                                    services.mail.check_all, mailcheck.release_claims)
    services.processor.add_periodic("sweep", config.sweep_minutes * 60,
                                    lambda: sweep(store, config))
    return services


def pdf_readers(config: Config) -> int:
    """Reader processes: one per OCR worker of this process, and two more for uploads and
    previews (a web-only node needs only those)."""
    return (0 if config.no_worker else config.ocr_workers) + 2


def sweep(store: DirectoryStore, config: Config) -> None:
    """Interrupted uploads and files no row points at (a crash between storing a file and
    committing its row, or between a delete's commit and its file removal), once they are older
    than the grace period (another node may be committing its row now)."""
    store.sweep(referenced_version_ids(), config.sweep_grace_minutes * 60)


def create_app(config: Config) -> DmsBottle:
    """Open (and migrate) the configured database and build the WSGI application."""
    config.data_dir.mkdir(parents=True, exist_ok=True)
    open_configured(config)
    store = DirectoryStore(config.files_path, config.data_dir)
    sweep(store, config)  # before the first request; then periodically (build_services)
    store.ensure_reserve()
    register_space_reserve(store.release_reserve)
    services = build_services(config, store)
    app = DmsBottle()
    app.services = services
    for table in ROUTE_TABLES:
        for route in table.routes:
            callback = endpoint(services, route)
            for prefix in route.prefixes:
                app.route(bottle_rule(route, prefix), route.method, callback)
    return app
