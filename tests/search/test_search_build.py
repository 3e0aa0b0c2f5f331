"""A large search index is built by a process of its own (dms.search.build), not by a thread of
the server: searches answer 503 until it is done, a server stopped or killed meanwhile leaves no
builder behind and builds again at its next start, and a builder that fails is said in the log and
tried again."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from dms.search.build import BUILD_COMMAND, IN_PROCESS_NODES
from dms.search.index import MARKER
from tests.harness.waiting import wait_for, wait_indexed, wait_served
from tests.search.test_search_index import add_folders, make_folder, start, titles

pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]

BUILT_APART = "search index built (in a process of its own): "


def builders(index_dir: Path) -> list[int]:
    """The pids of the `dms _search-build` processes building `index_dir`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if BUILD_COMMAND.encode() in command and str(index_dir).encode() in command:
            found.append(int(entry.name))
    return found


def server_with_folders(data_dir: Path, count: int):
    """A stopped server's data dir with `count` folders `box N` in /home/archive, its index
    then deleted: the next start must build it (`count` + the admin's three nodes)."""
    server, admin = start(data_dir)
    try:
        parent = make_folder(admin, "archive", admin.home_id)
        add_folders(data_dir / "dms.db", parent, admin.user_id, "box", count)
        wait_indexed(data_dir / "dms.db", timeout=120)
    finally:
        assert server.stop() == 0
    for entry in (data_dir / "search").iterdir():
        entry.unlink()


def test_a_large_index_is_built_by_a_process_of_its_own(tmp_path):
    data_dir = tmp_path / "data"
    server_with_folders(data_dir, IN_PROCESS_NODES + 500)
    server, admin = start(data_dir)
    try:
        wait_served(lambda: admin.get("/api/search/", params={"q": "x"}), timeout=60)
        assert titles(admin, "box 2499") == ["box 2499"]
        assert admin.get("/health").json()["search"] == {
            "state": "ready", "pending_changes": 0, "indexed": IN_PROCESS_NODES + 503}
        assert builders(data_dir / "search") == []
        # Changes after the build reach the index as before (the server's own writer).
        make_folder(admin, "Quittung", admin.home_id)
        wait_indexed(data_dir / "dms.db")  # a folder is found as the index follows
        assert titles(admin, "quittung") == ["Quittung"]
    finally:
        assert server.stop() == 0
    assert f"{BUILT_APART}{IN_PROCESS_NODES + 503} folders and documents" in server.output
    assert "Traceback" not in server.output


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_server_stopped_or_killed_during_a_build_leaves_no_builder(tmp_path, signum):
    data_dir, index_dir = tmp_path / "data", tmp_path / "data" / "search"
    server_with_folders(data_dir, 20_000)
    server, admin = start(data_dir)

    def building() -> bool:
        health = admin.get("/health").json()["search"]
        return health["state"] == "rebuilding" and health["indexed"] >= 1000

    wait_for(building, timeout=60, interval=0.02, message="the build did not get going")
    [builder] = builders(index_dir)
    assert server.stop(signum) == (0 if signum == signal.SIGTERM else -signal.SIGKILL)
    # Stopped: killed by the server before it exits; orphaned: it ends itself within a batch.
    wait_for(lambda: not os.path.exists(f"/proc/{builder}") or _zombie(builder), timeout=20,
             message="the builder outlived its server")
    assert not (index_dir / MARKER).exists()  # not complete: the next start builds again
    server, admin = start(data_dir)
    try:
        wait_served(lambda: admin.get("/api/search/", params={"q": "x"}), timeout=120)
        assert titles(admin, "box 19999") == ["box 19999"]
        assert admin.get("/health").json()["search"]["indexed"] == 20_003
    finally:
        assert server.stop() == 0
    assert f"{BUILT_APART}20003 folders and documents" in server.output


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_failed_build_is_said_and_tried_again(tmp_path):
    data_dir, index_dir = tmp_path / "data", tmp_path / "data" / "search"
    server_with_folders(data_dir, IN_PROCESS_NODES + 500)
    index_dir.rmdir()
    index_dir.write_text("not a directory")  # the builder cannot make the index here
    server, admin = start(data_dir)
    server.drain()
    try:
        wait_for(lambda: "the search index builder exited with status 1" in server.output,
                 timeout=30, message=lambda: f"no failure said:\n{server.output}")
        response = admin.get("/api/search/", params={"q": "box"})
        assert response.status_code == 503, response.text
        index_dir.unlink()  # the next try (the indexer's back-off: 1 s, then 2, 4...) builds
        wait_served(lambda: admin.get("/api/search/", params={"q": "x"}), timeout=60)
        assert titles(admin, "box 2499") == ["box 2499"]
    finally:
        assert server.stop() == 0
    assert "dms: the search index could not be built: " in server.output
    assert BUILT_APART in server.output
