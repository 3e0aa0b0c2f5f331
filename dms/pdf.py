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
