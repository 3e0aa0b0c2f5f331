"""Links planted in the consume folder, with the real server polling it: none is ever followed, as
.failed, .done, a user's folder or anything in it, nor a file or a folder swapped for a link between
a look and the opening; a tree deeper than any path does not stop the others, and thousands of
planted links are not logged at every look."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os

import pytest

from tests.harness import samples
from tests.harness.consume import (
    CONSUME,
    EXE,
    REASON,
    deep_chain,
    inbox_titles,
    looks,
    remove_chain,
)
from tests.harness.waiting import wait_for


@pytest.fixture
def config(config, tmp_path):
    """Every server here polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


@pytest.fixture
def victims(tmp_path, config):
    """Files outside the consume folder that a link might lead to: one outside everything, one
    in the data dir standing in for dms.db and mail.key."""
    outside = tmp_path / "outside"
    outside.mkdir()
    files = {outside / "program.exe": b"victim 1", outside / "program.exe.txt": b"victim 2",
             outside / "letter.pdf": samples.pdf(["Private letter"]),
             config.data_dir / "victim.db": b"SQLite format 3\x00" + b"\x01" * 100}
    config.data_dir.mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        path.write_bytes(content)
    yield files
    for path, content in files.items():
        assert path.read_bytes() == content, f"{path} was changed"


def warnings_about(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


def test_a_link_as_failed_user_folder_is_not_followed(alice, consume_dir, victims, tmp_path,
                                                      caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    (consume_dir / ".failed").mkdir(parents=True)
    (consume_dir / ".failed" / alice.username).symlink_to(tmp_path / "outside")
    user_dir = consume_dir / alice.username
    user_dir.mkdir()
    (user_dir / "program.exe").write_bytes(EXE)
    wait_for(lambda: warnings_about(caplog, "stays where it is"))
    looks()
    assert (user_dir / "program.exe").read_bytes() == EXE  # stays, not tried again and again
    assert warnings_about(caplog, "stays where it is") == [
        f"consume folder: 'program.exe' of '{alice.username}' cannot be moved to "
        f".failed/{alice.username}/ (a symbolic link or a file where a folder belongs); it stays "
        "where it is until it changes"]
    assert len(warnings_about(caplog, "consume folder: refused 'program.exe'")) == 1


def test_links_as_failed_targets_are_replaced_not_written_through(alice, consume_dir, victims,
                                                                  tmp_path, config):
    failed = consume_dir / ".failed" / alice.username
    failed.mkdir(parents=True)
    (failed / "program.exe").symlink_to(tmp_path / "outside" / "program.exe")
    (failed / "program.exe.txt").symlink_to(config.data_dir / "victim.db")
    (consume_dir / alice.username).mkdir()
    (consume_dir / alice.username / "program.exe").write_bytes(EXE)
    wait_for(lambda: not (failed / "program.exe.txt").is_symlink())
    assert not (failed / "program.exe").is_symlink()
    assert (failed / "program.exe").read_bytes() == EXE
    assert (failed / "program.exe.txt").read_text() == REASON


def test_a_link_as_the_failed_folder_itself_is_not_followed(alice, consume_dir, victims,
                                                            tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    consume_dir.mkdir(parents=True, exist_ok=True)
    (consume_dir / ".failed").symlink_to(tmp_path / "outside")
    (consume_dir / alice.username).mkdir()
    (consume_dir / alice.username / "program.exe").write_bytes(EXE)
    wait_for(lambda: warnings_about(caplog, "stays where it is"))
    assert (consume_dir / alice.username / "program.exe").read_bytes() == EXE
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == [
        "letter.pdf", "program.exe", "program.exe.txt"]


@pytest.mark.config(consume_keep=True)
def test_a_link_in_done_is_not_followed(alice, consume_dir, victims, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    (consume_dir / ".done").mkdir(parents=True)
    (consume_dir / ".done" / alice.username).symlink_to(tmp_path / "outside")
    (consume_dir / alice.username).mkdir()
    (consume_dir / alice.username / "note.txt").write_bytes(samples.text("kept\n"))
    wait_for(lambda: warnings_about(caplog, "stays where it is"))
    looks()
    assert list(inbox_titles(alice)) == ["note.txt"]  # imported once, then left in place
    assert (consume_dir / alice.username / "note.txt").is_file()
    assert not (tmp_path / "outside" / "note.txt").exists()


def test_links_in_a_users_tree_and_as_a_user_folder_are_not_followed(alice, bob, config,
                                                                     consume_dir, victims,
                                                                     tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    outside = tmp_path / "outside"
    user_dir = consume_dir / alice.username
    user_dir.mkdir(parents=True)
    (user_dir / "letter.pdf").symlink_to(outside / "letter.pdf")
    (user_dir / "secrets").symlink_to(outside)
    (user_dir / "database.pdf").symlink_to(config.data_dir / "victim.db")
    (consume_dir / bob.username).symlink_to(outside)
    (user_dir / "real.txt").write_bytes(samples.text("a real file\n"))
    wait_for(lambda: inbox_titles(alice).get("real.txt"))
    looks()
    assert list(inbox_titles(alice)) == ["real.txt"]
    assert inbox_titles(bob) == {}
    assert sorted(warnings_about(caplog, "symbolic link")) == sorted([
        f"consume folder: 'database.pdf' of '{alice.username}' is a symbolic link; it is not "
        "followed",
        f"consume folder: 'letter.pdf' of '{alice.username}' is a symbolic link; it is not "
        "followed",
        f"consume folder: 'secrets' of '{alice.username}' is a symbolic link; it is not followed",
        f"consume folder: '{bob.username}' is a symbolic link or not a folder; it is not "
        "followed"])
    assert (user_dir / "letter.pdf").is_symlink() and (consume_dir / bob.username).is_symlink()


def test_a_file_swapped_for_a_link_is_not_opened_through_it(tmp_path):
    """The moment between looking and opening: the file is opened with O_NOFOLLOW relative to its
    folder's descriptor, so a link put in its place is refused, whatever it points at."""
    from dms.files import safedir

    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "secret.txt").write_bytes(b"secret")
    (folder / "scan.txt").symlink_to(tmp_path / "secret.txt")
    (folder / "sub").symlink_to(tmp_path)
    fd = safedir.open_directory(None, str(folder))
    try:
        with pytest.raises(safedir.NotAFile):
            safedir.open_file(fd, "scan.txt")
        with pytest.raises(safedir.NotADirectory):
            with safedir.directory(fd, ("sub",)):
                pass
    finally:
        os.close(fd)


def test_a_990_level_tree_of_one_user_does_not_stop_the_others(alice, bob, consume_dir, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    (consume_dir / alice.username).mkdir(parents=True)
    # deeper than any path the file system takes whole
    deep_chain(consume_dir / alice.username, 990, "deep.txt", samples.text("deep down\n"))
    (consume_dir / alice.username / "top.txt").write_bytes(samples.text("on top\n"))
    (consume_dir / bob.username).mkdir()
    (consume_dir / bob.username / "note.txt").write_bytes(samples.text("Bob's note\n"))
    wait_for(lambda: inbox_titles(bob).get("note.txt"))
    wait_for(lambda: inbox_titles(alice).get("top.txt"))
    looks()
    deep = warnings_about(caplog, "folders deep")
    assert deep == [f"consume folder: '{'/'.join(['d'] * 101)}' of '{alice.username}' is more "
                    "than 100 folders deep; what lies below is not imported"]
    remove_chain(consume_dir / alice.username / "d")  # pytest's own clean-up would recurse


@pytest.mark.config(consume_max_depth=2, consume_max_entries=5)
def test_the_depth_and_the_entries_a_look_reads_are_settings(alice, bob, consume_dir, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    deep = consume_dir / alice.username / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_bytes(samples.text("three folders down\n"))
    (deep.parent / "two.txt").write_bytes(samples.text("two folders down\n"))
    (consume_dir / bob.username).mkdir()
    for number in range(8):
        (consume_dir / bob.username / f"note{number}.txt").write_bytes(
            samples.text(f"note {number}\n"))
    def in_b():
        a = inbox_titles(alice).get("a")
        b = a and inbox_titles(alice, a).get("b")
        return b and inbox_titles(alice, b)

    wait_for(lambda: in_b() and len(inbox_titles(bob)) == 8)  # 5 in one look, then the rest
    looks()
    assert list(in_b()) == ["two.txt"]  # a/b/c is not looked into
    assert warnings_about(caplog, "folders deep") == [
        f"consume folder: 'a/b/c' of '{alice.username}' is more than 2 folders deep; what lies "
        "below is not imported"]
    assert warnings_about(caplog, "entries") == [
        f"consume folder: the folder of '{bob.username}' holds more than 5 entries; only the first "
        "are looked at"]


def open_paths() -> set[str]:
    """What this process (the server runs in a thread of it) has open right now."""
    paths = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            paths.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return paths


def test_a_folder_swapped_for_a_link_during_a_look_is_not_followed(alice, consume_dir, victims,
                                                                   tmp_path, caplog):
    """While the server reads one file of a folder, the folder is replaced by a link to a folder
    outside holding a file of the same name, size and time as the next one: that file is never
    opened through the link (it was imported, then removed, by the walk that followed paths); the
    real one is imported from where the folder went."""
    caplog.set_level(logging.WARNING, logger="dms.consume")
    outside = tmp_path / "outside"
    victim = outside / "letter.pdf"
    staging = consume_dir / ".staging"
    (staging / "sub").mkdir(parents=True)
    (staging / "sub" / "a-big.txt").write_bytes(samples.text("a line of a long text\n") * 3_000_000)
    planted = b"x" * victim.stat().st_size  # plain text, as long as the letter
    (staging / "sub" / "letter.pdf").write_bytes(planted)
    os.utime(staging / "sub" / "letter.pdf", ns=(victim.stat().st_atime_ns,
                                                 victim.stat().st_mtime_ns))
    staging.rename(consume_dir / alice.username)
    sub = consume_dir / alice.username / "sub"
    wait_for(lambda: str(sub / "a-big.txt") in open_paths(), timeout=60)
    sub.rename(sub.with_name("sub.real"))
    sub.symlink_to(outside)
    moved = wait_for(lambda: inbox_titles(alice).get("sub.real"))
    letter = wait_for(lambda: inbox_titles(alice, moved).get("letter.pdf"))
    assert hashlib.sha256(alice.get(f"/api/documents/{letter}/download/").content).digest() == (
        hashlib.sha256(planted).digest())
    assert list(inbox_titles(alice, inbox_titles(alice)["sub"])) == ["a-big.txt"]
    assert warnings_about(caplog, "'sub' of") == [
        f"consume folder: 'sub' of '{alice.username}' is a symbolic link; it is not followed"]
