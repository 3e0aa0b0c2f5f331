"""Files of the page operations' tests (tests/files/test_pdfops_*, tests/domain/test_pageops_*): a
sample written to a folder, an image saved as a file, each page's /Rotate and size in a PDF, its
pages' text, the .partial files left behind; scans of blank pages, one-line PDFs and separator
sheets with barcodes written by zxing-cpp; long born-digital batches and a split's run followed
to its end."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pypdfium2
import zxingcpp
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.harness import samples
from tests.harness.waiting import wait_for


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def layout(path: Path) -> list[tuple[int, tuple[float, float]]]:
    """Each page's /Rotate and its size as shown (points)."""
    document = pypdfium2.PdfDocument(str(path))
    try:
        return [(document[index].get_rotation(), document[index].get_size())
                for index in range(len(document))]
    finally:
        document.close()


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".partial"))


def as_file(image: Image.Image, folder: Path, name: str, **options) -> Path:
    path = folder / name
    image.save(path, **options)
    return path


def page_texts(data: bytes) -> list[str]:
    """Each page's text layer as pdfium reads it from PDF bytes, whitespace folded."""
    document = pypdfium2.PdfDocument(data)
    try:
        return [" ".join(document[index].get_textpage().get_text_range().split())
                for index in range(len(document))]
    finally:
        document.close()


def bytes_layout(data: bytes) -> list[tuple[int, tuple[float, float]]]:
    """layout() of PDF bytes."""
    document = pypdfium2.PdfDocument(data)
    try:
        return [(document[index].get_rotation(), document[index].get_size())
                for index in range(len(document))]
    finally:
        document.close()


def one_line_pdf(line: str, size: int = 12) -> bytes:
    """An A4 page with one line of Helvetica `size` pt, as a word processor writes it."""
    stream = b"BT /F1 %d Tf 72 700 Td (%s) Tj ET" % (size, line.encode())
    return samples.raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources "
        b"<< /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def noisy_scan(seed: int, text: str | None = None) -> Image.Image:
    """An A4 page as a 300-dpi scanner sees a blank sheet: gray noise, two folds (a faint crease
    each way), dark dots and dust specks up to 0.5 mm, a black border where the lid ends; with
    `text`, one line of it in 12 pt (50 pixels)."""
    rnd = random.Random(seed)
    width, height = 2480, 3508
    page = Image.effect_noise((width, height), 12).point(lambda value: min(255, value + 118))
    draw = ImageDraw.Draw(page)
    draw.line([(0, 1650), (width, 1800)], fill=205, width=5)
    draw.line([(0, 1652), (width, 1802)], fill=185, width=2)
    draw.line([(1200, 0), (1260, height)], fill=175, width=4)
    for _ in range(300):
        draw.point((rnd.randrange(width), rnd.randrange(height)), fill=rnd.randrange(0, 100))
    for _ in range(40):
        x, y, side = rnd.randrange(width), rnd.randrange(height), rnd.choice([1, 2, 3])
        draw.rectangle([x, y, x + side, y + side], fill=20)
    for _ in range(5):
        x, y = rnd.randrange(width), rnd.randrange(height)
        draw.ellipse([x, y, x + 5, y + 5], fill=20)
    draw.rectangle([0, 0, 60, height], fill=30)
    draw.rectangle([0, 0, width, 50], fill=30)
    if text:
        draw.text((300, 600), text, fill=20, font=ImageFont.truetype("DejaVuSans.ttf", 50))
    return page.filter(ImageFilter.GaussianBlur(0.6))


def barcode(text: str, kind: str, scale: int) -> Image.Image:
    image = zxingcpp.write_barcode_to_image(
        zxingcpp.create_barcode(text, getattr(zxingcpp.BarcodeFormat, kind)), scale=scale)
    view = memoryview(image)
    return Image.frombuffer("L", (view.shape[1], view.shape[0]), bytes(view), "raw", "L", 0, 1)


def separator_sheet(codes: list[tuple[str, str]]) -> Image.Image:
    """A white A4 page at 300 dpi with these barcodes one below the other, 1-D codes 2 cm
    high."""
    page = Image.new("L", (2480, 3508), 255)
    top = 300
    for text, kind in codes:
        image = barcode(text, kind, 10 if kind == "QRCode" else 5)
        if kind != "QRCode":
            image = image.resize((image.width, 240))
        page.paste(image, (300, top))
        top += image.height + 200
    return page


A4_300DPI = (2480, 3508)


def letter_page(text: str) -> Image.Image:
    """A scanned A4 letter page (300 dpi) with one line of text near the top."""
    page = Image.new("L", A4_300DPI, 255)
    page.paste(samples.scan(text).convert("L"), (300, 300))
    return page


def batch_pdf(pages: list[Image.Image]) -> bytes:
    """A scanner's PDF of these pages (Pillow writes each image as a page at 300 dpi)."""
    out = io.BytesIO()
    first, *rest = [page.convert("L") for page in pages]
    first.save(out, format="PDF", save_all=True, append_images=rest, resolution=300.0)
    return out.getvalue()


def six_page_batch() -> bytes:
    """A scanner's batch of three letters, the second of two pages, between two QR separator
    sheets: as a PDF."""
    qr = separator_sheet([("DMS-SPLIT", "QRCode")])
    return batch_pdf([letter_page("Invoice alpha"), qr, letter_page("Letter bravo one"),
                      letter_page("Letter bravo two"), qr, letter_page("Notice charlie")])


def page_line(number: int) -> str:
    """The text of page `number` of long_batch()."""
    return f"Page number {number:05d} of the long batch"


def long_batch(pages: int) -> bytes:
    """A born-digital PDF of `pages` pages, each one line long enough (dms.processing.ocr's
    MIN_TEXT_CHARS) that processing takes its text layer and renders nothing: thousands of pages
    are written and read in a second or two, and their parts need no reading."""
    return samples.pdf([page_line(number) for number in range(1, pages + 1)])


def finished_split(client, run_id: str, timeout: float = 120) -> dict:
    """The attributes of a split's run once it succeeded or failed."""
    def ended():
        attributes = client.get(f"/api/split-runs/{run_id}/").json()["data"]["attributes"]
        return attributes if attributes["state"] in ("succeeded", "failed") else None
    return wait_for(ended, timeout=timeout, interval=0.05, message="the split did not finish")
