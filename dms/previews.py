"""JPEG previews of pages, rendered on first request and kept in the file store beside their
version (removed with it).

Rendering happens in a request thread, so it is bounded: the preview is PREVIEW_WIDTH pixels wide
but never longer than MAX_PREVIEW_SIDE (a 1 × 1000 pt PDF page would otherwise become
1,000 × 1,000,000 pixels), JPEGs are decoded at reduced size, and a large image frame is decoded
only under dms.imaging.decoding(). pdfium runs under dms.pdf.PDFIUM_LOCK.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from dms.db import is_disk_full
from dms.errors import StorageFull
from dms.imaging import decoding
from dms.models import DocumentVersion, Page
from dms.pdf import PDFIUM_LOCK

if TYPE_CHECKING:
    from dms.services import Services

PREVIEW_WIDTH = 1000  # pixels: readable on a screen, small to send
MAX_PREVIEW_SIDE = 4000  # pixels, the longest side of any preview
PREVIEW_QUALITY = 80


def preview(services: Services, page: Page, version: DocumentVersion) -> Path:
    """The cached preview of a page, rendering it first if needed."""
    store = services.store
    target = store.preview_path(version.id, page.number)
    if target.is_file():
        return target
    image = _render(store.path(version.id), version.mime_type, page.number, page.text)
    image.thumbnail((PREVIEW_WIDTH, MAX_PREVIEW_SIDE))
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=PREVIEW_QUALITY)
    try:
        store.write_derived(target, buffer.getvalue())
    except OSError as error:
        if is_disk_full(error):
            raise StorageFull() from None
        raise
    return target


def preview_scale(width: float, height: float) -> float:
    """Pixels per point for a PDF page: PREVIEW_WIDTH wide, no side past MAX_PREVIEW_SIDE."""
    width, height = max(width, 1.0), max(height, 1.0)
    return min(PREVIEW_WIDTH / width, MAX_PREVIEW_SIDE / max(width, height))


def _render(file_path: Path, mime_type: str, number: int, text: str):
    from PIL import Image, ImageDraw

    if mime_type == "application/pdf":
        import pypdfium2

        with PDFIUM_LOCK:
            document = pypdfium2.PdfDocument(str(file_path))
            try:
                page = document[number - 1]
                return page.render(scale=preview_scale(*page.get_size())).to_pil()
            finally:
                document.close()
    if mime_type == "text/plain":
        lines = text.splitlines()[:80] or [""]
        image = Image.new("L", (PREVIEW_WIDTH, 40 + 16 * len(lines)), 255)
        draw = ImageDraw.Draw(image)
        for index, line in enumerate(lines):
            draw.text((20, 20 + 16 * index), line[:160], fill=0)
        return image
    with Image.open(file_path) as image:
        image.seek(number - 1)
        image.draft("RGB", (PREVIEW_WIDTH, MAX_PREVIEW_SIDE))  # JPEG: decode at reduced size
        with decoding(image.width * image.height):
            image.load()
            image.thumbnail((PREVIEW_WIDTH, MAX_PREVIEW_SIDE))
            return image.copy()
