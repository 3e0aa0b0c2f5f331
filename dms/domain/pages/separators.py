"""Separator sheets: where a batch scanned in one go is cut into documents — at a page that carries
a barcode whose text is `DMS-SPLIT` or `PATCH T` (a QR code or a 1-D code, read by zxing-cpp:
dms.files.pdf.pages.barcodes), or at a blank page. Used by `POST /documents/{id}/split/` and by the
intake when DMS_SPLIT_ON_BARCODE is on (the consume folder and mail, barcodes only: a duplex scan's
blank back sides must not cut a letter in two).

Barcodes: processing reads them on each page it renders for Tesseract (page.barcodes, migration
0017), so a scanned batch that was processed is cut without rendering a page in the request; the
pages whose barcodes are not known (a text layer, an image's frame, not processed yet) are
rendered here. Blank pages: every page without text from the file is rendered (at 50 dpi). The
rendering happens in one PDF reader process lent for the pages of one call, each page within the
reader's time limit. DMS_SPLIT_MAX_PAGES bounds every split, whatever its form (`too_many_pages`):
a larger document is refused before any page is read, so a split's work is bounded. A split
that must look at many pages does so in the background, a share of pages at a time
(dms.domain.splits, `find_among`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dms.errors import Invalid
from dms.files.pdf import UnreadablePdf, pages, text_layer

if TYPE_CHECKING:
    from dms.config import Config
    from dms.domain.services import Services
    from dms.files.pdf import Child

BARCODE, BLANK = "barcode", "blank"
KINDS = (BARCODE, BLANK)
# The texts of a separator sheet's barcode, compared without case and surrounding space:
# dms's own, and the patch code T of document scanners (printed as a barcode reading "PATCH T").
SEPARATOR_TEXTS = ("DMS-SPLIT", "PATCH T")
READ_METHODS_WITH_TEXT = ("layer", "text")  # a page whose text came from the file is not blank


def is_separator_text(text: str) -> bool:
    return " ".join(text.split()).upper() in SEPARATOR_TEXTS


def too_many_pages(config: Config, page_count: int) -> str | None:
    """Why a document of `page_count` pages is not split (any form: after given pages, at
    separator sheets, the intake's batches), or None when it may be: the one limit,
    DMS_SPLIT_MAX_PAGES."""
    limit = config.split_max_pages
    if page_count <= limit:
        return None
    return (f"A document is split only if it has at most {limit} pages (DMS_SPLIT_MAX_PAGES); "
            f"this one has {page_count}.")


def needs_a_look(kind: str, text: str, method: str | None, barcodes: str | None) -> bool:
    """Whether finding out if a page is a separator sheet takes a PDF reader (a render, or its
    text layer read), rather than what processing stored."""
    if kind == BARCODE:
        return _stored(barcodes) is None
    return not (method in READ_METHODS_WITH_TEXT and (text or "").strip())


def find(services: Services, pdf: Path, page_count: int, kind: str,
         known_text: Sequence[tuple[str, str | None]] = (),
         known_barcodes: Sequence[str | None] = ()) -> list[int]:
    """The numbers (from 1) of the separator pages of the PDF `pdf`. `known_text`: each page's
    (text, method) where already read; a page with text from the file is never blank.
    `known_barcodes`: each page's page.barcodes (None: not known, the page is rendered)."""
    problem = too_many_pages(services.config, page_count)
    if problem:
        raise Invalid(problem)
    candidates = [(index + 1, *(known_text[index] if index < len(known_text) else ("", None)),
                   known_barcodes[index] if index < len(known_barcodes) else None)
                  for index in range(page_count)]
    return find_among(services, pdf, kind, candidates)


def find_among(services: Services, pdf: Path, kind: str,
               candidates: Sequence[tuple[int, str, str | None, str | None]]) -> list[int]:
    """The separator pages among `candidates`, pages of the PDF `pdf`, each (number from 1,
    text, method, page.barcodes) as processing stored them; the pages that need a look are looked
    at in one PDF reader lent for this call."""
    found, unknown = [], []
    for number, text, method, barcodes in candidates:
        if not needs_a_look(kind, text, method, barcodes):
            if kind == BARCODE and any(is_separator_text(t) for t in _stored(barcodes) or ()):
                found.append(number)
        else:
            unknown.append((number, text, method))
    if unknown:  # a reader only where a page must be looked at: it may wait for one
        with services.pdf.session() as child:
            for number, text, method in unknown:
                if kind == BARCODE:
                    separator = any(is_separator_text(t)
                                    for t in pages.barcodes(child, pdf, number - 1))
                else:
                    separator = not _has_text(child, pdf, number - 1, text, method) and \
                        pages.is_blank(child, pdf, number - 1)
                if separator:
                    found.append(number)
    return sorted(found)


def _stored(barcodes: str | None) -> list[str] | None:
    """page.barcodes as a list of texts; None where unknown (or not what dms writes)."""
    if barcodes is None:
        return None
    try:
        texts = json.loads(barcodes)
    except ValueError:
        return None
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        return None
    return texts


def _has_text(child: Child, pdf: Path, index: int, text: str, method: str | None) -> bool:
    """Text from the file itself (a text layer), known or read now; Tesseract's reading of a
    blank page (noise read as a few marks) does not count."""
    if method in READ_METHODS_WITH_TEXT:
        return bool(text.strip())
    if method is None:
        try:
            return bool(text_layer(child, pdf, index).strip())
        except UnreadablePdf:
            return False  # the render says more; a page that cannot be read is not blank there
    return False


def parts(page_count: int, separators: Sequence[int]) -> list[list[int]]:
    """The runs of page numbers between separator pages, separators left out, empty runs
    dropped."""
    cut, current = set(separators), list[int]()
    result = []
    for number in range(1, page_count + 1):
        if number in cut:
            if current:
                result.append(current)
            current = []
        else:
            current.append(number)
    if current:
        result.append(current)
    return result
