"""The page operations' primitives (dms.files.pdf.pages and dms.files.pdf._pagechild) that render a
page: barcodes on separator sheets, blank pages told from pages with little on them, a page too
large to render refused; and every new operation of the reader refusing a corrupt PDF. Every file is
made here: PDFs with a text layer (samples.pdf), scans drawn with Pillow, barcodes written by
zxing-cpp; each call goes through a real reader process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dms.files.pdf import UnreadablePdf, pages
from dms.files.pdf._protocol import CORRUPT, IMAGE_REFUSED  # private: only it holds the codes
from dms.files.pdf.process import ReaderFailed
from tests.harness import samples
from tests.harness.pdfops import (
    as_file,
    leftovers,
    noisy_scan,
    one_line_pdf,
    separator_sheet,
    write,
)

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
    # Far from the threshold either way, as tuned (dms.files.pdf.pages: BLANK_ constants).
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
