"""Documents' files (api.md §6): receiving an upload, checking it, and adding it as a new version.

Order of an upload, so that a refused or interrupted one changes nothing: stream the body to a
temporary file (hashing it), sniff and open it, move it into the store (fsynced), and only then
write the version row, its pages and the document's new metadata in one transaction. If that
transaction fails, the stored file is removed again; if the process dies first, the start-up
sweep does it. The caller queues processing after the commit; if it dies in between, the
document's `received` status makes reconcile() queue it at the next start.
"""

from __future__ import annotations

import secrets
import unicodedata
from dataclasses import dataclass
from typing import BinaryIO

from dms import filetypes, tree
from dms.db import database
from dms.filetypes import FileType, UnacceptableFile
from dms.jsonapi import ApiError, invalid
from dms.models import DocumentVersion, Node, Page, User, new_id, utcnow
from dms.storage import FileStore, ReceivedFile, UploadTooLarge

MAX_FILE_NAME_LENGTH = 255
PAGE_ROWS_PER_INSERT = 500  # stays under SQLite's limit of variables per statement
PAGE_SEPARATOR = "\n\n"  # between pages in a document's whole text


@dataclass
class Upload:
    """A received file that passed every check, waiting in tmp/ to become a version."""
    received: ReceivedFile
    file_type: FileType
    page_count: int

    def discard(self) -> None:
        self.received.discard()


def check_file_name(name: object) -> str:
    """A stored file name: 1-255 characters, no slash, backslash or control character, not . or ..

    The name is only ever shown and offered on download; files are stored by version id."""
    if not isinstance(name, str) or not name.strip():
        raise invalid("A file name is required.")
    name = name.strip()
    if len(name) > MAX_FILE_NAME_LENGTH:
        raise invalid(f"A file name has at most {MAX_FILE_NAME_LENGTH} characters.")
    if name in (".", "..") or any(c in "/\\" or unicodedata.category(c) == "Cc" for c in name):
        raise invalid("A file name may not be . or .. nor contain /, \\ or control characters.")
    return name


def random_file_name(file_type: FileType) -> str:
    """The name of an unnamed legacy upload (api.md §9): upload-<8 hex> plus the extension."""
    return f"upload-{secrets.token_hex(4)}{file_type.extension}"


def too_large(limit_mb: int) -> ApiError:
    return ApiError(413, "too_large", f"The file is larger than the maximum of {limit_mb} MiB.")


def receive_upload(store: FileStore, stream: BinaryIO, length: int | None, limit_mb: int) -> Upload:
    """Read a request body into the store's tmp/ and check it; raises ApiError and leaves
    nothing behind if the file is refused."""
    limit = limit_mb * 1024 * 1024
    if length is not None and length > limit:
        raise too_large(limit_mb)
    try:
        received = store.receive(stream, length, limit)
    except UploadTooLarge:
        raise too_large(limit_mb) from None
    try:
        if received.size == 0:
            raise ApiError(400, "invalid", "The file is empty.")
        file_type = filetypes.sniff(received.head)
        if file_type is None:
            raise ApiError(415, "unsupported_media_type",
                           "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or "
                           "plain text file.")
        try:
            pages = filetypes.count_pages(received.path, file_type)
        except UnacceptableFile as error:
            raise invalid(str(error)) from None
    except BaseException:
        received.discard()
        raise
    return Upload(received, file_type, pages)


def add_version(store: FileStore, document: Node, upload: Upload, file_name: str) -> DocumentVersion:
    """Store the file and record it as the document's newest version (ocr_status back to received)."""
    version_id = new_id()
    store.store(upload.received, version_id)
    try:
        with database.atomic("IMMEDIATE"):
            return _record_version(document, upload, file_name, version_id)
    except BaseException:
        store.remove([version_id])
        raise


def create_document_with_file(store: FileStore, user: User, folder: Node, lang: str,
                              upload: Upload, file_name: str) -> tuple[Node, DocumentVersion]:
    """A new document titled `file_name` in `folder`, with the upload as version 1, in one
    transaction: a failure leaves neither the document nor its file."""
    version_id = new_id()
    store.store(upload.received, version_id)
    try:
        with database.atomic("IMMEDIATE"):
            document = tree.create_node(user, Node.DOCUMENT, folder, file_name[:tree.MAX_TITLE_LENGTH],
                                        lang=lang)
            version = _record_version(document, upload, file_name, version_id)
    except BaseException:
        store.remove([version_id])
        raise
    return document, version


def _record_version(document: Node, upload: Upload, file_name: str, version_id: str) -> DocumentVersion:
    latest = (DocumentVersion.select(DocumentVersion.number)
              .where(DocumentVersion.document == document.id)
              .order_by(DocumentVersion.number.desc()).first())
    now = utcnow()
    version = DocumentVersion.create(
        id=version_id, document=document.id, number=(latest.number + 1) if latest else 1,
        file_name=file_name, mime_type=upload.file_type.mime, size=upload.received.size,
        page_count=upload.page_count, sha256=upload.received.sha256, lang=document.lang,
        created_at=now)
    pages = [{"id": new_id(), "version": version_id, "number": number}
             for number in range(1, upload.page_count + 1)]
    for start in range(0, len(pages), PAGE_ROWS_PER_INSERT):
        Page.insert_many(pages[start:start + PAGE_ROWS_PER_INSERT]).execute()
    (Node.update(file_name=file_name, size=upload.received.size, page_count=upload.page_count,
                 ocr_status="received", ocr_error=None, ocr_attempts=0, updated_at=now)
     .where(Node.id == document.id).execute())
    document.file_name, document.size = file_name, upload.received.size
    document.page_count = upload.page_count
    document.ocr_status, document.ocr_error, document.updated_at = "received", None, now
    return version


def versions(document_id: str) -> list[DocumentVersion]:
    return list(DocumentVersion.select().where(DocumentVersion.document == document_id)
                .order_by(DocumentVersion.number))


def page_ids(version_ids: list[str]) -> dict[str, list[str]]:
    """{version id: [page ids in page order]} in one query."""
    result: dict[str, list[str]] = {version_id: [] for version_id in version_ids}
    query = (Page.select(Page.id, Page.version).where(Page.version.in_(version_ids))
             .order_by(Page.version, Page.number).tuples())
    for page_id, version_id in query:
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
    return (DocumentVersion.select().where(DocumentVersion.document == document_id)
            .order_by(DocumentVersion.number.desc()).first())


def owned_version(user: User, version_id: str) -> DocumentVersion | None:
    return (DocumentVersion.select().join(Node)
            .where(DocumentVersion.id == version_id, Node.owner == user.id).first())


def referenced_version_ids() -> set[str]:
    return {row[0] for row in database.execute_sql("SELECT id FROM document_version")}
