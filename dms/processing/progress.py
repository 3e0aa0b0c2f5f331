"""How far the reading of a version's text has got, kept in the database — the source of truth,
not the queue: which pages are still unread, pages saved as they are read, and the end of it
(succeeded, or failed with a reason).

A version is processed in slices (dms.processing): each slice reads unread pages for a while and
saves them in small write transactions, so a long document never holds the write lock, a killed
server resumes where it stopped, and other documents get their turn between slices. Each save
first checks that the work is still wanted (the document exists, this version is still its
latest, its status is still `started`): a deleted or replaced document's text is never written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dms.db import database, document_scope, events, owner_scope, write_transaction
from dms.db.models import DocumentVersion, Node, OcrStatus, new_id, update_rows
from dms.processing import leases
from dms.processing.ocr import PageText

PENDING = tuple(OcrStatus.PENDING)
SAVE_EVERY_PAGES = 50  # a slice saves the pages it read in batches this large ...
SAVE_EVERY_SECONDS = 1.0  # ... or this often, whichever comes first
# A page's barcodes as stored (page.barcodes): enough for separator sheets and labels, bounded.
MAX_BARCODES, MAX_BARCODE_CHARS = 20, 200
LATEST_VERSION = ("(SELECT v2.id FROM document_version AS v2 WHERE v2.document_id = n.id "
                  "ORDER BY v2.number DESC LIMIT 1)")


@dataclass
class Work:
    """One version to read, with what its document says about how."""
    version_id: str
    document_id: str
    owner_id: str
    mime_type: str
    page_count: int
    lang: str
    use_ocr: bool
    attempts: int
    seconds: float  # processing time spent on this version so far
    # The worker holding the version's lease (dms.processing.leases): saves check it still does.
    worker_id: str | None = None
    sha256: str = ""  # of the file: object storage finds it by it


def work_for(version_id: str) -> Work | None:
    """The work of reading `version_id`, or None if there is none: deleted (or in the trash),
    replaced by a newer upload, or already done."""
    row = database.execute_sql(f"""
        SELECT v.id, n.id, n.owner_id, v.mime_type, v.page_count, n.lang, n.ocr, n.ocr_attempts,
               n.ocr_seconds, n.ocr_status, {LATEST_VERSION}, v.sha256
        FROM document_version AS v JOIN node AS n ON n.id = v.document_id
        WHERE v.id = ? AND n.trash_id IS NULL""", (version_id,)).fetchone()
    if row is None or row[9] not in PENDING or row[10] != version_id:
        return None
    return Work(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8],
                sha256=row[11])


def _is_current(work: Work, status: str = OcrStatus.STARTED) -> bool:
    row = database.execute_sql(f"SELECT n.ocr_status, {LATEST_VERSION} FROM node AS n "
                               "WHERE n.id = ? AND n.trash_id IS NULL",
                               (work.document_id,)).fetchone()
    if row is None or row[0] != status or row[1] != work.version_id:
        return False
    return work.worker_id is None or leases.holds(work.version_id, work.worker_id)


def claim(work: Work) -> bool:
    """Mark the document `started`; False if it is no longer waiting for this version."""
    with write_transaction(document_scope(work.document_id)):
        if not (_is_current(work, OcrStatus.RECEIVED) or _is_current(work, OcrStatus.STARTED)):
            return False
        update_rows(Node, [work.document_id], {"ocr_status": OcrStatus.STARTED})
    return True


def claimed_work(version_id: str, worker_id: str) -> Work | None:
    """The work of reading `version_id` for `worker_id`, its document marked `started`; None
    when there is none to do (work_for, claim)."""
    work = work_for(version_id)
    if work is None:
        return None
    work.worker_id = worker_id
    return work if claim(work) else None


def unread_pages(work: Work) -> list[int]:
    """Numbers of the pages whose text has not been read yet, in order."""
    done = {row[0] for row in database.execute_sql(
        "SELECT number FROM page WHERE version_id = ? AND method IS NOT NULL", (work.version_id,))}
    return [number for number in range(1, work.page_count + 1) if number not in done]


def save_pages(work: Work, pages: Iterable[PageText], seconds: float) -> bool:
    """Store pages just read (upserts: a page read twice is simply written again) and the time
    spent; False, and nothing written, if the work is no longer wanted."""
    pages = list(pages)
    with write_transaction(document_scope(work.document_id)):
        if not _is_current(work):
            return False
        for page in pages:
            barcodes = None if page.barcodes is None else json.dumps(
                [text[:MAX_BARCODE_CHARS] for text in page.barcodes[:MAX_BARCODES]])
            database.execute_sql(
                "INSERT INTO page (id, version_id, number, text, method, barcodes) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (version_id, number) DO UPDATE SET "
                "text = excluded.text, method = excluded.method, barcodes = excluded.barcodes",
                (new_id(), work.version_id, page.number, page.text, page.method, barcodes))
        database.execute_sql("UPDATE node SET ocr_seconds = ocr_seconds + ? WHERE id = ?",
                             (seconds, work.document_id))
    work.seconds += seconds
    return True


@dataclass
class PageBatch:
    """A slice's pages read and not saved yet, and the numbers of those it saved (for its one
    log line); saved when due (SAVE_EVERY_PAGES, SAVE_EVERY_SECONDS) with the time spent."""
    work: Work
    read: list[PageText] = field(default_factory=list)
    done: list[int] = field(default_factory=list)
    last_save: float = field(default_factory=time.monotonic)

    def due(self, now: float) -> bool:
        return len(self.read) >= SAVE_EVERY_PAGES or now - self.last_save >= SAVE_EVERY_SECONDS

    def save(self, now: float) -> bool:
        """save_pages for the pages read; False, and nothing written, if the work is no longer
        wanted."""
        if not save_pages(self.work, self.read, now - self.last_save):
            return False
        self.done += [page.number for page in self.read]
        self.read, self.last_save = [], now
        return True


def read_by_tesseract(work: Work) -> list[int]:
    """Numbers of the pages whose text came from Tesseract."""
    return [row[0] for row in database.execute_sql(
        "SELECT number FROM page WHERE version_id = ? AND method = 'ocr' ORDER BY number",
        (work.version_id,))]


def finish(work: Work, searchable: tuple[int, str] | None = None,
           inside: Callable[[], None] | None = None) -> bool:
    """Every page is read: record the searchable PDF's (size, SHA-256), if one was made, and mark
    the document `succeeded` (the status change puts it in the search outbox, migration 0006, so
    the index takes up its text); `inside` runs in the same transaction (Processor.when_read)."""
    size, sha256 = searchable or (None, None)
    # The owner's scope too: the `processed` event is one of the owner's (dms.db.events).
    with write_transaction(document_scope(work.document_id), owner_scope(work.owner_id)):
        if not _is_current(work):
            return False
        DocumentVersion.update(lang=work.lang, searchable_size=size, searchable_sha256=sha256) \
            .where(DocumentVersion.id == work.version_id).execute()
        Node.update(ocr_status=OcrStatus.SUCCEEDED, ocr_error=None) \
            .where(Node.id == work.document_id).execute()
        events.record(work.owner_id, work.document_id, events.PROCESSED,
                      status=OcrStatus.SUCCEEDED, version=work.version_id, pages=work.page_count)
        if inside is not None:
            inside()
    return True


def record_failure(work: Work, reason: str, max_attempts: int, final: bool = False,
                   inside: Callable[[], None] | None = None) -> int | None:
    """Count a failed attempt; after `max_attempts` (or at once if `final`) the document is
    `failed` with `reason`, and `inside` runs in that transaction. Returns the attempts so far,
    None if the work is no longer wanted."""
    attempts = work.attempts + 1
    with write_transaction(document_scope(work.document_id), owner_scope(work.owner_id)):
        if not _is_current(work):
            return None
        if final or attempts >= max_attempts:
            Node.update(ocr_status=OcrStatus.FAILED, ocr_error=reason, ocr_attempts=attempts) \
                .where(Node.id == work.document_id).execute()
            events.record(work.owner_id, work.document_id, events.PROCESSED,
                          status=OcrStatus.FAILED, version=work.version_id,
                          pages=work.page_count, reason=reason[:300])
            if inside is not None:
                inside()
        else:
            update_rows(Node, [work.document_id], {"ocr_attempts": attempts})
    return attempts


def pending_count(owner_id: str) -> int:
    """Documents of this owner waiting to be read (the queue's fairness between users)."""
    count: int = database.execute_sql(
        "SELECT count(*) FROM node WHERE owner_id = ? AND ocr_status IN (?, ?) "
        "AND trash_id IS NULL",
        (owner_id, *PENDING)).fetchone()[0]
    return count


def owner_of(version_id: str) -> str | None:
    row = database.execute_sql(
        "SELECT n.owner_id FROM document_version AS v JOIN node AS n ON n.id = v.document_id "
        "WHERE v.id = ?", (version_id,)).fetchone()
    return row[0] if row else None


def pending_versions() -> list[tuple[str, str]]:
    """(owner id, latest version id) of every document still waiting or interrupted, oldest
    first."""
    return [(owner, version) for owner, version in database.execute_sql(f"""
        SELECT n.owner_id, {LATEST_VERSION} FROM node AS n
        WHERE n.ocr_status IN (?, ?) AND n.kind = 'document' AND n.trash_id IS NULL
        ORDER BY n.updated_at""", PENDING).fetchall() if version is not None]
