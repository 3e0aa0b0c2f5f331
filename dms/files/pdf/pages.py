"""Page operations (Papermerge 2.1's delete, reorder, rotate, move pages between documents, merge,
split a scanned batch at separator sheets), dms's side: the primitives the domain builds on. Each
runs in a PDF reader process (dms.files.pdf._pagechild, under its memory limit) within the time
limit given here; nothing here knows of documents or rows.

- `assemble`: a new PDF from page references (deleting, reordering, rotating, moving and merging
  pages are all "write the pages wanted, in order, turned as wanted").
- `images_to_pdf`: a PDF of an image's frames, so that an image's pages can join a PDF.
- `barcodes`, `is_blank` (`dark_fraction`): what a page of a scanned batch is, to split it at
  separator sheets (a page with a barcode, or a blank page: the caller also checks that a blank
  page has no text layer, dms.files.pdf.text_layer).

Refusals are ValueErrors whose message is a sentence for the user: UnreadablePdf (dms.files.pdf;
`final` is False when a time limit ran out, as the machine may only have been busy) and, for an
image, UnacceptableImage (dms.files.imaging, the sentences an upload gets). A wrong argument (a
turn that is not a multiple of 90 degrees, a negative index, no pages) is a plain ValueError: a
bug of the caller. Interrupted (the server is stopping) and Unavailable (every reader busy) are
dms.errors.Unavailable. `barcodes`, `dark_fraction` and `is_blank` take the pool or a child lent
by `PdfReaders.session()` (reading a batch page by page keeps it open in that child).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from dms.files.filetypes import IMAGES, sniff
from dms.files.imaging import ImageLimits, UnacceptableImage, check_frames
from dms.files.pdf import MARGIN_SECONDS, WRITE_SECONDS_PER_PAGE, UnreadablePdf, sentence
from dms.files.pdf._protocol import CORRUPT, ENCRYPTED, IMAGE_REFUSED, partial_path
from dms.files.pdf.process import Child, PdfReaders, ReaderFailed

log = logging.getLogger("dms.pdf")

# ... plus the readers' `times.page` (DMS_PDF_PAGE_SECONDS), converting an image: a 50-megapixel
# RGB frame takes 3 s when white, 9 s when it is noise (the worst case for compression; the
# reader's memory limit of 1024 MB holds).
IMAGE_SECONDS_PER_FRAME = 10

# Barcodes: at BARCODE_DPI the narrowest bar of a printed 1-D code (0.25 mm) is two pixels (the
# tests read a 2.5 cm QR code and 0.4 mm bars of Code 128, Code 39, EAN-13 and ITF); a page too
# large for BARCODE_MAX_PIXELS is rendered at less, down to BARCODE_MIN_DPI, and refused past
# that (an A4 page at 200 dpi has 3.9 million pixels).
BARCODE_DPI = 200
BARCODE_MIN_DPI = 100
BARCODE_MAX_PIXELS = 16_000_000
# zxing-cpp's names: QR codes and the common 1-D codes on separator sheets (patch codes printed
# as Code 128 or Code 39, EAN/UPC, ITF).
BARCODE_FORMATS = ("QRCode", "Code128", "Code39", "EAN13", "EAN8", "UPCA", "UPCE", "ITF")

# Blank pages: rendered in gray at BLANK_DPI (less, down to BLANK_MIN_DPI, to fit
# BLANK_MAX_PIXELS), BLANK_MARGIN of each side left out (a scanner's dark edges and its shadow at
# the paper's border), a pixel darker than BLANK_DARK_LEVEL (0 black, 255 white) is dark, and a
# page is blank when less than BLANK_MAX_DARK_FRACTION of the rest is dark. Uncertain pages count
# as not blank: keeping a blank page costs less than losing one with something on it.
# Tuned on the samples of test_pdfops_render.py, in dark pixels per million: a white A4 scan at
# 300 dpi with noise, two folds (gray 175-205), 300 dark dots, 45 dust specks up to 0.5 mm and a
# black scanner edge of 5 mm measures 0 to 10 at 50 dpi (46 to 50 at 100 dpi, where 0.3 mm of dust
# is a dark pixel already); one word of 12 pt Helvetica ("OK") measures 104 to 122, in a PDF or
# in such a scan, whatever the resolution; a scan of a line of text thousands. At 50 dpi an A4
# page has 240,000 pixels to count, the threshold is 8 of them (a 1 mm blot is 4); the dark level
# leaves out the folds and the gray of noise, which 160 or 192 begin to count.
BLANK_DPI = 50
BLANK_MIN_DPI = 25
BLANK_MAX_PIXELS = 2_000_000
BLANK_MARGIN = 0.04  # of each side: 8 mm of an A4 page's width, 12 mm of its height
BLANK_DARK_LEVEL = 128
BLANK_MAX_DARK_FRACTION = 0.00004  # 40 per million


def assemble(readers: PdfReaders, pages: Sequence[tuple[Path, int, int]], out: Path,
             max_pages: int) -> int:
    """Write `out` (under the store's tmp): a new PDF of `pages`, each `(source PDF, page index
    from 0, turn in degrees clockwise, a multiple of 90)`, in this order; returns the number of
    pages. Pages are copied, not rendered (their text layer stays); a source or a page may come
    several times; each page's /Rotate becomes (its own + turn) % 360. At most `max_pages` pages
    (else UnreadablePdf, before any work); the time limit is the readers' `times.page` plus
    WRITE_SECONDS_PER_PAGE per page. `out` appears complete and fsynced, or not at all."""
    if not pages:
        raise ValueError("a PDF needs at least one page")
    if len(pages) > max_pages:
        raise UnreadablePdf(f"The new PDF would have more than {max_pages} pages, the most dms "
                            "accepts (DMS_MAX_PAGES).")
    references = []
    for path, index, turn in pages:
        if index < 0 or turn % 90:
            raise ValueError(f"page {index} turned by {turn}: an index from 0 and a turn by a "
                             "multiple of 90 degrees")
        references.append([str(path), index, turn % 360])
    seconds = readers.times.page + WRITE_SECONDS_PER_PAGE * len(pages)
    result = _writing(readers, out, "assemble", seconds, ("The PDF", "write"), pages=references,
                      max_pages=max_pages)
    return cast(int, result["pages"])


def images_to_pdf(readers: PdfReaders, image: Path, out: Path, max_pages: int,
                  max_megapixels: float) -> int:
    """Write `out` (under the store's tmp): a PDF with one page per frame of the PNG, JPEG or
    TIFF `image`, at each frame's resolution (72 dpi when it has none); returns the number of
    pages. A JPEG is embedded as it is; other frames losslessly (dms.files.pdf._pagechild). At most
    `max_megapixels` per frame and `max_pages` frames, else UnacceptableImage with the sentence an
    upload gets (counted from the headers first, here, and again in the reader before decoding);
    the time limit is the readers' `times.page` plus IMAGE_SECONDS_PER_FRAME per frame."""
    with open(image, "rb") as file:
        kind = sniff(file.read(16))
    if kind not in IMAGES:
        raise UnacceptableImage("The file is not a PNG, JPEG or TIFF image.")
    label = kind.extension[1:].upper()
    max_pixels = int(max_megapixels * 1_000_000)
    frames = check_frames(image, label, ImageLimits(max_pixels, max_pages))
    seconds = readers.times.page + IMAGE_SECONDS_PER_FRAME * frames
    result = _writing(readers, out, "images_to_pdf", seconds, ("The image", "convert"),
                      path=str(image),
                      label=label, max_pages=max_pages, max_pixels=max_pixels)
    return cast(int, result["pages"])


def barcodes(via: PdfReaders | Child, path: Path, index: int) -> list[str]:
    """The texts of the barcodes (BARCODE_FORMATS) on page `index` (from 0) of the PDF, as
    zxing-cpp reads them from a grayscale render at BARCODE_DPI; none: []. Time limit:
    `times.page`. A page too large to render within BARCODE_MAX_PIXELS at BARCODE_MIN_DPI is
    refused (UnreadablePdf), not rendered."""
    result = _page_call(via, "barcodes", path, index, dpi=BARCODE_DPI, min_dpi=BARCODE_MIN_DPI,
                        max_pixels=BARCODE_MAX_PIXELS, formats=list(BARCODE_FORMATS))
    return cast("list[str]", result["texts"])


def dark_fraction(via: PdfReaders | Child, path: Path, index: int) -> float:
    """The share of dark pixels on page `index` (from 0), as `is_blank` measures it."""
    result = _page_call(via, "blankness", path, index, dpi=BLANK_DPI, min_dpi=BLANK_MIN_DPI,
                        max_pixels=BLANK_MAX_PIXELS, margin=BLANK_MARGIN,
                        dark_level=BLANK_DARK_LEVEL)
    return cast(float, result["dark_pixels"] / max(1, result["pixels"]))


def is_blank(via: PdfReaders | Child, path: Path, index: int) -> bool:
    """Whether page `index` (from 0) looks blank: less than BLANK_MAX_DARK_FRACTION of its
    pixels dark (see the BLANK_ constants). It says nothing of a text layer: a page with text
    is not blank, whatever it looks like, and the caller checks that. Time limit: `times.page`;
    a page too large for BLANK_MAX_PIXELS at BLANK_MIN_DPI is refused (UnreadablePdf)."""
    return dark_fraction(via, path, index) < BLANK_MAX_DARK_FRACTION


def _page_call(via: PdfReaders | Child, op: str, path: Path, index: int,
               **args: Any) -> dict[str, Any]:
    if index < 0:
        raise ValueError(f"page index {index}")
    args.update(path=str(path), index=index)
    try:
        if isinstance(via, PdfReaders):
            return via.call(op, via.times.page, **args)[0]
        return via.call(op, args, via.times.page)[0]
    except ReaderFailed as failure:
        whole = failure.code in (CORRUPT, ENCRYPTED)  # the file is at fault, not the page
        raise sentence(failure, "The PDF" if whole else f"Page {index + 1}", "render") from None


def _writing(readers: PdfReaders, out: Path, op: str, seconds: float, what: tuple[str, str],
             **args: Any) -> dict[str, Any]:
    """Run `op`, which writes `out`, within `seconds` (the child's own deadline; the call's is
    MARGIN_SECONDS more); what a killed child left behind is removed."""
    partial = Path(partial_path(str(out)))
    try:
        return readers.call(op, seconds + MARGIN_SECONDS, out=str(out), seconds=seconds,
                            **args)[0]
    except ReaderFailed as failure:
        if failure.code == IMAGE_REFUSED:
            raise UnacceptableImage(failure.details["sentence"]) from None
        log.info("%s into %s failed: %s %s", op, out.name, failure.code, failure.details)
        raise sentence(failure, *what) from None
    finally:
        partial.unlink(missing_ok=True)
