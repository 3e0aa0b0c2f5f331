"""Reading the text of a stored file, page by page (api.md §7).

- plain text: taken as is (one page);
- PDF: each page's text layer read with pdfium; a page without usable text (`page_needs_ocr`)
  is rendered at 300 dpi and read by Tesseract;
- PNG, JPEG and each TIFF frame: read by Tesseract.

Concurrency rules: this runs only in the queue's worker threads, never in a request thread.
pdfium (rendering) only under dms.pdf.PDFIUM_LOCK. Tesseract runs as a child process with
OMP_THREAD_LIMIT=1 (one thread per job: several jobs in parallel use the cores better than one
job with several threads) and a per-page timeout.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from dms.pdf import PDFIUM_LOCK

log = logging.getLogger("dms.ocr")

MIN_TEXT_CHARS = 20
# Plain-text files are indexed up to this many bytes: a multi-GB log file must not be read into
# memory whole (the file itself is kept and downloadable as it is).
MAX_TEXT_BYTES = 4 * 1024 * 1024
RENDER_DPI = 300
PAGE_TIMEOUT_SECONDS = 180
TESSERACT_ENV = {"OMP_THREAD_LIMIT": "1"}


@dataclass
class PageText:
    number: int
    text: str
    method: str  # "text", "layer", "ocr" or "skipped" (see the page table, migration 0004)


class PageFailed(Exception):
    """A page could not be read; the message is the reason kept for the document."""


def page_needs_ocr(text: str) -> bool:
    """A PDF page whose text layer has fewer than MIN_TEXT_CHARS visible characters is a scan
    (or a scan with a stray page number): its text comes from Tesseract instead."""
    return len("".join(text.split())) < MIN_TEXT_CHARS


def read_pages(path: Path, mime_type: str, lang: str, use_ocr: bool) -> Iterator[PageText]:
    """The text of every page of a stored file, in order."""
    if mime_type == "text/plain":
        with open(path, "rb") as file:
            yield PageText(1, decode_text(file.read(MAX_TEXT_BYTES)), "text")
    elif mime_type == "application/pdf":
        yield from _pdf_pages(path, lang, use_ocr)
    else:
        yield from _image_pages(path, lang, use_ocr)


def decode_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if error.start >= len(raw) - 3:  # a character cut in two by MAX_TEXT_BYTES
            return raw[:error.start].decode("utf-8-sig")
        return raw.decode("cp1252", errors="replace")


def _pdf_pages(path: Path, lang: str, use_ocr: bool) -> Iterator[PageText]:
    """Text layers are read with pdfium (the C library pdfplumber renders with): pdfplumber's
    own pure-Python text extraction read dense pages ~45x slower (5 vs 225 pages/s, bench/ocr.py),
    far below the 50 pages/s target. The lock is taken per page, so previews can interleave."""
    import pypdfium2

    with PDFIUM_LOCK:
        document = pypdfium2.PdfDocument(str(path))
        count = len(document)
    try:
        for number in range(1, count + 1):
            with PDFIUM_LOCK:
                layer = _text_layer(document, number - 1)
            if not page_needs_ocr(layer):
                yield PageText(number, layer, "layer")
            elif not use_ocr:
                yield PageText(number, layer, "skipped")
            else:
                with PDFIUM_LOCK:
                    page = document[number - 1]
                    image = page.render(scale=RENDER_DPI / 72, grayscale=True).to_pil()
                    page.close()
                yield PageText(number, tesseract(image, lang), "ocr")  # outside the lock
    finally:
        with PDFIUM_LOCK:
            document.close()


def _text_layer(document, index: int) -> str:
    import pypdfium2

    try:
        page = document[index]
        textpage = page.get_textpage()
        text = textpage.get_text_range()
        textpage.close()
        page.close()
    except pypdfium2.PdfiumError as error:
        raise PageFailed(f"Page {index + 1} cannot be read: {error}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _image_pages(path: Path, lang: str, use_ocr: bool) -> Iterator[PageText]:
    from PIL import Image, ImageSequence

    if use_ocr and _single_frame(path):
        # Tesseract reads the stored file itself: writing the decoded image out again for it (what
        # passing a Pillow image does) cost ~15 % per page (bench/ocr.py). _single_frame has
        # decoded it once, so a broken file still fails here with a clear reason.
        yield PageText(1, tesseract(str(path), lang), "ocr")
        return
    try:
        with Image.open(path) as image:
            for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
                if not use_ocr:
                    yield PageText(number, "", "skipped")
                    continue
                frame.load()
                yield PageText(number, tesseract(frame.copy(), lang), "ocr")
    except (OSError, ValueError) as error:
        raise PageFailed(f"The image cannot be read: {error}") from None


def _single_frame(path: Path) -> bool:
    """True for a one-page image, after decoding it completely (truncated files fail here)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            if getattr(image, "n_frames", 1) != 1:
                return False
            image.load()
            return True
    except (OSError, ValueError) as error:
        raise PageFailed(f"The image cannot be read: {error}") from None


def tesseract(image, lang: str) -> str:
    """Run Tesseract on one page, a Pillow image or an image file's path, at RENDER_DPI in `lang`."""
    import pytesseract

    if not isinstance(image, str) and image.mode not in ("L", "RGB", "1"):
        image = image.convert("RGB")
    try:
        text = pytesseract.image_to_string(image, lang=lang, config=f"--dpi {RENDER_DPI}",
                                           timeout=PAGE_TIMEOUT_SECONDS)
    except RuntimeError as error:  # pytesseract's timeout
        raise PageFailed(f"Tesseract took longer than {PAGE_TIMEOUT_SECONDS} s on a page.") from error
    except pytesseract.TesseractError as error:
        raise PageFailed(f"Tesseract failed: {error.message.strip()[:300]}") from None
    return text.strip()


def prepare_environment() -> None:
    """Set once at start-up, before any worker runs: Tesseract children inherit it.

    Also drops the LD_LIBRARY_PATH a PyInstaller bundle sets for itself, which would make the
    system's tesseract load the bundle's libraries."""
    os.environ.update(TESSERACT_ENV)
    if getattr(sys, "frozen", False):
        os.environ.pop("LD_LIBRARY_PATH", None)
