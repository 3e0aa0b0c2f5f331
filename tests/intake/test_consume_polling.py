"""The consume folder, with the real server polling it: files written slowly are never taken
half-written, per-user folders and sub-folders, refused files in .failed with the reason (and shown
to their owner), unknown users reported once, .done with consume_keep, a restart in the middle, and
a file already imported before a crash removed without a second document."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
import time

import pytest

from dms.web.server import Server
from tests.harness import appserver, samples
from tests.harness.client import Client
from tests.harness.consume import CONSUME, inbox_titles
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_for


@pytest.fixture
def config(config, tmp_path):
    """Every server here polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


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
    # Waited for: servers of one process share its database handle (appserver.served). Not
    # waiting, the old one's shutdown once overlapped the restart under two test lanes' load:
    # its worker could not deregister, and the restart's first write found the database locked
    # for 10 s.
    appserver.stop(server)
    (user_dir / "again.txt").write_bytes(already)
    # As it was before the crash: written before its document was made (else it would be a
    # copy dropped again, which is refused: test_consume_duplicates.py).
    os.utime(user_dir / "again.txt", (time.time() - 60, time.time() - 60))
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
        assert client.get("/api/intake/refusals/").json()["data"] == []
        assert not (consume_dir / ".failed").exists()
    finally:
        restarted.stop()
        thread.join(timeout=15)
