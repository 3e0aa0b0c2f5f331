"""The file store: uploads streamed to disk, stored by version id, never by a client's name
(api.md, "Uploading a file"), behind a small interface (FileStore) so that another kind of store can
be added without touching its callers. DirectoryStore, the one there is, keeps them in a directory:
by default `<data-dir>/files`, or any path (DMS_FILES_DIR) such as an NFS or SMB mount that several
nodes share (README, "Several machines").

Layout of the store's directory: `<first two characters of the id>/<version id>` for stored files
and `<aa>/<version id>.searchable.pdf` for their searchable PDFs, `.previews/<aa>/<version
id>/<page>.jpg` for page previews and `.work/<aa>/<version id>/` for the page PDFs of a searchable
PDF being made (both derived, removed with their version), `.incoming/` for files being copied in
from another filesystem. Uploads in progress and Tesseract's output are node-local:
`<data-dir>/tmp`.

Durability: an upload is written to tmp/, checked, then fsynced and moved into place (a rename;
a copy, fsync and rename when the store is another filesystem) and the directory fsynced, before
any database row points at it. Only what is stored is fsynced: a body the checks refuse — a Flate
bomb, a 429 — costs no sync of the disk, which every other user's commits wait for. A crash can
therefore leave only unreferenced files (never a row without its file); `sweep()` at start-up
removes them once they are older than a grace period: a file without a row may be another node's
upload whose row is being committed.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from dms.files.spool import SpooledInput

log = logging.getLogger("dms.storage")

CHUNK_SIZE = 1024 * 1024  # bytes copied at a time: memory stays flat whatever the file size
SEARCHABLE_SUFFIX = ".searchable.pdf"
# Space kept aside in `<data-dir>/.space-reserve` so that deleting (and logging in to delete)
# still works on a full disk: SQLite needs room for its journal even to delete rows.
RESERVE_BYTES = 16 * 1024 * 1024


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
    """What the rest of dms asks of a file store. Paths are local paths (or paths on a mount):
    downloads with Range, previews and OCR read them directly."""

    tmp_dir: Path

    def path(self, version_id: str) -> Path: ...
    def searchable_path(self, version_id: str) -> Path: ...
    def preview_path(self, version_id: str, page_number: int, width: int = 1000) -> Path: ...
    def work_dir(self, version_id: str) -> Path: ...
    def temporary_dir(self) -> Path: ...
    def receive(self, stream: BinaryIO, length: int | None, limit: int) -> ReceivedFile: ...
    def store(self, received: ReceivedFile, version_id: str) -> Path: ...
    def move_in(self, source: Path, target: Path) -> None: ...
    def duplicate(self, version_id: str, new_version_id: str) -> None: ...
    def write_derived(self, target: Path, content: bytes) -> None: ...
    def remove(self, version_ids: Iterable[str]) -> None: ...
    def sweep(self, referenced: set[str], grace_seconds: float) -> tuple[int, int]: ...
    def ensure_reserve(self) -> bool: ...
    def release_reserve(self) -> bool: ...


class DirectoryStore:
    """A FileStore in a directory, local or shared by every node (see the module docstring)."""

    def __init__(self, files_dir: Path, data_dir: Path):
        self.files_dir = files_dir
        self.previews_dir = files_dir / ".previews"
        self.work_root = files_dir / ".work"
        self.incoming_dir = files_dir / ".incoming"
        self.reserve_path = data_dir / ".space-reserve"  # node-local, beside SQLite's database
        self.tmp_dir = data_dir / "tmp"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        _adopt_old_layout(data_dir, self)

    def path(self, version_id: str) -> Path:
        # version ids are UUIDs made by dms; nothing a client sends ever becomes part of a path.
        return self.files_dir / version_id[:2] / version_id

    def searchable_path(self, version_id: str) -> Path:
        return self.files_dir / version_id[:2] / (version_id + SEARCHABLE_SUFFIX)

    def work_dir(self, version_id: str) -> Path:
        """Where the page PDFs of a version's searchable PDF wait until every page is read (in
        the shared store: another worker may finish the version)."""
        return self.work_root / version_id[:2] / version_id

    def temporary_dir(self) -> Path:
        """A new, empty folder in tmp/ (removed by the caller; by the start-up sweep after a
        crash)."""
        return Path(tempfile.mkdtemp(dir=self.tmp_dir, prefix="work-"))

    def receive(self, stream: BinaryIO, length: int | None, limit: int) -> ReceivedFile:
        """A request body, whole in `tmp/` (not yet fsynced: store() does that), with its size
        and SHA-256: the file the server spooled it to when it can be adopted (dms.files.spool:
        one write of each byte), else copied into `tmp/` in chunks while hashing it.

        Raises UploadTooLarge past `limit` bytes (nothing is left behind)."""
        if isinstance(stream, SpooledInput) and stream.body.path is not None \
                and stream.body.path.parent == self.tmp_dir:
            spooled = stream.adopt()
            received = ReceivedFile(spooled.path, spooled.size, spooled.sha256, spooled.head)
            if received.size > limit:
                received.discard()
                raise UploadTooLarge()
            return received
        descriptor, name = tempfile.mkstemp(dir=self.tmp_dir, prefix="upload-")
        path = Path(name)
        digest, size, head = hashlib.sha256(), 0, b""
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
                    target.write(chunk)
                    if remaining is not None:
                        remaining -= len(chunk)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return ReceivedFile(path, size, digest.hexdigest(), head)

    def store(self, received: ReceivedFile, version_id: str) -> Path:
        """Move a received file to its place, durably: fsynced first (unless it is already),
        then the directory."""
        target = self.path(version_id)
        target.parent.mkdir(exist_ok=True)
        if not received.synced:
            fsync_file(received.path)
            received.synced = True
        move_file(received.path, target, self.incoming_dir)
        fsync_dir(target.parent)
        return target

    def move_in(self, source: Path, target: Path) -> None:
        """Move a file dms wrote in tmp/ to `target`, a path in the store (a version's searchable
        PDF, a work folder's file), durably: whole or not at all, the directory fsynced."""
        target.parent.mkdir(parents=True, exist_ok=True)
        move_file(source, target, self.incoming_dir)
        fsync_dir(target.parent)

    def duplicate(self, version_id: str, new_version_id: str) -> None:
        """Give a stored file (and its searchable PDF, if any) a second version id, durably: a
        hard link, as stored files never change (each id's removal unlinks only its own name);
        a copy where the file system has no links."""
        for source, target in ((self.path(version_id), self.path(new_version_id)),
                               (self.searchable_path(version_id),
                                self.searchable_path(new_version_id))):
            if not source.exists():
                continue
            target.parent.mkdir(exist_ok=True)
            try:
                os.link(source, target)
            except OSError as error:
                if error.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP):
                    raise
                copy_file(source, target, self.incoming_dir)
            fsync_dir(target.parent)

    def preview_path(self, version_id: str, page_number: int, width: int = 1000) -> Path:
        """A page's preview `width` pixels wide; the usual 1,000 keeps its old name."""
        name = f"{page_number}.jpg" if width == 1000 else f"{page_number}-{width}.jpg"
        return self.previews_dir / version_id[:2] / version_id / name

    def write_derived(self, target: Path, content: bytes) -> None:
        """Write a derived file (a preview) whole or not at all: each writer uses its own
        temporary name, so two requests rendering the same page never mix their bytes."""
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(content)
            os.replace(name, target)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise

    def remove(self, version_ids: Iterable[str]) -> None:
        for version_id in version_ids:
            for path in (self.path(version_id), self.searchable_path(version_id)):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                except OSError as error:  # the start-up sweep will try again
                    log.warning("could not remove %s: %s", path, error)
            shutil.rmtree(self.previews_dir / version_id[:2] / version_id, ignore_errors=True)
            shutil.rmtree(self.work_dir(version_id), ignore_errors=True)

    def ensure_reserve(self) -> bool:
        """Set RESERVE_BYTES aside, if they are not already and the disk has twice that free."""
        try:
            if self.reserve_path.is_file() and self.reserve_path.stat().st_size >= RESERVE_BYTES:
                return True
            stats = os.statvfs(self.reserve_path.parent)
            if stats.f_bavail * stats.f_frsize < 2 * RESERVE_BYTES:
                return False
            descriptor = os.open(self.reserve_path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(descriptor, 0, RESERVE_BYTES)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            return True
        except OSError as error:
            self.reserve_path.unlink(missing_ok=True)
            log.warning("could not set aside %d MiB for deletes on a full disk: %s",
                        RESERVE_BYTES // 2**20, error)
            return False

    def release_reserve(self) -> bool:
        """Give the reserved space back to the disk (True if there was any)."""
        try:
            self.reserve_path.unlink()
        except FileNotFoundError:
            return False
        log.warning("the disk is full: released the %d MiB reserve so that this delete or login "
                    "can finish", RESERVE_BYTES // 2**20)
        return True

    def sweep(self, referenced: set[str], grace_seconds: float) -> tuple[int, int]:
        """Remove uploads interrupted by a crash and files no version refers to, once they are
        older than `grace_seconds` (younger ones may belong to work in progress on another node,
        or another process on this data dir). Returns (temporary files removed, unreferenced
        files removed)."""
        cutoff = time.time() - grace_seconds
        temporary = sum(_remove_if_old(entry, cutoff) for entry in entries(self.tmp_dir))
        temporary += sum(_remove_if_old(entry, cutoff) for entry in entries(self.incoming_dir))
        orphans = 0
        for bucket in entries(self.files_dir):
            if bucket.name.startswith(".backup-"):  # left by a `dms backup` that was killed
                _remove_if_old(bucket, cutoff)
            if bucket.name.startswith(".") or not bucket.is_dir():
                continue
            for entry in entries(bucket):
                if version_of(entry.name) not in referenced:
                    orphans += _remove_if_old(entry, cutoff)
        for root in (self.work_root, self.previews_dir):
            for bucket in entries(root):
                for entry in entries(bucket) if bucket.is_dir() else ():
                    if entry.name not in referenced:
                        _remove_if_old(entry, cutoff)
        if temporary or orphans:
            log.info("the sweep removed %d interrupted uploads and %d unreferenced files",
                     temporary, orphans)
        return temporary, orphans


def entries(folder: Path) -> list[Path]:
    """What a folder holds; nothing if it is gone or cannot be read (the next look tries
    again)."""
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _remove_if_old(entry: Path, cutoff: float) -> int:
    """Remove a file or folder last changed before `cutoff`; 1 if it was removed."""
    try:
        if entry.lstat().st_mtime >= cutoff:
            return 0
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        return 1
    except OSError as error:
        log.warning("could not remove %s: %s", entry, error)
        return 0


def _adopt_old_layout(data_dir: Path, store: DirectoryStore) -> None:
    """Before several processes shared the store, previews and page PDFs lived in
    <data-dir>/previews and <data-dir>/work: page PDFs move into the store (a version being read
    keeps its pages), previews are only a cache and are dropped."""
    old_previews, old_work = data_dir / "previews", data_dir / "work"
    if old_previews.is_dir():
        shutil.rmtree(old_previews, ignore_errors=True)
    if old_work.is_dir() and not store.work_root.exists():
        try:
            os.rename(old_work, store.work_root)
        except OSError:  # another filesystem: the pages are read again
            shutil.rmtree(old_work, ignore_errors=True)
    elif old_work.is_dir():
        shutil.rmtree(old_work, ignore_errors=True)


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
