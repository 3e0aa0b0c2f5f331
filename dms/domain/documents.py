"""Documents and their versions once they are stored (api.md §6-7): reading versions, pages and
text, re-running processing, and deleting nodes together with their files and running work.
Adding files is dms.domain.uploads'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING


from dms.db import (database, document_scope, with_space_reserve,
                    write_transaction)
from dms.db.models import (PAGE_SEPARATOR, DocumentVersion, Node, OcrStatus, Page, User)
from dms.domain import tree
from dms.errors import Invalid, NotFound
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
    tree.owned_node(user, document_id, Node.DOCUMENT)
    lang = check_lang(lang, "lang") if lang is not None else None
    version = latest_version(document_id)
    if version is None:
        raise Invalid("This document has no file yet; upload one first.", "doc_id")
    services.jobs.cancel([version.id])
    with write_transaction(document_scope(document_id)):
        document = tree.owned_node(user, document_id, Node.DOCUMENT)
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


def delete_node(services: Services, user: User, node_id: str, kind: str | None = None) -> None:
    """DELETE a node with everything below it: rows in one transaction, then their files, then
    any processing still running on them (a crash after the commit leaves files that the
    start-up sweep removes)."""
    version_ids = with_space_reserve(lambda: tree.delete_subtree(user, node_id, kind))
    services.jobs.cancel(version_ids)
    services.store.remove(version_ids)
    services.store.ensure_reserve()


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


def owned_version(user: User, version_id: str) -> DocumentVersion:
    version = (DocumentVersion.select().join(Node)
               .where(DocumentVersion.id == version_id, Node.owner == user.id).first())
    if version is None:
        raise NotFound()
    return version


def latest_file(user: User, document_id: str) -> DocumentVersion:
    """The latest version of the caller's document, to download."""
    tree.owned_node(user, document_id, Node.DOCUMENT)
    version = latest_version(document_id)
    if version is None:
        raise NotFound("This document has no file yet.")
    return version


def owned_page(user: User, page_id: str) -> tuple[Page, DocumentVersion]:
    """A page of one of the caller's documents, with its version."""
    row = (Page.select(Page, DocumentVersion).join(DocumentVersion).join(Node)
           .where(Page.id == page_id, Node.owner == user.id).first())
    if row is None:
        raise NotFound()
    return row, row.version


def referenced_version_ids() -> set[str]:
    return {row[0] for row in database.execute_sql("SELECT id FROM document_version")}
