"""Adding files to documents (api.md, "Uploading a file"): receiving an upload, checking it, and
adding it as a new version of a document — from the API, the legacy upload into the inbox, and every
intake source through the one import function (`import_into_folder`: dms import, the consume folder,
mail attachments).

Order of an upload, so that a refused or interrupted one changes nothing: stream the body to a
temporary file (hashing it), sniff and open it (bounded: dms.files.filetypes), move it into the
store (fsynced), and only then write the version row and the document's new metadata in one write
transaction, which first checks that the document still exists (it may have been deleted
meanwhile: 404, and the stored file is removed again). The version's first PAGE_ROWS_PER_BATCH
page rows are written in that transaction too (most documents need no other), the rest after its
commit in batches as small, so a 10,000-page upload never holds the write lock for long; if the
process dies in between, processing writes the missing rows (it upserts every page). Processing
is queued after the commit; if the process dies first, the document's `received` status makes
reconcile() queue it at the next start. A document's first file marks it new, with its source, in
the same transaction: its rules run once its text is known (dms.domain.rules.filing).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from peewee import IntegrityError

from dms.db import database, document_scope, events, is_disk_full, owner_scope, write_transaction
from dms.db.models import (
    DocumentVersion,
    Node,
    OcrStatus,
    User,
    insert_row,
    new_id,
    update_rows,
    utcnow,
)
from dms.domain import duplicates, tree
from dms.domain.access.rule import EDITOR, changing, reach
from dms.domain.pages import batches, commit
from dms.domain.preferences import ocr_language
from dms.domain.rules import filing
from dms.errors import Invalid, StorageFull, TooLarge, UnsupportedType
from dms.files import filetypes, pagecount
from dms.files.filetypes import FileType, UnacceptableFile
from dms.files.storage import Blob, FileStore, ReceivedFile, UploadTooLarge
from dms.text import has_refused_characters

if TYPE_CHECKING:
    from dms.domain.pages.build import Built
    from dms.domain.services import Services

from dms.domain.documents import latest_version

log = logging.getLogger("dms.documents")  # the name operators know

MAX_FILE_NAME_LENGTH = 255


PAGE_ROWS_PER_BATCH = 500  # one short write transaction each; under SQLite's variable limit


@dataclass
class Upload:
    """A received file that passed every check, waiting in tmp/ to become a version."""
    received: ReceivedFile
    file_type: FileType
    page_count: int
    md5: str | None = None  # what Paperless-ngx's clients look duplicates up by (api.md §17)

    def discard(self) -> None:
        self.received.discard()


def check_file_name(name: object) -> str:
    """A stored file name: 1-255 characters, no slash, backslash, control or invisible formatting
    character, not . or .. The name is only ever shown and offered on download; files are stored
    by version id."""
    if not isinstance(name, str) or not name.strip():
        raise Invalid("A file name is required.", code="required")
    name = name.strip()
    if len(name) > MAX_FILE_NAME_LENGTH:
        raise Invalid(f"A file name has at most {MAX_FILE_NAME_LENGTH} characters.")
    if name in (".", "..") or any(c in "/\\" for c in name) or has_refused_characters(name):
        raise Invalid("A file name may not be . or .. nor contain /, \\, control characters or "
                      "invisible formatting characters such as right-to-left overrides.")
    return name


def random_file_name(file_type: FileType) -> str:
    """The name of an unnamed legacy upload (api.md, "Legacy endpoints"): upload-<8 hex> plus the
    extension."""
    return f"upload-{secrets.token_hex(4)}{file_type.extension}"


def too_large(limit_mb: int) -> TooLarge:
    return TooLarge(f"The file is larger than the maximum of {limit_mb} MiB.")


def receive_upload(services: Services, stream: BinaryIO, length: int | None) -> Upload:
    """Read a request body into the store's tmp/ and check it; raises a domain error and leaves
    nothing behind if the file is refused."""
    config = services.config
    limit = config.max_upload_bytes
    if length is not None and length > limit:
        raise too_large(config.max_upload_mb)
    try:
        received = services.store.receive(stream, length, limit)
    except UploadTooLarge:
        raise too_large(config.max_upload_mb) from None
    except OSError as error:
        if is_disk_full(error):
            raise StorageFull() from None
        raise
    try:
        if received.size == 0:
            raise Invalid("The file is empty.")
        file_type = filetypes.sniff(received.head)
        if file_type is None:
            raise UnsupportedType("This type of file is not supported; upload a PDF, PNG, JPEG, "
                                  "TIFF or plain text file.")
        try:
            pages = pagecount.count_pages(received.path, file_type, pagecount.limits_of(config),
                                          services.pdf)
        except UnacceptableFile as error:
            raise Invalid(str(error)) from None
    except BaseException:
        received.discard()
        raise
    # The MD5 (Paperless-ngx's checksum) was made while the body arrived (receive_into).
    return Upload(received, file_type, pages, received.md5)


def upload_version(services: Services, user: User, document_id: str, stream: BinaryIO,
                   length: int | None, file_name: object, if_duplicate: object = None) -> Node:
    """PUT /documents/{id}/upload/{name}: the body becomes the document's newest version; with
    `if_duplicate` "refuse", not when another document of the caller's has these bytes
    (dms.domain.duplicates: 409, nothing changed)."""
    name = check_file_name(file_name)
    refuse = duplicates.check_choice(if_duplicate) == "refuse"
    reach(user, document_id, EDITOR, Node.DOCUMENT)  # 404/403 before reading a large body
    upload = receive_upload(services, stream, length)
    previous = latest_version(document_id)
    version_id = _store(services.store, upload)
    try:
        with changing(user, document_id, Node.DOCUMENT, EDITOR, "", document_scope(document_id),
                      duplicates.scope_of(user)) as reached:  # deleted meanwhile?
            if refuse:
                duplicates.refuse_if_held(user, upload.received.sha256, exclude=document_id)
            document = reached.node
            number = _record_version(services.store, document, upload, name, version_id)
            events.record(document.owner_id, document.id, events.UPLOADED, user.id, version=number,
                          file_name=name, size=upload.received.size)
            if number == 1:  # its first file makes a document new: its rules will run
                filing.mark_new(document.id, "api")
    except BaseException:
        services.store.remove([Blob(version_id, upload.received.sha256)])
        raise
    if previous is not None:
        services.jobs.cancel([previous.id])  # its text is no longer wanted
    _after_commit(services, version_id, upload.page_count)
    return document


def upload_to_inbox(services: Services, user: User, stream: BinaryIO, length: int | None,
                    file_name: object | None, if_duplicate: object = None) -> Node:
    """The legacy uploads (api.md, "Legacy endpoints"): a new document in the caller's .inbox,
    titled by its name; with `if_duplicate` "refuse", none when the caller already has these
    bytes (dms.domain.duplicates: 409, nothing made)."""
    name = check_file_name(file_name) if file_name is not None else None
    refuse = duplicates.check_choice(if_duplicate) == "refuse"
    upload = receive_upload(services, stream, length)
    name = name or random_file_name(upload.file_type)
    version_id = _store(services.store, upload)
    try:
        with write_transaction(owner_scope(user.id)):
            if refuse:
                duplicates.refuse_if_held(user, upload.received.sha256)
            inbox = tree.special_folder(user, Node.INBOX)
            document = tree.insert_node(user, Node.DOCUMENT, inbox, name[:tree.MAX_TITLE_LENGTH],
                                        lang=ocr_language(user, services.config.ocr_lang))
            _record_version(services.store, document, upload, name, version_id)
            _record_imported(document, inbox, "api", user.id, name, upload.received.size)
            filing.mark_new(document.id, "api")
    except BaseException:
        services.store.remove([Blob(version_id, upload.received.sha256)])
        raise
    _after_commit(services, version_id, upload.page_count)
    return document


def import_into_folder(services: Services, user: User, folder_id: str, stream: BinaryIO,
                       length: int | None, file_name: str,
                       rule: duplicates.ImportRule = duplicates.SAME_FOLDER,
                       source: str = "import", split: bool = False) -> list[Node]:
    """A file from `dms import`, the consume folder or a mail (`source`) becomes a new document
    in the user's folder, titled by its name, through the same checks as an upload — or, with
    `split` (DMS_SPLIT_ON_BARCODE), one document per part of a batch cut at separator sheets
    (dms.domain.pages.batches). The documents made; none, and nothing changed, when `rule` says the
    file is already there: checked in the transaction that adds it."""
    name = check_file_name(file_name)
    tree.owned_node(user, folder_id, Node.FOLDER)
    upload = receive_upload(services, stream, length)
    try:
        if rule.holds(user, folder_id, upload.received.sha256):
            return []
        splitting: contextlib.AbstractContextManager[list[Built]] = (
            batches.split_at_barcodes(services, upload.received.path, upload.file_type,
                                      upload.page_count, name) if split
            else contextlib.nullcontext([]))
        with splitting as parts:
            if parts:
                return _import_parts(services, user, folder_id, upload, name, parts, rule,
                                     source)
            return _import_whole(services, user, folder_id, upload, name, rule, source)
    finally:
        upload.discard()  # stored by then (moved away), or not wanted


def _import_whole(services: Services, user: User, folder_id: str, upload: Upload, name: str,
                  rule: duplicates.ImportRule, source: str) -> list[Node]:
    version_id = _store(services.store, upload)
    try:
        with write_transaction(owner_scope(user.id)):
            folder = tree.owned_node(user, folder_id, Node.FOLDER)  # deleted meanwhile?
            if rule.holds(user, folder.id, upload.received.sha256):
                document = None
            else:
                document = tree.insert_node(user, Node.DOCUMENT, folder,
                                            name[:tree.MAX_TITLE_LENGTH],
                                            lang=ocr_language(user, services.config.ocr_lang))
                _record_version(services.store, document, upload, name, version_id)
                _record_imported(document, folder, source, None, name, upload.received.size)
                rule.added(user, document, upload.received.sha256)
                filing.mark_new(document.id, source)
    except BaseException:
        services.store.remove([Blob(version_id, upload.received.sha256)])
        raise
    if document is None:
        services.store.remove([Blob(version_id, upload.received.sha256)])
        return []
    _after_commit(services, version_id, upload.page_count)
    return [document]


def _import_parts(services: Services, user: User, folder_id: str, upload: Upload, name: str,
                  parts: list[Any], rule: duplicates.ImportRule, source: str) -> list[Node]:
    """The parts of a split batch, each a new document `<name>-<n>.pdf`, all in one write
    transaction; each version names the batch's SHA-256, which the duplicate rules find."""
    sha256 = upload.received.sha256
    version_ids: list[str] = []
    documents: list[Node] = []
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    try:
        for built in parts:
            version_ids.append(new_id())
            services.store.store(built.file, version_ids[-1])
        with write_transaction(owner_scope(user.id)):
            folder = tree.owned_node(user, folder_id, Node.FOLDER)
            if not rule.holds(user, folder.id, sha256):
                lang = ocr_language(user, services.config.ocr_lang)
                pairs = zip(parts, version_ids, strict=True)
                for number, (built, version_id) in enumerate(pairs, 1):
                    title = f"{stem[:tree.MAX_TITLE_LENGTH - 12]}-{number}.pdf"
                    document = tree.insert_node(user, Node.DOCUMENT, folder, title, lang=lang)
                    commit.insert_version(services.store, document, version_id, built,
                                          f"part {number} of {len(parts)} of {name}", None,
                                          file_name=title, source_sha256=sha256)
                    _record_imported(document, folder, source, None, title, built.file.size)
                    rule.added(user, document, sha256)
                    filing.mark_new(document.id, source)  # each part is a new document
                    documents.append(document)
    except BaseException:
        services.store.remove(_parts_files(version_ids, parts))
        raise
    if not documents:
        services.store.remove(_parts_files(version_ids, parts))
        return []
    log.info("%r was split at separator sheets into %d documents", name, len(documents))
    for version_id in version_ids:
        services.jobs.enqueue(version_id)
    services.store.ensure_reserve()
    return documents


def _parts_files(version_ids: list[str], parts: list[Any]) -> list[Blob]:
    """The stored files of a split's parts (as far as they were stored)."""
    return [Blob(version_id, built.file.sha256)
            for version_id, built in zip(version_ids, parts[:len(version_ids)], strict=True)]


def would_import(services: Services, user: User, folder_id: str | None, stream: BinaryIO,
                 length: int | None, file_name: str) -> bool:
    """`dms import --dry-run`: the checks of import_into_folder, changing nothing. False when
    the folder (if it exists yet) already holds the file."""
    check_file_name(file_name)
    upload = receive_upload(services, stream, length)
    upload.discard()
    return folder_id is None or not duplicates.folder_holds(user, folder_id, upload.received.sha256)


def _store(store: FileStore, upload: Upload) -> str:
    version_id = new_id()
    try:
        store.store(upload.received, version_id)
    except OSError as error:
        upload.discard()
        if is_disk_full(error):
            raise StorageFull() from None
        raise
    return version_id


def _record_imported(document: Node, folder: Node, source: str, actor_id: str | None,
                     file_name: str, size: int) -> None:
    events.record(document.owner_id, document.id, events.IMPORTED, actor_id, source=source,
                  title=document.title, file_name=file_name, size=size,
                  parent={"id": folder.id, "title": folder.title})


def _record_version(store: FileStore, document: Node, upload: Upload, file_name: str,
                    version_id: str) -> int:
    """The new version's row and the document's columns that follow it (the stored file is
    the row's from now on: settled); its number."""
    latest = database.execute_sql(
        "SELECT max(number) FROM document_version WHERE document_id = ?",
        (document.id,)).fetchone()[0]
    number = (latest or 0) + 1
    now = utcnow()
    insert_row(DocumentVersion, dict(
        id=version_id, document=document.id, number=number, file_name=file_name,
        mime_type=upload.file_type.mime, size=upload.received.size,
        page_count=upload.page_count, sha256=upload.received.sha256, md5=upload.md5,
        lang=document.lang, created_at=now))
    # The first batch of its page rows with it: for most documents one write transaction less
    # (the lock each write waits for, bench/RESULTS.md, issue 47); the rest after the commit.
    _insert_page_rows(version_id, range(1, min(upload.page_count, PAGE_ROWS_PER_BATCH) + 1))
    store.settle([Blob(version_id, upload.received.sha256)])
    columns = dict(file_name=file_name, size=upload.received.size, page_count=upload.page_count,
                   ocr_status=OcrStatus.RECEIVED, ocr_error=None, ocr_attempts=0, ocr_seconds=0.0,
                   updated_at=now)
    update_rows(Node, [document.id], columns)
    for name, value in columns.items():
        setattr(document, name, value)
    return number


def _after_commit(services: Services, version_id: str, page_count: int) -> None:
    write_page_rows(version_id, page_count, first=PAGE_ROWS_PER_BATCH + 1)  # see _record_version
    services.jobs.enqueue(version_id)
    services.store.ensure_reserve()  # set aside again once a full disk has room (a stat if not)


def write_page_rows(version_id: str, page_count: int, first: int = 1) -> None:
    """The version's page rows from number `first` on (text still empty), PAGE_ROWS_PER_BATCH
    per write transaction so other writers get their turn in between. Idempotent; stops if the
    version was deleted."""
    for start in range(first, page_count + 1, PAGE_ROWS_PER_BATCH):
        try:
            with write_transaction():
                _insert_page_rows(version_id,
                                  range(start, min(start + PAGE_ROWS_PER_BATCH, page_count + 1)))
        except IntegrityError:
            return  # the version was deleted meanwhile: nothing more to write
        except StorageFull:
            log.warning("disk full: page rows of version %s are written when it is processed",
                        version_id)
            return


def _insert_page_rows(version_id: str, numbers: range) -> None:
    """Page rows of these numbers, text still empty (those there already are kept)."""
    if not numbers:
        return
    rows = [(new_id(), version_id, number) for number in numbers]
    database.execute_sql(
        "INSERT INTO page (id, version_id, number) VALUES "
        + ", ".join("(?, ?, ?)" for _ in rows) + " ON CONFLICT DO NOTHING",
        [v for row in rows for v in row])
