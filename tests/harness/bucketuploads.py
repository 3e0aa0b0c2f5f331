"""Uploads in flight when a node storing in a bucket (api.md §19) is killed: threads that each
upload files of their own (small ones and 12 MiB multipart ones) into documents made beforehand,
what each document was sent and which uploads were answered 201; the moment an object is in the
bucket whose upload is not answered yet; and the bucket checked against the version rows."""

from __future__ import annotations

import contextlib
import hashlib
import threading

import requests

from tests.harness.s3server import S3Server
from tests.harness.waiting import WaitTimeout, wait_for

MIB = 2**20


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content(thread: int, number: int) -> bytes:
    """A text file of its own: every third one 12 MiB (a multipart upload), the others 64 KiB."""
    line = f"thread {thread} upload {number} of a crash test\n".encode()
    size = 12 * MIB if number % 3 == 2 else 64 * 1024
    return (line * (size // len(line) + 1))[:size]


class UploadStorm:
    """One thread per list of `documents`, uploading a file of its own into each in turn, through
    the node at `urls[thread]` (each thread a connection of its own), until it is stopped or its
    node goes away (a ConnectionError, noted in `refused`)."""

    def __init__(self, urls: list[str], token: str, documents: list[list[str]]):
        self.urls, self.token, self.documents = urls, token, documents
        self.sent: dict[str, bytes] = {}  # document id: the bytes sent as its version
        self.via: dict[str, str] = {}  # document id: the node it was sent through
        self.acknowledged: dict[str, bytes] = {}  # the uploads answered 201
        self.refused: list[str] = []  # the threads' nodes that went away
        self.stopped = threading.Event()
        self.threads = [threading.Thread(target=self._upload, args=(n,), daemon=True)
                        for n in range(len(documents))]

    def start(self) -> UploadStorm:
        for thread in self.threads:
            thread.start()
        return self

    def _upload(self, thread: int) -> None:
        client = requests.Session()
        client.headers["Authorization"] = f"Token {self.token}"
        url = self.urls[thread]
        for number, document_id in enumerate(self.documents[thread]):
            if self.stopped.is_set():
                return
            body = content(thread, number)
            self.sent[document_id], self.via[document_id] = body, url
            try:
                response = client.put(f"{url}/api/documents/{document_id}/upload/f{number}.txt",
                                      data=body, timeout=60,
                                      headers={"Content-Disposition": "attachment"})
            except requests.RequestException:  # the node went away
                self.refused.append(url)
                return
            assert response.status_code == 201, response.text
            self.acknowledged[document_id] = body

    def wait_for_committing(self, s3_server: S3Server, prefix: str, acknowledged: int,
                            through: str) -> None:
        """Until `acknowledged` uploads are answered, then (within 15 s, if it comes) until an
        upload through the node at `through` has its object in the bucket and no answer yet:
        its row is being committed."""
        wait_for(lambda: len(self.acknowledged) >= acknowledged, timeout=120, interval=0.05)

        def committing() -> set[str]:
            in_flight = {sha(self.sent[document_id]) for document_id in list(self.sent)
                         if self.via[document_id] == through
                         and document_id not in self.acknowledged}
            return in_flight & object_shas(s3_server, prefix)

        with contextlib.suppress(WaitTimeout):
            wait_for(committing, timeout=15, interval=0.01)

    def stop(self) -> None:
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=60)

    @property
    def interrupted(self) -> set[str]:
        """The documents whose upload was sent and not answered 201."""
        return set(self.sent) - set(self.acknowledged)

    def check_bucket(self, rows: list[tuple], objects: set[str]) -> None:
        """The version rows — (document id, version id, sha256, searchable_sha256) — of the
        storm's documents against the SHA-256s of the bucket's objects: every acknowledged
        upload has its row; each row's bytes are what its document was sent, and in the bucket;
        the bucket's objects no row names are only interrupted uploads'."""
        mine = [row for row in rows if row[0] in self.sent]
        assert {document_id for document_id, *_ in mine} >= set(self.acknowledged)
        assert [row[1] for row in mine if sha(self.sent[row[0]]) != row[2]] == []
        named = {row[2] for row in rows} | {row[3] for row in rows if row[3]}
        assert named - objects == set()
        assert objects - named <= {sha(self.sent[document_id])
                                   for document_id in self.interrupted}


def object_shas(s3_server: S3Server, prefix: str) -> set[str]:
    """The SHA-256s of the objects of the bucket under `prefix`."""
    return {key.rsplit("/", 1)[-1] for key in s3_server.keys(prefix + "blobs/")}
