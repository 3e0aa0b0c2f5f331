"""Backup, restore and verify (README, "Backup and restore"), run as a user runs them."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import zipfile

import pytest

import samples
from dms.config import Config
from dms.server import Server
from support import JSON, Client, wait_for
from test_documents import new_document, upload

LISTINGS = ["/api/folders/?page[size]=100", "/api/documents/?page[size]=100",
            "/api/tokens/?page[size]=100"]


def dms(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "dms", *map(str, args)], input=stdin,
                          capture_output=True, text=True)


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


@pytest.fixture
def filled(admin, alice, config):
    """Users, nested folders, several versions, OCR text and tokens."""
    alice.post("/api/tokens/", {"expiry_hours": 10, "name": "scanner"}, media=JSON)
    outer = folder(alice, "Outer", alice.home_id)
    inner = folder(alice, "Inner", outer)
    documents = []
    for index, parent in enumerate((outer, inner, alice.inbox_id)):
        document_id = new_document(alice, f"doc {index}", parent)
        upload(alice, document_id, "v1.txt", samples.text(f"first version {index}\n"))
        upload(alice, document_id, "v2.pdf", samples.pdf([f"second version of document {index}"]))
        documents.append(document_id)
    for document_id in documents:
        wait_for(alice, document_id)
    return documents


def state(client, admin, documents) -> dict:
    """Everything a user and the admin can see: listings, document details and text, every
    file's SHA-256."""
    seen = {path: client.get(path).json()["data"] for path in LISTINGS}
    seen["users"] = admin.get("/api/users/").json()["data"]
    for document_id in documents:
        detail = client.get(f"/api/documents/{document_id}/").json()["data"]
        for version in detail["attributes"]["versions"]:
            content = client.get(version["download_url"].split(client.base_url, 1)[-1]).content
            version["download_url"] = hashlib.sha256(content).hexdigest()
        seen[document_id] = detail
        seen[document_id + " text"] = client.get(f"/api/documents/{document_id}/ocr-text").json()
    return seen


def served(config):
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.slow
@pytest.mark.parametrize("password", [None, "correct horse battery"])
def test_round_trip_restores_everything(alice, admin, filled, config, tmp_path, password):
    original = state(alice, admin, filled)
    archive = tmp_path / "backup.zip"
    stdin = password + "\n" if password else None
    options = ["--password-stdin"] if password else []
    made = dms("backup", archive, "--data-dir", config.data_dir, *options, stdin=stdin)
    assert made.returncode == 0, made.stderr
    assert made.stdout == f"Backup written to {archive}: 2 users, 6 folders, 3 documents, 6 files.\n"
    with zipfile.ZipFile(archive) as zipped:
        names = sorted(zipped.namelist())
        assert names[0] == "dms.db" and names[-1] == "manifest.json" and len(names) == 8
        assert bool(zipped.getinfo("dms.db").flag_bits & 0x1) == bool(password)

    restored_dir = tmp_path / "restored"
    result = dms("restore", archive, "--data-dir", restored_dir, *options, stdin=stdin)
    assert result.returncode == 0, result.stderr
    server, thread = served(Config(**{**config.__dict__, "data_dir": restored_dir}))
    try:
        # Tokens are restored too.
        restored = state(Client(server.url, alice.token), Client(server.url, admin.token), filled)
        # Links carry the server's address, which differs; everything else is identical.
        assert json.loads(json.dumps(restored).replace(server.url, alice.base_url)) == original
    finally:
        server.stop()
        thread.join(10)
    assert dms("verify", "--data-dir", restored_dir).returncode == 0


def test_refusals_leave_nothing_behind(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir, "--password-stdin",
               stdin="secret\n").returncode == 0
    target = tmp_path / "new"

    def refused(*options, stdin=None, where=target):
        result = dms("restore", archive, "--data-dir", where, *options, stdin=stdin)
        assert result.returncode == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["backup.zip", *(["busy"] if (tmp_path / "busy").exists() else [])]), "left something"
        return result.stderr

    assert refused() == "dms: The password is missing or wrong.\n"
    assert refused("--password-stdin", stdin="wrong\n") == "dms: The password is missing or wrong.\n"
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    assert refused("--password-stdin", stdin="secret\n", where=tmp_path / "busy") == \
        f"dms: {tmp_path / 'busy'} is not empty; restore into a new or empty folder.\n"


def test_a_flipped_byte_is_refused(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir).returncode == 0
    with zipfile.ZipFile(archive) as zipped:
        member = next(i for i in zipped.infolist() if i.filename.startswith("files/"))
    raw = bytearray(archive.read_bytes())
    # The member's data starts after its local header (30 bytes), name and extra field.
    name_length = int.from_bytes(raw[member.header_offset + 26:member.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[member.header_offset + 28:member.header_offset + 30], "little")
    offset = member.header_offset + 30 + name_length + extra_length + 3
    raw[offset] ^= 0x01
    archive.write_bytes(bytes(raw))
    result = dms("restore", archive, "--data-dir", tmp_path / "new")
    assert result.returncode == 1
    assert result.stderr.startswith(f"dms: {member.filename} in the backup ")
    assert "damaged" in result.stderr
    assert not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["backup.zip"]


def test_newer_format_is_refused(alice, config, tmp_path):
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir).returncode == 0
    newer = tmp_path / "newer.zip"
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(newer, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["format_version"] = 99
                data = json.dumps(manifest).encode()
            target.writestr(info.filename, data)
    result = dms("restore", newer, "--data-dir", tmp_path / "new")
    assert (result.returncode, result.stderr) == (
        1, "dms: This backup was made by a newer dms (format 99); upgrade dms to restore it.\n")


def test_verify_finds_a_deleted_a_corrupted_and_an_orphaned_file(alice, filled, config):
    assert dms("verify", "--data-dir", config.data_dir).stdout.endswith("No problems found.\n")
    files = sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file())
    files[0].unlink()
    files[1].write_bytes(files[1].read_bytes() + b"rot")
    orphan = config.data_dir / "files" / "ab" / "abcdef00-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"nobody's")
    result = dms("verify", "--data-dir", config.data_dir)
    assert result.returncode == 1
    assert result.stdout == "\n".join([
        f"Checked {len(files) - 1} stored files.",
        "1 corrupt files (checksum or size differs):", f"  version {files[1].name} ({files[1]})",
        "1 missing files (version without its file):", f"  version {files[0].name}",
        "1 orphaned files (no version refers to them):", f"  {orphan}",
        "Problems found.", ""])
    # The server shows the last result to admins at /health, and only the status to others.
    report = json.loads((config.data_dir / "verify.json").read_text())
    assert report["ok"] is False and report["missing"] == [f"version {files[0].name}"]


def test_health_shows_the_last_verify_to_admins_only(admin, alice, anon, config):
    assert dms("verify", "--data-dir", config.data_dir).returncode == 0
    expected = json.loads((config.data_dir / "verify.json").read_text())
    assert admin.get("/health").json() == {"status": "ok", "verify": expected}
    assert alice.get("/health").json() == {"status": "ok"}
    assert anon.get("/health").json() == {"status": "ok"}


@pytest.mark.slow
def test_backup_during_uploads_restores_a_consistent_state(alice, config, tmp_path):
    stop = threading.Event()
    uploaded = []

    def keep_uploading():
        index = 0
        while not stop.is_set():
            document_id = new_document(alice, f"busy {index}")
            upload(alice, document_id, "x.txt", samples.text(f"busy {index}\n"))
            uploaded.append(document_id)
            index += 1

    worker = threading.Thread(target=keep_uploading)
    worker.start()
    try:
        while len(uploaded) < 5:
            pass
        archive = tmp_path / "busy.zip"
        result = dms("backup", archive, "--data-dir", config.data_dir)
    finally:
        stop.set()
        worker.join()
    assert result.returncode == 0, result.stderr
    restored = tmp_path / "restored"
    assert dms("restore", archive, "--data-dir", restored).returncode == 0
    check = dms("verify", "--data-dir", restored)
    # Consistent: every version has its file, no stray file; documents may still be waiting for
    # OCR, which the restored server does at its start.
    assert "missing files" not in check.stdout and "orphaned" not in check.stdout
    assert "corrupt" not in check.stdout
