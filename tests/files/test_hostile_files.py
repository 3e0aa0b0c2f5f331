"""Hostile files (issue 11): whatever a file claims, the work it causes is bounded — pages that
exist, pixels per frame, pixels per render — and the answer says why a file is refused."""

from __future__ import annotations

import io
import threading
import time

import pytest
from PIL import Image

from dms.files import pdf
from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.database import snapshot
from tests.harness.documents import (new_document, stored_files, temporary_files, upload,
                                     TOO_MANY_PIXELS)
from tests.harness.memory import peak_growth_mib, peak_rss_mib
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
    assert time.monotonic() - started < 5  # a million page rows took minutes before issue 11
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

    peak = peak_rss_mib(fetch)
    assert preview["response"].status_code == 200
    assert preview["response"].headers["Content-Type"] == "image/jpeg"
    image = Image.open(io.BytesIO(preview["response"].content))
    assert image.size == (4, 4000)  # 1000 px wide would be 1,000 x 1,000,000 px
    assert peak < 500, f"peak RSS {peak:.0f} MiB"


@pytest.mark.slow
def test_a_huge_page_is_read_within_the_pixel_budget(alice):
    """A 200 x 200 inch page (the largest PDF allows) at 300 dpi would be 3.6 billion pixels;
    it is rendered at 25 megapixels and Tesseract is told the resolution it got."""
    document_id = new_document(alice)
    outcome = {}

    def process():
        upload(alice, document_id, "huge.pdf", samples.pdf_with_page_size(14_400, 14_400))
        outcome["statuses"] = wait_processed(alice, document_id, timeout=120)

    # What the page adds to the server's process (pdfium and Tesseract run in children): the
    # suite's earlier servers leave this process large, and its whole size says nothing here.
    growth = peak_growth_mib(process)
    assert outcome["statuses"][-1] == "succeeded"
    assert growth < 500, f"peak RSS growth {growth:.0f} MiB"
    page_id = document(alice, document_id)["versions"][0]["pages"][0]["id"]
    page = alice.get(f"/api/pages/{page_id}/").json()["data"]["attributes"]
    assert (page["number"], page["text"]) == (1, "")


# -- PDF content bombs (issue 22): pdfium runs in reader processes with a memory and a time limit

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
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"  # 2.7 GB before issue 22
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


def test_pages_sharing_a_huge_content_stream_are_refused_within_seconds(alice, config):
    bomb = samples.pdf_content_bomb(300, pages=200)
    document_id = new_document(alice)
    before = snapshot(config)
    started = time.monotonic()
    assert_error(upload(alice, document_id, "shared.pdf", bomb), 400, "invalid",
                 pdf_refusal("slow"))
    # 5 s plus 2 s per MiB of the file, and the page being parsed when that time was up: each
    # page took about 3 s here; reading all of them took minutes before issue 22.
    assert time.monotonic() - started < 30
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


@pytest.mark.socket  # waitress' threads busy, another client served
def test_a_page_that_renders_forever_gets_no_preview_and_others_are_served(alice, bob,
                                                                          monkeypatch):
    monkeypatch.setattr(pdf, "PREVIEW_SECONDS", 2)
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
    for answer in answers:
        assert_error(answer, 503, "unavailable", "This page takes too long to render: its "
                                                 "content is too large or too complex for dms.")
    assert max(slowest) < 1.5, slowest  # never behind a lock that a preview holds


def test_a_page_that_renders_forever_fails_its_reading_with_the_reason(alice, monkeypatch):
    monkeypatch.setattr(pdf, "PAGE_SECONDS", 2)
    document_id = new_document(alice)
    assert upload(alice, document_id, "slow.pdf", samples.pdf_slow_to_render()).status_code == 201
    assert wait_processed(alice, document_id, timeout=120)[-1] == "failed"
    assert document(alice, document_id)["ocr_error"] == (
        "Page 1 takes too long to read: its content is too large or too complex for dms.")
