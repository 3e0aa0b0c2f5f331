"""Hostile files (issue 11): whatever a file claims, the work it causes is bounded — pages that
exist, pixels per frame, pixels per render — and the answer says why a file is refused."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

import samples
from support import assert_error, snapshot, wait_for
from test_documents import new_document, stored_files, temporary_files, upload
from test_limits import TOO_MANY_PIXELS


def peak_rss_mib(action) -> float:
    """The peak resident memory of this process (the server runs in it) while `action` runs, in
    MiB: Linux resets the high-water mark when 5 is written to clear_refs."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    action()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/self/status")


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
    assert wait_for(alice, document_id)[-1] == "succeeded"
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
        outcome["statuses"] = wait_for(alice, document_id, timeout=120)

    peak = peak_rss_mib(process)
    assert outcome["statuses"][-1] == "succeeded"
    assert peak < 500, f"peak RSS {peak:.0f} MiB"
    page_id = document(alice, document_id)["versions"][0]["pages"][0]["id"]
    page = alice.get(f"/api/pages/{page_id}/").json()["data"]["attributes"]
    assert (page["number"], page["text"]) == (1, "")
