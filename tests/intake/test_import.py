"""`dms import`, run as an admin runs it — a subprocess on the data dir (and database) of a running
server: trees become folders, duplicates are skipped, refused files are listed and leave nothing
behind, a killed run re-run imports nothing twice and misses nothing."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.harness import samples
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import make_folder
from tests.harness.processes import config_args, environment
from tests.harness.waiting import wait_for, wait_processed


def dms_import(config, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", "import", *args, *config_args(config)],
                          env=environment(**env), capture_output=True, text=True, timeout=300)


def listing(client, folder_id: str) -> dict[str, tuple[str, str]]:
    """title -> (type, id) of a folder's children."""
    data = client.get(f"/api/nodes/{folder_id}/?page[size]=100").json()["data"]
    return {item["attributes"]["title"]: (item["type"], item["id"]) for item in data}


@pytest.fixture
def tree(tmp_path):
    top = tmp_path / "scans"
    (top / "2024" / "taxes").mkdir(parents=True)
    (top / "letter.pdf").write_bytes(samples.pdf(["Dear customer"]))
    (top / "2024" / "receipt.png").write_bytes(samples.png("Receipt 77"))
    (top / "2024" / "taxes" / "notes.txt").write_bytes(samples.text("Tax notes 2024\n"))
    # The same bytes in another folder: a document of that folder, not a duplicate.
    (top / "2024" / "letter copy.pdf").write_bytes(samples.pdf(["Dear customer"]))
    (top / "2024" / "program.exe").write_bytes(b"MZ\x90\x00" + b"\x00" * 200)
    (top / "empty.txt").write_bytes(b"")
    os.symlink("/etc/passwd", top / "link.txt")
    return top


def test_a_tree_becomes_folders_and_documents_and_a_re_run_adds_nothing(alice, config, tree):
    result = dms_import(config, str(tree), "--user", alice.username)
    assert result.returncode == 1, result.stderr  # some files were refused
    assert result.stderr == ""  # no progress line without a terminal (cron)
    imported = [tree / "letter.pdf", tree / "2024" / "receipt.png",
                tree / "2024" / "letter copy.pdf", tree / "2024" / "taxes" / "notes.txt"]
    mib = sum(path.stat().st_size for path in imported) / 2**20
    assert result.stdout.splitlines() == [
        f"Imported 4 files ({mib:.1f} MiB), made 3 folders; skipped 0 already in their folder; "
        "refused 3.",
        f"  refused {tree / '2024' / 'program.exe'}: This type of file is not supported; upload "
        "a PDF, PNG, JPEG, TIFF or plain text file.",
        f"  refused {tree / 'empty.txt'}: The file is empty.",
        f"  refused {tree / 'link.txt'}: a symbolic link (not followed)"]
    inbox = listing(alice, alice.inbox_id)
    assert inbox == {"scans": ("folders", inbox["scans"][1])}
    scans = listing(alice, inbox["scans"][1])
    assert sorted(scans) == ["2024", "letter.pdf"]
    year = listing(alice, scans["2024"][1])
    assert sorted(year) == ["letter copy.pdf", "receipt.png", "taxes"]
    taxes = listing(alice, year["taxes"][1])
    assert list(taxes) == ["notes.txt"]
    for document_id in (scans["letter.pdf"][1], year["receipt.png"][1], taxes["notes.txt"][1]):
        # Queued for the server's workers.
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert "Receipt" in alice.get(f"/api/documents/{year['receipt.png'][1]}/ocr-text").text
    history = [event["attributes"] for event in alice.get(
        f"/api/nodes/{scans['letter.pdf'][1]}/history/").json()["data"]]
    assert [(event["action"], event["actor"], event["details"].get("source")) for event in history
            if event["action"] == "imported"] == [("imported", None, "import")]
    folder_history = alice.get(f"/api/nodes/{scans['2024'][1]}/history/").json()["data"]
    assert [(event["attributes"]["action"], event["attributes"]["details"]) for event in
            folder_history] == [("created", {"title": "2024", "kind": "folder", "source": "import",
                                             "parent": {"id": inbox["scans"][1],
                                                        "title": "scans"}})]
    # Nothing of the refused files is left in the store or its temporary folder.
    stored = query_sql(config, "SELECT count(*) FROM document_version")[0][0]
    assert stored == 4
    assert list((config.data_dir / "tmp").iterdir()) == []

    before = snapshot(config)
    again = dms_import(config, str(tree), "--user", alice.username)
    assert again.stdout.splitlines()[0] == (
        "Imported 0 files (0.0 MiB), made 0 folders; skipped 4 already in their folder; "
        "refused 3.")
    assert snapshot(config) == before


def test_a_dry_run_says_what_would_happen_and_changes_nothing(alice, config, tree):
    before = snapshot(config)
    result = dms_import(config, str(tree), "--user", alice.username, "--dry-run")
    assert result.stdout.splitlines()[0].startswith("Would import 4 files (")
    assert result.stdout.splitlines()[0].endswith(
        "would make 3 folders; skipped 0 already in their folder; refused 3.")
    assert snapshot(config) == before


def test_an_unknown_user_or_another_user_s_folder_is_refused_before_anything(alice, bob, config,
                                                                             tree):
    before = snapshot(config)
    unknown = dms_import(config, str(tree), "--user", "nobody")
    assert (unknown.returncode, unknown.stderr) == (2, "dms: there is no active user 'nobody'.\n")
    foreign = dms_import(config, str(tree), "--user", alice.username, "--into", bob.home_id)
    assert (foreign.returncode, foreign.stderr) == \
        (2, f"dms: alice has no folder {bob.home_id} to import into (a folder in the trash "
            "counts only once it is restored).\n")
    assert snapshot(config) == before


def test_a_folder_in_the_trash_is_refused_as_the_target(alice, config, tree):
    old = make_folder(alice, "Old", alice.home_id)
    assert alice.delete(f"/api/folders/{old}/").status_code == 204
    before = snapshot(config)
    result = dms_import(config, str(tree), "--user", alice.username, "--into", old)
    assert (result.returncode, result.stdout, result.stderr) == \
        (2, "", f"dms: alice has no folder {old} to import into (a folder in the trash counts "
                "only once it is restored).\n")
    assert snapshot(config) == before


def test_directories_deeper_than_the_tree_limit_are_refused(alice, config, tmp_path):
    (tmp_path / "deep" / "a" / "b").mkdir(parents=True)
    (tmp_path / "deep" / "a" / "kept.txt").write_bytes(samples.text("level two\n"))
    (tmp_path / "deep" / "a" / "b" / "too-deep.txt").write_bytes(samples.text("level three\n"))
    result = dms_import(config, str(tmp_path / "deep"), "--user", alice.username,
                        DMS_MAX_TREE_DEPTH="2")
    assert result.stdout.splitlines()[1:] == [
        f"  refused {tmp_path / 'deep' / 'a' / 'b'}: more than 2 folders deep "
        "(DMS_MAX_TREE_DEPTH)"]
    assert [t for (t,) in query_sql(config, "SELECT title FROM node WHERE kind = 'document'")] \
        == ["kept.txt"]


@pytest.mark.slow
def test_a_killed_import_re_run_imports_each_file_once(alice, config, tmp_path):
    top = tmp_path / "batch"
    top.mkdir()
    count = 80
    for number in range(count):
        (top / f"note-{number:03}.txt").write_bytes(f"Note number {number}\n".encode() * 2000)
    process = subprocess.Popen(
        [sys.executable, "-m", "dms", "import", str(top), "--user", alice.username,
         *config_args(config)], env=environment(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: query_sql(config, "SELECT count(*) FROM document_version")[0][0] >= 10,
                 timeout=60, interval=0.01, message="the import did not import 10 files")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    killed_at = query_sql(config, "SELECT count(*) FROM document_version")[0][0]
    assert 10 <= killed_at < count
    result = dms_import(config, str(top), "--user", alice.username)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith(f"Imported {count - killed_at} files")
    titles = query_sql(config, "SELECT n.title FROM node AS n JOIN document_version AS v "
                               "ON v.document_id = n.id ORDER BY n.title")
    assert [t for (t,) in titles] == [f"note-{n:03}.txt" for n in range(count)]


def test_the_progress_line_on_a_terminal_counts_files_mib_rate_and_time_left():
    from dms.intake.importer import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    progress = Progress(2, 3 * 2**20, screen)
    progress.advance(2**20)
    progress.shown = 0.0  # as if the last line were long ago
    progress.advance(2 * 2**20)
    progress.finish()
    lines = screen.getvalue().split("\r")
    assert re.fullmatch(r"2/2 files  3\.0/3\.0 MiB  [\d.]+ files/s  0:00 left \n", lines[-1])


def test_a_file_name_with_control_characters_cannot_forge_lines(alice, config, tmp_path):
    """Regression: a name holding ESC and a newline printed as it is forged a line of its own (and
    coloured the terminal)."""
    folder = tmp_path / "forged"
    folder.mkdir()
    (folder / "evil\x1b[31m\nImported 999 files.exe").write_bytes(b"MZ\x90\x00" + b"\x00" * 99)
    result = dms_import(config, str(folder), "--user", alice.username)
    assert result.returncode == 1, result.stderr
    assert "\x1b" not in result.stdout
    assert result.stdout.splitlines()[1:] == [
        f"  refused {folder}/evil\\x1b[31m\\nImported 999 files.exe: A file name may not be . or "
        ".. nor contain /, \\, control characters or invisible formatting characters such as "
        "right-to-left overrides."]


def test_log_messages_stay_on_one_line_and_tracebacks_stay_whole():
    """The log formatter of every dms command: a name in a message cannot start a line that looks
    like one of dms's own."""
    code = (
        "import logging\n"
        "from dms.cli.logs import configure_logging\n"
        "configure_logging('info')\n"
        "log = logging.getLogger('dms.consume')\n"
        "log.warning('refused %s of alice', 'x\\x1b[31m\\n2026-11-24 ERROR dms.auth: forged')\n"
        "try:\n"
        "    raise ValueError('boom')\n"
        "except ValueError:\n"
        "    log.exception('failed on %s', 'y\\u2028z')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    lines = result.stderr.splitlines()
    assert lines[0].endswith(" WARNING dms.consume: refused x\\x1b[31m\\n2026-11-24 ERROR "
                             "dms.auth: forged of alice")
    assert lines[1].endswith(" ERROR dms.consume: failed on y\\u2028z")
    assert lines[2] == "Traceback (most recent call last):" and lines[-1] == "ValueError: boom"
    assert "\x1b" not in result.stderr
