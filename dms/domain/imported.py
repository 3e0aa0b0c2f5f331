"""Documents that arrive already read, from another document manager (api.md §18): their file,
the searchable PDF that system made, their text, dates, labels and notes become a dms document in
one write transaction — nothing is queued for OCR.

- The original goes through an upload's checks (dms.domain.uploads.receive_upload: its type from
  its bytes, its pages counted within the limits), so nothing is stored that an upload would
  refuse. The searchable PDF is kept only if it is a PDF.
- The text is the other system's: split into the pages at form feeds where there are as many
  parts as pages, else all of it on the first page.
- Its metadata is applied as a PATCH applies it (dms.domain.metadata.document), its tags as a
  POST of the node's tags, its notes with their authors and dates; `created_at` is the day it was
  added there.
- Users too (`create_imported_user`), from Django's fields as both systems export them.
- `known_originals`: the SHA-256 of each document's first file of an owner, with the document:
  what a second run finds already there.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from dms.db import USERS, database, events, is_disk_full, owner_scope, write_transaction
from dms.db.models import PAGE_SEPARATOR, DocumentVersion, Node, Note, OcrStatus, User, new_id
from dms.domain import accounts, tree
from dms.domain import tags as tag_rules
from dms.domain.credentials import DJANGO_PBKDF2
from dms.domain.metadata import document as document_metadata
from dms.domain.metadata.notes import MAX_NOTE_LENGTH
from dms.domain.preferences import ocr_language
from dms.domain.uploads import Upload, receive_upload
from dms.errors import StorageFull
from dms.files import filetypes
from dms.files.storage import (
    Blob,
    FileStore,
    ReceivedFile,
    UploadTooLarge,
    fsync_file,
    version_blobs,
)

if TYPE_CHECKING:
    from dms.domain.services import Services

PAGE_BREAK = "\f"
PDF = "application/pdf"


@dataclass
class Paper:
    """One file of a document as the other system kept it: its title, name, text and the moment
    it was added there."""
    title: str
    file_name: str
    text: str
    added: dt.datetime


@dataclass
class Filed:
    """How a document was filed there: metadata as dms's PATCH takes it, tag names, notes as
    (author's user id or None, text, when)."""
    attributes: dict[str, Any] = field(default_factory=dict)
    tag_names: list[str] = field(default_factory=list)
    notes: list[tuple[str | None, str, dt.datetime]] = field(default_factory=list)


@dataclass
class Received:
    """A paper's files in the store's tmp/, checked, not yet stored."""
    upload: Upload
    searchable: ReceivedFile | None

    @property
    def sha256(self) -> str:
        return self.upload.received.sha256

    @property
    def md5(self) -> str:
        return self.upload.md5 or ""

    def discard(self) -> None:
        self.upload.discard()
        if self.searchable is not None:
            self.searchable.discard()


def known_originals(owner: User) -> dict[str, str]:
    """{SHA-256 of a document's first file: the document's id} of the owner's documents, the
    trash included."""
    return dict(database.execute_sql(
        "SELECT v.sha256, n.id FROM node AS n JOIN document_version AS v "
        "ON v.document_id = n.id AND v.number = 1 WHERE n.owner_id = ? AND n.kind = ?",
        (owner.id, Node.DOCUMENT)).fetchall())


def version_checksums(document_id: str) -> set[str]:
    return {row.sha256 for row in DocumentVersion.select(DocumentVersion.sha256)
            .where(DocumentVersion.document == document_id)}


def receive(services: Services, original: BinaryIO, size: int, searchable_pdf: BinaryIO | None,
            searchable_size: int) -> Received:
    """A paper's files checked and in tmp/ (a domain error, nothing left behind, if the
    original would be refused as an upload; a searchable file that is no PDF is let go)."""
    upload = receive_upload(services, original, size)
    searchable = None
    if searchable_pdf is not None:
        try:
            searchable = services.store.receive(searchable_pdf, searchable_size,
                                                services.config.max_upload_bytes)
        except UploadTooLarge:
            searchable = None
        except BaseException:
            upload.discard()
            raise
        kind = filetypes.sniff(searchable.head) if searchable is not None else None
        if searchable is not None and (kind is None or kind.mime != PDF):
            searchable.discard()
            searchable = None
    return Received(upload, searchable)


def add_document(services: Services, owner: User, folder: Node, paper: Paper,
                 received: Received, filed: Filed, source: str) -> Node:
    """A new document of `owner` in `folder` from `received` (taken: stored, or discarded if
    refused)."""
    version_id = _store(services, received)
    try:
        with write_transaction(owner_scope(owner.id)):
            document = tree.insert_node(owner, Node.DOCUMENT, folder,
                                        paper.title[:tree.MAX_TITLE_LENGTH],
                                        lang=ocr_language(owner, services.config.ocr_lang))
            _version(services.store, document, paper, received, version_id, 1)
            if filed.attributes:
                document_metadata.apply(owner, document,
                                        document_metadata.check(filed.attributes))
            if filed.tag_names:
                tag_rules.change_node_tags(owner, document.id, filed.tag_names, "replace")
            for author_id, text, when in filed.notes:
                Note.insert(id=new_id(), document=document.id, user=author_id,
                            note=text[:MAX_NOTE_LENGTH], created_at=when).execute()
            events.record(owner.id, document.id, events.IMPORTED, None, source=source,
                          title=document.title, file_name=paper.file_name,
                          size=received.upload.received.size,
                          parent={"id": folder.id, "title": folder.title})
    except BaseException:
        services.store.remove(_files(version_id, received))
        raise
    return document


def add_version(services: Services, owner: User, document_id: str, paper: Paper,
                received: Received) -> int:
    """A further file of an imported document, already read: its number."""
    version_id = _store(services, received)
    try:
        with write_transaction(owner_scope(owner.id)):
            document = Node.get_by_id(document_id)
            latest = (DocumentVersion.select(DocumentVersion.number)
                      .where(DocumentVersion.document == document_id)
                      .order_by(DocumentVersion.number.desc()).first())
            number = (latest.number if latest else 0) + 1
            _version(services.store, document, paper, received, version_id, number)
            events.record(owner.id, document.id, events.UPLOADED, None, version=number,
                          file_name=paper.file_name, size=received.upload.received.size)
    except BaseException:
        services.store.remove(_files(version_id, received))
        raise
    return number


def _store(services: Services, received: Received) -> str:
    """Both files in the store under a new version id (the searchable one first, durably)."""
    version_id = new_id()
    store = services.store
    try:
        if received.searchable is not None:
            fsync_file(received.searchable.path)
            store.place_searchable(received.searchable.path, version_id,
                                   received.searchable.sha256)
        store.store(received.upload.received, version_id)
    except OSError as error:
        received.discard()
        store.remove(_files(version_id, received))
        if is_disk_full(error):
            raise StorageFull() from None
        raise
    return version_id


VERSION = ("INSERT INTO document_version (id, document_id, number, file_name, mime_type, size, "
           "page_count, sha256, md5, lang, created_at, searchable_size, searchable_sha256, "
           "short_description) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')")
DOCUMENT = ("UPDATE node SET file_name = ?, size = ?, page_count = ?, ocr_status = ?, "
            "ocr_error = NULL, ocr_attempts = 0, ocr_seconds = 0.0, updated_at = ?{added} "
            "WHERE id = ?")


def _files(version_id: str, received: Received) -> list[Blob]:
    return version_blobs(version_id, received.sha256,
                         received.searchable.sha256 if received.searchable else None)


def _version(store: FileStore, document: Node, paper: Paper, received: Received,
             version_id: str, number: int) -> None:
    """The version's row, its pages with their text, and the document's columns after it (its
    first version: the moment it was added there too). Plain SQL: an import writes thousands."""
    upload, searchable = received.upload, received.searchable
    added = Node.created_at.db_value(paper.added)
    database.execute_sql(VERSION, (
        version_id, document.id, number, paper.file_name, upload.file_type.mime,
        upload.received.size, upload.page_count, upload.received.sha256, upload.md5,
        document.lang or "eng", added, searchable.size if searchable is not None else None,
        searchable.sha256 if searchable is not None else None))
    store.settle(_files(version_id, received))
    texts = _page_texts(paper.text, upload.page_count)
    rows = [(new_id(), version_id, page, text, "layer") for page, text in enumerate(texts, 1)]
    for start in range(0, len(rows), 200):
        chunk = rows[start:start + 200]
        database.execute_sql("INSERT INTO page (id, version_id, number, text, method) VALUES "
                             + ", ".join("(?, ?, ?, ?, ?)" for _ in chunk),
                             [value for row in chunk for value in row])
    first = number == 1
    database.execute_sql(DOCUMENT.format(added=", created_at = ?" if first else ""), (
        paper.file_name, upload.received.size, upload.page_count, OcrStatus.SUCCEEDED, added,
        *((added,) if first else ()), document.id))


def _page_texts(text: str, page_count: int) -> list[str]:
    """The text of each page: the parts between form feeds when there is one per page, else all
    of it on the first page."""
    count = max(page_count, 1)
    parts = text.split(PAGE_BREAK)
    if len(parts) == count:
        return [part.strip() for part in parts]
    if len(parts) == count + 1 and not parts[-1].strip():  # pdftotext ends each page with one
        return [part.strip() for part in parts[:-1]]
    whole = PAGE_SEPARATOR.join(part.strip() for part in parts if part.strip())
    return [whole] + [""] * (count - 1)


MAX_IMPORTED_HASH = 512


def create_imported_user(username: str, exported: dict[str, Any]) -> User:
    """A user brought from another system (api.md §18): Django's user fields (`password`,
    `is_superuser`, `is_staff`, `is_active`, names, e-mail) as Paperless-ngx and Papermerge export
    them. A Django `pbkdf2_sha256$…` hash is kept, accepted at login and then hashed again with
    dms's scheme (dms.domain.credentials); any other (an unusable `!…`, another algorithm) is
    not: an administrator sets a password."""
    attributes = {"is_superuser": exported.get("is_superuser") is True,
                  "is_staff": exported.get("is_staff") is True,
                  "is_active": exported.get("is_active") is not False,
                  **{name: exported[name][:150] for name in ("first_name", "last_name", "email")
                     if isinstance(exported.get(name), str)}}
    password_hash = exported.get("password")
    user = accounts.create_user(accounts.check_username(username), None, **attributes)
    if isinstance(password_hash, str) and password_hash.startswith(DJANGO_PBKDF2 + "$") \
            and len(password_hash) <= MAX_IMPORTED_HASH:
        with write_transaction(USERS):
            User.update(password_hash=password_hash).where(User.id == user.id).execute()
        user.password_hash = password_hash
    return user
