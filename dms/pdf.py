"""PDF access through pdfium (pypdfium2).

Concurrency rule: pdfium is not thread-safe, not even across different files, so every call into
it, from any module, runs under PDFIUM_LOCK.

pdfium trusts a PDF's `/Count`: a 600-byte file that claims a million pages would be taken at its
word. Pages are therefore counted by asking pdfium for each page's entry in the page tree (cheap:
the page itself is not parsed) until one is missing, and never past the configured maximum."""

from __future__ import annotations

import threading
from pathlib import Path

PDFIUM_LOCK = threading.Lock()


class UnreadablePdf(ValueError):
    """The PDF cannot be read: the message says why, in a sentence for the user."""


def page_count(path: Path, max_pages: int) -> int:
    """The number of pages that really exist, at most `max_pages` (else UnreadablePdf)."""
    import pypdfium2  # imported on first use: keeps the idle server small

    with PDFIUM_LOCK:
        try:
            document = pypdfium2.PdfDocument(str(path))
        except pypdfium2.PdfiumError as error:
            if "password" in str(error).lower():
                raise UnreadablePdf("The PDF is encrypted with a password; upload it without "
                                    "the password protection.") from None
            raise UnreadablePdf("The PDF is corrupt and cannot be read.") from None
        try:
            claimed = len(document)
            count = 0
            for index in range(min(claimed, max_pages + 1)):
                try:
                    document.get_page_size(index)
                except pypdfium2.PdfiumError:
                    break  # the page tree ends here, whatever /Count says
                count += 1
        finally:
            document.close()
    if count < 1:
        raise UnreadablePdf("The PDF has no pages.")
    if count > max_pages:
        raise UnreadablePdf(f"The PDF has more than {max_pages} pages, the most dms accepts "
                            "(DMS_MAX_PAGES).")
    return count


def page_size(document, index: int) -> tuple[float, float]:
    """Width and height of a page in points (1/72 inch); call under PDFIUM_LOCK."""
    return document.get_page_size(index)


def overlay_text_pages(original: Path, text_pages: dict[int, Path], out: Path) -> None:
    """Write `out`: the PDF `original` with, on each page index of `text_pages`, the invisible
    text of that one-page PDF laid over it (Tesseract's text-only output for the page as it was
    rendered). The original page, its images and size stay as they are; the text is scaled to the
    page and turned against the page's /Rotate so it sits where the words are displayed."""
    import pypdfium2

    with PDFIUM_LOCK:
        document = pypdfium2.PdfDocument(str(original))
        try:
            for index, path in sorted(text_pages.items()):
                source = pypdfium2.PdfDocument(str(path))
                try:
                    page = document[index]
                    form = source.page_as_xobject(0, document).as_pageobject()
                    form.transform(_overlay_matrix(page, *source[0].get_size()))
                    page.insert_obj(form)
                    page.gen_content()
                    page.close()
                finally:
                    source.close()
            document.save(str(out))
        finally:
            document.close()


def _overlay_matrix(page, width: float, height: float):
    """From the text page's space (the page as displayed, `width` x `height` points) to the
    page's own space: scale to the displayed size, undo the clockwise display rotation, move to
    the crop box's origin."""
    import pypdfium2

    x0, y0, x1, y1 = page.get_cropbox()
    own_width, own_height = x1 - x0, y1 - y0
    rotation = page.get_rotation() % 360
    shown_width, shown_height = ((own_width, own_height) if rotation in (0, 180)
                                 else (own_height, own_width))
    matrix = pypdfium2.PdfMatrix().scale(shown_width / width, shown_height / height)
    undo = {90: (0, 1, -1, 0, own_width, 0), 180: (-1, 0, 0, -1, own_width, own_height),
            270: (0, -1, 1, 0, 0, own_height)}.get(rotation)
    if undo is not None:
        matrix = matrix.multiply(pypdfium2.PdfMatrix(*undo))
    return matrix.translate(x0, y0)


def join_pages(pages: list[Path], out: Path) -> None:
    """Write `out`: the first page of each of these PDFs, in order."""
    import pypdfium2

    with PDFIUM_LOCK:
        document = pypdfium2.PdfDocument.new()
        try:
            for path in pages:
                source = pypdfium2.PdfDocument(str(path))
                try:
                    document.import_pages(source, [0])
                finally:
                    source.close()
            document.save(str(out))
        finally:
            document.close()
