"""Hostile files: whatever a file claims, the work it causes is bounded — pages that exist, pixels
per frame, pixels per render — and the answer says why a file is refused."""

from __future__ import annotations

import io
import threading
import time

import pytest
from PIL import Image

from dms.files.storage import DirectoryStore
from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import (
    TOO_MANY_PIXELS,
    new_document,
    stored_files,
    temporary_files,
    upload,
)
from tests.harness.memory import peak_growth_mib
from tests.harness.waiting import wait_processed


def document(client, document_id):
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]


def test_a_pdf_claiming_a_million_pages_is_counted_by_its_real_pages(alice, config):
    lie = samples.pdf_claiming_pages(1_000_000)
    assert len(lie) < 700
    document_id = new_document(alice)
    started = time.monotonic()
    response = upload(alice, document_id, "lie.pdf", lie)
    assert response.status_code == 201, response.text
    assert time.monotonic() - started < 5  # a million page rows once took minutes
    attributes = response.json()["data"]["attributes"]
    assert attributes["page_count"] == 1 and len(attributes["versions"][0]["pages"]) == 1
    assert len(response.content) < 5_000
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert document(alice, document_id)["page_count"] == 1


@pytest.mark.config(max_pages=5)
def test_more_pages_than_the_limit_are_refused(alice, config):
    document_id = new_document(alice)
    before = snapshot(config)
    assert_error(upload(alice, document_id, "six.pdf", samples.pdf([f"p{n}" for n in range(6)])),
                 400, "invalid", "The PDF has more than 5 pages, the most dms accepts "
                                 "(DMS_MAX_PAGES).")
    assert_error(upload(alice, document_id, "six.tiff", samples.tiff([f"p{n}" for n in range(6)])),
                 400, "invalid", "The image has more than 5 pages, the most dms accepts "
                                 "(DMS_MAX_PAGES).")
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []
    assert upload(alice, document_id, "five.pdf", samples.pdf(["a"] * 5)).status_code == 201


def test_a_tiff_whose_second_frame_is_a_bomb_is_refused(alice, config):
    bomb = samples.tiff_with_large_frame(1, (40_000, 40_000))
    document_id = new_document(alice)
    before = snapshot(config)
    assert_error(upload(alice, document_id, "bomb.tiff", bomb), 400, "invalid", TOO_MANY_PIXELS)
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


def test_a_very_tall_page_gets_a_bounded_preview(alice):
    document_id = new_document(alice)
    response = upload(alice, document_id, "tall.pdf", samples.pdf_with_page_size(1, 1000))
    page_id = response.json()["data"]["attributes"]["versions"][0]["pages"][0]["id"]
    preview = {}

    def fetch():
        preview["response"] = alice.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"})

    growth = peak_growth_mib(fetch)
    assert preview["response"].status_code == 200
    assert preview["response"].headers["Content-Type"] == "image/jpeg"
    image = Image.open(io.BytesIO(preview["response"].content))
    assert image.size == (4, 4000)  # 1000 px wide would be 1,000 x 1,000,000 px
    assert growth < 400, f"the server's memory grew by {growth:.0f} MiB"


@pytest.mark.slow
def test_a_huge_page_is_read_within_the_pixel_budget(alice):
    """A 200 x 200 inch page (the largest PDF allows) at 300 dpi would be 3.6 billion pixels;
    it is rendered at 25 megapixels and Tesseract is told the resolution it got."""
    document_id = new_document(alice)
    outcome = {}

    def process():
        upload(alice, document_id, "huge.pdf", samples.pdf_with_page_size(14_400, 14_400))
        outcome["statuses"] = wait_processed(alice, document_id, timeout=120)

    growth = peak_growth_mib(process)
    assert outcome["statuses"][-1] == "succeeded"
    assert growth < 400, f"the server's memory grew by {growth:.0f} MiB"
    page_id = document(alice, document_id)["versions"][0]["pages"][0]["id"]
    page = alice.get(f"/api/pages/{page_id}/").json()["data"]["attributes"]
    assert (page["number"], page["text"]) == (1, "")


# -- PDF content bombs: pdfium runs in reader processes with a memory and a time limit

def pdf_refusal(what: str) -> str:
    return {"memory": "The PDF needs more memory to read than dms allows for one file "
                      "(DMS_PDF_MEMORY_MB): its pages' content is too large, or the file is "
                      "damaged.",
            "slow": "The PDF takes too long to read: its pages' content is too large or too "
                    "complex for dms."}[what]


@pytest.mark.config(pdf_memory_mb=512)
def test_a_page_whose_content_inflates_to_a_gibibyte_is_refused_at_upload(alice, config):
    bomb = samples.pdf_content_bomb(1024)
    assert len(bomb) < 2_000_000
    document_id = new_document(alice)
    before = snapshot(config)
    answer = {}

    def send():
        answer["response"] = upload(alice, document_id, "bomb.pdf", bomb)

    growth = peak_growth_mib(send)
    assert_error(answer["response"], 400, "invalid", pdf_refusal("memory"))
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"  # once 2.7 GB
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


@pytest.mark.config(pdf_memory_mb=512)
def test_a_content_bomb_already_stored_fails_its_reading_and_its_preview(alice, config):
    """A bomb stored before the upload check existed (or brought back by a restore): its
    version's file is replaced behind the server's back after a harmless upload of one page."""
    document_id = new_document(alice)
    response = upload(alice, document_id, "harmless.pdf", samples.pdf(["harmless"]))
    assert response.status_code == 201, response.text
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    version = response.json()["data"]["attributes"]["versions"][0]
    page_id = version["pages"][0]["id"]
    store = DirectoryStore(config.files_path, config.data_dir)
    store.path(version["id"]).write_bytes(samples.pdf_content_bomb(1024))
    outcome = {}

    def read_and_preview():
        rerun = alice.post("/api/ocr/", {"doc_id": document_id}, media=JSON)
        assert rerun.status_code == 200, rerun.text
        outcome["statuses"] = wait_processed(alice, document_id, timeout=120)
        outcome["previews"] = [alice.get(f"/api/pages/{page_id}/",
                                         headers={"Accept": "image/jpeg"}) for _ in range(2)]

    growth = peak_growth_mib(read_and_preview)
    assert outcome["statuses"][-1] == "failed"
    assert document(alice, document_id)["ocr_error"] == (
        "Page 1 needs more memory to read than dms allows for one file (DMS_PDF_MEMORY_MB): its "
        "content is too large, or the file is damaged.")
    rendering = ("This page needs more memory to render than dms allows for one file "
                 "(DMS_PDF_MEMORY_MB): its content is too large, or the file is damaged.")
    for answer in outcome["previews"]:  # the second from the remembered failure
        assert_error(answer, 503, "unavailable", rendering)
    marker = store.preview_path(version["id"], 1).with_suffix(".failed")
    assert marker.read_text(encoding="utf-8") == rendering
    assert not store.preview_path(version["id"], 1).exists()
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"  # the readers are children


def test_pages_sharing_a_huge_content_stream_are_refused_within_seconds(alice, config):
    bomb = samples.pdf_content_bomb(300, pages=200)
    document_id = new_document(alice)
    before = snapshot(config)
    started = time.monotonic()
    assert_error(upload(alice, document_id, "shared.pdf", bomb), 400, "invalid",
                 pdf_refusal("slow"))
    # 5 s plus 2 s per MiB of the file, and the page being parsed when that time was up: each
    # page took about 3 s here; reading all of them once took minutes.
    assert time.monotonic() - started < 30
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


@pytest.mark.config(pdf_preview_seconds=2)
@pytest.mark.socket  # waitress' threads busy, another client served
def test_a_page_that_renders_forever_gets_no_preview_and_others_are_served(alice, bob):
    document_id = new_document(alice)
    alice.patch(f"/api/documents/{document_id}/", {"data": {
        "type": "documents", "id": document_id, "attributes": {"ocr": False}}})
    response = upload(alice, document_id, "slow.pdf", samples.pdf_slow_to_render())
    assert response.status_code == 201, response.text
    assert wait_processed(alice, document_id)[-1] == "succeeded"  # its text layer: empty, no OCR
    page_id = response.json()["data"]["attributes"]["versions"][0]["pages"][0]["id"]
    answers, slowest = [], []

    def preview():
        answers.append(alice.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"}))

    threads = [threading.Thread(target=preview) for _ in range(3)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        started = time.monotonic()
        assert bob.get("/api/users/me/").status_code == 200
        slowest.append(time.monotonic() - started)
    for thread in threads:
        thread.join()
    # Alice holds one reader at a time and has one call waiting: a third preview arriving while two
    # are in flight is told to wait for them.
    too_slow = [a for a in answers if a.status_code == 503]
    assert too_slow and len(too_slow) + sum(a.status_code == 429 for a in answers) == 3
    # The one waiting for alice's reader gets the same answer, or, on a machine so busy that the
    # first call took longer than a preview waits for a reader (5 s), "busy" (CI, once).
    too_long = ("This page takes too long to render: its content is too large or too complex "
                "for dms.")
    busy = "Every PDF reader of this server is busy; try again in a moment."
    details = [answer.json()["errors"][0]["detail"] for answer in too_slow]
    assert too_long in details and set(details) <= {too_long, busy}, details
    for answer, detail in zip(too_slow, details, strict=True):
        assert_error(answer, 503, "unavailable", detail)
    for answer in answers:
        if answer.status_code == 429:
            assert_error(answer, 429, "throttled", "Your other files are still being read; try "
                                                   "again when they are done.")
    assert max(slowest) < 1.5, slowest  # never behind a lock that a preview holds


@pytest.mark.config(pdf_page_seconds=2)
def test_a_page_that_renders_forever_fails_its_reading_with_the_reason(alice):
    document_id = new_document(alice)
    assert upload(alice, document_id, "slow.pdf", samples.pdf_slow_to_render()).status_code == 201
    assert wait_processed(alice, document_id, timeout=120)[-1] == "failed"
    assert document(alice, document_id)["ocr_error"] == (
        "Page 1 takes too long to read: its content is too large or too complex for dms.")
