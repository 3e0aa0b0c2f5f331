"""Documents and their versions once they are stored
(api.md, "Uploads, versions and downloads", "Pages, text and OCR"): reading versions, pages and
text, re-running processing, and making an older version the latest again. Adding files is
dms.domain.uploads', deleting them dms.domain.trash's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from peewee import fn

from dms.db import database, document_scope, events, write_transaction
from dms.db.models import (
    PAGE_SEPARATOR,
    DocumentVersion,
    Node,
    OcrStatus,
    Page,
    User,
    new_id,
    utcnow,
)
from dms.domain.access.rule import EDITOR, VIEWER, changing, reach
from dms.errors import Invalid, NotFound
from dms.files.storage import version_blobs
from dms.processing import searchable
from dms.processing.languages import check_lang

if TYPE_CHECKING:
    from dms.domain.services import Services



def searchable_name(file_name: str) -> str:
    """The download name of a version's searchable PDF: `scan.png` -> `scan.pdf`."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name.strip(".") else file_name
    return f"{stem}.pdf"


def reprocess(services: Services, user: User, document_id: object, lang: object | None) -> Node:
    """POST /ocr/: read the latest version again from scratch, in `lang` if given."""
    if not isinstance(document_id, str) or not document_id:
        raise Invalid("doc_id, the id of the document to process, is required.", "doc_id",
                      code="required")
    reach(user, document_id, EDITOR, Node.DOCUMENT)
    lang = check_lang(lang, "lang") if lang is not None else None
    version = latest_version(document_id)
    if version is None:
        raise Invalid("This document has no file yet; upload one first.", "doc_id")
    services.jobs.cancel([version.id])
    with write_transaction(document_scope(document_id)):
        document = reach(user, document_id, EDITOR, Node.DOCUMENT).node
        DocumentVersion.update(searchable_size=None, searchable_sha256=None) \
            .where(DocumentVersion.id == version.id).execute()
        columns = dict(ocr_status=OcrStatus.RECEIVED, ocr_error=None, ocr_attempts=0,
                       ocr_seconds=0.0)
        if lang is not None:
            columns["lang"] = lang
        Node.update(**columns).where(Node.id == document.id).execute()
        Page.update(text="", method=None).where(Page.version == version.id).execute()
        for name, value in columns.items():
            setattr(document, name, value)
    searchable.discard(services.store, version.id)
    services.jobs.enqueue(version.id)
    return document


def versions(document_id: str) -> list[DocumentVersion]:
    return list(DocumentVersion.select().where(DocumentVersion.document == document_id)
                .order_by(DocumentVersion.number))


def page_ids(version_ids: list[str]) -> dict[str, list[str]]:
    """{version id: [page ids in page order]} in one query."""
    result: dict[str, list[str]] = {version_id: [] for version_id in version_ids}
    query = (Page.select(Page.id, Page.version).where(Page.version.in_(version_ids))
             .order_by(Page.version, Page.number).tuples())
    for page_id, version_id in cast("Iterable[tuple[str, str]]", query):  # .tuples()
        result[version_id].append(page_id)
    return result


def latest_text(document_id: str) -> str:
    """The text of the document's latest version, its pages separated by a blank line."""
    version = latest_version(document_id)
    if version is None:
        return ""
    pages = Page.select(Page.text).where(Page.version == version.id).order_by(Page.number)
    return PAGE_SEPARATOR.join(page.text for page in pages)


def latest_version(document_id: str) -> DocumentVersion | None:
    return cast("DocumentVersion | None",
                DocumentVersion.select().where(DocumentVersion.document == document_id)
                .order_by(DocumentVersion.number.desc()).first())


def reached_version(user: User, version_id: str, need: str = VIEWER) -> DocumentVersion:
    """A version of a live document (not in the trash) the caller may read (or `need`)."""
    version = DocumentVersion.get_or_none(DocumentVersion.id == version_id)
    if version is None:
        raise NotFound()
    reach(user, version.document_id, need, Node.DOCUMENT)
    return version


def latest_file(user: User, document_id: str) -> DocumentVersion:
    """The latest version of a document the caller may read, to download."""
    reach(user, document_id, VIEWER, Node.DOCUMENT)
    version = latest_version(document_id)
    if version is None:
        raise NotFound("This document has no file yet.")
    return version


def reached_page(user: User, page_id: str) -> tuple[Page, DocumentVersion]:
    """A page of a document the caller may read, with its version."""
    row = (Page.select(Page, DocumentVersion).join(DocumentVersion)
           .where(Page.id == page_id).first())
    if row is None:
        raise NotFound()
    reach(user, row.version.document_id, VIEWER, Node.DOCUMENT)
    return row, row.version


def first_page(user: User, document_id: str) -> tuple[Page, DocumentVersion] | None:
    """The first page of the newest version of a document the caller may read that has pages
    (its thumbnail, api.md §22); None while none has (no file yet, or its first reading)."""
    reach(user, document_id, VIEWER, Node.DOCUMENT)
    row = (Page.select(Page, DocumentVersion).join(DocumentVersion)
           .where(DocumentVersion.document == document_id, Page.number == 1)
           .order_by(DocumentVersion.number.desc()).first())
    return None if row is None else (row, row.version)


def restore_version(services: Services, user: User, document_id: str, version_id: str) -> Node:
    """POST /documents/{id}/versions/{version_id}/restore/ (api.md, "Versions"): that version's file
    becomes the latest again, as a new version that reuses its file (a hard link in the store),
    its pages and their text and its searchable PDF: nothing is read again, unless the old
    version's own reading had not finished. One write transaction with its history."""
    new_id_ = new_id()
    reach(user, document_id, EDITOR, Node.DOCUMENT)
    old = reached_version(user, version_id, EDITOR)
    if old.document_id != document_id:
        raise NotFound()
    previous = latest_version(document_id)
    services.store.duplicate(old.id, new_id_)
    try:
        with changing(user, document_id, Node.DOCUMENT, EDITOR, "",
                      document_scope(document_id)) as reached:  # deleted meanwhile?
            document = reached.node
            number = _copy_version(document, old, new_id_)
            events.record(document.owner_id, document.id, events.VERSION_RESTORED, user.id,
                          version=number, restored=old.number, file_name=old.file_name)
    except BaseException:
        services.store.remove(version_blobs(new_id_, old.sha256, old.searchable_sha256))
        raise
    if previous is not None:
        services.jobs.cancel([previous.id])
    if document.ocr_status == OcrStatus.RECEIVED:
        services.jobs.enqueue(new_id_)
    return document


def _copy_version(document: Node, old: DocumentVersion, version_id: str) -> int:
    """A new latest version of `document` with `old`'s file, pages and text (in the caller's
    transaction); the document's columns follow it. Its number."""
    number: int = DocumentVersion.select(fn.max(DocumentVersion.number)) \
        .where(DocumentVersion.document == document.id).scalar() + 1
    now = utcnow()
    DocumentVersion.insert(
        id=version_id, document=document.id, number=number, file_name=old.file_name,
        mime_type=old.mime_type, size=old.size, page_count=old.page_count, sha256=old.sha256,
        lang=old.lang, created_at=now, searchable_size=old.searchable_size,
        searchable_sha256=old.searchable_sha256).execute()
    pages = database.execute_sql(
        "SELECT number, text, method, barcodes FROM page WHERE version_id = ? ORDER BY number",
        (old.id,)).fetchall()
    for start in range(0, len(pages), 300):  # under SQLite's limit of bound values
        rows = pages[start:start + 300]
        database.execute_sql(
            "INSERT INTO page (id, version_id, number, text, method, barcodes) VALUES "
            + ", ".join("(?, ?, ?, ?, ?, ?)" for _ in rows),
            [value for row in rows for value in (new_id(), version_id, *row)])
    read = len(pages) == old.page_count and all(method is not None for _, _, method, _ in pages)
    columns = dict(file_name=old.file_name, size=old.size, page_count=old.page_count,
                   lang=old.lang, ocr_status=OcrStatus.SUCCEEDED if read else OcrStatus.RECEIVED,
                   ocr_error=None, ocr_attempts=0, ocr_seconds=0.0, updated_at=now)
    Node.update(**columns).where(Node.id == document.id).execute()
    for name, value in columns.items():
        setattr(document, name, value)
    return number


def referenced_version_ids() -> set[str]:
    return {row[0] for row in database.execute_sql("SELECT id FROM document_version")}
