"""An upload is written once (dms/files/spool.py): the server spools a large body into the data
dir's tmp/ as it arrives and the store adopts that file, instead of waitress writing it to a
temporary file of its own and dms copying it again. Bodies nobody keeps leave nothing behind. Real
sockets, a real server; the bytes the server process writes are read from /proc."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.client import error
from tests.harness.documents import new_document, stored_files, temporary_files, upload
from tests.harness.waiting import wait_for, wait_processed
from tests.web.test_server_limits import connect, read_response

pytestmark = pytest.mark.socket

SIZE = 8 * 1024 * 1024

# Sends a file as the body of a PUT from another process, so that its bytes are not counted as
# this (the server's) process' writes.
SENDER = """
import http.client, sys
host, port, path, token, source = sys.argv[1:6]
connection = http.client.HTTPConnection(host, int(port), timeout=60)
with open(source, "rb") as body:
    connection.request("PUT", path, body=body, headers={
        "Authorization": "Token " + token, "Content-Type": "application/octet-stream",
        "Content-Disposition": "attachment; filename=big.txt"})
answer = connection.getresponse()
print(answer.status, answer.read().decode())
"""


def bytes_written_by_this_process() -> int:
    """What this process passed to write() and its kin so far (/proc/self/io `wchar`)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def text_body(size: int) -> bytes:
    line = b"A large plain-text upload, written to the disk only once.\n"
    return (line * (size // len(line) + 1))[:size]


@pytest.mark.config(no_worker=True)  # nothing reads the file back and writes derived files
def test_a_large_upload_is_written_once_and_adopted_whole(server, alice, config, tmp_path):
    document_id = new_document(alice, "big")
    data = text_body(SIZE)
    source = tmp_path / "big.txt"
    source.write_bytes(data)
    before = bytes_written_by_this_process()
    sent = subprocess.run([sys.executable, "-c", SENDER, "127.0.0.1", str(server.port),
                           f"/api/documents/{document_id}/upload/big.txt", alice.token,
                           str(source)], capture_output=True, text=True, timeout=120)
    written = bytes_written_by_this_process() - before
    assert sent.stdout.startswith("201 "), sent.stdout + sent.stderr
    # Once: the body itself, plus the database's and the log's few KiB. Copied twice, as before
    # (waitress' temporary file, then dms' own), it was 2 x SIZE.
    assert SIZE <= written < SIZE * 1.1, written
    [stored] = stored_files(config)
    assert stored.read_bytes() == data
    assert temporary_files(config) == []
    download = alice.get(f"/api/documents/{document_id}/download/")
    assert download.content == data
    assert download.headers["ETag"] == hashlib.sha256(data).hexdigest()
    # its MD5, made while it arrived, is what Paperless-ngx's clients find it by
    md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
    found = alice.get(f"/paperless/api/documents/?checksum__iexact={md5.upper()}").json()
    assert [document["title"] for document in found["results"]] == ["big"]


def test_a_refused_large_upload_leaves_nothing(server, alice, config):
    document_id = new_document(alice, "junk")
    response = upload(alice, document_id, "junk.bin", b"\x00\x01" * (SIZE // 2))
    assert response.status_code == 415
    assert response.json() == error(415, "unsupported_media_type", "This type of file is not "
                                    "supported; upload a PDF, PNG, JPEG, TIFF or plain text file.")
    assert stored_files(config) == []
    assert temporary_files(config) == []
    assert alice.get(f"/api/documents/{document_id}/download/").status_code == 404


def test_a_connection_dropped_mid_body_leaves_nothing(server, alice, config):
    document_id = new_document(alice, "half")
    head = (f"PUT /api/documents/{document_id}/upload/half.txt HTTP/1.1\r\nHost: test\r\n"
            f"Authorization: Token {alice.token}\r\nContent-Length: {SIZE}\r\n\r\n").encode()
    with connect(server.port) as sock:
        sock.sendall(head + text_body(SIZE // 2))
        # The body goes to tmp/ as it arrives (past the first 512 KiB, kept in memory)...
        wait_for(lambda: len(temporary_files(config)) == 1, timeout=10,
                 message="the body was not spooled into tmp/")
    # ...and the spool goes when the client does.
    wait_for(lambda: temporary_files(config) == [], timeout=10,
             message="the half body stayed in tmp/")
    assert stored_files(config) == []


def test_a_small_body_and_a_large_json_body_are_read_as_before(server, alice, config):
    document_id = new_document(alice, "small")
    assert upload(alice, document_id, "small.txt", b"a small file\n").status_code == 201
    # A JSON body past 512 KiB is spooled too and still read whole by the handler.
    big_title = "t" * (600 * 1024)
    head = (f"PATCH /api/documents/{document_id}/ HTTP/1.1\r\nHost: test\r\n"
            f"Authorization: Token {alice.token}\r\nContent-Type: application/vnd.api+json\r\n")
    body = json.dumps({"data": {"type": "documents", "id": document_id,
                                "attributes": {"title": big_title}}}).encode()
    with connect(server.port) as sock:
        sock.sendall(head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        status, _, raw = read_response(sock)
    assert status.startswith("HTTP/1.1 4"), status  # refused for its length, having read it
    assert b"title" in raw
    assert alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["title"] \
        == "small"
    wait_processed(alice, document_id)  # the worker reads the upload in a scratch folder of tmp/
    assert temporary_files(config) == []
