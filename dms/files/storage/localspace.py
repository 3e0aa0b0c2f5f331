"""What every file store keeps on the node's own disk, whatever the kind: `<data-dir>/tmp` (uploads
being received, Tesseract's output, fetched copies), the space reserve beside the database, and
derived files written whole or not at all (previews)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from dms.files.storage.base import RESERVE_BYTES

log = logging.getLogger("dms.storage")


class LocalSpace:
    """The node-local part of a file store (a base class of both kinds)."""

    def __init__(self, data_dir: Path):
        self.reserve_path = data_dir / ".space-reserve"  # node-local, beside SQLite's database
        self.tmp_dir = data_dir / "tmp"
        self.tmp_dir.mkdir(parents=True, exist_ok=True)

    def temporary_dir(self) -> Path:
        """A new, empty folder in tmp/ (removed by the caller; by the start-up sweep after a
        crash)."""
        return Path(tempfile.mkdtemp(dir=self.tmp_dir, prefix="work-"))

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


def entries(folder: Path) -> list[Path]:
    """What a folder holds; nothing if it is gone or cannot be read (the next look tries
    again)."""
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def remove_if_old(entry: Path, cutoff: float) -> int:
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
