"""What stands in the way of a move or a removal in the consume folder, with the real server polling
it: a folder where a file would go in .failed or .done, a file that cannot be removed; the file
stays, reported once, and the rest goes on. Names too long for a reason file still get one."""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess

import pytest

from tests.harness import samples
from tests.harness.consume import CONSUME, EXE, REASON, inbox_titles, looks
from tests.harness.waiting import wait_for


@pytest.fixture
def config(config, tmp_path):
    """Every server here polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


def infos_about(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "dms.consume" and text in r.getMessage()]


def test_a_folder_in_the_way_in_failed_leaves_the_file_and_the_rest_goes_on(alice, consume_dir,
                                                                           caplog):
    """A folder where the refused file would go in .failed cannot be renamed over: the file stays,
    reported once and not refused again at every look, and the user's later files are taken."""
    caplog.set_level(logging.INFO, logger="dms.consume")
    (consume_dir / ".failed" / alice.username / "program.exe" / "planted").mkdir(parents=True)
    user_dir = consume_dir / alice.username
    user_dir.mkdir()
    (user_dir / "program.exe").write_bytes(EXE)
    (user_dir / "zz.txt").write_bytes(samples.text("after the refused file\n"))
    wait_for(lambda: inbox_titles(alice).get("zz.txt"))
    looks()
    assert (user_dir / "program.exe").read_bytes() == EXE
    assert not (user_dir / "zz.txt").exists()
    assert infos_about(caplog, "'program.exe'") == [
        f"consume folder: refused 'program.exe' of {alice.username}: {REASON.strip()}",
        f"consume folder: 'program.exe' of '{alice.username}' cannot be moved to "
        f".failed/{alice.username}/ (Is a directory); it stays where it "
        "is until it changes"]


@pytest.mark.config(consume_keep=True)
def test_a_folder_in_the_way_in_done_leaves_the_file_once_imported(alice, consume_dir, caplog):
    caplog.set_level(logging.INFO, logger="dms.consume")
    (consume_dir / ".done" / alice.username / "a.txt").mkdir(parents=True)
    user_dir = consume_dir / alice.username
    user_dir.mkdir()
    (user_dir / "a.txt").write_bytes(samples.text("imported, then in the way\n"))
    (user_dir / "b.txt").write_bytes(samples.text("imported and kept\n"))
    wait_for(lambda: (consume_dir / ".done" / alice.username / "b.txt").is_file())
    looks()
    assert sorted(inbox_titles(alice)) == ["a.txt", "b.txt"]
    assert (user_dir / "a.txt").is_file()
    assert infos_about(caplog, "'a.txt'") == [
        f"consume folder: imported 'a.txt' for {alice.username}",
        f"consume folder: 'a.txt' of '{alice.username}' cannot be moved to "
        f".done/{alice.username}/ (Is a directory); it stays where it is "
        "until it changes"]


@pytest.fixture
def immutable(tmp_path):
    """Folders marked immutable (chattr +i): not even root may remove a file from them."""
    folders = []

    def make(folder):
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not possible here")
        folders.append(folder)

    yield make
    for folder in folders:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_file_that_cannot_be_removed_is_imported_once_and_the_rest_goes_on(
        alice, consume_dir, caplog, immutable):
    caplog.set_level(logging.INFO, logger="dms.consume")
    user_dir = consume_dir / alice.username
    (user_dir / "locked").mkdir(parents=True)
    (user_dir / "locked" / "scan.txt").write_bytes(samples.text("cannot be removed\n"))
    (user_dir / "z.txt").write_bytes(samples.text("after the locked folder\n"))
    immutable(user_dir / "locked")
    wait_for(lambda: inbox_titles(alice).get("z.txt"))
    looks()
    assert sorted(inbox_titles(alice)) == ["locked", "z.txt"]
    assert list(inbox_titles(alice, inbox_titles(alice)["locked"])) == ["scan.txt"]
    assert (user_dir / "locked" / "scan.txt").is_file()
    assert infos_about(caplog, "scan.txt") == [
        f"consume folder: imported 'locked/scan.txt' for {alice.username}",
        f"consume folder: 'locked/scan.txt' of '{alice.username}' cannot be removed "
        "(Operation not permitted); it stays where it is until it changes"]


def test_names_too_long_for_a_reason_file_still_get_one(alice, consume_dir):
    """A refused file's reason is written under a short temporary name (a name of 83 CJK
    characters is 249 bytes: the old temporary name was longer than a name may be), and a name
    with no room for `.txt` gets its reason under a shortened name."""
    user_dir = consume_dir / alice.username
    user_dir.mkdir(parents=True)
    wide, long = "文" * 83, "a" * 251 + ".exe"
    (user_dir / wide).write_bytes(EXE)
    (user_dir / long).write_bytes(EXE)
    failed = consume_dir / ".failed" / alice.username
    wait_for(lambda: (failed / (wide + ".txt")).is_file()
               and (failed / ("a" * 251 + ".txt")).is_file())
    assert (failed / (wide + ".txt")).read_text() == REASON
    assert (failed / ("a" * 251 + ".txt")).read_text() == REASON
    assert (failed / wide).read_bytes() == (failed / long).read_bytes() == EXE
    assert sorted(os.listdir(failed)) == sorted([wide, wide + ".txt", long, "a" * 251 + ".txt"])
