"""`dms storage migrate --to s3|local` (api.md §19): every file the database names — each
version's original and searchable PDF — copied from the configured store to the other kind.

- Checked: a copy to a directory is hashed while it is written (into `.incoming/`, fsynced, then
  renamed into place); a file going to the bucket is hashed as it is read just before its upload
  (stored files never change), and the object's size read back. A source that is missing or whose
  SHA-256 or size differs from its row is not copied: it is listed at the end.
- Continues: what the target holds already with the right size is not copied again, so a run
  that was interrupted (or stopped by `limit`) picks up where it stopped.
- Bounded memory: files stream in CHUNK_SIZE pieces; only the database's list of files is held.
- To the bucket objects go as uploads write them (dms.files.storage.s3.inventory.put_blob: content-
  addressed, a lease, a conditional put), one object for every version with the same bytes; to a
  directory at DirectoryStore's paths, one file per version (a hard link for the same bytes).
- It never deletes the source and never switches the configuration: the caller prints what to set.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dms.db import database
from dms.files.storage import (
    Blob,
    DirectoryStore,
    FileMissing,
    fsync_dir,
    read_file,
    sha256_of,
)
from dms.files.storage.stored import StoredFile, stored_files

PROGRESS_EVERY = 100  # files between two progress lines


@dataclass
class Migration:
    """What one run did."""
    total: int = 0  # files the database names
    checked: int = 0  # of them, looked at in this run
    copied: int = 0
    copied_bytes: int = 0
    present: int = 0  # the target had them with the right size
    problems: list[str] = field(default_factory=list)  # sources missing or not as recorded
    stopped: bool = False  # `limit` files copied before the end

    @property
    def complete(self) -> bool:
        return not self.stopped and not self.problems


def describe(file: StoredFile) -> str:
    searchable = file.name.endswith(".searchable.pdf")
    return f"version {file.version_id}" + (" (its searchable PDF)" if searchable else "")


def blob_of(file: StoredFile) -> Blob:
    return Blob(file.version_id, file.sha256, searchable=file.name.endswith(".searchable.pdf"))


def run(copy: Callable[[StoredFile], int | None], limit: int | None = None,
        every: int = PROGRESS_EVERY, progress: Callable[[str], None] = print) -> Migration:
    """Every stored file through `copy` (bytes copied; None: there already; raises Problem);
    a progress line every `every` files; at most `limit` files copied."""
    files = stored_files(database.execute_sql)
    migration = Migration(total=len(files))
    for file in files:
        if limit is not None and migration.copied >= limit:
            migration.stopped = True
            break
        try:
            copied = copy(file)
        except Problem as problem:
            migration.problems.append(f"{describe(file)}: {problem}")
        else:
            if copied is None:
                migration.present += 1
            else:
                migration.copied += 1
                migration.copied_bytes += copied
        migration.checked += 1
        if every and migration.checked % every == 0:
            progress(f"{migration.checked} of {migration.total} files checked, "
                     f"{migration.copied} copied ({mebibytes(migration.copied_bytes)}), "
                     f"{migration.present} there already.")
    return migration


def mebibytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


class Problem(Exception):
    """A source file that cannot be copied (missing, or not what its row records): a sentence."""


def differs(file: StoredFile, sha256: str, size: int) -> Problem:
    return Problem(f"its bytes are not what its row records ({size} bytes, SHA-256 {sha256}; "
                   f"recorded {file.size} bytes, {file.sha256}); not copied")


class ToBucket:
    """Copies into a bucket from a directory (see the module docstring)."""

    def __init__(self, source: DirectoryStore, target):  # target: S3Store
        from dms.files.storage.s3.inventory import blob_objects

        self.source, self.target = source, target
        # What the bucket holds, by one listing (1,000 objects a request) rather than a HEAD a
        # file: a run that continues skips most files.
        self.there = {item.sha256: item.size for item in blob_objects(target)}

    def __call__(self, file: StoredFile) -> int | None:
        from dms.files.storage.s3.inventory import put_blob

        if not file.sha256:
            raise Problem("no SHA-256 is recorded for it, so it has no name in a bucket")
        blob = blob_of(file)
        if self.there.get(file.sha256) == file.size:
            return None
        path = self.source.local_path(blob)
        try:
            sha256, size = sha256_of(read_file(path))
        except FileMissing:
            raise Problem(f"its file {path} is missing; not copied") from None
        if (sha256, size) != (file.sha256, file.size):
            raise differs(file, sha256, size)
        put_blob(self.target, path, sha256, size)
        stored = self.target.size(blob)
        if stored != size:
            raise Problem(f"the bucket holds {stored} bytes of it after the copy, not {size}")
        self.there[file.sha256] = size
        return size


class ToDirectory:
    """Copies into a directory from a bucket (see the module docstring)."""

    def __init__(self, source, target: DirectoryStore):  # source: S3Store
        self.source, self.target = source, target
        self.placed: dict[str, Path] = {}  # SHA-256 -> a file of this run with those bytes

    def __call__(self, file: StoredFile) -> int | None:
        blob = blob_of(file)
        path = self.target.local_path(blob)
        if path.is_file() and path.stat().st_size == file.size:
            return None
        if not file.sha256:
            raise Problem("no SHA-256 is recorded for it, so the bucket has no object of it")
        path.parent.mkdir(parents=True, exist_ok=True)
        same = self.placed.get(file.sha256)
        if same is not None and self._link(same, path):
            return file.size
        self._fetch(file, blob, path)
        self.placed[file.sha256] = path
        return file.size

    def _link(self, existing: Path, path: Path) -> bool:
        """A second version with the same bytes: a hard link, as DirectoryStore.duplicate."""
        try:
            path.unlink(missing_ok=True)
            os.link(existing, path)
        except OSError:
            return False
        fsync_dir(path.parent)
        return True

    def _fetch(self, file: StoredFile, blob: Blob, path: Path) -> None:
        incoming = self.target.incoming_dir
        incoming.mkdir(parents=True, exist_ok=True)
        try:
            chunks = self.source.read(blob)
        except FileMissing:
            raise Problem(f"the bucket has no object {file.sha256}; not copied") from None
        descriptor, name = tempfile.mkstemp(dir=incoming, prefix="copy-")
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(descriptor, "wb") as out:
                for chunk in chunks:
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if (digest.hexdigest(), size) != (file.sha256, file.size):
                raise differs(file, digest.hexdigest(), size)
            os.replace(name, path)
        finally:
            Path(name).unlink(missing_ok=True)
        fsync_dir(path.parent)
