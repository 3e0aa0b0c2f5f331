"""JPEG previews of pages, rendered on first request and kept under `<data-dir>/previews/`.

Rendering a page is much cheaper than reading it, so it may happen in a request thread; pdfium
still only runs under dms.pdf.PDFIUM_LOCK."""

from __future__ import annotations

import io
import os
from pathlib import Path

from dms.pdf import PDFIUM_LOCK

PREVIEW_WIDTH = 1000  # pixels: readable on a screen, small to send
PREVIEW_QUALITY = 80


def preview(previews_dir: Path, page_id: str, file_path: Path, mime_type: str, number: int,
            text: str) -> Path:
    """The cached preview of a page, rendering it first if needed."""
    target = previews_dir / page_id[:2] / f"{page_id}.jpg"
    if target.is_file():
        return target
    image = _render(file_path, mime_type, number, text)
    image.thumbnail((PREVIEW_WIDTH, PREVIEW_WIDTH * 4))
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=PREVIEW_QUALITY)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(".tmp")
    temporary.write_bytes(buffer.getvalue())
    os.replace(temporary, target)  # another request rendering the same page gets a whole file
    return target


def _render(file_path: Path, mime_type: str, number: int, text: str):
    from PIL import Image, ImageDraw

    if mime_type == "application/pdf":
        import pypdfium2

        with PDFIUM_LOCK:
            document = pypdfium2.PdfDocument(str(file_path))
            try:
                page = document[number - 1]
                return page.render(scale=PREVIEW_WIDTH / page.get_width()).to_pil()
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
        image.load()
        return image.copy()
