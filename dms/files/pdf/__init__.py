"""PDF access through pdfium (pypdfium2), which runs only in reader processes (dms.files.pdf.child,
started and bounded by dms.files.pdf.process): what dms asks of a PDF, each with its time limit, and
what a failure means in a sentence for the user.

pdfium trusts a PDF's `/Count`: pages are counted by their entries in the page tree, never past
the configured maximum. At upload every page is also parsed once (`page_count`), within the
reader's memory limit (DMS_PDF_MEMORY_MB) and a time limit that grows with the file's size: a
page whose content inflates to gigabytes is refused then, with a sentence, instead of taking a
worker or a preview down later.

The package dms.files.pdf: this module is its face, with `process` (PdfReaders: the reader
processes started, fed, bounded and shared fairly), `pages` (the page operations' primitives) and
`child` (the reader's own process, which only the hidden command `dms _pdf-reader` runs). Private:
`_protocol` (what dms and its readers say to each other) and `_pagechild` (the page operations
in the reader).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from dms.errors import Unavailable
from dms.files.pdf._protocol import (
    CORRUPT,
    ENCRYPTED,
    MEMORY,
    NO_PAGES,
    PAGE_UNREADABLE,
    TOO_LARGE,
    TOO_MANY_PAGES,
    TOO_SLOW,
)
from dms.files.pdf.process import Child, PdfReaders, ReaderFailed

log = logging.getLogger("dms.pdf")

# Parsing every page of an upload may take INSPECT_BASE_SECONDS plus INSPECT_SECONDS_PER_MIB for
# each MiB of the file, at most the readers' `times.inspect` (DMS_PDF_INSPECT_SECONDS): ordinary
# PDFs parse at ~100 MiB of content per second and compress it at most ~10:1, so this is 20 times
# what they need, while a small file that inflates to gigabytes of content (a "content bomb") is
# stopped within seconds. Reading or rendering one page may take `times.page`
# (DMS_PDF_PAGE_SECONDS), rendering a preview `times.preview` (DMS_PDF_PREVIEW_SECONDS).
INSPECT_BASE_SECONDS = 5
INSPECT_SECONDS_PER_MIB = 2
PREVIEW_WAIT_SECONDS = 5  # a preview waits this long for a free reader (else 503: all busy)
WRITE_SECONDS_PER_PAGE = 1  # ... plus `times.page`, writing a searchable PDF
MARGIN_SECONDS = 10  # the parent's limit above a child's own deadline


class Interrupted(Unavailable):
    """The reader was stopped (the server is stopping): nothing is wrong with the file; a request
    hears 503."""

    def __init__(self) -> None:
        super().__init__("The server is stopping; try again in a moment.")


class UnreadablePdf(ValueError):
    """The PDF cannot be read: the message says why, in a sentence for the user. `final`: reading
    it again would fail the same way (it is too large or damaged, not the machine busy)."""

    def __init__(self, message: str, final: bool = True):
        super().__init__(message)
        self.final = final


def sentence(failure: ReaderFailed, what: str = "The PDF", verb: str = "read") -> UnreadablePdf:
    """What a reader's failure means for `what` ("The PDF", "Page 3", "This page")."""
    details = failure.details
    if failure.code == "interrupted":
        raise Interrupted() from None
    content = "its pages' content" if what == "The PDF" else "its content"
    if failure.code == ENCRYPTED:
        return UnreadablePdf(f"{what} is encrypted with a password; upload it without the "
                             "password protection.")
    if failure.code == CORRUPT:
        return UnreadablePdf(f"{what} is corrupt and cannot be read.")
    if failure.code == NO_PAGES:
        return UnreadablePdf(f"{what} has no pages.")
    if failure.code == TOO_MANY_PAGES:
        return UnreadablePdf(f"{what} has more than {details['max_pages']} pages, the most dms "
                             "accepts (DMS_MAX_PAGES).")
    if failure.code in (TOO_SLOW, "timeout"):
        return UnreadablePdf(f"{what} takes too long to {verb}: {content} is too large or too "
                             "complex for dms.", final=failure.code == TOO_SLOW)
    if failure.code == MEMORY:
        return UnreadablePdf(f"{what} needs more memory to {verb} than dms allows for one file "
                             f"(DMS_PDF_MEMORY_MB): {content} is too large, or the file is "
                             "damaged.")
    if failure.code == TOO_LARGE:
        return UnreadablePdf(f"{what} is too large to {verb}: even at {details['dpi']:g} dpi it "
                             f"would have more than {details['max_megapixels']:g} million pixels.")
    if failure.code == PAGE_UNREADABLE:
        return UnreadablePdf(f"Page {details.get('number')} cannot be read: "
                             f"{details.get('reason', 'pdfium failed')}")
    log.warning("the PDF reader failed: %s %s", failure.code, details)
    return UnreadablePdf(f"{what} cannot be {'rendered' if verb == 'render' else verb}.")


def page_count(readers: PdfReaders, path: Path, max_pages: int) -> int:
    """The number of pages that really exist, at most `max_pages`, each parsed once within the
    limits (else UnreadablePdf)."""
    seconds = min(readers.times.inspect, INSPECT_BASE_SECONDS
                  + INSPECT_SECONDS_PER_MIB * path.stat().st_size / 2**20)
    try:
        result, _ = readers.call("inspect", seconds + MARGIN_SECONDS, path=str(path),
                                 max_pages=max_pages, seconds=seconds)
    except ReaderFailed as failure:
        raise sentence(failure) from None
    return cast(int, result["pages"])


def text_layer(child: Child, path: Path, index: int) -> str:
    """The text of a page's text layer (empty for a scan)."""
    try:
        return cast(str, child.call("text", {"path": str(path), "index": index},
                                    child.times.page)[0]["text"])
    except ReaderFailed as failure:
        raise sentence(failure, f"Page {index + 1}") from None


def render_for_ocr(child: Child, path: Path, index: int, dpi: int, max_pixels: int,
                   max_side: int, out: Path,
                   barcode_formats: Sequence[str] = ()) -> tuple[int, list[str] | None]:
    """Write a page as a grayscale BMP file `out` at `dpi` (less where the budget requires);
    returns the resolution it got and the texts of the barcodes of `barcode_formats` on it (None
    when none were asked)."""
    try:
        result, _ = child.call("render", {
            "path": str(path), "index": index, "dpi": dpi, "max_pixels": max_pixels,
            "max_side": max_side, "grayscale": True, "image_format": "bmp", "out": str(out),
            "barcodes": list(barcode_formats)}, child.times.page)
    except ReaderFailed as failure:
        raise sentence(failure, f"Page {index + 1}") from None
    return result["dpi"], result.get("barcodes")


def preview_jpeg(readers: PdfReaders, path: Path, index: int, width: int, max_side: int,
                 quality: int) -> bytes:
    """A page as a JPEG `width` pixels wide, no side past `max_side`."""
    try:
        return readers.call("render", readers.times.preview, wait=PREVIEW_WAIT_SECONDS,
                            path=str(path), index=index,
                            width=width, max_pixels=width * max_side, max_side=max_side,
                            grayscale=False, image_format="jpeg", quality=quality)[1]
    except ReaderFailed as failure:
        raise sentence(failure, "This page", "render") from None


def overlay_text_pages(readers: PdfReaders, original: Path, text_pages: dict[int, Path],
                       out: Path) -> None:
    """Write `out`: the PDF `original` with, on each page index of `text_pages`, the invisible
    text of that one-page PDF laid over it (dms.processing.searchable)."""
    seconds = readers.times.page + WRITE_SECONDS_PER_PAGE * len(text_pages)
    try:
        readers.call("overlay", seconds, original=str(original), out=str(out),
                     text_pages={str(index): str(page) for index, page in text_pages.items()})
    except ReaderFailed as failure:
        raise sentence(failure) from None


def join_pages(readers: PdfReaders, pages: list[Path], out: Path) -> None:
    """Write `out`: the first page of each of these PDFs, in order."""
    seconds = readers.times.page + WRITE_SECONDS_PER_PAGE * len(pages)
    try:
        readers.call("join", seconds, pages=[str(page) for page in pages], out=str(out))
    except ReaderFailed as failure:
        raise sentence(failure) from None
