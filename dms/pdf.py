"""PDF access through pdfium (pypdfium2, which pdfplumber also renders with).

Concurrency rule: pdfium is not thread-safe, not even across different files, so every call into
it, from any module, runs under PDFIUM_LOCK."""

from __future__ import annotations

import threading
from pathlib import Path

PDFIUM_LOCK = threading.Lock()


class UnreadablePdf(ValueError):
    """The PDF cannot be read: the message says why, in a sentence for the user."""


def page_count(path: Path) -> int:
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
            count = len(document)
        finally:
            document.close()
    if count < 1:
        raise UnreadablePdf("The PDF has no pages.")
    return count
