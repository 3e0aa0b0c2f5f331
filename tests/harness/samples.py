"""Sample files made by the tests themselves: PDFs with a text layer (a tiny PDF writer), scans as
images with Pillow, multi-page TIFFs, a password-protected PDF. Nothing is downloaded."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont


def pdf(pages: list[str | list[str]], encrypt: bool = False) -> bytes:
    """A born-digital PDF: one page per entry, a line of text or a list of lines, as real text
    (Helvetica, WinAnsiEncoding so that umlauts survive)."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * index for index in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = b" ".join(b"%d 0 R" % pid for pid in page_ids)
    objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)))
    for index, page in enumerate(pages):
        parts = [b"BT /F1 11 Tf 14 TL 72 750 Td"]
        for line in [page] if isinstance(page, str) else page:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            parts.append(b"(" + escaped.encode("cp1252") + b") Tj T*")
        stream = b"\n".join(parts + [b"ET"])
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                       % (font_id, page_ids[index] + 1))
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                   b"/Encoding /WinAnsiEncoding >>")
    trailer_extra = b""
    if encrypt:
        # A standard security handler whose user password is not empty: readers must ask for it.
        objects.append(b"<< /Filter /Standard /V 1 /R 2 /P -44 /O <" + b"11" * 32 + b"> /U <"
                       + b"22" * 32 + b"> >>")
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (len(objects), b"ab" * 16, b"ab" * 16)
    return raw_pdf(objects, trailer_extra)


def scan(text: str, size: tuple[int, int] = (1700, 600)) -> Image.Image:
    """A white page with black text, as a 300-dpi scanner would see it."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 64)
    except OSError:
        font = ImageFont.load_default(size=64)
    draw.text((60, 200), text, fill=0, font=font)
    return image


GERMAN_LETTER = ("Gebührenbescheid für Straßenreinigung",
                 "Sehr geehrte Frau Müller, für das Grundstück",
                 "berechnen wir die Gebühren wie folgt.")


def letter(lines: tuple[str, ...] = GERMAN_LETTER) -> bytes:
    """A PNG scan of a few lines of a letter, 48-point DejaVu Sans at 300 dpi (umlauts and ß
    included: Tesseract reads them with deu, and loses them with eng alone)."""
    image = Image.new("L", (2000, 100 + 120 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype("DejaVuSans.ttf", 48)
    for number, line in enumerate(lines):
        draw.text((60, 60 + 120 * number), line, fill=0, font=font)
    return image_bytes(image, "PNG")


def image_bytes(image: Image.Image, image_format: str) -> bytes:
    out = io.BytesIO()
    image.save(out, format=image_format, dpi=(300, 300))
    return out.getvalue()


def png(text: str = "Invoice 4711") -> bytes:
    return image_bytes(scan(text), "PNG")


def jpeg(text: str = "Invoice 4711") -> bytes:
    return image_bytes(scan(text), "JPEG")


def tiff(texts: list[str]) -> bytes:
    frames = [scan(text) for text in texts]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:], dpi=(300, 300))
    return out.getvalue()


def text(content: str = "Grocery list: milk, bread, Käse\n") -> bytes:
    return content.encode("utf-8")


def raw_pdf(objects: list[bytes], trailer_extra: bytes = b"") -> bytes:
    """A PDF made of exactly these objects (1 is the catalog), with a correct xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, trailer_extra, xref))
    return out.getvalue()


def pdf_claiming_pages(claimed: int) -> bytes:
    """One real (empty) page, but a page tree whose /Count claims `claimed` pages."""
    return raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                    b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % claimed,
                    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"])


def pdf_with_page_size(width_pt: float, height_pt: float) -> bytes:
    """One empty page of the given size in points (1/72 inch); PDF allows up to 14,400."""
    return raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] >>"
                    % (width_pt, height_pt)])


def tiff_with_large_frame(frame: int, size: tuple[int, int], frames: int = 2) -> bytes:
    """A multi-page TIFF of small scans whose frame `frame` (0-based) claims `size` pixels in its
    header (the pixel data stays small: nothing that checks only frame 0 would notice)."""
    import struct

    data = bytearray(tiff([f"page {n + 1}" for n in range(frames)]))
    assert data[:4] == b"II*\x00"
    offset = struct.unpack_from("<I", data, 4)[0]
    for _ in range(frame):
        count = struct.unpack_from("<H", data, offset)[0]
        offset = struct.unpack_from("<I", data, offset + 2 + 12 * count)[0]
    count = struct.unpack_from("<H", data, offset)[0]
    for entry in range(count):
        position = offset + 2 + 12 * entry
        tag, kind = struct.unpack_from("<HH", data, position)
        value = {256: size[0], 257: size[1]}.get(tag)
        if value is not None:
            struct.pack_into("<I" if kind == 4 else "<H", data, position + 8, value)
    return bytes(data)


def pdf_content_bomb(inflated_mib: int, pages: int = 1) -> bytes:
    """`pages` pages sharing one content stream that inflates from a few hundred KB to
    `inflated_mib` MiB of drawing operators (a PDF "content bomb")."""
    import zlib

    compressor = zlib.compressobj(9)
    chunk = b"0 0 m " * (2**20 // 6)
    data = b"".join(compressor.compress(chunk) for _ in range(inflated_mib)) + compressor.flush()
    kids = b" ".join(b"%d 0 R" % (4 + index) for index in range(pages))
    return raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                    b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
                    b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data
                    + b"\nendstream"]
                   + [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>"]
                   * pages)


def pdf_slow_to_render(layers: int = 40) -> bytes:
    """A 2 KB page that parses in a millisecond but that pdfium renders for minutes: `layers`
    page-sized fills, each half transparent with a blend mode."""
    import zlib

    operators = b"".join(b"/G gs %d 0 0 rg 0 0 612 792 re f\n" % (index % 2)
                         for index in range(layers))
    data = zlib.compress(operators, 9)
    return raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                    b"<< /ExtGState << /G << /ca 0.5 /BM /Multiply >> >> >> /Contents 4 0 R >>",
                    b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data
                    + b"\nendstream"])
