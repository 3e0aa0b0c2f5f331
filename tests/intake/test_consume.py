"""The consume folder (issue 16), with the real server polling it: files written slowly are
never taken half-written, per-user folders and sub-folders, refused files in .failed with the
reason, unknown users reported once, a restart in the middle, and a file already imported
before a crash removed without a second document."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import subprocess
import threading
import time

import pytest

from dms.web.server import Server
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_for

CONSUME = dict(consume_interval=0.2, consume_stable_seconds=1.0)


@pytest.fixture
def config(config, tmp_path):
    """Every server here polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


@pytest.fixture
def consume_dir(config):
    return config.consume_dir


def inbox_titles(client, folder_id=None) -> dict[str, str]:
    data = client.get(f"/api/nodes/{folder_id or client.inbox_id}/?page[size]=100").json()["data"]
    return {item["attributes"]["title"]: item["id"] for item in data}


def download_sha(client, document_id: str) -> str:
    return hashlib.sha256(client.get(f"/api/documents/{document_id}/download/").content).hexdigest()


def test_a_file_written_slowly_is_imported_once_whole(alice, consume_dir):
    content = samples.pdf([f"Page {n} of a slow scan" for n in range(1, 6)])
    target = consume_dir / alice.username / "slow.pdf"
    target.parent.mkdir(parents=True)
    with open(target, "wb") as out:
        for start in range(0, len(content), len(content) // 8 + 1):
            out.write(content[start:start + len(content) // 8 + 1])
            out.flush()
            time.sleep(0.3)  # shorter than the 1 s of stability a file needs
            assert "slow.pdf" not in inbox_titles(alice)
    documents = wait_for(lambda: inbox_titles(alice).get("slow.pdf") and inbox_titles(alice))
    assert list(documents) == ["slow.pdf"]
    assert download_sha(alice, documents["slow.pdf"]) == hashlib.sha256(content).hexdigest()
    history = alice.get(f"/api/nodes/{documents['slow.pdf']}/history/").json()["data"]
    assert [event["attributes"] for event in history if
            event["attributes"]["action"] == "imported"] == [{
        "at": history[-1]["attributes"]["at"], "actor": None, "action": "imported", "details": {
            "source": "consume", "title": "slow.pdf", "file_name": "slow.pdf",
            "size": len(content), "parent": {"id": alice.inbox_id, "title": ".inbox"}}}]
    wait_for(lambda: not target.exists())


def test_each_user_s_folder_goes_to_that_user_s_inbox_with_its_sub_folders(alice, bob, config,
                                                                            consume_dir, caplog):
    caplog.set_level(logging.WARNING, logger="dms.consume")
    (consume_dir / alice.username / "bank" / "2024").mkdir(parents=True)
    (consume_dir / alice.username / "bank" / "2024" / "statement.png").write_bytes(
        samples.png("Statement"))
    (consume_dir / bob.username).mkdir()
    (consume_dir / bob.username / "note.txt").write_bytes(samples.text("Bob's note\n"))
    (consume_dir / "nobody").mkdir()
    (consume_dir / "nobody" / "stray.txt").write_bytes(samples.text("whose?\n"))
    bank = wait_for(lambda: inbox_titles(alice).get("bank"))
    year = wait_for(lambda: inbox_titles(alice, bank).get("2024"))
    assert list(wait_for(lambda: inbox_titles(alice, year))) == ["statement.png"]
    assert list(wait_for(lambda: inbox_titles(bob))) == ["note.txt"]
    time.sleep(1.0)  # several more looks
    assert (consume_dir / "nobody" / "stray.txt").is_file()
    unknown = [r.getMessage() for r in caplog.records if "nobody" in r.getMessage()]
    assert unknown == ["consume folder: 'nobody' is not an active user; its files stay where "
                       "they are"]
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(2,)]


def test_a_refused_file_goes_to_failed_beside_its_reason(alice, config, consume_dir):
    (consume_dir / alice.username / "sub").mkdir(parents=True)
    (consume_dir / alice.username / "sub" / "program.exe").write_bytes(b"MZ" + b"\x00" * 100)
    failed = consume_dir / ".failed" / alice.username / "sub" / "program.exe"
    wait_for(lambda: failed.with_name("program.exe.txt").is_file())
    assert failed.read_bytes() == b"MZ" + b"\x00" * 100
    assert failed.with_name("program.exe.txt").read_text() == (
        "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text "
        "file.\n")
    assert not (consume_dir / alice.username / "sub" / "program.exe").exists()
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(0,)]


def test_a_refusal_is_shown_to_its_owner_and_counted_for_the_admin(alice, bob, admin,
                                                                      consume_dir):
    (consume_dir / alice.username / "2026").mkdir(parents=True)
    (consume_dir / alice.username / "2026" / "program.exe").write_bytes(b"MZ" + b"\x00" * 100)
    listing = wait_for(lambda: alice.get("/api/intake/refusals/").json()["data"])
    (refusal,) = listing
    assert refusal == {"type": "intake-refusals", "id": refusal["id"], "attributes": {
        "source": "consume", "name": "2026/program.exe", "origin": None,
        "reason": "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain "
                  "text file.", "refused_at": refusal["attributes"]["refused_at"]}}
    assert refusal["attributes"]["refused_at"].endswith("Z")
    assert bob.get("/api/intake/refusals/").json()["data"] == []  # only one's own
    anonymous = alice.as_anonymous().get("/api/intake/refusals/")
    assert (anonymous.status_code, anonymous.json()["errors"][0]["code"]) == \
        (401, "not_authenticated")
    health = admin.get("/health").json()
    assert health["intake"] == {"refused_last_24_hours": {"consume": 1, "mail": 0}}
    assert "intake" not in alice.get("/health").json()  # for admins only


@pytest.mark.config(consume_keep=True)
def test_with_keep_an_imported_file_moves_to_done(alice, consume_dir):
    (consume_dir / alice.username).mkdir(parents=True)
    (consume_dir / alice.username / "kept.txt").write_bytes(samples.text("keep me\n"))
    done = consume_dir / ".done" / alice.username / "kept.txt"
    wait_for(done.is_file)
    assert done.read_bytes() == samples.text("keep me\n")
    assert list(inbox_titles(alice)) == ["kept.txt"]


def test_a_restart_in_the_middle_and_a_file_imported_before_a_crash(alice, server, config,
                                                                     consume_dir):
    """A file half written when the server stops is imported whole after the restart; a file
    whose document was committed just before a crash (its removal never happened) is only
    removed: the inbox keeps one document of it."""
    already = samples.text("imported just before the crash\n")
    document_id = new_document(alice, "again.txt", parent=alice.inbox_id)
    assert upload(alice, document_id, "again.txt", already).status_code == 201
    user_dir = consume_dir / alice.username
    user_dir.mkdir(parents=True)
    partial = samples.pdf(["Half written when the server stopped"])
    (user_dir / "half.pdf").write_bytes(partial[:len(partial) // 2])
    time.sleep(0.5)
    server.stop()  # the fixture's thread ends; its teardown finds it stopped
    (user_dir / "again.txt").write_bytes(already)
    restarted = Server(config)
    thread = threading.Thread(target=restarted.run, daemon=True)
    thread.start()
    client = Client(restarted.url, alice.token)
    client.inbox_id = alice.inbox_id
    try:
        time.sleep(0.5)  # it looks at the half-written file without taking it
        with open(user_dir / "half.pdf", "ab") as out:
            out.write(partial[len(partial) // 2:])
        wait_for(lambda: not (user_dir / "half.pdf").exists()
                   and not (user_dir / "again.txt").exists())
        titles = inbox_titles(client)
        assert sorted(titles) == ["again.txt", "half.pdf"]
        assert download_sha(client, titles["half.pdf"]) == hashlib.sha256(partial).hexdigest()
        assert titles["again.txt"] == document_id
        assert query_sql(config, "SELECT count(*) FROM document_version") == [(2,)]
    finally:
        restarted.stop()
        thread.join(timeout=15)


# -- links planted in the shared folder (issue 22): none is ever followed --------------------------

EXE = b"MZ" + b"\x00" * 100
REASON = "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text file.\n"


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


def looks(count: int = 6) -> None:
    time.sleep(count * CONSUME["consume_interval"] + CONSUME["consume_stable_seconds"])


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
    consume_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(consume_dir, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir(alice.username, dir_fd=fd)
    level = os.open(alice.username, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    for _ in range(990):  # deeper than any path the file system takes whole
        os.mkdir("d", dir_fd=level)
        deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=level)
        os.close(level)
        level = deeper
    with open(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=level), "wb") as out:
        out.write(samples.text("deep down\n"))
    os.close(level)
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


def remove_chain(top) -> None:
    """Remove a chain of nested `d` folders without recursing: the level below moves up."""
    while top.exists():
        spare = top.with_name(top.name + "~")
        if (top / "d").is_dir():
            os.rename(top / "d", spare)
        for entry in top.iterdir():
            entry.unlink()
        top.rmdir()
        if spare.exists():
            os.rename(spare, top)


# -- what stands in the way of a move or a removal (issue 22): the file stays, the rest goes on ----

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


def test_thousands_of_planted_links_are_not_logged_at_every_look(alice, consume_dir, caplog):
    """Each standing problem is logged once; past 100 new ones in a look, one line counts the
    rest (10,050 links were logged again at every look, 10,050 lines every 0.2 s here)."""
    caplog.set_level(logging.WARNING, logger="dms.consume")
    staging = consume_dir / ".staging"  # hidden, then renamed: one look sees all the links
    staging.mkdir(parents=True)
    for number in range(10_050):
        os.symlink("/etc/passwd", staging / f"link{number:05}")
    (staging / "real.txt").write_bytes(samples.text("among the links\n"))
    staging.rename(consume_dir / alice.username)
    wait_for(lambda: inbox_titles(alice).get("real.txt"))
    looks()
    lines = [r.getMessage() for r in caplog.records if r.name == "dms.consume"]
    assert lines[:100] == [f"consume folder: 'link{number:05}' of '{alice.username}' is a "
                           "symbolic link; it is not followed" for number in range(100)]
    assert lines[100:] == ["consume folder: 9,950 more problems like those above are not listed "
                           "one by one"]


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
