"""Owner-only files (docs/operations.md, "Who can read the files"): whatever the umask dms is
started with, the data dir, the database, the stored files and backups are readable by their owner
only; an installation made before is tightened at start with a log line, and `dms verify` reports
what is still loose (`--repair` tightens it). Checked with stat, as another local account would find
them."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
import requests

from tests.harness import samples
from tests.harness.processes import Running, dms_command, environment

# Sockets (pytest-socket): servers in subprocesses, asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # the data dir's own files


@pytest.fixture
def loose_umask():
    """The usual umask of a login shell: new files 0644, directories 0755."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes_below(root: Path) -> dict[str, str]:
    """Every entry below `root` (and root itself) with its permission bits, e.g. '0600'."""
    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.lstat().st_mode))
    return found


def owner_only(found: dict[str, str], root: Path) -> dict[str, str]:
    """What `found` should be: 0700 for directories, 0600 for everything else."""
    return {name: oct(0o700 if (root / name).is_dir() else 0o600) for name in found}


def loosen(path: Path) -> None:
    try:
        path.chmod(0o755 if path.is_dir() else 0o644)
    except FileNotFoundError:
        pass  # a temporary file of the search index, gone meanwhile


def dms(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(dms_command(*args), env=environment(), capture_output=True, text=True)


@pytest.mark.slow
def test_what_dms_writes_is_owner_only_whatever_the_umask(tmp_path, loose_umask):
    data_dir = tmp_path / "data"
    server = Running(data_dir, DMS_ADMIN_PASSWORD="admin-password-1")
    try:
        session = requests.Session()
        token = session.post(server.url + "/api/auth/login/", json={
            "username": "admin", "password": "admin-password-1"}).json()["token"]
        session.headers["Authorization"] = f"Token {token}"
        response = session.put(server.url + "/api/document/upload/letter.pdf",
                               data=samples.pdf(["Owner only"]),
                               headers={"Content-Type": "application/pdf"})
        assert response.status_code == 201, response.text
    finally:
        assert server.stop() == 0
    made = dms("backup", str(tmp_path / "backup.zip"), "--data-dir", str(data_dir))
    assert made.returncode == 0, made.stderr
    found = modes_below(data_dir)
    assert any(name.startswith("files/") and name.count("/") == 2 for name in found), found
    assert found == owner_only(found, data_dir)
    assert oct(stat.S_IMODE((tmp_path / "backup.zip").stat().st_mode)) == "0o600"

    restored = dms("restore", str(tmp_path / "backup.zip"), "--data-dir",
                   str(tmp_path / "restored"))
    assert restored.returncode == 0, restored.stderr
    found = modes_below(tmp_path / "restored")
    assert found == owner_only(found, tmp_path / "restored")


@pytest.mark.slow
def test_an_installation_made_before_is_tightened_and_verify_reports_loose_modes(
        tmp_path, loose_umask):
    data_dir = tmp_path / "data"
    assert Running(data_dir, DMS_ADMIN_PASSWORD="admin-password-1").stop() == 0
    # As an older dms left it, or a person copying files in with their own umask.
    for path in [data_dir, *data_dir.rglob("*")]:
        loosen(path)
    # While verify has the database open, SQLite's -wal and -shm files are there too, with the
    # database's mode.
    names = {path.name for path in data_dir.iterdir()} | {"dms.db-wal", "dms.db-shm"}
    top = [data_dir, *(data_dir / name for name in sorted(names))]

    checked = dms("verify", "--data-dir", str(data_dir))
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    title = (f"{len(top)} entries of the data dir that other local users may read (repair makes "
             "them owner-only):")
    assert lines[lines.index(title) + 1:lines.index(title) + 1 + len(top)] == \
        [f"  {path}" for path in top]
    assert lines[-1] == "Problems found."

    repaired = dms("verify", "--repair", "--data-dir", str(data_dir))
    assert repaired.returncode == 0, repaired.stdout
    assert repaired.stdout.splitlines()[0] == \
        f"Made {len(top)} entries of the data dir owner-only: {', '.join(map(str, top))}."
    still_there = [path for path in top if path.exists()]  # the -wal and -shm went with verify
    assert [modes_below(path)["."] for path in still_there] == \
        ["0o700" if path.is_dir() else "0o600" for path in still_there]

    # The start does the same, and says so once.
    top = [data_dir, *sorted(data_dir.iterdir())]
    for path in top:
        loosen(path)
    server = Running(data_dir)
    try:
        warnings = [line for line in server.lines if "other local users could read" in line]
        assert len(warnings) == 1 and warnings[0].rstrip().endswith(
            f"other local users could read {len(top)} entries of the data dir; they are "
            f"owner-only now: {', '.join(map(str, top[:10]))}")
        assert [modes_below(path)["."] for path in top] == \
            ["0o700" if path.is_dir() else "0o600" for path in top]
    finally:
        assert server.stop() == 0
    assert dms("verify", "--data-dir", str(data_dir)).stdout.splitlines()[-1] == \
        "No problems found."


@pytest.mark.slow
def test_a_files_dir_of_its_own_is_tightened_at_start_and_reported_by_verify(tmp_path):
    data_dir, files_dir = tmp_path / "data", tmp_path / "shared-files"
    files_dir.mkdir()
    files_dir.chmod(0o755)  # a mount point made with the usual umask
    server = Running(data_dir, DMS_FILES_DIR=str(files_dir), DMS_ADMIN_PASSWORD="admin-password-1")
    try:
        warnings = [line for line in server.lines if "other local users could read" in line]
        assert len(warnings) == 1 and warnings[0].rstrip().endswith(
            f"other local users could read 1 entries of the data dir; they are owner-only now: "
            f"{files_dir}")
        assert modes_below(files_dir)["."] == "0o700"
    finally:
        assert server.stop() == 0

    files_dir.chmod(0o755)  # loosened again while dms is stopped
    checked = dms("verify", "--data-dir", str(data_dir), "--files-dir", str(files_dir))
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    title = ("1 entries of the data dir that other local users may read (repair makes them "
             "owner-only):")
    assert lines[lines.index(title) + 1:lines.index(title) + 2] == [f"  {files_dir}"]
    assert lines[-1] == "Problems found."
    repaired = dms("verify", "--repair", "--data-dir", str(data_dir), "--files-dir",
                   str(files_dir))
    assert repaired.returncode == 0, repaired.stdout
    assert repaired.stdout.splitlines()[0] == \
        f"Made 1 entries of the data dir owner-only: {files_dir}."
    assert modes_below(files_dir)["."] == "0o700"
