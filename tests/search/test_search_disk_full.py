"""A full disk under the search index: the indexer says so once, without a traceback, searches
keep answering from the index's last commit, and the changes made meanwhile reach the index when
there is space again. The index lives on a small tmpfs of its own (root only), so the database
keeps writing."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from dms.config import Config
from tests.harness.disk import fill, small_tmpfs
from tests.harness.documents import new_document
from tests.harness.users import ADMIN_PASSWORD
from tests.harness.waiting import wait_for, wait_indexed

pytestmark = pytest.mark.sqlite_only  # the tantivy index of the SQLite mode

WAITING = ("the disk is full, so the search index holds the changes made until now and takes "
           "the rest when there is space again")


@pytest.fixture
def index_disk(tmp_path):
    with small_tmpfs(tmp_path / "data" / "search", "4m") as mount_point:
        yield mount_point


@pytest.fixture
def config(index_disk, tmp_path) -> Config:
    return Config(host="127.0.0.1", port=0, data_dir=tmp_path / "data", threads=4,
                  admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)


def indexer_cpu_seconds() -> float:
    """The CPU time the search indexer's thread has used (Linux: its /proc task's utime+stime)."""
    [thread] = [t for t in threading.enumerate() if t.name == "search-indexer"]
    fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def titles(client, q: str) -> list[str]:
    response = client.get("/api/search/", params={"q": q})
    assert response.status_code == 200, response.text
    return [result["title"] for result in response.json()]


def rename(client, node_id: str, title: str) -> None:
    body = {"data": {"type": "documents", "id": node_id, "attributes": {"title": title}}}
    response = client.patch(f"/api/documents/{node_id}/", body)
    assert response.status_code == 200, response.text


def test_a_full_index_disk_is_said_once_and_the_index_catches_up(alice, index_disk, config,
                                                                   caplog):
    caplog.set_level(logging.INFO)
    document_id = new_document(alice, "Quarterly invoice")
    wait_indexed(config)
    fill(index_disk)
    caplog.clear()

    used = indexer_cpu_seconds()
    rename(alice, document_id, "Annual statement")  # the database has room: 200
    time.sleep(4)  # the indexer tries at once, then again after 1 and 2 s
    # ... and no more often: the commit that woke it does not cut its back-off short (it did,
    # and the indexer tried again and again at once, a core busy until the disk had room).
    assert indexer_cpu_seconds() - used < 1.0
    # The index's last commit: the old words still find it, shown as it is now.
    assert titles(alice, "quarterly") == ["Annual statement"]
    assert titles(alice, "annual") == []
    search_log = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "dms.search"]
    assert search_log == [("WARNING", WAITING)]
    assert not [r for r in caplog.records if r.exc_info], "no tracebacks while the disk is full"

    (index_disk / "filler").unlink()
    wait_indexed(config, timeout=90)  # the next retry is at most a minute away
    assert titles(alice, "annual") == ["Annual statement"]
    assert titles(alice, "quarterly") == []

    def logged():  # said just after the commit that wait_indexed saw
        found = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "dms.search"]
        return found if len(found) > 1 else None
    assert wait_for(logged, timeout=10, interval=0.05) == [
        ("WARNING", WAITING), ("INFO", "the search index is written again: the disk has space")]
