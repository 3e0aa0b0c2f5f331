"""Page operations named by documents and page numbers, as Paperless-ngx's bulk edit asks for
them (api.md §17: `rotate`, `delete_pages`, `merge`, `split`): the same building blocks as the
page routes (dms.domain.pages.build writes the PDFs, dms.domain.pages.commit writes everything of
one document in one write transaction), the same rules (the latest version, an editor's right,
PDFs and images only, DMS_MAX_PAGES). Everything a call names is checked before the first
change; each document of a rotation is its own operation (its own new version), as each would be
alone.

- rotate: every page of each document turned by `degrees` (a multiple of 90).
- delete_pages: a new version of one document without those page numbers.
- merge: one new document of the documents' pages in the order given, in the first one's folder,
  titled after the first (or `metadata_from`, whose tags and metadata it takes); the originals
  to the trash with `delete_originals`.
- split: one new document per group of page numbers (any pages, in any order), titled
  "<title> (split n)", with the document's tags and metadata; the document to the trash with
  `delete_originals`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dms.db.models import DocumentVersion, Node, User
from dms.domain.pages.build import Builder, Placed, SourcePage, check_changeable
from dms.domain.pages.commit import Emptied, NewDocument, NewVersion, Operation, commit
from dms.domain.pages.operations import all_pages, document_with_file
from dms.errors import Invalid

if TYPE_CHECKING:
    from dms.domain.services import Services

MAX_DOCUMENTS = 100  # documents one rotation or merge takes


def rotate_documents(services: Services, user: User, document_ids: list[str],
                     degrees: int) -> None:
    if degrees % 90:
        raise Invalid("An angle is a multiple of 90 degrees (negative: counter-clockwise).",
                      "degrees")
    found = _documents(services, user, document_ids)
    if degrees % 360 == 0:
        return
    for document, version in found:
        with Builder(services) as builder:
            placed = [Placed(page, degrees % 360) for page in all_pages(version, document)]
            commit(services, user, Operation(versions=[NewVersion(
                document, version.id, builder.build(placed),
                f"{len(placed)} page(s) rotated")]))


def delete_page_numbers(services: Services, user: User, document_id: str,
                        numbers: list[int]) -> None:
    (document, version), = _documents(services, user, [document_id])
    gone = set(_numbers(version, numbers, "pages"))
    kept = [page for page in all_pages(version, document) if page.number not in gone]
    if not kept:
        raise Invalid("A document keeps at least one page.", "pages")
    with Builder(services) as builder:
        commit(services, user, Operation(versions=[NewVersion(
            document, version.id, builder.build([Placed(page) for page in kept]),
            f"{len(gone)} page(s) deleted")]))


def merge_into_new(services: Services, user: User, document_ids: list[str],
                   metadata_from: str | None, delete_originals: bool) -> Node:
    if len(document_ids) < 2:
        raise Invalid("A merge takes at least two documents.", "documents")
    if metadata_from is not None and metadata_from not in document_ids:
        raise Invalid("metadata_document_id is one of the documents merged.",
                      "metadata_document_id")
    found = _documents(services, user, document_ids)
    pages = [page for document, version in found for page in all_pages(version, document)]
    _within_limit(services, len(pages))
    first = found[0][0]
    origin = next((document for document, _ in found if document.id == metadata_from), first)
    with Builder(services) as builder:
        new = NewDocument(str(first.parent_id), f"{_stem(origin.title)} (merged).pdf",
                          builder.build([Placed(page) for page in pages]),
                          f"merged from {len(found)} documents", origin,
                          keeps_details=metadata_from is not None)
        emptied = [Emptied(document, version.id) for document, version in found] \
            if delete_originals else []
        return commit(services, user, Operation(documents=[new], emptied=emptied))[0]


def split_into(services: Services, user: User, document_id: str, groups: list[list[int]],
               delete_originals: bool) -> list[Node]:
    (document, version), = _documents(services, user, [document_id])
    if not groups:
        raise Invalid("A split names at least one group of pages.", "pages")
    _within_limit(services, sum(len(group) for group in groups))
    by_number = {page.number: page for page in all_pages(version, document)}
    parts: list[list[SourcePage]] = [
        [by_number[number] for number in _numbers(version, group, "pages")] for group in groups]
    with Builder(services) as builder:
        made = [NewDocument(str(document.parent_id), f"{_stem(document.title)} (split {n}).pdf",
                            builder.build([Placed(page) for page in part]),
                            f"split from {document.title}, page(s) "
                            f"{','.join(str(page.number) for page in part)}",
                            document, keeps_details=True)
                for n, part in enumerate(parts, 1)]
        return commit(services, user, Operation(
            documents=made,
            emptied=[Emptied(document, version.id)] if delete_originals else []))


def _documents(services: Services, user: User,
               document_ids: list[str]) -> list[tuple[Node, DocumentVersion]]:
    """Each document the caller may change, with its latest version, of a type with pages."""
    if len(document_ids) > MAX_DOCUMENTS:
        raise Invalid(f"At most {MAX_DOCUMENTS} documents at once.", "documents")
    found = [document_with_file(user, document_id, "documents") for document_id in document_ids]
    for _, version in found:
        check_changeable(version.mime_type)
    _within_limit(services, max(version.page_count for _, version in found))
    return found


def _numbers(version: DocumentVersion, numbers: list[int], field: str) -> list[int]:
    for number in numbers:
        if isinstance(number, bool) or not isinstance(number, int) \
                or not 1 <= number <= version.page_count:
            raise Invalid(f"Page {number} is not a page of this document: it has "
                          f"{version.page_count} page(s).", field)
    return numbers


def _within_limit(services: Services, pages: int) -> None:
    if pages > services.config.max_pages:
        raise Invalid(f"At most {services.config.max_pages} pages can be changed at once "
                      "(DMS_MAX_PAGES).", "pages")


def _stem(title: str) -> str:
    return title[:-4] if title.lower().endswith(".pdf") else title
