"""Searchable PDFs: what Tesseract read is kept as a PDF whose pages carry its invisible text — the
original PDF's pages with the text laid over them, or an image's frames — beside the original, which
stays downloadable unchanged."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pypdfium2
import pytest

from dms.db.models import Page
from dms.domain import documents, tree
from dms.domain.pages import operations
from dms.processing.processor import Processor
from tests.harness import domaintier, samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.documents import new_document, upload
from tests.harness.domaintier import new_user, page_ids, upload_file
from tests.harness.processes import config_args
from tests.harness.waiting import wait_processed


def scanned_pdf(texts: list[str], rotation: int = 0) -> bytes:
    """A PDF of JPEG scans (no text layer), each page displayed upright: stored turned against
    its /Rotate when `rotation` is set."""
    document = pypdfium2.PdfDocument.new()
    for text in texts:
        image = samples.scan(text, size=(1700, 2200)).convert("RGB").rotate(rotation, expand=True)
        buffer = io.BytesIO()
        image.save(buffer, "JPEG")
        buffer.seek(0)
        width, height = image.width * 72 / 200, image.height * 72 / 200
        page = document.new_page(width, height)
        picture = pypdfium2.PdfImage.new(document)
        picture.load_jpeg(buffer, inline=True)
        picture.set_matrix(pypdfium2.PdfMatrix().scale(width, height))
        page.insert_obj(picture)
        page.gen_content()
        if rotation:
            page.set_rotation(rotation)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pages_text(data: bytes) -> list[str]:
    document = pypdfium2.PdfDocument(data)
    return [" ".join(document[i].get_textpage().get_text_range().split())
            for i in range(len(document))]


def processed(client, name, data):
    document_id = new_document(client, name)
    upload(client, document_id, name, data)
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id, client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]


@pytest.mark.parametrize("rotation", [0, 90])
def test_a_scanned_pdf_gets_its_words_on_the_right_pages(alice, rotation):
    original = scanned_pdf(["Invoice alpha", "Receipt bravo"], rotation)
    assert pages_text(original) == ["", ""]
    document_id, attributes = processed(alice, "scan.pdf", original)
    version = attributes["versions"][0]
    response = alice.get(f"/api/documents/{document_id}/download/?searchable=1")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/pdf"
    assert response.headers["Content-Disposition"] == "attachment; filename=scan.pdf"
    searchable = response.content
    assert (version["searchable_pdf"], version["searchable_pdf_size"]) == (True, len(searchable))
    assert pages_text(searchable) == ["Invoice alpha", "Receipt bravo"]
    before, after = pypdfium2.PdfDocument(original), pypdfium2.PdfDocument(searchable)
    assert [p.get_size() for p in after] == [p.get_size() for p in before]
    assert [p.get_rotation() for p in after] == [rotation, rotation]
    # The words lie where they are shown: the first one near the top left of the upright page.
    page = after[0]
    left, bottom, right, top = page.get_textpage().get_charbox(0)
    shown_left, shown_top = (left, page.get_height() - top) if rotation == 0 else (bottom, left)
    assert 15 < shown_left < 40 and 50 < shown_top < 90
    # The original stays byte for byte, and the version route serves both.
    assert alice.get(f"/api/documents/{document_id}/download/").content == original
    by_version = alice.get(version["download_url"] + "?searchable=1").content
    assert hashlib.sha256(by_version).digest() == hashlib.sha256(searchable).digest()


def test_an_image_gets_a_one_page_searchable_pdf_and_a_tiff_one_per_frame(alice):
    _, png = processed(alice, "letter.png", samples.png("Dear Alice"))
    png_id = png["versions"][0]["id"]
    data = alice.get(f"/api/document-versions/{png_id}/download/?searchable=true").content
    assert pages_text(data) == ["Dear Alice"]
    rendered = pypdfium2.PdfDocument(data)[0].render(scale=1).to_pil()
    assert rendered.size == (408, 144)  # 1700 x 600 px at 300 dpi, as 72-dpi points
    document_id, _ = processed(alice, "fax.tiff", samples.tiff(["first page", "second page"]))
    tiff_pdf = alice.get(f"/api/documents/{document_id}/download/?searchable=1")
    assert tiff_pdf.headers["Content-Disposition"] == "attachment; filename=fax.pdf"
    assert pages_text(tiff_pdf.content) == ["first page", "second page"]


def test_a_born_digital_pdf_gets_none(alice, bob):
    document_id, attributes = processed(alice, "digital.pdf", samples.pdf(
        ["This page already has plenty of text of its own."]))
    version = attributes["versions"][0]
    assert (version["searchable_pdf"], version["searchable_pdf_size"]) == (False, None)
    assert_error(alice.get(f"/api/documents/{document_id}/download/?searchable=1"), 404,
                 "not_found", "This version has no searchable PDF: it is made when Tesseract "
                 "reads a document's pages.")
    assert bob.get(f"/api/documents/{document_id}/download/?searchable=1").json() == NOT_FOUND


def test_zips_take_searchable_pdfs_and_deleting_for_good_removes_them(alice, config):
    folder_body = {"data": {"type": "folders", "attributes": {"title": "Mail"}, "relationships": {
        "parent": {"data": {"type": "folders", "id": alice.home_id}}}}}
    folder = alice.post("/api/nodes/", folder_body).json()["data"]["id"]
    scan = new_document(alice, "Letter", folder)
    upload(alice, scan, "letter.png", samples.png("Hello zip"))
    text = new_document(alice, "Note", folder)
    upload(alice, text, "note.txt", samples.text("plain\n"))
    for document_id in (scan, text):
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    plain = zipfile.ZipFile(io.BytesIO(
        alice.get(f"/api/nodes/download/?node_ids={folder}").content))
    assert sorted(plain.namelist()) == ["Mail/", "Mail/Letter.png", "Mail/Note.txt"]
    archive = zipfile.ZipFile(io.BytesIO(
        alice.get(f"/api/nodes/download/?node_ids={folder}&searchable=1").content))
    assert sorted(archive.namelist()) == ["Mail/", "Mail/Letter.pdf", "Mail/Note.txt"]
    assert pages_text(archive.read("Mail/Letter.pdf")) == ["Hello zip"]
    stored = sorted(p.name for p in (config.data_dir / "files").rglob("*") if p.is_file())
    assert len([n for n in stored if n.endswith(".searchable.pdf")]) == 1
    assert alice.delete(f"/api/nodes/{folder}/").status_code == 204
    assert alice.delete(f"/api/trash/{folder}/").status_code == 204  # for good
    assert [p for p in (config.data_dir / "files").rglob("*") if p.is_file()] == []
    assert [p for p in (config.data_dir / "work").rglob("*") if p.is_file()] == []


@pytest.mark.config(searchable_pdf=False)
def test_searchable_pdfs_can_be_switched_off(alice):
    _, attributes = processed(alice, "letter.png", samples.png("No PDF please"))
    assert attributes["versions"][0]["searchable_pdf"] is False


def test_backups_carry_searchable_pdfs_and_verify_checks_them(alice, config, tmp_path):
    import subprocess
    import sys

    _, attributes = processed(alice, "letter.png", samples.png("Backed up words"))
    version_id = attributes["versions"][0]["id"]

    def dms(*args):
        return subprocess.run([sys.executable, "-m", "dms", *args], capture_output=True, text=True)

    # From either engine into a data dir of the default kind (SQLite).
    assert dms("backup", str(tmp_path / "b.zip"), *config_args(config)).returncode == 0
    names = zipfile.ZipFile(tmp_path / "b.zip").namelist()
    assert f"files/{version_id[:2]}/{version_id}.searchable.pdf" in names
    restored = tmp_path / "restored"
    assert dms("restore", str(tmp_path / "b.zip"), "--data-dir", str(restored)).returncode == 0
    searchable = restored / "files" / version_id[:2] / f"{version_id}.searchable.pdf"
    assert pages_text(searchable.read_bytes()) == ["Backed up words"]
    checked = dms("verify", "--data-dir", str(restored))
    assert (checked.returncode, checked.stdout.splitlines()[0]) == (0, "Checked 2 stored files.")
    searchable.write_bytes(b"%PDF-1.4 damaged")
    damaged = dms("verify", "--data-dir", str(restored))
    assert damaged.returncode == 1
    assert f"  version {version_id} (its searchable PDF) ({searchable})" in \
        damaged.stdout.splitlines()



def read_now(services, user, document_id: str) -> str:
    """Read the document's latest version in this thread, as a worker of the queue would (the
    fast tier without workers: nothing is read behind the test's back); its id."""
    processor = services.jobs
    assert isinstance(processor, Processor)
    version_id = documents.versions(document_id)[-1].id
    processor.process(version_id)
    assert tree.owned_node(user, document_id).ocr_status == "succeeded"
    return version_id


def test_a_turn_of_a_version_still_being_read_keeps_the_searchable_pdf(services):
    """Issue 44, point 9: two turns in a row left no searchable PDF. The second turn took its
    pages from a version still being read, whose searchable PDF did not exist yet: the page that
    kept its text had no PDF of it, and the new version got none. Now its text comes from the
    base that version was given (or the page is read again)."""
    alice = new_user("alice")
    document_id = domaintier.new_document(services, alice, "scan.pdf")
    upload_file(services, alice, document_id, "scan.pdf",
                scanned_pdf(["Invoice alpha", "Receipt bravo"]))
    read_now(services, alice, document_id)
    first_page = page_ids(document_id)[0]
    operations.rotate_pages(services, alice, [{"id": first_page, "angle": 90}])
    turned = documents.versions(document_id)[-1]
    assert turned.searchable_size is None  # not read yet: its first page waits for Tesseract
    operations.rotate_pages(services, alice, [{"id": page_ids(document_id)[0], "angle": -90}])
    latest = read_now(services, alice, document_id)

    versions = documents.versions(document_id)
    assert [v.searchable_size is not None for v in versions] == [True, False, True]
    assert versions[-1].id == latest
    searchable = services.store.searchable_path(latest).read_bytes()
    assert pages_text(searchable) == ["Invoice alpha", "Receipt bravo"]
    assert [p.get_rotation() for p in pypdfium2.PdfDocument(searchable)] == [0, 0]


def test_two_rotations_in_a_row_keep_the_searchable_pdf(alice):
    """The same through the API with the server's workers, the second turn at once."""
    document_id, _ = processed(alice, "scan.pdf", scanned_pdf(["Invoice alpha", "Receipt bravo"]))
    for angle in (90, -90):
        page_id = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
            "versions"][-1]["pages"][0]["id"]
        response = alice.post("/api/pages/rotate/", {"pages": [{"id": page_id, "angle": angle}]},
                              media=JSON)
        assert response.status_code == 204, response.text
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    versions = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"]
    assert [v["number"] for v in versions] == [1, 2, 3]
    assert versions[-1]["searchable_pdf"] is True
    response = alice.get(f"/api/documents/{document_id}/download/?searchable=1")
    assert response.status_code == 200, response.text
    assert pages_text(response.content) == ["Invoice alpha", "Receipt bravo"]


def test_a_page_read_by_a_version_still_being_read_is_read_again_by_the_next(services):
    """A page Tesseract read in a version whose reading has not ended has a PDF of its text
    only in that version's work folder: the next version reads it again, and gets a searchable
    PDF of every page."""
    alice = new_user("alice")
    document_id = domaintier.new_document(services, alice, "scan.pdf")
    upload_file(services, alice, document_id, "scan.pdf",
                scanned_pdf(["Invoice alpha", "Receipt bravo"]))
    processor = services.jobs
    assert isinstance(processor, Processor)
    # A worker told to stop saves the page it read and leaves the rest for later.
    processor._stopping.set()
    try:
        processor.process(documents.versions(document_id)[-1].id)
    finally:
        processor._stopping.clear()
    assert [(p.number, p.method) for p in documents.versions(document_id)[-1].pages
            .order_by(Page.number)] == [(1, "ocr"), (2, None)]
    # The second page turned, the first kept as it is, with its text.
    operations.rotate_pages(services, alice, [{"id": page_ids(document_id)[1], "angle": 90}])
    latest = read_now(services, alice, document_id)
    searchable = services.store.searchable_path(latest).read_bytes()
    assert len(pypdfium2.PdfDocument(searchable)) == 2
    assert pages_text(searchable)[0] == "Invoice alpha"
