"""Reading the text of a stored file, page by page (api.md, "Pages, text and OCR").

- plain text: taken as is (one page, its first MAX_TEXT_BYTES);
- PDF: each page's text layer read with pdfium; a page without usable text (`page_needs_ocr`)
  is rendered and read by Tesseract;
- PNG, JPEG and each TIFF frame: read by Tesseract.

Bounded work: a page is rendered at RENDER_DPI but never past the OCR pixel budget (a 200 × 200 inch
PDF page is scaled down, and Tesseract is told the resolution it really got); an image frame larger
than the budget is scaled down the same way; each Tesseract run has a timeout; a CancelToken stops
the reading between pages and kills a running Tesseract at once (document deleted, replaced, or
the server stopping).

Concurrency rules: this runs only in the queue's worker threads, never in a request thread.
pdfium only in a reader process (dms.files.pdf); large frames only under
dms.files.imaging.decoding(). Tesseract is a child process we start ourselves (not pytesseract,
which cannot be cancelled from another thread and leaves its temporary files in /tmp when killed):
it reads the stored image itself, or a page rendered as an uncompressed BMP into the slice's
scratch folder in the data dir's tmp/ (Tesseract read a 300-dpi page 0.3-0.4 s slower as a PGM
through stdin — Leptonica's PNM reader and Tesseract's stdin are both slow; a file it reads in
~10 ms); it runs with OMP_THREAD_LIMIT=1 (several jobs in parallel use the cores better than one job
with several threads).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dms.files import pdf
from dms.files.fairness import run_behind
from dms.files.imaging import decoding, shrink
from dms.files.pdf.pages import BARCODE_FORMATS
from dms.files.pdf.process import PdfReaders
from dms.files.storage import move_file

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from dms.files.pdf.process import Child

log = logging.getLogger("dms.ocr")

MIN_TEXT_CHARS = 20
# Plain-text files are indexed up to this many bytes: a multi-GB log file must not be read into
# memory whole (the file itself is kept and downloadable as it is).
MAX_TEXT_BYTES = 4 * 1024 * 1024
RENDER_DPI = 300
MAX_RENDER_SIDE = 30_000  # pixels; Tesseract (Leptonica) refuses larger images
PAGE_TIMEOUT_SECONDS = 180
TESSERACT_ENV = {"OMP_THREAD_LIMIT": "1"}
PAGE_IMAGE = "page.bmp"  # a shrunk image frame, in the slice's scratch folder


@dataclass
class PageText:
    number: int
    text: str
    method: str  # "text", "layer", "ocr" or "skipped" (see the page table, migration 0004)
    # The texts of the page's barcodes, read from the render Tesseract got; None: not looked at
    # (separator sheets, dms.domain.pages.separators; migration 0017).
    barcodes: list[str] | None = None


@dataclass(frozen=True)
class PagePdfs:
    """Where Tesseract's run on a page also puts that page as a PDF, for the searchable PDF
    (dms.processing.searchable): `folder/<number>.pdf`. For a PDF's pages the page PDF holds only
    the invisible text (laid over the original page later); for an image's, the image with its
    text."""
    folder: Path

    def page(self, number: int) -> Path:
        return self.folder / f"{number}.pdf"


class PageFailed(Exception):
    """A page could not be read; the message is the reason kept for the document. `final`:
    another attempt would fail the same way (the page is too large for the limits)."""

    def __init__(self, message: str, final: bool = False):
        super().__init__(message)
        self.final = final


class Cancelled(Exception):
    """Nobody wants this text any more (the document was deleted or replaced)."""


class CancelToken:
    """Stops one document's reading: checked between pages, and kills a running Tesseract."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            if self._process is not None:
                self._process.kill()

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled()

    def attach(self, process: subprocess.Popen[Any] | None) -> None:
        with self._lock:
            self._process = process
            if process is not None and self.cancelled:
                process.kill()


def page_needs_ocr(text: str) -> bool:
    """A PDF page whose text layer has fewer than MIN_TEXT_CHARS visible characters is a scan
    (or a scan with a stray page number): its text comes from Tesseract instead."""
    return len("".join(text.split())) < MIN_TEXT_CHARS


def read_pages(path: Path, mime_type: str, lang: str, use_ocr: bool, numbers: Iterable[int],
               max_pixels: int, token: CancelToken, readers: PdfReaders, scratch: Path,
               pdfs: PagePdfs | None = None) -> Generator[PageText, None, None]:
    """The text of the pages `numbers` (1-based, ascending) of a stored file, in order; with
    `pdfs`, each page Tesseract reads is also written as a PDF there. `scratch`: an empty folder
    of the caller's for the page images and Tesseract's output files."""
    numbers = list(numbers)
    if not numbers:
        return
    if mime_type == "text/plain":
        with open(path, "rb") as file:
            yield PageText(1, decode_text(file.read(MAX_TEXT_BYTES)), "text")
    elif mime_type == "application/pdf":
        yield from _pdf_pages(path, lang, use_ocr, numbers, max_pixels, token, scratch, pdfs,
                              readers)
    else:
        yield from _image_pages(path, lang, use_ocr, numbers, max_pixels, token, scratch, pdfs)


def decode_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if error.start >= len(raw) - 3:  # a character cut in two by MAX_TEXT_BYTES
            return raw[:error.start].decode("utf-8-sig")
        return raw.decode("cp1252", errors="replace")


@dataclass
class _Prepared:
    """A PDF page ready for its reading: its text layer, and for a scan its render."""
    number: int
    layer: str
    image: Path | None = None
    dpi: int = RENDER_DPI
    barcodes: list[str] | None = None


def _pdf_pages(path: Path, lang: str, use_ocr: bool, numbers: list[int], max_pixels: int,
               token: CancelToken, scratch: Path, pdfs: PagePdfs | None,
               readers: PdfReaders) -> Generator[PageText, None, None]:
    """Text layers are read with pdfium (pdfplumber's pure-Python extraction read dense pages ~45x
    slower, bench/ocr.py), in a reader process lent to this document's reading (it keeps the
    file open between pages). The next page is prepared (its layer read, a scan rendered) by a
    helper thread while Tesseract reads this one: the reader process works on the other core
    instead of Tesseract waiting for it (~0.2 s a 300-dpi page). One call at a time goes to the
    reader process: the helper's while a page is being prepared, else this thread's. Born-digital
    pages never start the helper (a hand-over costs more than reading a short page's text)."""

    def prepare(child: Child, number: int) -> _Prepared:
        page = _Prepared(number, pdf.text_layer(child, path, number - 1))
        if page_needs_ocr(page.layer) and use_ocr:
            page.image = scratch / f"page-{number}.bmp"
            page.dpi, page.barcodes = pdf.render_for_ocr(
                child, path, number - 1, RENDER_DPI, max_pixels, MAX_RENDER_SIDE, page.image,
                BARCODE_FORMATS)
        return page

    try:
        with readers.session() as child, contextlib.ExitStack() as stack:
            helper: ThreadPoolExecutor | None = None  # made by the first scanned page
            # The next page, being prepared while Tesseract runs.
            ahead: Future[_Prepared] | None = None
            for index, number in enumerate(numbers):
                token.check()
                # The reader process is called here only when no preparation is in flight.
                page = ahead.result() if ahead is not None else prepare(child, number)
                ahead = None
                if page.image is None:
                    yield PageText(number, page.layer,
                                   "layer" if not page_needs_ocr(page.layer) else "skipped")
                    continue
                if index + 1 < len(numbers):
                    if helper is None:
                        helper = stack.enter_context(ThreadPoolExecutor(1, "dms-render"))
                    ahead = helper.submit(prepare, child, numbers[index + 1])
                text = tesseract(page.image, lang, page.dpi, token, scratch,
                                 pdf_to=pdfs.page(number) if pdfs else None, text_only=True)
                page.image.unlink()
                yield PageText(number, text, "ocr", page.barcodes)
    except pdf.UnreadablePdf as error:
        raise PageFailed(str(error), final=error.final) from None
    except pdf.Interrupted:
        raise Cancelled() from None  # the server is stopping: the page is read at the next start


def _image_pages(path: Path, lang: str, use_ocr: bool, numbers: list[int], max_pixels: int,
                 token: CancelToken, scratch: Path, pdfs: PagePdfs | None) -> Iterator[PageText]:
    from PIL import Image

    if not use_ocr:
        for number in numbers:
            yield PageText(number, "", "skipped")
        return
    try:
        with Image.open(path) as image:
            single = getattr(image, "n_frames", 1) == 1
            for number in numbers:
                token.check()
                image.seek(number - 1)
                pixels = image.width * image.height
                with decoding(pixels):
                    image.load()  # decoding the whole frame here: broken files fail with a reason
                    if single and pixels <= max_pixels:
                        source, dpi = path, RENDER_DPI  # Tesseract reads the stored file itself
                    else:
                        frame, scale = shrink(image, max_pixels)
                        source, dpi = scratch / PAGE_IMAGE, max(1, round(RENDER_DPI * scale))
                        _save_bmp(frame, source)
                        del frame
                text = tesseract(source, lang, dpi, token, scratch,
                                 pdf_to=pdfs.page(number) if pdfs else None)
                if source != path:
                    source.unlink()
                yield PageText(number, text, "ocr")
    except (OSError, ValueError, EOFError) as error:
        raise PageFailed(f"The image cannot be read: {error}") from None


def _save_bmp(image: PilImage, target: Path) -> None:
    """A frame as an uncompressed BMP, what Tesseract reads fastest: grayscale, or colour for
    colour images (kept in colour in the searchable PDF)."""
    if image.mode not in ("L", "RGB"):
        image = image.convert("RGB" if image.mode in ("RGBA", "P", "CMYK", "YCbCr", "LAB", "HSV")
                              else "L")
    image.save(target, "BMP")


def tesseract(source: Path, lang: str, dpi: int, token: CancelToken | None, scratch: Path,
              pdf_to: Path | None = None, text_only: bool = False) -> str:
    """Run Tesseract on one page, an image file. The text comes back on stdout; with `pdf_to`,
    the same run also renders the page as a PDF (only its invisible text with `text_only`),
    written into `scratch` and then moved to `pdf_to`."""
    output = "stdout"
    if pdf_to is not None:
        output = str(scratch / f"page-{pdf_to.stem}")
    command = [tesseract_command(), str(source), output, "-l", lang, "--dpi", str(dpi)]
    if pdf_to is not None:
        command += (["-c", "textonly_pdf=1"] if text_only else []) + ["txt", "pdf"]
    token = token or CancelToken()
    token.check()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=tesseract_environment())
    except OSError as error:
        raise PageFailed(f"Tesseract could not be started: {error}") from None
    run_behind(process.pid)
    token.attach(process)
    try:
        out, err = process.communicate(timeout=PAGE_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise PageFailed(
            f"Tesseract took longer than {PAGE_TIMEOUT_SECONDS} s on a page.") from None
    finally:
        token.attach(None)
    token.check()
    if process.returncode != 0:
        message = err.decode("utf-8", "replace").strip().splitlines()
        raise PageFailed("Tesseract failed: " + (message[-1][:300] if message else
                                                 f"exit status {process.returncode}"))
    if pdf_to is None:
        return out.decode("utf-8", "replace").strip()
    try:
        text = Path(output + ".txt").read_text("utf-8", errors="replace")
        pdf_to.parent.mkdir(parents=True, exist_ok=True)
        move_file(Path(output + ".pdf"), pdf_to, pdf_to.parent)  # the store may be a mount
    except OSError as error:
        raise PageFailed(f"Tesseract's output could not be kept: {error}") from None
    finally:
        Path(output + ".txt").unlink(missing_ok=True)
    return text.strip()


def tesseract_command() -> str:
    return shutil.which("tesseract") or "tesseract"


def tesseract_environment() -> dict[str, str]:
    """The server's environment for Tesseract, one thread per job, without the LD_LIBRARY_PATH
    a PyInstaller bundle sets for itself (it would make the system's tesseract load the bundle's
    libraries)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH" or not _frozen()}
    env.update(TESSERACT_ENV)
    return env


def _frozen() -> bool:
    return getattr(sys, "frozen", False)


def prepare_environment() -> None:
    """Set once at start-up (kept for code that starts Tesseract by other means)."""
    os.environ.update(TESSERACT_ENV)
    if _frozen():
        os.environ.pop("LD_LIBRARY_PATH", None)
