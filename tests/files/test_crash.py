"""kill -9 in the middle of uploads: after the next start no row points at a missing file, no file
lacks a row, no temporary file is left, and what was acknowledged before is intact."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import sqlite3
import time
from urllib.parse import urlsplit

import pytest
import requests

from dms.files.storage import SEARCHABLE_SUFFIX
from tests.harness import samples
from tests.harness.processes import Running
from tests.harness.waiting import wait_for

# Kills the server and reads its SQLite file.
# Sockets (pytest-socket): a `dms serve` subprocess killed and started again.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


def consistent_state(data_dir):
    """(versions whose file is missing or differs, files without a version, temporary files)."""
    connection = sqlite3.connect(data_dir / "dms.db")
    rows = connection.execute("SELECT id, sha256 FROM document_version").fetchall()
    connection.close()
    bad = [vid for vid, sha in rows
           if not (data_dir / "files" / vid[:2] / vid).is_file()
           or hashlib.sha256((data_dir / "files" / vid[:2] / vid).read_bytes()).hexdigest() != sha]
    known = {vid for vid, _ in rows} | {vid + SEARCHABLE_SUFFIX for vid, _ in rows}
    orphans = [p for p in (data_dir / "files").rglob("*") if p.is_file() and p.name not in known]
    temporary = list((data_dir / "tmp").iterdir())
    return bad, orphans, temporary, len(rows)


def start_upload(url, token, document_id, total, send):
    """Open a raw connection and send the headers and `send` bytes of a `total`-byte upload."""
    parts = urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port))
    connection.sendall((f"PUT /api/documents/{document_id}/upload/big.txt HTTP/1.1\r\n"
                        f"Host: {parts.netloc}\r\nAuthorization: Token {token}\r\n"
                        "Content-Disposition: attachment; filename=big.txt\r\n"
                        f"Content-Length: {total}\r\n\r\n").encode())
    chunk = b"line of text\n" * 80_000  # ~1 MB
    sent = 0
    while sent < send:
        piece = chunk[:send - sent]
        connection.sendall(piece)
        sent += len(piece)
    return connection


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [0.5, 1.0])
def test_kill_9_during_an_upload_leaves_a_consistent_data_dir(tmp_path, fraction):
    data_dir = tmp_path / "data"
    server = Running(data_dir, DMS_ADMIN_PASSWORD="crash-test-pw")
    try:
        token = requests.post(server.url + "/api/auth/login/",
                              json={"username": "admin",
                                    "password": "crash-test-pw"}).json()["token"]
        headers = {"Authorization": f"Token {token}"}
        me = requests.get(server.url + "/api/users/me/", headers=headers).json()["data"]
        home = me["relationships"]["home_folder"]["data"]["id"]
        body = {"data": {"type": "documents", "attributes": {"title": "doc"},
                         "relationships": {"parent": {"data": {"type": "folders", "id": home}}}}}
        document_id = requests.post(server.url + "/api/nodes/", json=body, headers={
            **headers, "Content-Type": "application/vnd.api+json"}).json()["data"]["id"]
        acknowledged = samples.pdf(["acknowledged"])
        response = requests.put(f"{server.url}/api/documents/{document_id}/upload/first.pdf",
                                data=acknowledged,
                                headers={**headers, "Content-Disposition": "attachment"})
        assert response.status_code == 201

        total = 64 * 1024 * 1024
        connection = start_upload(server.url, token, document_id, total, int(total * fraction))
        time.sleep(0.2 if fraction < 1 else 0.05)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        connection.close()
    finally:
        if server.process.poll() is None:
            server.process.kill()

    # One box, nothing else on its data dir: no grace needed before the sweep.
    restarted = Running(data_dir, DMS_SWEEP_GRACE_MINUTES="0")
    try:
        # The restarted server's worker may be reading the document again in a scratch folder
        # of tmp/ (what the kill interrupted, queued again at start): tmp/ is checked after.
        wait_for(lambda: ocr_status(restarted.url, headers, document_id) in ENDED, timeout=90,
                 message="the restarted server did not finish reading the document")
        bad, orphans, temporary, versions = consistent_state(data_dir)
        assert (bad, orphans, temporary) == ([], [], [])
        assert versions in (1, 2)  # the interrupted upload either fully landed or left nothing
        download = requests.get(f"{restarted.url}/api/document-versions/"
                                f"{_first_version(data_dir)}/download/", headers=headers)
        assert download.content == acknowledged
    finally:
        assert restarted.stop() == 0


ENDED = ("succeeded", "failed")


def ocr_status(url: str, headers: dict, document_id: str) -> str:
    response = requests.get(f"{url}/api/documents/{document_id}/", headers=headers)
    return response.json()["data"]["attributes"]["ocr_status"]


def _first_version(data_dir):
    connection = sqlite3.connect(data_dir / "dms.db")
    try:
        return connection.execute("SELECT id FROM document_version WHERE number = 1").fetchone()[0]
    finally:
        connection.close()


def test_start_up_sweep_removes_interrupted_uploads_and_unreferenced_files(tmp_path, config):
    """What a crash between storing a file and committing its row (or between a delete's commit
    and the file removal) leaves behind is removed at the next start once it is older than the
    grace period (60 minutes); younger ones may be another node's upload being committed and
    stay; referenced files stay."""
    from dms.web.server import Server

    first = Server(config)
    store = first.app.services.store
    long_ago = time.time() - 61 * 60
    interrupted = store.tmp_dir / "upload-interrupted"
    interrupted.write_bytes(b"half a body")
    in_progress = store.tmp_dir / "upload-in-progress"
    in_progress.write_bytes(b"another process's upload")
    orphan = store.path("0123abcd-0000-4000-8000-000000000000")
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"stored but never committed")
    committing = store.path("0123abcd-0000-4000-8000-000000000001")
    committing.write_bytes(b"stored, its row being committed")
    stale_preview = store.previews_dir / "01" / "0123abcd-0000-4000-8000-000000000000" / "1.jpg"
    stale_preview.parent.mkdir(parents=True)
    stale_preview.write_bytes(b"jpeg")
    for path in (interrupted, orphan, stale_preview.parent):
        os.utime(path, (long_ago, long_ago))
    first.stop()
    first.run()  # returns at once: stop() was requested; closes the database

    second = Server(config)
    try:
        assert list(second.app.services.store.tmp_dir.iterdir()) == [in_progress]
        assert not orphan.exists() and not stale_preview.parent.exists()
        assert committing.read_bytes() == b"stored, its row being committed"
    finally:
        second.stop()
        second.run()
