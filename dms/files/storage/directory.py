"""DirectoryStore: the file store in a directory, by default `<data-dir>/files`, or any path
(DMS_FILES_DIR) such as an NFS or SMB mount that several nodes share (README, "Several machines").

Layout of the store's directory: `<first two characters of the id>/<version id>` for stored files
and `<aa>/<version id>.searchable.pdf` for their searchable PDFs, `.previews/<aa>/<version
id>/<page>.jpg` for page previews and `.work/<aa>/<version id>/` for the page PDFs of a searchable
PDF being made (both derived, removed with their version), `.incoming/` for files being copied in
from another filesystem.

Durability: an upload is written to tmp/, checked, then fsynced and moved into place (a rename;
a copy, fsync and rename when the store is another filesystem) and the directory fsynced, before
any database row points at it. Only what is stored is fsynced: a body the checks refuse — a Flate
bomb, a 429 — costs no sync of the disk, which every other user's commits wait for.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from dms.files.storage.base import (
    SEARCHABLE_SUFFIX,
    Blob,
    FileMissing,
    ReceivedFile,
    copy_file,
    fsync_dir,
    fsync_file,
    move_file,
    read_file,
    receive_into,
    version_of,
    versions_of,
)
from dms.files.storage.localspace import LocalSpace, entries, remove_if_old

log = logging.getLogger("dms.storage")


class DirectoryStore(LocalSpace):
    """A FileStore in a directory, local or shared by every node (see the module docstring)."""

    def __init__(self, files_dir: Path, data_dir: Path):
        super().__init__(data_dir)
        self.files_dir = files_dir
        self.previews_dir = files_dir / ".previews"
        self.work_root = files_dir / ".work"
        self.incoming_dir = files_dir / ".incoming"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        _adopt_old_layout(data_dir, self)

    def path(self, version_id: str) -> Path:
        # version ids are UUIDs made by dms; nothing a client sends ever becomes part of a path.
        return self.files_dir / version_id[:2] / version_id

    def searchable_path(self, version_id: str) -> Path:
        return self.files_dir / version_id[:2] / (version_id + SEARCHABLE_SUFFIX)

    def local_path(self, blob: Blob) -> Path:
        return self.searchable_path(blob.version_id) if blob.searchable \
            else self.path(blob.version_id)

    @contextlib.contextmanager
    def fetched(self, blob: Blob) -> Iterator[Path]:
        path = self.local_path(blob)
        if not path.is_file():
            raise FileMissing(str(path))
        yield path

    def size(self, blob: Blob) -> int | None:
        try:
            return self.local_path(blob).stat().st_size
        except OSError:
            return None

    def read(self, blob: Blob, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        return read_file(self.local_path(blob), start, end)

    def work_dir(self, version_id: str) -> Path:
        """Where the page PDFs of a version's searchable PDF wait until every page is read (in
        the shared store: another worker may finish the version)."""
        return self.work_root / version_id[:2] / version_id

    def share_work(self, version_id: str, names: Iterable[str]) -> None:
        """Nothing to do: every node sees the work folder."""

    def gather_work(self, version_id: str) -> None:
        """Nothing to do: every node sees the work folder."""

    def receive(self, stream: BinaryIO, length: int | None, limit: int) -> ReceivedFile:
        return receive_into(self.tmp_dir, stream, length, limit)

    def store(self, received: ReceivedFile, version_id: str) -> None:
        """Move a received file to its place, durably: fsynced first (unless it is already),
        then the directory."""
        target = self.path(version_id)
        target.parent.mkdir(exist_ok=True)
        if not received.synced:
            fsync_file(received.path)
            received.synced = True
        move_file(received.path, target, self.incoming_dir)
        fsync_dir(target.parent)

    def place_searchable(self, source: Path, version_id: str, sha256: str) -> None:
        """A searchable PDF dms wrote (and fsynced) in tmp/ or the work folder becomes the
        version's, durably: whole or not at all, the directory fsynced."""
        self._move_in(source, self.searchable_path(version_id))

    def place_work(self, source: Path, version_id: str, name: str) -> None:
        """A file dms wrote (and fsynced) goes into the version's work folder, durably."""
        self._move_in(source, self.work_dir(version_id) / name)

    def _move_in(self, source: Path, target: Path) -> None:
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

    def remove(self, blobs: Iterable[Blob]) -> None:
        """Remove the files of these versions (both of each: the blobs name the versions), their
        previews and work folders."""
        for version_id in versions_of(blobs):
            for path in (self.path(version_id), self.searchable_path(version_id)):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                except OSError as error:  # the start-up sweep will try again
                    log.warning("could not remove %s: %s", path, error)
            shutil.rmtree(self.previews_dir / version_id[:2] / version_id, ignore_errors=True)
            shutil.rmtree(self.work_dir(version_id), ignore_errors=True)

    def status(self) -> dict[str, object]:
        """For GET /health: the kind of store."""
        return {"kind": "local"}

    def settle(self, blobs: Iterable[Blob]) -> None:
        """Nothing to do: a file here belongs to its version alone."""

    def drop_searchable(self, version_id: str) -> None:
        """Forget a version's searchable PDF and its page PDFs (a new reading starts over)."""
        self.searchable_path(version_id).unlink(missing_ok=True)
        self.drop_work(version_id)

    def drop_work(self, version_id: str) -> None:
        """The page PDFs of a reading are no longer needed."""
        shutil.rmtree(self.work_dir(version_id), ignore_errors=True)

    def sweep(self, referenced: set[str], grace_seconds: float) -> tuple[int, int]:
        """Remove uploads interrupted by a crash and files no version refers to, once they are
        older than `grace_seconds` (younger ones may belong to work in progress on another node,
        or another process on this data dir). Returns (temporary files removed, unreferenced
        files removed)."""
        cutoff = time.time() - grace_seconds
        temporary = sum(remove_if_old(entry, cutoff) for entry in entries(self.tmp_dir))
        temporary += sum(remove_if_old(entry, cutoff) for entry in entries(self.incoming_dir))
        orphans = 0
        for bucket in entries(self.files_dir):
            if bucket.name.startswith(".backup-"):  # left by a `dms backup` that was killed
                remove_if_old(bucket, cutoff)
            if bucket.name.startswith(".") or not bucket.is_dir():
                continue
            for entry in entries(bucket):
                if version_of(entry.name) not in referenced:
                    orphans += remove_if_old(entry, cutoff)
        for root in (self.work_root, self.previews_dir):
            for bucket in entries(root):
                for entry in entries(bucket) if bucket.is_dir() else ():
                    if entry.name not in referenced:
                        remove_if_old(entry, cutoff)
        if temporary or orphans:
            log.info("the sweep removed %d interrupted uploads and %d unreferenced files",
                     temporary, orphans)
        return temporary, orphans




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


