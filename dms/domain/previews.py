"""JPEG previews of pages, rendered on first request and kept in the file store beside their
version (removed with it).

Rendering happens for a request, so it is bounded: a preview is one of PREVIEW_WIDTHS pixels wide
(a width asked for is rounded up to the next of them, so a page has at most that many files) but
never longer than MAX_PREVIEW_SIDE (a 1 × 1000 pt PDF page would otherwise become
1,000 × 1,000,000 pixels); a PDF page is rendered in a reader process (dms.files.pdf) within
DMS_PDF_PREVIEW_SECONDS and its memory limit, and a page that cannot be rendered within them is
remembered beside its preview (`<page>.failed`), so asking again costs nothing; JPEGs are decoded
at reduced size, and a large image frame is decoded only under dms.files.imaging.decoding().
A narrower preview is scaled down from the page's 1,000-pixel one when that is already there (no
second rendering of the PDF). A document's thumbnail (api.md §22) is its first page at
THUMBNAIL_WIDTH.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from dms.db import is_disk_full
from dms.db.models import DocumentVersion, Page
from dms.errors import Invalid, StorageFull, Unavailable
from dms.files import pdf
from dms.files.imaging import decoding
from dms.files.storage import FileMissing, FileStore, original
from dms.text import is_whole_number

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from dms.domain.services import Services
    from dms.files.storage import FileStore

PREVIEW_WIDTH = 1000  # pixels: readable on a screen, small to send; GET /pages/{id}/'s
# The widths a preview is made in: a thumbnail, a list's and a phone's, the page's 1,000, a large
# screen's and a zoomed one's.
PREVIEW_WIDTHS = (240, 480, 720, PREVIEW_WIDTH, 1400, 2000)
THUMBNAIL_WIDTH = PREVIEW_WIDTHS[0]
MAX_PREVIEW_SIDE = 4000  # pixels, the longest side of any preview
PREVIEW_QUALITY = 80


def preview_width(asked: object) -> int:
    """The width to make for `?width=` (a whole number of pixels, up to the widest): the next
    of PREVIEW_WIDTHS at or above it."""
    text = str(asked).strip()
    if not is_whole_number(text, 5) or not 1 <= int(text) <= PREVIEW_WIDTHS[-1]:
        raise Invalid(f"width must be a whole number of pixels from 1 to {PREVIEW_WIDTHS[-1]}.")
    return next(width for width in PREVIEW_WIDTHS if width >= int(text))


def preview(services: Services, page: Page, version: DocumentVersion,
            width: int = PREVIEW_WIDTH) -> Path:
    """The cached preview of a page `width` pixels wide (one of PREVIEW_WIDTHS), rendering it
    first if needed."""
    store = services.store
    target = store.preview_path(version.id, page.number, width)
    if target.is_file():
        return target
    failed = target.with_suffix(".failed")
    if failed.is_file():
        raise Unavailable(failed.read_text(encoding="utf-8", errors="replace"))
    usual = store.preview_path(version.id, page.number, PREVIEW_WIDTH)
    try:
        if width < PREVIEW_WIDTH and usual.is_file():
            content = _jpeg(_opened_jpeg(usual), width)
        elif version.mime_type == "text/plain":  # drawn from the page's text: no file read
            content = _jpeg(_text_image(page.text), width)
        else:
            with store.fetched(original(version)) as path:
                content = _rendered(services, path, version, page, width)
    except FileMissing:
        raise Unavailable("The file of this version is missing from the store; ask the "
                          "administrator to run `dms verify`.") from None
    except pdf.UnreadablePdf as error:
        reason = str(error)
        if error.final:
            _write(store, failed, reason.encode("utf-8"))
        raise Unavailable(reason) from None
    _write(store, target, content)
    return target


def _rendered(services: Services, path: Path, version: DocumentVersion, page: Page,
              width: int) -> bytes:
    if version.mime_type == "application/pdf":
        return pdf.preview_jpeg(services.pdf, path, page.number - 1, width, MAX_PREVIEW_SIDE,
                                PREVIEW_QUALITY)
    return _jpeg(_render_image(path, version.mime_type, page.number, page.text, width), width)


def _write(store: FileStore, target: Path, content: bytes) -> None:
    try:
        store.write_derived(target, content)
    except OSError as error:
        if is_disk_full(error):
            raise StorageFull() from None
        raise


def _opened_jpeg(path: Path) -> PilImage:
    """A preview dms wrote itself (at most PREVIEW_WIDTH × MAX_PREVIEW_SIDE), decoded."""
    from PIL import Image

    with Image.open(path) as image:
        image.load()
        return image.copy()


def _jpeg(image: PilImage, width: int) -> bytes:
    image.thumbnail((width, MAX_PREVIEW_SIDE))
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=PREVIEW_QUALITY)
    return buffer.getvalue()


def _text_image(text: str) -> PilImage:
    """A text file's page: its first lines drawn."""
    from PIL import Image, ImageDraw

    lines = text.splitlines()[:80] or [""]
    image = Image.new("L", (PREVIEW_WIDTH, 40 + 16 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((20, 20 + 16 * index), line[:160], fill=0)
    return image


def _render_image(file_path: Path, mime_type: str, number: int, text: str,
                  width: int) -> PilImage:
    from PIL import Image

    if mime_type == "text/plain":
        return _text_image(text)
    with Image.open(file_path) as image:
        image.seek(number - 1)
        image.draft("RGB", (width, MAX_PREVIEW_SIDE))  # JPEG: decode at reduced size
        with decoding(image.width * image.height):
            image.load()
            image.thumbnail((width, MAX_PREVIEW_SIDE))
            return image.copy()
