"""The PDF reader's own process: every call into pdfium runs here, in a child process of dms
(dms.files.pdf.process starts and feeds it), never in the server's own process.

Why a process: a PDF is hostile input, and pdfium trusts it. A 1.5 MB page whose content stream
inflates to 1.5 GiB took the server to 2.7 GB; a page may take minutes to parse or render; a
crafted file may crash the library. Here the address space is capped (RLIMIT_AS, from
DMS_PDF_MEMORY_MB), the parent kills a call that runs past its time limit, and whatever happens
ends this process only. pdfium is not thread-safe; each child runs one call at a time, so
several children read several PDFs in parallel, where the server once held one global lock.

The protocol (dms.files.pdf._protocol) is small and carries no code: frames of a length and a JSON
object, the answer optionally followed by raw bytes. A child reads requests from stdin until it is
closed (the parent is gone or done with it). The page operations (assembling PDFs, images to PDF,
barcodes, blank pages) are in dms.files.pdf._pagechild.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, BinaryIO

from dms.files.imaging import fit_scale
from dms.files.pdf._pagechild import Answer, PageOperations, barcode_texts
from dms.files.pdf._protocol import (
    CORRUPT,
    ENCRYPTED,
    MEMORY,
    NO_PAGES,
    PAGE_UNREADABLE,
    TOO_MANY_PAGES,
    TOO_SLOW,
    Refused,
    read_request,
    write_frame,
)

# -- the operations (in the child) -----------------------------------------------------------------

class Reader(PageOperations):
    """The child's state: the PDF it has open (reading a document page by page opens it once)."""

    def __init__(self) -> None:
        import pypdfium2

        self.pdfium = pypdfium2
        self._open: tuple[tuple[object, ...], Any] | None = None

    def document(self, path: str) -> Any:
        stat = os.stat(path)
        key = (path, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if self._open is not None and self._open[0] == key:
            return self._open[1]
        self.close()
        try:
            document = self.pdfium.PdfDocument(path)
        except self.pdfium.PdfiumError as error:
            raise Refused(ENCRYPTED if "password" in str(error).lower() else CORRUPT) from None
        self._open = (key, document)
        return document

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None

    def page(self, document: Any, index: int) -> Any:
        try:
            return document[index]
        except self.pdfium.PdfiumError as error:
            raise Refused(PAGE_UNREADABLE, number=index + 1, reason=str(error)) from None

    # Each op returns (result, blob).

    def inspect(self, path: str, max_pages: int, seconds: float) -> Answer:
        """The number of pages that really exist (pdfium trusts /Count: a page is counted when
        its entry in the page tree exists, never past max_pages), then every page parsed once
        within `seconds`: a page whose content cannot be parsed within the memory and time
        limits refuses the file now, at upload, instead of failing its reading later."""
        document = self.document(path)
        count = 0
        for index in range(min(len(document), max_pages + 1)):
            try:
                document.get_page_size(index)
            except self.pdfium.PdfiumError:
                break  # the page tree ends here, whatever /Count says
            count += 1
        if count < 1:
            raise Refused(NO_PAGES)
        if count > max_pages:
            raise Refused(TOO_MANY_PAGES, max_pages=max_pages)
        deadline = time.monotonic() + seconds
        for index in range(count):
            self.page(document, index).close()
            if time.monotonic() > deadline:
                raise Refused(TOO_SLOW, seconds=seconds)
        return {"pages": count}, b""

    def text(self, path: str, index: int) -> Answer:
        page = self.page(self.document(path), index)
        try:
            textpage = page.get_textpage()
            text = textpage.get_text_range()
            textpage.close()
        except self.pdfium.PdfiumError as error:
            raise Refused(PAGE_UNREADABLE, number=index + 1, reason=str(error)) from None
        finally:
            page.close()
        return {"text": text.replace("\r\n", "\n").replace("\r", "\n").strip()}, b""

    def render(self, path: str, index: int, max_pixels: int, max_side: int, grayscale: bool,
               image_format: str, dpi: float | None = None, width: int | None = None,
               quality: int = 80, barcodes: list[str] | None = None,
               out: str | None = None) -> Answer:
        """The page at `dpi` (or `width` pixels wide), scaled down to fit `max_pixels` and
        `max_side`; as an uncompressed BMP written to the file `out` (for Tesseract: it reads an
        uncompressed BMP or TIFF file faster than a PNM, and any file faster than a pipe, by
        0.3-0.4 s a 300-dpi page, bench/ocr.py) or a JPEG returned (a preview). With `barcodes`
        (zxing-cpp's format names), also the texts of the barcodes of those formats read from
        the same image (`"barcodes"`): processing renders a scan for Tesseract anyway, and
        reading its barcodes there costs a few ms."""
        import io

        page = self.page(self.document(path), index)
        try:
            page_width, page_height = (max(side, 1.0) for side in page.get_size())  # points
            scale = width / page_width if width else dpi / 72  # type: ignore[operator]  # one is given
            scale *= fit_scale(page_width * scale, page_height * scale, max_pixels, max_side)
            image = page.render(scale=scale, grayscale=grayscale).to_pil()
        finally:
            page.close()
        result: dict[str, Any] = {"dpi": max(1, round(scale * 72)), "size": list(image.size)}
        encoded = io.BytesIO()
        if image_format == "jpeg":
            image.convert("RGB").save(encoded, "JPEG", quality=quality)
        else:
            image = image.convert("L" if grayscale else "RGB")
            image.save(out, "BMP")
        if barcodes:
            try:
                result["barcodes"] = barcode_texts(image, barcodes)
            except (RuntimeError, ValueError):  # not known, then: a split renders the page itself
                pass
        return result, encoded.getvalue()

    def overlay(self, original: str, text_pages: dict[str, str], out: str) -> Answer:
        """Write `out`: `original` with, on each page index of `text_pages`, the invisible text
        of that one-page PDF laid over it (see dms.processing.searchable): the page, its images and
        size stay as they are; the text is scaled to the page and turned against its /Rotate."""
        document = self.pdfium.PdfDocument(original)
        try:
            for index, text_pdf in sorted((int(i), p) for i, p in text_pages.items()):
                source = self.pdfium.PdfDocument(text_pdf)
                try:
                    page = document[index]
                    form = source.page_as_xobject(0, document).as_pageobject()
                    form.transform(self._overlay_matrix(page, *source[0].get_size()))
                    page.insert_obj(form)
                    page.gen_content()
                    page.close()
                finally:
                    source.close()
            document.save(out)
        finally:
            document.close()
        return {}, b""

    def _overlay_matrix(self, page: Any, width: float, height: float) -> Any:
        """From the text page's space (the page as displayed, `width` x `height` points) to the
        page's own space: scale to the displayed size, undo the clockwise display rotation,
        move to the crop box's origin."""
        x0, y0, x1, y1 = page.get_cropbox()
        own_width, own_height = x1 - x0, y1 - y0
        rotation = page.get_rotation() % 360
        shown_width, shown_height = ((own_width, own_height) if rotation in (0, 180)
                                     else (own_height, own_width))
        matrix = self.pdfium.PdfMatrix().scale(shown_width / width, shown_height / height)
        undo = {90: (0, 1, -1, 0, own_width, 0), 180: (-1, 0, 0, -1, own_width, own_height),
                270: (0, -1, 1, 0, 0, own_height)}.get(rotation)
        if undo is not None:
            matrix = matrix.multiply(self.pdfium.PdfMatrix(*undo))
        return matrix.translate(x0, y0)

    def join(self, pages: list[str], out: str) -> Answer:
        """Write `out`: the first page of each of these PDFs, in order."""
        document = self.pdfium.PdfDocument.new()
        try:
            for path in pages:
                source = self.pdfium.PdfDocument(path)
                try:
                    document.import_pages(source, [0])
                finally:
                    source.close()
            document.save(out)
        finally:
            document.close()
        return {}, b""


OPERATIONS = ("inspect", "text", "render", "overlay", "join") + PageOperations.OPERATIONS


def serve(memory_bytes: int | None, stdin: BinaryIO, stdout: BinaryIO) -> int:
    if memory_bytes:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    reader = Reader()
    while True:
        request = read_request(stdin)
        if request is None:
            reader.close()
            return 0
        op = request.get("op")
        try:
            if op not in OPERATIONS:
                raise ValueError(f"unknown operation {op!r}")
            result, blob = getattr(reader, op)(**request.get("args", {}))
            write_frame(stdout, {"ok": True, "result": result}, blob)
        except Refused as refused:
            write_frame(stdout, {"ok": False, "code": refused.code, "details": refused.details})
        except MemoryError:
            reader.close()
            write_frame(stdout, {"ok": False, "code": MEMORY, "details": {}})
        except Exception as error:  # a bug or a pdfium failure: said to the parent, who logs it
            write_frame(stdout, {"ok": False, "code": "error",
                                 "details": {"reason": f"{type(error).__name__}: {error}"}})


def main(argv: list[str]) -> int:
    """`dms _pdf-reader [MEMORY_MB]`: see dms.files.pdf.process (hidden: only dms starts it)."""
    memory_mb = int(argv[0]) if argv else 0
    # The parent's stdout is ours only for frames: anything printed by accident would break them.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return serve(memory_mb * 1024 * 1024 or None, sys.stdin.buffer, channel)
