"""A full disk: uploads are refused with 507 and change nothing, reads, search, login and deletes
keep working, the queue stays quiet, and everything recovers when space returns. The data dir lives
on a small tmpfs mounted for the test (root only)."""

from __future__ import annotations

import logging
import time

import pytest

from dms.config import Config
from dms.files.storage import RESERVE_BYTES
from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.disk import fill, small_tmpfs
from tests.harness.documents import new_document, stored_files, temporary_files, upload
from tests.harness.users import ADMIN_PASSWORD
from tests.harness.waiting import wait_indexed, wait_processed

pytestmark = pytest.mark.sqlite_only  # a full disk under the SQLite file

DISK_FULL = ("The server's disk is full, so nothing was saved; "
             "ask the administrator to free some space.")


@pytest.fixture
def small_disk(tmp_path):
    with small_tmpfs(tmp_path / "disk", "48m") as mount_point:
        yield mount_point


@pytest.fixture
def config(small_disk) -> Config:
    return Config(host="127.0.0.1", port=0, data_dir=small_disk / "data", threads=4,
                  admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)


def test_a_full_disk_refuses_uploads_and_still_deletes(alice, small_disk, config, caplog):
    caplog.set_level(logging.INFO)
    kept = new_document(alice, "kept")
    upload(alice, kept, "kept.txt", samples.text("apples and pears\n"))
    doomed = new_document(alice, "doomed")
    upload(alice, doomed, "doomed.png", samples.png("Doomed letter"))
    for document_id in (kept, doomed):
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert (config.data_dir / ".space-reserve").stat().st_size == RESERVE_BYTES
    fill(small_disk)
    caplog.clear()

    before = snapshot(config)
    assert_error(upload(alice, kept, "big.pdf", samples.pdf(["x" * 80] * 200)), 507,
                 "insufficient_storage", DISK_FULL)
    assert_error(alice.put("/api/document/upload/x.txt", data=samples.text("more\n")), 507,
                 "insufficient_storage", DISK_FULL, media="application/json")
    assert snapshot(config) == before
    assert temporary_files(config) == []
    # Reading, searching and logging in keep working.
    assert alice.get(f"/api/nodes/{alice.home_id}/").status_code == 200
    assert [r["title"] for r in alice.get("/api/search/", params={"q": "apples"}).json()] == \
        ["kept"]
    again = alice.login("alice", "user-password-1")
    # Deleting works, into the trash and out of it for good: that is how space is made.
    assert again.delete(f"/api/documents/{doomed}/").status_code == 204
    assert again.get(f"/api/documents/{doomed}/").json() == NOT_FOUND
    assert again.delete(f"/api/trash/{doomed}/").status_code == 204
    time.sleep(3)  # the queue polls meanwhile: it must not complain every second
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name != "dms.storage"]
    assert len(noisy) <= 2, [r.getMessage() for r in noisy]
    assert not [r for r in caplog.records if r.exc_info], "no tracebacks while the disk is full"

    (small_disk / "filler").unlink()
    response = upload(again, kept, "v2.txt", samples.text("plums\n"))
    assert response.status_code == 201, response.text
    assert wait_processed(again, kept)[-1] == "succeeded"
    wait_indexed(config)  # the index is written after the text, by the indexer thread
    assert [r["title"] for r in again.get("/api/search/", params={"q": "plums"}).json()] == ["kept"]
    assert len(stored_files(config)) == 2  # kept's two versions; doomed's file is gone
    new_upload = again.put("/api/document/upload/after.txt", data=samples.text("after\n"))
    assert new_upload.status_code == 201
    assert (config.data_dir / ".space-reserve").stat().st_size == RESERVE_BYTES


@pytest.mark.socket  # through waitress: a body past 512 KiB is spooled into tmp/ as it arrives
def test_a_large_upload_on_a_full_disk_is_507_and_leaves_nothing(alice, small_disk, config,
                                                                   caplog):
    document_id = new_document(alice, "big")
    wait_indexed(config)  # the indexer writes the new title; not onto the full disk
    fill(small_disk)
    caplog.clear()
    before = snapshot(config)
    body = samples.text("a line of a large text file\n" * 80_000)  # 2.2 MiB
    assert_error(upload(alice, document_id, "big.txt", body), 507, "insufficient_storage",
                 DISK_FULL)
    assert snapshot(config) == before
    assert temporary_files(config) == []
    assert not [r for r in caplog.records if r.exc_info], "no tracebacks while the disk is full"
    (small_disk / "filler").unlink()
    assert upload(alice, document_id, "big.txt", body).status_code == 201
    wait_processed(alice, document_id)  # the worker reads the upload in a scratch folder of tmp/
    assert temporary_files(config) == []
