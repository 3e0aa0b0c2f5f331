"""Committing a page operation: all of one call in one write transaction, so that a crash leaves the
old state or the new one, never half of it.

Order, as for uploads (dms.domain.uploads): the new PDFs (dms.domain.pages.build) are moved into
the store first, durably, with their searchable PDFs; then one write transaction checks that every
document is still live and still has the latest version the pages were taken from (else 409:
another change came first, and nothing is changed), writes the new versions with their pages'
text, the new documents, the documents' columns, their history (`pages_changed`, `created`) and
puts the documents left without pages in the trash (a split in the background commits each batch
of its parts so: dms.domain.splitruns). A refusal or a crash before the commit leaves
only files no row refers to, which are removed at once (or by the sweep after a crash). After the
commit the replaced versions' reading stops and the new versions that have pages to read are
queued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dms.db import database, document_scope, events, owner_scope, write_transaction
from dms.db.models import DocumentVersion, Node, OcrStatus, User, new_id, utcnow
from dms.domain import trash, tree
from dms.domain.access.rule import EDITOR, RANK, reach, role_of
from dms.domain.documents import latest_version, searchable_name
from dms.domain.pages.build import Built
from dms.errors import Conflict, Invalid
from dms.files.filetypes import PDF
from dms.files.storage import Blob, FileStore, version_blobs
from dms.processing import searchable

if TYPE_CHECKING:
    from dms.domain.services import Services

VALUE_COLUMNS = ("value_text, value_key, value_int, value_float, value_date, value_bool, "
                 "value_cents, value_currency")
PAGE_ROWS_PER_STATEMENT = 300  # under SQLite's limit of bound values (5 per row)
CHANGED_MEANWHILE = ("The document changed while its pages were being changed (a new version, "
                     "a move or a deletion came first); nothing was changed: try again.")


@dataclass
class NewVersion:
    """The next version of a document whose pages changed."""
    document: Node  # as read before the operation
    based_on: str  # the id of the latest version its pages were taken from
    built: Built
    description: str
    version_id: str = ""
    searchable: tuple[int, str] | None = None


@dataclass
class NewDocument:
    """A document made of pages of another (`origin`), in the folder `folder_id`."""
    folder_id: str
    title: str
    built: Built
    description: str
    origin: Node
    keeps_details: bool = False  # a split: its tags, metadata and mail attributes follow
    node_id: str = field(default_factory=new_id)  # known before the commit: titles may name it
    version_id: str = ""
    searchable: tuple[int, str] | None = None
    node: Node | None = None


@dataclass
class Emptied:
    """A document that the operation leaves without pages (or replaces): into the trash."""
    document: Node
    based_on: str
    folder_id: str | None = None  # given: it must still be there (a split's run)


@dataclass
class Kept:
    """A document the operation takes pages from and leaves as it is (a batch of a split's parts
    before the last): it too must still be live and unchanged at the commit."""
    document: Node
    based_on: str
    folder_id: str | None = None


@dataclass
class Operation:
    versions: list[NewVersion] = field(default_factory=list)
    documents: list[NewDocument] = field(default_factory=list)
    emptied: list[Emptied] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)


def commit(services: Services, user: User, operation: Operation,
           then: Callable[[list[Node]], None] | None = None) -> list[Node]:
    """Store the operation's files and write it in one write transaction; the new documents.
    `then(new documents)` runs in that transaction after the rows are written (a split's run
    records its progress with them); what it raises undoes the whole operation."""
    store = services.store
    owner_id = _owner_of(operation)
    items: list[NewVersion | NewDocument] = [*operation.versions, *operation.documents]
    stored: list[Blob] = []
    try:
        for item in items:
            item.version_id = new_id()
            store.store(item.built.file, item.version_id)
            stored.append(Blob(item.version_id, item.built.file.sha256))
            if item.built.searchable is not None:
                if item.built.read:
                    item.searchable = searchable.place(store, item.version_id,
                                                       item.built.searchable)
                    stored.append(Blob(item.version_id, item.searchable[1], searchable=True))
                else:
                    searchable.place_base(store, item.version_id, item.built.searchable,
                                          item.built.covered)
        documents = [v.document.id for v in operation.versions] + \
            [e.document.id for e in operation.emptied + operation.kept]
        with write_transaction(owner_scope(owner_id), *map(document_scope, documents)):
            removed = _write(services, user, operation)
            if then is not None:
                then([d.node for d in operation.documents])  # type: ignore[misc]  # _write set them
    except BaseException:
        store.remove(stored)
        raise
    replaced = [v.based_on for v in operation.versions]
    services.jobs.cancel(replaced)
    removed.finish(services)
    for item in items:
        if not item.built.read:
            services.jobs.enqueue(item.version_id)
    return [d.node for d in operation.documents]  # type: ignore[misc]  # _write set them


def _write(services: Services, user: User, operation: Operation) -> trash.Removed:
    checked: list[NewVersion | Emptied | Kept] = [*operation.versions, *operation.emptied,
                                                  *operation.kept]
    for item in checked:
        _check_unchanged(user, item.document.id, item.based_on, getattr(item, "folder_id", None))
    for version in operation.versions:
        number = insert_version(services.store, version.document, version.version_id,
                                version.built, version.description, version.searchable)
        events.record(version.document.owner_id, version.document.id, events.PAGES_CHANGED,
                      user.id,
                      version=number, description=version.description,
                      pages=version.built.page_count)
    folders: dict[str, Node] = {}
    for new in operation.documents:
        if new.folder_id not in folders:
            folders[new.folder_id] = reach(user, new.folder_id, EDITOR, Node.FOLDER).node
        folder = folders[new.folder_id]
        new.node = tree.insert_node(user, Node.DOCUMENT, folder, new.title, lang=new.origin.lang,
                                    ocr=bool(new.origin.ocr), node_id=new.node_id)
        insert_version(services.store, new.node, new.version_id, new.built, new.description,
                       new.searchable, file_name=new.title)
        if new.keeps_details:
            _copy_details(new.origin.id, new.node.id)
        tree.record_created(new.node, folder, user.id, origin={"id": new.origin.id,
                                                                "title": new.origin.title},
                            pages=new.built.page_count)
    stopped, gone = [], []
    for emptied in operation.emptied:
        removed = trash.remove_in_transaction(
            services, user, reach(user, emptied.document.id, EDITOR).node)
        stopped += removed.stopped
        gone += removed.gone
    return trash.Removed(stopped, gone)


def _owner_of(operation: Operation) -> str:
    """The one owner of every document and folder the operation touches: pages never move from
    one person's tree to another's (a folder shared with the caller is its owner's tree)."""
    documents: list[Node] = [item.document for item in operation.versions] + \
        [item.document for item in operation.emptied] + [item.document for item in operation.kept]
    owners = {str(document.owner_id) for document in documents}
    folder_ids = list({new.folder_id for new in operation.documents})
    if folder_ids:
        owners |= {str(owner) for (owner,) in database.execute_sql(
            f"SELECT owner_id FROM node WHERE id IN ({','.join('?' * len(folder_ids))})",
            folder_ids)}
    if len(owners) != 1:
        raise Invalid("Pages move only between documents and folders of one owner; a folder "
                      "shared with you and your own are two owners'.")
    return owners.pop()


def _check_unchanged(user: User, document_id: str, based_on: str,
                     folder_id: str | None = None) -> None:
    """Inside the transaction: the caller may still change the document, live, (in `folder_id`,)
    and its latest version is still the one the pages were taken from."""
    reached = role_of(user, document_id)
    found = reached is not None and RANK[reached.role] >= RANK[EDITOR] and \
        (folder_id is None or reached.node.parent_id == folder_id)
    latest = latest_version(document_id) if found else None
    if latest is None or latest.id != based_on:
        raise Conflict(CHANGED_MEANWHILE)


def insert_version(store: FileStore, document: Node, version_id: str, built: Built,
                   description: str, searchable_pdf: tuple[int, str] | None,
                   file_name: str | None = None, source_sha256: str | None = None) -> int:
    """The document's next version with its pages (their text where known), and the document's
    columns that follow it, in the caller's write transaction; its number. Also for the parts of
    a batch the intake split (dms.domain.uploads), with the SHA-256 of the batch."""
    number = (database.execute_sql(
        "SELECT max(number) FROM document_version WHERE document_id = ?",
        (document.id,)).fetchone()[0] or 0) + 1
    name = file_name or searchable_name(document.file_name or document.title)
    now = utcnow()
    size, sha256 = searchable_pdf or (None, None)
    DocumentVersion.insert(
        id=version_id, document=document.id, number=number, file_name=name, mime_type=PDF.mime,
        size=built.file.size, page_count=built.page_count, sha256=built.file.sha256,
        lang=document.lang, created_at=now, searchable_size=size, searchable_sha256=sha256,
        short_description=description, source_sha256=source_sha256).execute()
    store.settle(version_blobs(version_id, built.file.sha256, sha256))
    barcodes = built.barcodes or [None] * len(built.texts)
    rows = [(new_id(), version_id, n, text, method, codes)
            for n, ((text, method), codes) in enumerate(zip(built.texts, barcodes, strict=True), 1)]
    for start in range(0, len(rows), PAGE_ROWS_PER_STATEMENT):
        part = rows[start:start + PAGE_ROWS_PER_STATEMENT]
        database.execute_sql(
            "INSERT INTO page (id, version_id, number, text, method, barcodes) VALUES "
            + ", ".join("(?, ?, ?, ?, ?, ?)" for _ in part), [v for row in part for v in row])
    columns = dict(file_name=name, size=built.file.size, page_count=built.page_count,
                   ocr_status=OcrStatus.SUCCEEDED if built.read else OcrStatus.RECEIVED,
                   ocr_error=None, ocr_attempts=0, ocr_seconds=0.0, updated_at=now)
    # ocr_status is written even when it stays `succeeded`: its triggers put the new text in
    # the search index (migrations 0006 and the PostgreSQL baseline).
    Node.update(**columns).where(Node.id == document.id).execute()
    for key, value in columns.items():
        setattr(document, key, value)
    return number


def _copy_details(origin_id: str, document_id: str) -> None:
    """A part of a split document keeps its tags, what it is about (correspondent, type, date,
    custom field values but a document link's) and where it came from by mail."""
    database.execute_sql("INSERT INTO node_tag (node_id, tag_id) SELECT ?, tag_id FROM node_tag "
                         "WHERE node_id = ?", (document_id, origin_id))
    database.execute_sql(
        "UPDATE node SET (correspondent_id, document_type_id, document_date) = (SELECT "
        "correspondent_id, document_type_id, document_date FROM node WHERE id = ?) WHERE id = ?",
        (origin_id, document_id))
    database.execute_sql(
        f"INSERT INTO custom_field_value (document_id, field_id, {VALUE_COLUMNS}) "
        f"SELECT ?, v.field_id, {', '.join('v.' + c for c in VALUE_COLUMNS.split(', '))} "
        "FROM custom_field_value AS v JOIN custom_field AS f ON f.id = v.field_id "
        "WHERE v.document_id = ? AND f.data_type <> 'documentlink'", (document_id, origin_id))
    database.execute_sql(
        "INSERT INTO document_mail (document_id, subject, sender, sent_at, message_id) "
        "SELECT ?, subject, sender, sent_at, message_id FROM document_mail WHERE document_id = ?",
        (document_id, origin_id))
