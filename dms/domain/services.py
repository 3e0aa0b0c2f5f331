"""The long-lived parts one running dms is made of, built once by create_app and handed to the
domain functions that need more than the database: the settings, the file store, the processing
queue, the PDF reader processes, the search index's writer and the login throttle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dms.domain.credentials import LoginThrottle
from dms.config import Config
from dms.files.pdfprocess import PdfReaders
from dms.processing.processor import Processor
from dms.search import Indexer
from dms.files.store import FileStore


@dataclass
class Services:
    config: Config
    store: FileStore
    processor: Processor
    search: Indexer
    pdf: PdfReaders
    mail: Any = None  # dms.intake.mailchecker.MailChecker, made once the rest is there
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
