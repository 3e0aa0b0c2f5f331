"""Splitting a document, `POST /documents/{id}/split/` (docs/api.md, "Page operations"): after
given page numbers, or at separator sheets (dms.domain.pages.separators, the sheets left out),
into new documents in its folder titled `<title without extension>-<n>.pdf`, with its tags,
metadata (but document links), language and mail attributes; the document goes to the trash.

One limit for every form: a document of more than DMS_SPLIT_MAX_PAGES pages is not split
(separators.too_many_pages; the intake's batches obey it too, dms.domain.pages.batches), checked
before anything but the document's row is read, with the body.

Where the work happens. A small split is done in the request, in one write transaction like
every page operation (dms.domain.pages.commit): at most BATCH_PARTS parts, and at most
LOOKS_IN_REQUEST pages to look at with a PDF reader for separator sheets. A larger one becomes a
run in the background (dms.domain.splitruns, `start_run`): the request then does only cheap
checks — the document, the body, the limit, the separator sheets that processing already found
(page.barcodes, the pages' text) — and answers 202; the run finds the separator sheets where
that needs a reader, then makes the parts BATCH_PARTS per write transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from dms.db import database
from dms.db.models import DocumentVersion, Node, User
from dms.domain import tree
from dms.domain.pages import separators
from dms.domain.pages.build import Builder, Placed, SourcePage, check_changeable, refusal
from dms.domain.pages.commit import Emptied, NewDocument, Operation, commit
from dms.domain.pages.operations import all_pages, document_with_file
from dms.domain.turnpool import UNFINISHED
from dms.errors import Conflict, Invalid
from dms.files.pdf import UnreadablePdf

if TYPE_CHECKING:
    from dms.domain.services import Services

T = TypeVar("T")

# Parts one write transaction of a run makes; a split of no more parts is made in the request.
# A part costs its PDF written by a reader, stored durably (fsync), and a few rows: ~3 ms for a
# born-digital page, ~0.1 s for a scan with its searchable PDF. So a request makes at most a
# couple of seconds' worth, and another writer waits at most one batch's transaction (its rows
# only: the files are stored before it begins).
BATCH_PARTS = 20
# Pages a request may look at with a PDF reader for separator sheets (~0.1 s each, a render at
# 50 or 200 dpi); past it, the run looks at them.
LOOKS_IN_REQUEST = 20
AFTER_PAGES = "after_pages"
KINDS = (AFTER_PAGES, *separators.KINDS)
# A run's states (dms.domain.splitruns).

NO_BARCODE = ("No page of this document is a separator sheet (a barcode reading DMS-SPLIT or "
              "PATCH T)")
NO_BLANK = "No page of this document is blank."
ONLY_SEPARATORS = "Every page of this document is a separator sheet."


@dataclass
class Plan:
    """A split asked for: the document, its latest version, the form, and its parts as (first,
    last) page numbers — None while the separator sheets are still to be found (by the run)."""
    document: Node
    version: DocumentVersion
    kind: str
    parts: list[tuple[int, int]] | None


def split(services: Services, user: User, document_id: str, body: dict[str, Any],
          start_run: Callable[[Plan], T]) -> list[Node] | T:
    """The new documents of a small split, made now; or, for a larger one, what `start_run(plan)`
    returns (the run that will make them)."""
    document, version = document_with_file(user, document_id, None)
    if (AFTER_PAGES in body) == ("separator" in body):
        raise Invalid("Give either after_pages (page numbers to cut after) or separator "
                      "(\"barcode\" or \"blank\").", AFTER_PAGES, code="required")
    too_many = separators.too_many_pages(services.config, version.page_count)
    if too_many:
        raise Invalid(too_many)
    if AFTER_PAGES in body:
        plan = Plan(document, version, AFTER_PAGES,
                    _after_pages(body[AFTER_PAGES], version.page_count))
    else:
        kind = body["separator"]
        if kind not in separators.KINDS:
            raise Invalid("separator is \"barcode\" or \"blank\".", "separator")
        plan = Plan(document, version, kind, None)
    check_changeable(version.mime_type)
    refuse_while_under_way(document.id)
    with Builder(services) as builder:
        pages: list[SourcePage] = []
        if plan.parts is None and _looks(version, plan.kind) <= LOOKS_IN_REQUEST:
            pages = all_pages(version, document)
            try:
                cut = separators.find_among(
                    services, builder.pdf_of(version), plan.kind,
                    [(p.number, p.text, p.method, p.barcodes) for p in pages])
            except UnreadablePdf as error:
                raise refusal(error) from None
            plan.parts = separator_parts(plan.kind, version.page_count, cut)
        if plan.parts is None or len(plan.parts) > BATCH_PARTS:
            return start_run(plan)
        by_number = {page.number: page for page in pages or all_pages(version, document)}
        operation = Operation(emptied=[Emptied(document, version.id)], documents=[
            # A document's parent is a folder: only the special folders have none.
            part(builder, document, by_number, document.title,
                 document.parent_id, number, bounds)  # type: ignore[arg-type]
            for number, bounds in enumerate(plan.parts, 1)])
        return commit(services, user, operation,
                      then=lambda made: refuse_while_under_way(document.id))


def part(builder: Builder, source: Node, pages: dict[int, SourcePage], title: str,
         folder_id: str, number: int, bounds: tuple[int, int]) -> NewDocument:
    """Part `number` of a split of `source` (titled `title` when the split was asked for): its
    pages `bounds` (first, last), taken from `pages` (by number), written by `builder`."""
    first, last = bounds
    return NewDocument(folder_id, f"{_stem(title)}-{number}.pdf",
                       builder.build([Placed(pages[n]) for n in range(first, last + 1)]),
                       f"split from {title}, page(s) {first}-{last}", source, keeps_details=True)


def separator_parts(kind: str, page_count: int, cut: list[int]) -> list[tuple[int, int]]:
    """The parts between the separator sheets `cut` (the sheets left out), or 400 when there is
    no sheet or nothing else."""
    if not cut:
        raise Invalid(NO_BARCODE if kind == separators.BARCODE else NO_BLANK, "separator")
    runs = separators.parts(page_count, cut)
    if not runs:
        raise Invalid(ONLY_SEPARATORS, "separator")
    return [(run[0], run[-1]) for run in runs]


def under_way(document_id: str) -> str | None:
    """The run splitting this document now, if any."""
    row = database.execute_sql(
        "SELECT id FROM split_run WHERE document_id = ? AND state IN (?, ?)",
        (document_id, *UNFINISHED)).fetchone()
    return row[0] if row else None


def refuse_while_under_way(document_id: str) -> None:
    """409 while a run splits the document (a second split would make its parts twice); in the
    commit's transaction too, where it holds."""
    run_id = under_way(document_id)
    if run_id is not None:
        raise Conflict(f"This document is being split already (GET /split-runs/{run_id}/ "
                       "follows it); nothing was changed.")


def _after_pages(value: object, page_count: int) -> list[tuple[int, int]]:
    """after_pages: strictly increasing page numbers from 1 to page_count - 1, cut after each;
    its length is checked first (page_count is within DMS_SPLIT_MAX_PAGES)."""
    if not isinstance(value, list) or not value:
        raise Invalid("after_pages is a list of page numbers to cut after.", AFTER_PAGES,
                      code="required")
    if len(value) >= page_count:
        raise Invalid(f"after_pages names at most {page_count - 1} page numbers: the document "
                      f"has {page_count} pages.", AFTER_PAGES)
    for index, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, int) or \
                not 1 <= number < page_count:
            raise Invalid(f"A page number to cut after is between 1 and {page_count - 1}.",
                          f"{AFTER_PAGES}/{index}")
    if value != sorted(set(value)):
        raise Invalid("after_pages are increasing, each once.", AFTER_PAGES)
    bounds = [0, *value, page_count]
    return [(bounds[i] + 1, bounds[i + 1]) for i in range(len(bounds) - 1)]


def _looks(version: DocumentVersion, kind: str) -> int:
    """How many pages a search for separator sheets would look at with a reader (as
    separators.needs_a_look decides, from what processing stored), counted in the database."""
    if kind == separators.BARCODE:
        known = "barcodes IS NOT NULL"
        params: tuple[Any, ...] = (version.id,)
    else:
        known = "method IN (?, ?) AND trim(text) <> ''"
        params = (*separators.READ_METHODS_WITH_TEXT, version.id)
    return cast(int, version.page_count - database.execute_sql(
        f"SELECT count(*) FROM page WHERE {known} AND version_id = ?", params).fetchone()[0])


def _stem(title: str) -> str:
    """A title without a .pdf (or other short) extension, for the parts' titles."""
    stem, dot, extension = title.rpartition(".")
    stem = stem if dot and stem and 1 <= len(extension) <= 4 else title
    return stem[:tree.MAX_TITLE_LENGTH - 12]
