"""Page operations (Papermerge 2.1's routes): delete, reorder and rotate pages, move pages to
another document or into a folder as new documents, merge two documents (a split, after given pages
or at separator sheets, is dms.domain.splits's, with these helpers).

Each takes pages of documents' LATEST versions and makes a new version of every document it
changes (dms.domain.pages.build writes the PDFs, dms.domain.pages.commit writes everything in one
write transaction); older versions stay as they were. A document left without pages, a merge's
source and a split's source go to the trash. Bodies are checked here, before any work: what a
refused call names changes nothing. A call takes at most DMS_MAX_PAGES pages.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from dms.db import database
from dms.db.models import DocumentVersion, Node, Page, User
from dms.domain import tree
from dms.domain.access.rule import EDITOR, reach, role_of
from dms.domain.documents import latest_version
from dms.domain.pages.build import Builder, Placed, SourcePage
from dms.domain.pages.commit import Emptied, NewDocument, NewVersion, Operation, commit
from dms.errors import Invalid, NotFound

if TYPE_CHECKING:
    from dms.domain.services import Services

MAX_TITLE_FORMAT = 32  # characters of move-to-folder's title_format (Papermerge's limit)
IDS_PER_QUERY = 500
OLDER_VERSION = "Pages of an older version cannot be changed."
ONE_DOCUMENT = "All pages must belong to one document; change one document at a time."
KEEP_ONE = "A document keeps at least one page."


# -- the routes' operations ----------------------------------------------------------------------

def delete_pages(services: Services, user: User, page_ids: object) -> None:
    """DELETE /pages/{id}/ and DELETE /pages/: a new version without those pages."""
    found = _one_document(_find(user, _ids(services, page_ids, "pages"), "pages"))
    gone = {page.page_id for page in found}
    document, version = found[0].document, found[0].version
    kept = [page for page in all_pages(version, document) if page.page_id not in gone]
    if not kept:
        raise Invalid(KEEP_ONE, "pages")
    _change(services, user, document, version, [Placed(page) for page in kept],
            f"{len(gone)} page(s) deleted")


def reorder_pages(services: Services, user: User, items: object) -> None:
    """POST /pages/reorder/: the pages listed take their new numbers; the others stay."""
    entries = _items(services, items, ("id", "old_number", "new_number"))
    found = _one_document(_find(user, [entry["id"] for entry in entries], "pages"))
    document, version = found[0].document, found[0].version
    pages = all_pages(version, document)
    by_id = {page.page_id: page for page in found}
    for index, entry in enumerate(entries):
        page = by_id[entry["id"]]
        if entry["old_number"] != page.number:
            raise Invalid(f"That page is number {page.number}, not {entry['old_number']}.",
                          f"pages/{index}/old_number")
        if not 1 <= entry["new_number"] <= len(pages):
            raise Invalid(f"A new number is between 1 and {len(pages)}, the document's pages.",
                          f"pages/{index}/new_number")
    if sorted(e["old_number"] for e in entries) != sorted(e["new_number"] for e in entries):
        raise Invalid("The new numbers must be the old numbers in another order: each page "
                      "listed takes the place of another page listed.", "pages")
    order = list(pages)
    for entry in entries:
        order[entry["new_number"] - 1] = by_id[entry["id"]]
    if order != pages:
        _change(services, user, document, version, [Placed(page) for page in order],
                "pages reordered")


def rotate_pages(services: Services, user: User, items: object) -> None:
    """POST /pages/rotate/: the pages listed turned clockwise by their `angle` (a multiple of
    90; negative: counter-clockwise)."""
    entries = _items(services, items, ("id", "angle"))
    for index, entry in enumerate(entries):
        if entry["angle"] % 90:
            raise Invalid("An angle is a multiple of 90 degrees (negative: counter-clockwise).",
                          f"pages/{index}/angle")
    found = _one_document(_find(user, [entry["id"] for entry in entries], "pages"))
    document, version = found[0].document, found[0].version
    turns = {entry["id"]: entry["angle"] % 360 for entry in entries}
    turned = sum(1 for turn in turns.values() if turn)
    if turned:
        placed = [Placed(page, turns.get(page.page_id, 0))
                  for page in all_pages(version, document)]
        _change(services, user, document, version, placed, f"{turned} page(s) rotated")


def move_to_document(services: Services, user: User, page_ids: object, dst: object,
                     position: object, merge: object) -> None:
    """POST /pages/move-to-document/: the pages leave their documents (those left without a page
    go to the trash) and join `dst` at `position` (from 0; -1: at the end), or, with `merge`,
    replace its pages."""
    ids = _ids(services, page_ids, "pages")
    if not isinstance(merge, bool):
        raise Invalid("merge is true or false.", "merge")
    if isinstance(position, bool) or not isinstance(position, int):
        raise Invalid("position is a whole number: where the pages go, from 0 (-1: at the end).",
                      "position")
    target, target_version = document_with_file(user, dst, "dst")
    moved = _find(user, ids, "pages")
    if any(page.document.id == target.id for page in moved):
        raise Invalid("Those pages are already in that document; reorder them instead.", "dst")
    target_pages = all_pages(target_version, target)
    if not merge and not -1 <= position <= len(target_pages):
        raise Invalid(f"position is -1 (at the end) or between 0 and {len(target_pages)}.",
                      "position")
    at = len(target_pages) if position == -1 else position
    new_order = moved if merge else target_pages[:at] + moved + target_pages[at:]
    operation = Operation()
    sources = _by_document(moved)
    titles = ", ".join(sorted({page.document.title for page in moved}))[:200]
    with Builder(services) as builder:
        description = (f"pages replaced by {len(moved)} page(s) from {titles}" if merge
                       else f"{len(moved)} page(s) moved from {titles}")
        operation.versions.append(NewVersion(target, target_version.id, builder.build(
            [Placed(page) for page in new_order]), description))
        for document, version, leaving in sources:
            _leave(builder, operation, document, version, leaving,
                   f"{len(leaving)} page(s) moved to {target.title}")
        commit(services, user, operation)


def move_to_folder(services: Services, user: User, page_ids: object, dst: object,
                   single_page: object, title_format: object) -> list[Node]:
    """POST /pages/move-to-folder/: the pages leave their document and become one new document
    in the folder `dst` (one per page with `single_page`)."""
    ids = _ids(services, page_ids, "pages")
    if not isinstance(single_page, bool):
        raise Invalid("single_page is true or false.", "single_page")
    if title_format is not None and (not isinstance(title_format, str)
                                     or len(title_format.strip()) > MAX_TITLE_FORMAT):
        raise Invalid(f"title_format is text of at most {MAX_TITLE_FORMAT} characters.",
                      "title_format")
    stem = title_format.strip() if isinstance(title_format, str) else ""
    if stem:
        tree.check_title(stem, "title_format")
    found = _one_document(_find(user, ids, "pages"))
    folder = _folder(user, dst)
    document, version = found[0].document, found[0].version
    groups = [[page] for page in found] if single_page else [found]
    operation = Operation()
    with Builder(services) as builder:
        for number, group in enumerate(groups, 1):
            new = NewDocument(folder.id, "", builder.build([Placed(page) for page in group]),
                              f"{len(group)} page(s) extracted from {document.title}", document)
            new.title = (f"{stem}-{number}.pdf" if stem and len(groups) > 1 else
                         f"{stem}.pdf" if stem else f"document-{new.node_id[:8]}.pdf")
            operation.documents.append(new)
        _leave(builder, operation, document, version, found,
               f"{len(found)} page(s) extracted")
        return commit(services, user, operation)


def merge_documents(services: Services, user: User, src: object, dst: object) -> None:
    """POST /documents/merge/: `dst` gets `src`'s pages after its own; `src` goes to the trash."""
    source, source_version = document_with_file(user, src, "src")
    target, target_version = document_with_file(user, dst, "dst")
    if source.id == target.id:
        raise Invalid("A document cannot be merged into itself.", "dst")
    source_pages = all_pages(source_version, source)
    operation = Operation(emptied=[Emptied(source, source_version.id)])
    with Builder(services) as builder:
        placed = [Placed(page) for page in all_pages(target_version, target) + source_pages]
        operation.versions.append(NewVersion(target, target_version.id, builder.build(placed),
                                             f"{len(source_pages)} page(s) merged from "
                                             f"{source.title}"))
        commit(services, user, operation)


# -- finding pages and documents -----------------------------------------------------------------

def _ids(services: Services, value: object, field: str) -> list[str]:
    """A body's list of page ids, without repetitions."""
    if not isinstance(value, list) or not value:
        raise Invalid("A list of page ids is required.", field, code="required")
    limit = services.config.max_pages
    if len(value) > limit:
        raise Invalid(f"At most {limit} pages can be changed at once (DMS_MAX_PAGES).", field)
    for index, page_id in enumerate(value):
        if not isinstance(page_id, str) or not page_id:
            raise Invalid("A page is given by its id, a string.", f"{field}/{index}")
    return list(dict.fromkeys(value))


def _items(services: Services, value: object, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """A body's `pages` list of objects with these keys (an id, then whole numbers)."""
    if not isinstance(value, list) or not value:
        raise Invalid("A list of pages is required.", "pages", code="required")
    if len(value) > services.config.max_pages:
        raise Invalid(f"At most {services.config.max_pages} pages can be changed at once "
                      "(DMS_MAX_PAGES).", "pages")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise Invalid(f"Each page is an object with {', '.join(keys)}.", f"pages/{index}")
        if not isinstance(item.get("id"), str) or not item["id"]:
            raise Invalid("A page is given by its id, a string.", f"pages/{index}/id",
                          code="required")
        for key in keys[1:]:
            if isinstance(item.get(key), bool) or not isinstance(item.get(key), int):
                raise Invalid(f"{key} is a whole number.", f"pages/{index}/{key}",
                              code="required" if key not in item else "invalid")
    repeated = [page_id for page_id, n in Counter(item["id"] for item in value).items() if n > 1]
    if repeated:
        raise Invalid("Each page may be listed once.", "pages")
    return value


def _find(user: User, page_ids: list[str], field: str) -> list[SourcePage]:
    """Pages of documents the caller may change, in the order asked; 404 if any is unknown,
    foreign or in the trash, 403 if shared with them to read, 400 if any is of an older
    version."""
    found: dict[str, SourcePage] = {}
    for start in range(0, len(page_ids), IDS_PER_QUERY):
        part = page_ids[start:start + IDS_PER_QUERY]
        query = (Page.select(Page, DocumentVersion, Node).join(DocumentVersion).join(Node)
                 .where(Page.id.in_(part), Node.trash_id.is_null()))
        for page in query:
            version = page.version
            found[page.id] = SourcePage(page.id, page.number, page.text, page.method, version,
                                        version.document, page.barcodes)
    roles = {document_id: role_of(user, document_id)
             for document_id in {page.document.id for page in found.values()}}
    if len(found) != len(page_ids) or None in roles.values():
        raise NotFound()
    for document_id in roles:
        reach(user, document_id, EDITOR)  # 403 for a viewer
    latest = _latest_ids({page.document.id for page in found.values()})
    if any(latest.get(page.document.id) != page.version.id for page in found.values()):
        raise Invalid(OLDER_VERSION, field)
    return [found[page_id] for page_id in page_ids]


def _latest_ids(document_ids: set[str]) -> dict[str, str]:
    ids = list(document_ids)
    latest: dict[str, str] = {}
    for start in range(0, len(ids), IDS_PER_QUERY):
        part = ids[start:start + IDS_PER_QUERY]
        latest.update(database.execute_sql(
            "SELECT v.document_id, v.id FROM document_version AS v "
            f"WHERE v.document_id IN ({','.join('?' * len(part))}) AND v.number = "
            "(SELECT max(number) FROM document_version WHERE document_id = v.document_id)",
            part).fetchall())
    return latest


def _one_document(found: list[SourcePage]) -> list[SourcePage]:
    if len({page.document.id for page in found}) > 1:
        raise Invalid(ONE_DOCUMENT, "pages")
    return found


def all_pages(version: DocumentVersion, document: Node, first: int = 1,
              last: int | None = None) -> list[SourcePage]:
    """Every page of the version in order, or those numbered `first` to `last` (a page whose row
    processing has not written yet has no id and no text)."""
    last = version.page_count if last is None else last
    rows = {number: (page_id, text, method, barcodes)
            for page_id, number, text, method, barcodes in database.execute_sql(
                "SELECT id, number, text, method, barcodes FROM page WHERE version_id = ? "
                "AND number BETWEEN ? AND ?", (version.id, first, last)).fetchall()}
    pages = []
    for number in range(first, last + 1):
        page_id, text, method, barcodes = rows.get(number, ("", "", None, None))
        pages.append(SourcePage(page_id, number, text, method, version, document, barcodes))
    return pages


def document_with_file(user: User, document_id: object,
                        field: str | None) -> tuple[Node, DocumentVersion]:
    """The caller's document named in a body's `field` (a folder: 400), or in the URL (`field`
    None: a folder is as unknown as any other id there), with its latest version."""
    if not isinstance(document_id, str) or not document_id:
        raise Invalid("A document id is required.", field, code="required")
    document = reach(user, document_id, EDITOR, Node.DOCUMENT if field is None else None).node
    if not document.is_document:
        raise Invalid("That is a folder; a document is needed here.", field)
    version = latest_version(document.id)
    if version is None:
        raise Invalid(f"The document {document.title} has no file yet; upload one first.", field)
    return document, version


def _folder(user: User, folder_id: object) -> Node:
    if not isinstance(folder_id, str) or not folder_id:
        raise Invalid("A folder id is required.", "dst", code="required")
    folder = reach(user, folder_id, EDITOR).node
    if not folder.is_folder:
        raise Invalid("That is a document; the pages can only go into a folder.", "dst")
    return folder


def _by_document(pages: list[SourcePage]) -> list[tuple[Node, DocumentVersion, list[Any]]]:
    """(document, version, its pages among `pages`) for each document, in order of appearance."""
    groups: dict[str, tuple[Node, DocumentVersion, list[Any]]] = {}
    for page in pages:
        groups.setdefault(page.document.id, (page.document, page.version, []))[2].append(page)
    return list(groups.values())


# -- building blocks -----------------------------------------------------------------------------

def _change(services: Services, user: User, document: Node, version: DocumentVersion,
            placed: list[Placed], description: str) -> None:
    with Builder(services) as builder:
        commit(services, user, Operation(versions=[NewVersion(
            document, version.id, builder.build(placed), description)]))


def _leave(builder: Builder, operation: Operation, document: Node, version: DocumentVersion,
           leaving: list[SourcePage], description: str) -> None:
    """The document the pages `leaving` leave: a new version without them, or, left without
    pages, into the trash."""
    gone = {page.number for page in leaving}
    kept = [page for page in all_pages(version, document) if page.number not in gone]
    if kept:
        operation.versions.append(NewVersion(document, version.id,
                                             builder.build([Placed(page) for page in kept]),
                                             description))
    else:
        operation.emptied.append(Emptied(document, version.id))
