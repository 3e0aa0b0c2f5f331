"""kill -9 of a `dms serve` storing in a bucket (api.md §19) while uploads are in flight: after
the next start every acknowledged upload downloads byte-equal, every version row's object is in
the bucket with the row's bytes, and what the killed uploads left is only objects no row names
(garbage for `dms storage gc`) or nothing."""

from __future__ import annotations

import contextlib
import hashlib
import signal
import sqlite3
import threading

import pytest
import requests

from tests.harness.processes import Running, admin_session, make_node
from tests.harness.waiting import WaitTimeout, wait_for

# Kills the server and reads its SQLite file.
# Sockets (pytest-socket): a `dms serve` subprocess killed and started again, the S3 server.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.slow, pytest.mark.enable_socket]

PASSWORD = "bucket-crash-pw"
THREADS = 6
MIB = 2**20


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content(thread: int, number: int) -> bytes:
    """A text file of its own: every third one 12 MiB (a multipart upload), the others small."""
    line = f"thread {thread} upload {number} of the crash test\n".encode()
    size = 12 * MIB if number % 3 == 2 else 64 * 1024
    return (line * (size // len(line) + 1))[:size]


def version_rows(data_dir) -> list[tuple[str, str, str, str | None]]:
    """(document id, version id, sha256, searchable_sha256) of every version."""
    connection = sqlite3.connect(data_dir / "dms.db")
    try:
        return connection.execute("SELECT document_id, id, sha256, searchable_sha256 FROM "
                                  "document_version ORDER BY id").fetchall()
    finally:
        connection.close()


def object_shas(s3_server, prefix: str) -> set[str]:
    return {key.rsplit("/", 1)[-1] for key in s3_server.keys(prefix + "blobs/")}


def test_kill_9_during_uploads_to_the_bucket_loses_nothing_acknowledged(tmp_path, s3_server):
    data_dir = tmp_path / "data"
    prefix = "crash/"
    env = {**s3_server.dms_environment(prefix), "DMS_ADMIN_PASSWORD": PASSWORD}
    server = Running(data_dir, **env).drain()
    session, home = admin_session(server.url, PASSWORD)
    documents = {(thread, number): make_node(session, server.url, "documents",
                                             f"t{thread}-{number}", home)
                 for thread in range(THREADS) for number in range(40)}
    sent: dict[str, bytes] = {}  # document id: the bytes sent as its version
    acknowledged: dict[str, bytes] = {}
    killed = threading.Event()

    def keep_uploading(thread: int) -> None:
        client = requests.Session()
        client.headers.update(session.headers)
        for number in range(40):
            document_id, body = documents[(thread, number)], content(thread, number)
            sent[document_id] = body
            try:
                response = client.put(f"{server.url}/api/documents/{document_id}/upload/"
                                      f"file-{number}.txt", data=body, timeout=60,
                                      headers={"Content-Disposition": "attachment"})
            except requests.ConnectionError:
                assert killed.is_set()
                return
            assert response.status_code == 201, response.text
            acknowledged[document_id] = body

    threads = [threading.Thread(target=keep_uploading, args=(n,)) for n in range(THREADS)]
    try:
        for thread in threads:
            thread.start()
        wait_for(lambda: len(acknowledged) >= 2 * THREADS, timeout=120, interval=0.05)
        # Then the moment an object is in the bucket whose upload is not answered yet (its row
        # being committed), if it comes within seconds.
        with contextlib.suppress(WaitTimeout):
            wait_for(lambda: object_shas(s3_server, prefix) - {sha(body) for body in list(
                acknowledged.values())}, timeout=15, interval=0.01)
        killed.set()
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        for thread in threads:
            thread.join(timeout=60)
    finally:
        killed.set()
        if server.process.poll() is None:
            server.process.kill()
    interrupted = set(sent) - set(acknowledged)
    assert interrupted and len(acknowledged) >= 2 * THREADS

    restarted = Running(data_dir, **env, DMS_SWEEP_GRACE_MINUTES="0").drain()
    try:
        session.headers["Authorization"] = admin_session(restarted.url, PASSWORD)[0].headers[
            "Authorization"]

        with_versions = {document_id for document_id, *_ in version_rows(data_dir)}

        def every_reading_ended() -> bool:
            return all(session.get(f"{restarted.url}/api/documents/{document_id}/").json()[
                "data"]["attributes"]["ocr_status"] in ("succeeded", "failed")
                for document_id in with_versions)

        wait_for(every_reading_ended, timeout=120, interval=0.5,
                 message="the restarted server did not finish reading the uploads")
        for document_id, body in acknowledged.items():
            download = session.get(f"{restarted.url}/api/documents/{document_id}/download/")
            assert (download.status_code, sha(download.content)) == (200, sha(body))
    finally:
        assert restarted.stop() == 0

    rows = version_rows(data_dir)
    objects = object_shas(s3_server, prefix)
    # Every row's bytes are the ones its document was sent, and in the bucket.
    assert {document_id for document_id, *_ in rows} >= set(acknowledged)
    assert all(sent[document_id] is not None and sha(sent[document_id]) == original
               for document_id, _, original, _ in rows)
    named = {original for _, _, original, _ in rows} | \
        {searchable for *_, searchable in rows if searchable}
    assert named - objects == set()
    # What the kill left: objects of interrupted uploads no row names (garbage), or nothing.
    assert objects - named <= {sha(sent[document_id]) for document_id in interrupted}
    assert list((data_dir / "tmp").iterdir()) == []
    assert not (data_dir / "files").exists()
