"""The OCR queue under load: fair between users, bounded per document, and a deleted document's
reading stops at once."""

from __future__ import annotations

import logging
import os
import subprocess

import pytest

from dms.db.models import Page
from tests.harness import samples
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_for, wait_processed

WORDS = ["apple", "bread", "cheese", "dinner", "engine", "forest", "garden", "harbor", "island",
         "jacket", "kitchen", "letter", "market", "number", "orange", "pencil"]
FRAMES = len(WORDS)


def status(client, document_id) -> str:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["ocr_status"]


def tesseracts() -> list[str]:
    """Tesseract processes started by this process (the server runs in it)."""
    result = subprocess.run(["pgrep", "-P", str(os.getpid()), "tesseract"], capture_output=True,
                            text=True)
    return result.stdout.split()


def pages_read(document_id) -> int:
    return Page.select().join_from(Page, Page.version.rel_model).where(
        Page.version.rel_model.document == document_id, Page.method.is_null(False)).count()


@pytest.mark.config(ocr_workers=1, ocr_slice_seconds=1)
def test_another_users_letter_does_not_wait_for_a_long_scan(alice, bob):
    long_scan = new_document(alice, "long scan")
    assert upload(alice, long_scan, "scan.tiff", samples.tiff(
        [f"page {word}" for word in WORDS])).status_code == 201
    wait_for(lambda: status(alice, long_scan) == "started", timeout=60, interval=0.05)
    letter = new_document(bob, "letter")
    assert upload(bob, letter, "letter.png", samples.png("Dear Bob")).status_code == 201
    assert wait_processed(bob, letter)[-1] == "succeeded"
    # Bob's page was read between slices of Alice's scan, not after all of it.
    assert status(alice, long_scan) == "started"
    assert 0 < pages_read(long_scan) < FRAMES
    assert wait_processed(alice, long_scan, timeout=120)[-1] == "succeeded"
    text = alice.get(f"/api/documents/{long_scan}/ocr-text").json()["text"]
    assert text.split("\n\n") == [f"page {word}" for word in WORDS]
    assert bob.get(f"/api/documents/{letter}/ocr-text").json() == {"text": "Dear Bob"}


@pytest.mark.config(ocr_workers=1)
def test_deleting_a_document_stops_its_tesseract_at_once(alice, caplog):
    caplog.set_level(logging.INFO, logger="dms.processing")
    temporary_before = set(os.listdir("/tmp"))
    document_id = new_document(alice, "to delete")
    assert upload(alice, document_id, "scan.tiff", samples.tiff(
        [f"page {n}" for n in range(FRAMES)])).status_code == 201
    wait_for(lambda: pages_read(document_id) >= 1 and tesseracts(), timeout=60, interval=0.05)
    assert alice.delete(f"/api/documents/{document_id}/").status_code == 204
    wait_for(lambda: not tesseracts(), timeout=2, interval=0.05)
    wait_for(lambda: any("stopped reading version" in r.getMessage() for r in caplog.records),
             timeout=5, interval=0.05)
    # Tesseract read the pages through a pipe: nothing was left in /tmp.
    assert {n for n in set(os.listdir("/tmp")) - temporary_before if n.startswith("tess")} == set()
    # The worker is free at once for the next document.
    other = new_document(alice, "next")
    upload(alice, other, "next.png", samples.png("Next one"))
    assert wait_processed(alice, other, timeout=30)[-1] == "succeeded"


@pytest.mark.config(ocr_workers=1, ocr_slice_seconds=1, ocr_budget_minutes=0.01)
def test_a_document_over_its_time_budget_fails_with_a_reason(alice):
    # The least budget (0.6 s) and three times the frames: a fast machine read the 16 frames
    # within 1.2 s.
    frames = 3 * FRAMES
    document_id = new_document(alice, "too long")
    upload(alice, document_id, "scan.tiff", samples.tiff([f"page {n}" for n in range(frames)]))
    assert wait_processed(alice, document_id, timeout=60)[-1] == "failed"
    attributes = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    assert attributes["ocr_error"] == (
        "Processing took longer than 0.01 minutes, the most one document may take "
        "(DMS_OCR_BUDGET_MINUTES); the text read so far is kept.")
    assert 0 < pages_read(document_id) < frames
