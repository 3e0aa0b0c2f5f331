"""The page operations' primitives (dms.files.pdf.pages and dms.files.pdf._pagechild): assembling
PDFs from pages of others, in the order asked, turned by their /Rotate, within the page and time
limits, leaving nothing of a refused or late one. Every file is made here: PDFs with a text layer
(samples.pdf); each call goes through a real reader process."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pypdfium2
import pytest

from dms.files.pdf import UnreadablePdf, pages
from dms.files.pdf.process import ReaderFailed, ReaderTimes
from tests.harness import samples
from tests.harness.pdfops import layout, leftovers, write


def texts(path: Path) -> list[str]:
    document = pypdfium2.PdfDocument(str(path))
    try:
        return [document[index].get_textpage().get_text_range().strip()
                for index in range(len(document))]
    finally:
        document.close()


def own_rotates(path: Path) -> list[int | None]:
    """Each page's own /Rotate, read by Pillow's PDF parser (not pdfium, which wrote them)."""
    from PIL import PdfParser

    parser = PdfParser.PdfParser(buf=path.read_bytes())
    return [parser.read_indirect(page).get(b"Rotate") for page in parser.pages]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
    page = readers.times.page  # DMS_PDF_PAGE_SECONDS
    assert seen == [(page + 6 + pages.MARGIN_SECONDS, page + 6)]
    assert leftovers(tmp_path) == [] and texts(out) == ["alpha", "beta"] * 3
    monkeypatch.setattr(readers, "times", ReaderTimes(page=0))
    monkeypatch.setattr(pages, "WRITE_SECONDS_PER_PAGE", 0)
    with pytest.raises(UnreadablePdf) as refused:
        pages.assemble(readers, [(source, 0, 0), (source, 1, 0)], tmp_path / "late.pdf", 10)
    assert str(refused.value) == ("The PDF takes too long to write: its pages' content is too "
                                  "large or too complex for dms.")
    assert refused.value.final
    assert not (tmp_path / "late.pdf").exists() and leftovers(tmp_path) == []
