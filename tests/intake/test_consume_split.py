"""The consume folder splits a scanned batch at separator sheets before it becomes documents
(DMS_SPLIT_ON_BARCODE): three letters between two QR sheets become three documents of 1, 2 and 1
pages in the user's inbox, imported (source: consume) and read; the same batch again (as a crash
before its removal would leave it) adds nothing."""

from __future__ import annotations

import dataclasses

import pytest

from tests.harness.consume import CONSUME, inbox_titles, looks
from tests.harness.pdfops import six_page_batch
from tests.harness.waiting import wait_for, wait_processed

PARTS = ["batch-1.pdf", "batch-2.pdf", "batch-3.pdf"]


@pytest.fixture
def config(config, tmp_path):
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", split_on_barcode=True,
                               **CONSUME)


def page_texts(client, document_id) -> list[str]:
    attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    return [" ".join(client.get(f"/api/pages/{page['id']}/",
                                headers={"Accept": "text/plain"}).text.split())
            for page in attributes["versions"][-1]["pages"]]


def test_a_batch_is_split_at_its_separator_sheets_once(alice, consume_dir, tmp_path):
    folder = consume_dir / alice.username
    folder.mkdir(parents=True)
    staged = tmp_path / "batch.pdf"
    staged.write_bytes(six_page_batch())
    (folder / "batch.pdf").write_bytes(staged.read_bytes())

    titles = wait_for(lambda: inbox_titles(alice) if sorted(inbox_titles(alice)) == PARTS
                      else None, timeout=120, message=lambda: str(inbox_titles(alice)))
    wait_for(lambda: not (folder / "batch.pdf").exists(), timeout=30)
    for document_id in titles.values():
        assert wait_processed(alice, document_id, timeout=180)[-1] == "succeeded"
    assert [page_texts(alice, titles[title]) for title in PARTS] == [
        ["Invoice alpha"], ["Letter bravo one", "Letter bravo two"], ["Notice charlie"]]
    history = alice.get(f"/api/nodes/{titles['batch-2.pdf']}/history/").json()["data"]
    imported = history[-1]["attributes"]
    assert (imported["action"], imported["details"]["source"], imported["actor"]) == \
        ("imported", "consume", None)

    (folder / "batch.pdf").write_bytes(staged.read_bytes())
    wait_for(lambda: not (folder / "batch.pdf").exists(), timeout=30)
    looks()
    assert inbox_titles(alice) == titles
