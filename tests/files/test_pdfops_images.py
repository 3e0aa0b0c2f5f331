"""The page operations' primitives (dms.files.pdf.pages and dms.files.pdf._pagechild): images to
PDF, each TIFF frame a page at its resolution, a JPEG embedded as it is, transparency on white, EXIF
orientation, and images past the limits refused with the uploads' sentences. Every file is made
here: scans and images drawn with Pillow; each call goes through a real reader process."""

from __future__ import annotations

import time
from pathlib import Path

import pypdfium2
import pytest
from PIL import Image, ImageDraw

from dms.files.imaging import UnacceptableImage
from dms.files.pdf import pages
from dms.files.pdf._protocol import IMAGE_REFUSED  # private: only it holds the codes
from dms.files.pdf.process import ReaderFailed
from tests.harness import samples
from tests.harness.pdfops import as_file, layout, leftovers, write


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
