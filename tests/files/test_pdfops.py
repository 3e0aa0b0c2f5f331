"""The page operations' primitives (issue 26, dms.files.pages and dms.files.pagechild): assembling
PDFs from pages of others, images to PDF, barcodes on separator sheets, blank pages. Every file is
made here: PDFs with a text layer (samples.pdf), scans drawn with Pillow, barcodes written by
zxing-cpp; each call goes through a real reader process."""

from __future__ import annotations

import hashlib
import random
import re
import time
from pathlib import Path

import pypdfium2
import pytest
import zxingcpp
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.harness import samples
from dms.files import pages
from dms.files.imaging import UnacceptableImage
from dms.files.pdf import UnreadablePdf
from dms.files.pdfprocess import PdfReaders, ReaderFailed
from dms.files.pdfprotocol import CORRUPT, IMAGE_REFUSED


@pytest.fixture(scope="module")
def readers():
    pool = PdfReaders(1, 1024)
    yield pool
    pool.stop()


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def texts(path: Path) -> list[str]:
    document = pypdfium2.PdfDocument(str(path))
    try:
        return [document[index].get_textpage().get_text_range().strip()
                for index in range(len(document))]
    finally:
        document.close()


def layout(path: Path) -> list[tuple[int, tuple[float, float]]]:
    """Each page's /Rotate and its size as shown (points)."""
    document = pypdfium2.PdfDocument(str(path))
    try:
        return [(document[index].get_rotation(), document[index].get_size())
                for index in range(len(document))]
    finally:
        document.close()


def own_rotates(path: Path) -> list[int | None]:
    """Each page's own /Rotate, read by Pillow's PDF parser (not pdfium, which wrote them)."""
    from PIL import PdfParser

    parser = PdfParser.PdfParser(buf=path.read_bytes())
    return [parser.read_indirect(page).get(b"Rotate") for page in parser.pages]


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".partial"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_pdf(line: str, size: int = 12) -> bytes:
    """An A4 page with one line of Helvetica `size` pt, as a word processor writes it."""
    stream = b"BT /F1 %d Tf 72 700 Td (%s) Tj ET" % (size, line.encode())
    return samples.raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources "
        b"<< /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def rotated_pdf() -> bytes:
    """Two pages that inherit /Rotate 90 from their page tree, the second turned to 180 itself."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /Rotate 90 >>"]
    for index, extra in enumerate((b"", b" /Rotate 180")):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]%s /Resources "
                       b"<< /Font << /F1 7 0 R >> >> /Contents %d 0 R >>" % (extra, 5 + index))
    for word in (b"east", b"south"):
        stream = b"BT /F1 11 Tf 72 700 Td (%s) Tj ET" % word
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return samples.raw_pdf(objects)


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


def as_file(image: Image.Image, folder: Path, name: str, **options) -> Path:
    path = folder / name
    image.save(path, **options)
    return path


# -- assemble ------------------------------------------------------------------------------------

def test_pages_are_copied_in_the_order_asked_from_several_sources(readers, tmp_path):
    letters = write(tmp_path, "letters.pdf", samples.pdf(["alpha", "beta", "gamma"]))
    numbers = write(tmp_path, "numbers.pdf", samples.pdf(["one", "two"]))
    before = sha256(letters), sha256(numbers)
    out = tmp_path / "out.pdf"
    references = [(letters, 2, 0), (numbers, 1, 0), (letters, 0, 0), (letters, 0, 0),
                  (numbers, 0, 0), (letters, 1, 0), (letters, 2, 0)]
    assert pages.assemble(readers, references, out, max_pages=10) == 7
    assert texts(out) == ["gamma", "two", "alpha", "alpha", "one", "beta", "gamma"]
    assert (sha256(letters), sha256(numbers)) == before
    assert leftovers(tmp_path) == []
    document = pypdfium2.PdfDocument(str(out))  # copied, not rendered: text objects, no image
    kinds = {obj.type for index in range(len(document)) for obj in document[index].get_objects()}
    document.close()
    assert kinds == {pypdfium2.raw.FPDF_PAGEOBJ_TEXT}
    assert out.stat().st_size < 3 * (letters.stat().st_size + numbers.stat().st_size)


def test_a_repeated_page_does_not_share_its_content_with_its_copy(readers, tmp_path):
    source = write(tmp_path, "source.pdf", samples.pdf(["alpha", "beta"]))
    out = tmp_path / "out.pdf"
    pages.assemble(readers, [(source, 0, 0), (source, 1, 0), (source, 0, 0)], out, 10)
    contents = re.findall(rb"/Contents (\d+) 0 R", out.read_bytes())
    assert len(contents) == 3 and len(set(contents)) == 3
    assert texts(out) == ["alpha", "beta", "alpha"]


def test_pages_are_turned_by_their_rotate(readers, tmp_path):
    plain = write(tmp_path, "plain.pdf", samples.pdf(["alpha", "beta"]))
    turned = write(tmp_path, "turned.pdf", rotated_pdf())
    out = tmp_path / "out.pdf"
    references = [(plain, 0, 0), (plain, 0, 90), (plain, 1, -90), (plain, 1, 180),
                  (plain, 0, 450), (turned, 0, 0), (turned, 0, 90), (turned, 1, 270)]
    pages.assemble(readers, references, out, 10)
    upright, across = (612.0, 792.0), (792.0, 612.0)
    assert layout(out) == [(0, upright), (90, across), (270, across), (180, upright),
                           (90, across), (90, across), (180, upright), (90, across)]
    assert own_rotates(out) == [0, 90, 270, 180, 90, 90, 180, 90]
    assert texts(out) == ["alpha", "alpha", "beta", "beta", "alpha", "east", "east", "south"]


def test_more_pages_than_allowed_are_refused_before_any_work(readers, tmp_path):
    source = write(tmp_path, "source.pdf", samples.pdf(["alpha"]))
    out = tmp_path / "out.pdf"
    with pytest.raises(UnreadablePdf) as refused:
        pages.assemble(readers, [(source, 0, 0)] * 6, out, max_pages=5)
    assert str(refused.value) == ("The new PDF would have more than 5 pages, the most dms "
                                  "accepts (DMS_MAX_PAGES).")
    with pytest.raises(ReaderFailed) as failed:  # the reader refuses them too
        readers.call("assemble", 10, pages=[[str(source), 0, 0]] * 6, out=str(out),
                     max_pages=5, seconds=5)
    assert (failed.value.code, failed.value.details) == ("too_many_pages", {"max_pages": 5})
    for wrong in ([(source, 0, 45)], [(source, -1, 0)], []):
        with pytest.raises(ValueError):
            pages.assemble(readers, wrong, out, max_pages=5)
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_missing_page_or_a_corrupt_source_writes_nothing(readers, tmp_path):
    source = write(tmp_path, "source.pdf", samples.pdf(["alpha", "beta"]))
    broken = write(tmp_path, "broken.pdf", b"%PDF-1.4\n" + b"\x00garbage" * 100)
    locked = write(tmp_path, "locked.pdf", samples.pdf(["secret"], encrypt=True))
    out = tmp_path / "out.pdf"
    cases = {
        (source, 2, 0): "Page 3 cannot be read: the PDF has 2 pages",
        (broken, 0, 0): "The PDF is corrupt and cannot be read.",
        (locked, 0, 0): "The PDF is encrypted with a password; upload it without the password "
                        "protection.",
    }
    for reference, message in cases.items():
        with pytest.raises(UnreadablePdf) as refused:
            pages.assemble(readers, [(source, 0, 0), reference], out, 10)
        assert str(refused.value) == message
    assert not out.exists() and leftovers(tmp_path) == []


def test_the_time_limit_grows_with_the_pages_and_a_late_write_leaves_nothing(readers, tmp_path,
                                                                               monkeypatch):
    source = write(tmp_path, "source.pdf", samples.pdf(["alpha", "beta"]))
    out = tmp_path / "out.pdf"
    (tmp_path / "out.pdf.partial").write_bytes(b"left by a reader killed earlier")
    seen = []
    real_call = readers.call
    monkeypatch.setattr(readers, "call",
                        lambda op, timeout, **args: seen.append((timeout, args["seconds"]))
                        or real_call(op, timeout, **args))
    pages.assemble(readers, [(source, 0, 0), (source, 1, 0)] * 3, out, 10)
    assert seen == [(pages.PAGE_SECONDS + 6 + pages.MARGIN_SECONDS, pages.PAGE_SECONDS + 6)]
    assert leftovers(tmp_path) == [] and texts(out) == ["alpha", "beta"] * 3
    monkeypatch.setattr(pages, "PAGE_SECONDS", 0)
    monkeypatch.setattr(pages, "WRITE_SECONDS_PER_PAGE", 0)
    with pytest.raises(UnreadablePdf) as refused:
        pages.assemble(readers, [(source, 0, 0), (source, 1, 0)], tmp_path / "late.pdf", 10)
    assert str(refused.value) == ("The PDF takes too long to write: its pages' content is too "
                                  "large or too complex for dms.")
    assert refused.value.final
    assert not (tmp_path / "late.pdf").exists() and leftovers(tmp_path) == []


# -- images to PDF ---------------------------------------------------------------------------------

def image_objects(path: Path) -> list[tuple[list[str], Image.Image]]:
    """Each page's one image: its filters and its pixels as embedded."""
    document = pypdfium2.PdfDocument(str(path))
    found = []
    for index in range(len(document)):
        (image,) = list(document[index].get_objects())
        found.append((image.get_filters(), image.get_bitmap().to_pil()))
    document.close()
    return found


def test_each_frame_of_a_tiff_is_a_page_at_its_resolution_losslessly(readers, tmp_path):
    tiff = write(tmp_path, "batch.tiff", samples.tiff(["first page", "second page", "third"]))
    out = tmp_path / "batch.pdf"
    assert pages.images_to_pdf(readers, tiff, out, max_pages=3, max_megapixels=2) == 3
    assert layout(out) == [(0, (408.0, 144.0))] * 3  # 1700 x 600 pixels at 300 dpi
    embedded = image_objects(out)
    assert [filters for filters, _ in embedded] == [["FlateDecode"]] * 3
    with Image.open(tiff) as frames:
        for number, (_, pixels) in enumerate(embedded):
            frames.seek(number)
            assert pixels.convert("L").tobytes() == frames.convert("L").tobytes()
    assert leftovers(tmp_path) == []


def test_a_jpeg_is_embedded_as_it_is(readers, tmp_path):
    photo = samples.scan("Receipt 12.50", size=(1200, 800)).convert("RGB")
    jpeg = as_file(photo, tmp_path, "photo.jpg", format="JPEG", quality=85, dpi=(200, 200))
    out = tmp_path / "photo.pdf"
    assert pages.images_to_pdf(readers, jpeg, out, max_pages=1, max_megapixels=1) == 1
    assert layout(out) == [(0, (432.0, 288.0))]
    document = pypdfium2.PdfDocument(str(out))
    (image,) = list(document[0].get_objects())
    assert image.get_filters() == ["DCTDecode"]
    assert bytes(image.get_data(decode_simple=False)) == jpeg.read_bytes()
    document.close()


def test_an_image_without_a_resolution_is_72_dpi_and_transparency_lies_on_white(readers, tmp_path):
    image = Image.new("RGBA", (300, 200), (0, 0, 0, 0))
    ImageDraw.Draw(image).rectangle([0, 0, 99, 99], fill=(200, 0, 0, 255))
    png = as_file(image, tmp_path, "logo.png", format="PNG")
    out = tmp_path / "logo.pdf"
    assert pages.images_to_pdf(readers, png, out, max_pages=1, max_megapixels=1) == 1
    assert layout(out) == [(0, (300.0, 200.0))]
    ((filters, pixels),) = image_objects(out)
    assert filters == ["FlateDecode"]
    assert pixels.convert("RGB").getpixel((50, 50)) == (200, 0, 0)
    assert pixels.convert("RGB").getpixel((250, 150)) == (255, 255, 255)
    tiff = as_file(image.convert("RGB"), tmp_path, "logo.tiff", format="TIFF")  # no resolution
    pages.images_to_pdf(readers, tiff, out, max_pages=1, max_megapixels=1)
    assert layout(out) == [(0, (300.0, 200.0))]


def test_a_photo_is_turned_as_its_exif_orientation_says(readers, tmp_path):
    image = Image.new("L", (300, 100), 255)
    ImageDraw.Draw(image).rectangle([0, 0, 29, 29], fill=0)  # a mark at the stored top left
    exif = Image.Exif()
    exif[274] = 6  # shown turned 90 degrees clockwise: the mark at the top right
    jpeg = as_file(image, tmp_path, "phone.jpg", format="JPEG", exif=exif, dpi=(72, 72))
    out = tmp_path / "phone.pdf"
    pages.images_to_pdf(readers, jpeg, out, max_pages=1, max_megapixels=1)
    assert layout(out) == [(0, (100.0, 300.0))]
    document = pypdfium2.PdfDocument(str(out))
    shown = document[0].render(scale=1, grayscale=True).to_pil().convert("L")
    document.close()
    corners = [shown.getpixel(point) for point in ((85, 15), (15, 15), (85, 285), (15, 285))]
    assert [value < 64 for value in corners] == [True, False, False, False]


def test_images_past_the_limits_are_refused_with_the_uploads_sentences(readers, tmp_path):
    out = tmp_path / "out.pdf"
    tiff = write(tmp_path, "three.tiff", samples.tiff(["one", "two", "three"]))
    bomb = write(tmp_path, "bomb.tiff", samples.tiff_with_large_frame(1, (40_000, 40_000)))
    cases = [
        (tiff, 2, 50, "The image has more than 2 pages, the most dms accepts (DMS_MAX_PAGES)."),
        (tiff, 3, 1, "The image has too many pixels to be processed safely (at most 1 million "
                     "per image or page; DMS_MAX_IMAGE_MEGAPIXELS)."),
        (bomb, 3, 50, "The image has too many pixels to be processed safely (at most 50 million "
                      "per image or page; DMS_MAX_IMAGE_MEGAPIXELS)."),
        (write(tmp_path, "cut.png", samples.png()[:300]), 3, 50,
         "The PNG image is corrupt and cannot be read."),
        (write(tmp_path, "paper.pdf", samples.pdf(["alpha"])), 3, 50,
         "The file is not a PNG, JPEG or TIFF image."),
    ]
    for image, max_pages, megapixels, message in cases:
        with pytest.raises(UnacceptableImage) as refused:
            pages.images_to_pdf(readers, image, out, max_pages, megapixels)
        assert str(refused.value) == message
    # The reader checks too, before decoding anything: the bomb's frame is never decoded.
    started = time.monotonic()
    with pytest.raises(ReaderFailed) as failed:
        readers.call("images_to_pdf", 30, path=str(bomb), label="TIFF", out=str(out),
                     max_pages=3, max_pixels=50_000_000, seconds=20)
    assert failed.value.code == IMAGE_REFUSED and time.monotonic() - started < 5
    assert not out.exists() and leftovers(tmp_path) == []


# -- barcodes --------------------------------------------------------------------------------------

def test_the_barcodes_of_a_separator_sheet_are_read(readers, tmp_path):
    sheet = as_file(separator_sheet([("DMS-SPLIT", "QRCode"), ("PATCH T", "Code128")]),
                    tmp_path, "sheet.png", format="PNG", dpi=(300, 300))
    others = as_file(separator_sheet([("SEP 1", "Code39"), ("4006381333931", "EAN13"),
                                      ("12345678", "ITF")]),
                     tmp_path, "others.png", format="PNG", dpi=(300, 300))
    letter = write(tmp_path, "letter.pdf", samples.pdf(["Dear Sir,", "Invoice 4711"]))
    batch = tmp_path / "batch.pdf"
    for image in (sheet, others):
        pages.images_to_pdf(readers, image, image.with_suffix(".pdf"), 1, 50)
    sheet, others = sheet.with_suffix(".pdf"), others.with_suffix(".pdf")
    pages.assemble(readers, [(letter, 0, 0), (sheet, 0, 0), (sheet, 0, 90), (others, 0, 0)],
                   batch, 10)
    with readers.session() as child:  # a batch page by page, in one reader
        found = [pages.barcodes(child, batch, index) for index in range(4)]
    assert found == [[], ["DMS-SPLIT", "PATCH T"], ["DMS-SPLIT", "PATCH T"],
                     ["SEP 1", "4006381333931", "12345678"]]
    assert pages.barcodes(readers, batch, 1) == ["DMS-SPLIT", "PATCH T"]


def test_a_page_too_large_to_render_is_refused_not_rendered(readers, tmp_path):
    poster = write(tmp_path, "poster.pdf", samples.pdf_with_page_size(14_400, 14_400))
    started = time.monotonic()
    with pytest.raises(UnreadablePdf) as refused:
        pages.barcodes(readers, poster, 0)
    assert str(refused.value) == ("Page 1 is too large to render: even at 100 dpi it would have "
                                  "more than 16 million pixels.")
    with pytest.raises(UnreadablePdf) as refused:
        pages.is_blank(readers, poster, 0)
    assert str(refused.value) == ("Page 1 is too large to render: even at 25 dpi it would have "
                                  "more than 2 million pixels.")
    assert time.monotonic() - started < 5


# -- blank pages -----------------------------------------------------------------------------------

def test_blank_pages_are_told_from_pages_with_little_on_them(readers, tmp_path):
    empty = write(tmp_path, "empty.pdf", samples.pdf_with_page_size(595, 842))
    files = {"empty page": empty}
    for name, line in (("12 pt 'OK'", "OK"), ("12 pt 'Paid'", "Paid")):
        files[name] = write(tmp_path, f"{line}.pdf", one_line_pdf(line))
    scans = {"noisy blank scan 1": noisy_scan(1), "noisy blank scan 2": noisy_scan(2),
             "noisy scan of 12 pt 'OK'": noisy_scan(3, "OK"),
             "scan of a line of text": samples.scan("Invoice 4711"),
             "separator sheet": separator_sheet([("DMS-SPLIT", "QRCode")])}
    for number, (name, image) in enumerate(scans.items()):
        jpeg = as_file(image, tmp_path, f"scan{number}.jpg", format="JPEG", quality=75,
                       dpi=(300, 300))
        files[name] = tmp_path / f"scan{number}.pdf"
        pages.images_to_pdf(readers, jpeg, files[name], 1, 50)
    measured = {name: pages.dark_fraction(readers, path, 0) for name, path in files.items()}
    blank = {name: pages.is_blank(readers, path, 0) for name, path in files.items()}
    assert blank == {"empty page": True, "12 pt 'OK'": False, "12 pt 'Paid'": False,
                     "noisy blank scan 1": True, "noisy blank scan 2": True,
                     "noisy scan of 12 pt 'OK'": False, "scan of a line of text": False,
                     "separator sheet": False}, measured
    # Far from the threshold either way, as tuned (dms.files.pages: BLANK_ constants).
    threshold = pages.BLANK_MAX_DARK_FRACTION
    assert max(measured[name] for name in files if blank[name]) < threshold / 2, measured
    assert min(measured[name] for name in files if not blank[name]) > threshold * 2, measured


# -- every new operation of the reader -------------------------------------------------------------

def test_each_new_operation_refuses_a_corrupt_pdf_as_corrupt(readers, tmp_path):
    broken = write(tmp_path, "broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n" * 50)
    out = str(tmp_path / "out.pdf")
    calls = {
        "assemble": dict(pages=[[str(broken), 0, 0]], out=out, max_pages=5, seconds=10),
        "barcodes": dict(path=str(broken), index=0, dpi=200, min_dpi=100, max_pixels=10**7,
                         formats=["QRCode"]),
        "blankness": dict(path=str(broken), index=0, dpi=50, min_dpi=25, max_pixels=10**6,
                          margin=0.04, dark_level=128),
    }
    for op, args in calls.items():
        with pytest.raises(ReaderFailed) as failed:
            readers.call(op, 30, **args)
        assert failed.value.code == CORRUPT, op
    for call in (pages.barcodes, pages.is_blank):
        with pytest.raises(UnreadablePdf) as refused:
            call(readers, broken, 0)
        assert str(refused.value) == "The PDF is corrupt and cannot be read."
    with pytest.raises(ReaderFailed) as failed:  # an image that is not one: refused as uploads are
        readers.call("images_to_pdf", 30, path=str(broken), label="PNG", out=out, max_pages=5,
                     max_pixels=10**6, seconds=10)
    assert (failed.value.code, failed.value.details) == (
        IMAGE_REFUSED, {"sentence": "The PNG image is corrupt and cannot be read."})
    assert not Path(out).exists() and leftovers(tmp_path) == []
