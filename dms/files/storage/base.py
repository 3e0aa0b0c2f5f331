"""The file store's interface: stored files by version (never by a client's name, api.md
"Uploading a file"), behind one interface (FileStore) with two kinds: DirectoryStore
(dms.files.storage.directory) keeps them in a directory — `<data-dir>/files`, or a mount every
node shares (DMS_FILES_DIR); S3Store (dms.files.storage.s3) in an S3-compatible bucket,
content-addressed (api.md §19). Callers name a stored file by a Blob (its version id and the
SHA-256 of its bytes: each store uses what it keys by) and read it through the store: a local
path where the store has one, a fetched copy where it has not, or a stream of a byte range.

Uploads in progress and Tesseract's output are node-local in either kind: `<data-dir>/tmp`.

Durability: an upload is written to tmp/, checked, then made durable in the store (fsynced and
renamed; or written to the bucket) before any database row points at it. A crash can therefore
leave only unreferenced files (never a row without its file); each store's `sweep()` removes them
once they are older than a grace period: a file without a row may be another node's upload whose
row is being committed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from dms.errors import Unavailable
from dms.files.spool import SpooledInput

log = logging.getLogger("dms.storage")

CHUNK_SIZE = 1024 * 1024  # bytes copied at a time: memory stays flat whatever the file size
SEARCHABLE_SUFFIX = ".searchable.pdf"
# Space kept aside in `<data-dir>/.space-reserve` so that deleting (and logging in to delete)
# still works on a full disk: SQLite needs room for its journal even to delete rows.
RESERVE_BYTES = 16 * 1024 * 1024


class FileMissing(Exception):
    """A file a row names is not in the store (lost or removed by hand: `dms verify` says)."""


class StoreUnavailable(Unavailable):
    """The store cannot be reached (the bucket is down): nothing was changed; try again (503)."""


@dataclass(frozen=True)
class Blob:
    """One stored file: a version's original, or (`searchable`) its searchable PDF. The directory
    store finds it by the version id, object storage by the SHA-256 of its bytes."""
    version_id: str
    sha256: str | None
    searchable: bool = False


def original(version: Any) -> Blob:
    """The original file of a version row (anything with `id` and `sha256`)."""
    return Blob(version.id, version.sha256)


def searchable_pdf(version: Any) -> Blob:
    """The searchable PDF of a version row (anything with `id` and `searchable_sha256`)."""
    return Blob(version.id, version.searchable_sha256, searchable=True)


def versions_of(blobs: Iterable[Blob]) -> list[str]:
    """The version ids these files belong to, each once, in order."""
    return list(dict.fromkeys(blob.version_id for blob in blobs))


def version_blobs(version_id: str, sha256: str | None,
                  searchable_sha256: str | None = None) -> list[Blob]:
    """Both files of a version (the searchable PDF's SHA-256 None when it has none)."""
    return [Blob(version_id, sha256), Blob(version_id, searchable_sha256, searchable=True)]


class UploadTooLarge(Exception):
    """The body went past the configured maximum while it was being read."""


@dataclass
class ReceivedFile:
    """An upload in `tmp/`, not yet stored: its path, size and SHA-256."""
    path: Path
    size: int
    sha256: str
    head: bytes  # the first bytes, for sniffing the type
    synced: bool = False  # fsynced already (a file dms wrote itself); else store() does it
    md5: str | None = None  # made while it was received (Paperless-ngx's checksum), if it was
    # Object storage: the lease that keeps its object from removal until its row is written
    # (dms.files.storage.s3.leases); the row's transaction settles it.
    lease: int | None = None

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)

    @classmethod
    def of(cls, path: Path) -> ReceivedFile:
        """A file dms wrote itself into tmp/ (a PDF a page operation assembled, already
        fsynced), hashed as an upload is, to be stored like one."""
        digest, size, head = hashlib.sha256(), 0, b""
        with open(path, "rb") as file:
            for chunk in iter(lambda: file.read(CHUNK_SIZE), b""):
                if not head:
                    head = chunk[:8192]
                digest.update(chunk)
                size += len(chunk)
        return cls(path, size, digest.hexdigest(), head, synced=True)


class FileStore(Protocol):
    """What the rest of dms asks of a file store (see the module docstring)."""

    tmp_dir: Path

    def local_path(self, blob: Blob) -> Path | None:
        """Where the file lies on this node's file system, if the store keeps it there (it may
        be missing: `exists`); None for object storage (read it with `fetched` or `read`)."""
        ...

    def fetched(self, blob: Blob) -> contextlib.AbstractContextManager[Path]:
        """A local file with the blob's bytes for as long as the block runs (the store's own file,
        or a copy fetched into tmp/ and removed after). Raises FileMissing."""
        ...

    def size(self, blob: Blob) -> int | None:
        """The stored file's size; None when it is missing."""
        ...

    def read(self, blob: Blob, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Its bytes from `start` up to `end` (exclusive; None: the end), in chunks. Raises
        FileMissing before the first chunk."""
        ...

    def preview_path(self, version_id: str, page_number: int, width: int = 1000) -> Path: ...
    def work_dir(self, version_id: str) -> Path: ...
    def share_work(self, version_id: str, names: Iterable[str]) -> None: ...
    def gather_work(self, version_id: str) -> None: ...
    def temporary_dir(self) -> Path: ...
    def receive(self, stream: BinaryIO, length: int | None, limit: int) -> ReceivedFile: ...
    def store(self, received: ReceivedFile, version_id: str) -> None: ...
    def place_searchable(self, source: Path, version_id: str, sha256: str) -> None: ...
    def place_work(self, source: Path, version_id: str, name: str) -> None: ...
    def duplicate(self, version_id: str, new_version_id: str) -> None: ...
    def write_derived(self, target: Path, content: bytes) -> None: ...
    def settle(self, blobs: Iterable[Blob]) -> None: ...
    def remove(self, blobs: Iterable[Blob]) -> None: ...
    def drop_searchable(self, version_id: str) -> None: ...
    def drop_work(self, version_id: str) -> None: ...
    def sweep(self, referenced: set[str], grace_seconds: float) -> tuple[int, int]: ...
    def status(self) -> dict[str, object]: ...
    def ensure_reserve(self) -> bool: ...
    def release_reserve(self) -> bool: ...


def receive_into(tmp_dir: Path, stream: BinaryIO, length: int | None,
                 limit: int) -> ReceivedFile:
    """A request body, whole in `tmp_dir` (not yet fsynced: the store does that), with its size
    and SHA-256: the file the server spooled it to when it can be adopted (dms.files.spool: one
    write of each byte), else copied into `tmp_dir` in chunks while hashing it.

    Raises UploadTooLarge past `limit` bytes (nothing is left behind)."""
    if isinstance(stream, SpooledInput) and stream.body.path is not None \
            and stream.body.path.parent == tmp_dir:
        spooled = stream.adopt()
        received = ReceivedFile(spooled.path, spooled.size, spooled.sha256, spooled.head,
                                md5=spooled.md5)
        if received.size > limit:
            received.discard()
            raise UploadTooLarge()
        return received
    descriptor, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
    path = Path(name)
    digest, md5, size, head = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0, b""
    try:
        with os.fdopen(descriptor, "wb") as target:
            remaining = length
            while remaining is None or remaining > 0:
                want = CHUNK_SIZE if remaining is None else min(CHUNK_SIZE, remaining)
                chunk = stream.read(want)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise UploadTooLarge()
                if len(head) < 8192:
                    head += chunk[:8192 - len(head)]
                digest.update(chunk)
                md5.update(chunk)
                target.write(chunk)
                if remaining is not None:
                    remaining -= len(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return ReceivedFile(path, size, digest.hexdigest(), head, md5=md5.hexdigest())


def sha256_of(chunks: Iterable[bytes]) -> tuple[str, int]:
    """The SHA-256 (hex) and the size of these bytes, read as they come."""
    digest, size = hashlib.sha256(), 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def read_file(path: Path, start: int = 0, end: int | None = None) -> Iterator[bytes]:
    """A local file's bytes from `start` to `end` (exclusive), in chunks; FileMissing at once
    (not at the first chunk) when it is not there."""
    try:
        file = open(path, "rb")  # noqa: SIM115 — closed by the generator
    except FileNotFoundError:
        raise FileMissing(str(path)) from None
    return _chunks(file, start, end)


def _chunks(file: BinaryIO, start: int, end: int | None) -> Iterator[bytes]:
    with file:
        file.seek(start)
        remaining = None if end is None else end - start
        while remaining is None or remaining > 0:
            chunk = file.read(CHUNK_SIZE if remaining is None else min(CHUNK_SIZE, remaining))
            if not chunk:
                return
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk


def move_file(source: Path, target: Path, incoming_dir: Path) -> None:
    """Move a file into the store: a rename on one filesystem; across filesystems (a node's tmp/
    and a shared mount) a copy into `incoming_dir`, fsynced, then renamed into place, so that the
    target never exists half-written."""
    try:
        os.replace(source, target)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    copy_file(source, target, incoming_dir)
    source.unlink(missing_ok=True)


def copy_file(source: Path, target: Path, incoming_dir: Path) -> None:
    """Copy a file into the store: into `incoming_dir`, fsynced, then renamed into place."""
    incoming_dir.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=incoming_dir, prefix="copy-")
    try:
        with os.fdopen(descriptor, "wb") as out, open(source, "rb") as data:
            shutil.copyfileobj(data, out, CHUNK_SIZE)
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def version_of(file_name: str) -> str:
    """The version id a stored file belongs to: `<id>` or `<id>.searchable.pdf`."""
    return file_name.removesuffix(SEARCHABLE_SUFFIX)


def fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable."""
    fsync_file(path)


def fsync_file(path: Path) -> None:
    """Make what was written to the file (or the directory) `path` durable."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
