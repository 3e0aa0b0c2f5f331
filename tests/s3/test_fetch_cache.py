"""The read cache of object storage (dms.files.storage.s3.fetching): a document's pages read one
after the other fetch its object once; a copy is kept for minutes after its last use and within
a budget of bytes, never removed while in use, and a copy a process left behind goes after a
day."""

from __future__ import annotations

import os
import threading
import time

import pytest

from dms.files.storage.s3.fetching import STALE_SECONDS, FetchCache

pytestmark = pytest.mark.sqlite_only  # no database, no bucket: once is enough


def fetcher(data: bytes, calls: list[str]):
    def fetch(target) -> None:
        calls.append(target.name)
        target.write_bytes(data)
    return fetch


def test_pages_read_one_after_the_other_fetch_the_object_once(tmp_path):
    cache, calls = FetchCache(tmp_path / "fetched"), []
    for _ in range(5):
        with cache.copy_of("a" * 64, fetcher(b"the object", calls)) as path:
            assert path.read_bytes() == b"the object"
    assert len(calls) == 1
    assert [path.name for path in (tmp_path / "fetched").iterdir()] == \
        [f"{'a' * 64}-{os.getpid()}"]


def test_copies_past_the_budget_or_the_time_kept_go_but_never_one_in_use(tmp_path):
    cache, calls = FetchCache(tmp_path / "fetched", budget=10, keep=3600), []
    with cache.copy_of("first", fetcher(b"12345678", calls)) as first:
        with cache.copy_of("second", fetcher(b"abcdefgh", calls)) as second:
            assert first.is_file() and second.is_file()  # 16 bytes > 10, both in use
        assert first.is_file()  # in use still
    # The one let go while both were over the budget went; the one in use then stays (8 bytes).
    assert sorted(path.name.split("-")[0] for path in (tmp_path / "fetched").iterdir()) == \
        ["first"]
    quick = FetchCache(tmp_path / "quick", keep=0)
    with quick.copy_of("gone", fetcher(b"x", [])) as path:
        assert path.is_file()
    assert not path.exists()


def test_threads_reading_one_object_at_once_all_read_whole_bytes(tmp_path):
    cache, calls, seen = FetchCache(tmp_path / "fetched"), [], []
    data = os.urandom(256 * 1024)

    def read() -> None:
        with cache.copy_of("same", fetcher(data, calls)) as path:
            seen.append(path.read_bytes() == data)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert seen == [True] * 8
    assert 1 <= len(calls) <= 8
    assert [path.name for path in (tmp_path / "fetched").iterdir()] == [f"same-{os.getpid()}"]


def test_the_sweep_removes_what_a_process_that_ended_left_after_a_day(tmp_path):
    cache = FetchCache(tmp_path / "fetched")
    left = tmp_path / "fetched" / "old-1"
    left.write_bytes(b"left by a process that ended")
    young = tmp_path / "fetched" / "young-1"
    young.write_bytes(b"another process's, in use")
    old = time.time() - STALE_SECONDS - 60
    os.utime(left, (old, old))
    cache.sweep()
    assert sorted(path.name for path in (tmp_path / "fetched").iterdir()) == ["young-1"]
