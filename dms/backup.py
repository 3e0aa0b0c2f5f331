"""Backups you can trust: `dms backup` writes one (README, "Backup and restore").

A backup is one zip (AES-256 with a password): `dms.db`, a consistent snapshot taken with SQLite's
online backup API while the server may be running; every stored file as `files/<aa>/<id>`; and
`manifest.json` with the format, app and schema versions, counts, and each member's SHA-256 and
size. Files never change once stored, so the snapshot plus the files it names is consistent; to
be sure a file deleted right after the snapshot is still there to copy, every file is first
hard-linked into a staging folder (no copying) and the snapshot retaken if one vanished.

Restoring one is dms.restore's; the manifest's format (FORMAT_VERSION, MANIFEST, DATABASE,
FILE_MEMBER) is named here, where it is written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dms import __version__
from dms.storage import CHUNK_SIZE, StoredFile, stored_files

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATABASE = "dms.db"
FILE_MEMBER = re.compile(r"files/[0-9a-f]{2}/[0-9a-f-]{36}(\.searchable\.pdf)?\Z")
SNAPSHOT_ATTEMPTS = 5


class BackupError(Exception):
    """A backup or restore cannot be done; the message says why, for the person running it."""


@dataclass
class Member:
    name: str  # inside the archive
    path: Path  # on disk


class Progress:
    """Bytes and files done, rate and time left, on one terminal line; silent when not a TTY."""

    def __init__(self, total_bytes: int, total_files: int, stream=sys.stderr,
                 clock: Callable[[], float] = time.monotonic):
        self.total_bytes, self.total_files = total_bytes, total_files
        self.done_bytes = self.done_files = 0
        self.stream, self.clock = stream, clock
        self.enabled = hasattr(stream, "isatty") and stream.isatty()
        self.started = self.shown = clock()

    def add(self, size: int, files: int = 0) -> None:
        self.done_bytes += size
        self.done_files += files
        now = self.clock()
        if self.enabled and (now - self.shown >= 0.2 or self.done_files == self.total_files):
            self.shown = now
            rate = self.done_bytes / max(now - self.started, 1e-6)
            left = (self.total_bytes - self.done_bytes) / rate if rate else 0
            self.stream.write(f"\r{self.done_files}/{self.total_files} files, "
                              f"{self.done_bytes / 2**20:.1f}/{self.total_bytes / 2**20:.1f} MiB, "
                              f"{rate / 2**20:.1f} MiB/s, {left:.0f} s left   ")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def _snapshot(db_path: Path, target: Path) -> None:
    source = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    destination = sqlite3.connect(target)
    try:
        source.backup(destination)  # pages copied under a read transaction: one consistent state
    finally:
        destination.close()
        source.close()


def _facts(snapshot: Path) -> tuple[list[StoredFile], dict, int]:
    """(the stored files it refers to, counts, schema version) of a snapshot."""
    connection = sqlite3.connect(snapshot)
    try:
        files = stored_files(connection.execute)
        versions = {file.version_id for file in files}
        counts = {
            "users": connection.execute('SELECT count(*) FROM "user"').fetchone()[0],
            "folders": connection.execute("SELECT count(*) FROM node WHERE kind = 'folder'").fetchone()[0],
            "documents": connection.execute(
                "SELECT count(*) FROM node WHERE kind = 'document'").fetchone()[0],
            "versions": len(versions),
        }
        names = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
        schema = max((int(name.split("_", 1)[0]) for name in names), default=0)
    finally:
        connection.close()
    return files, counts, schema


def _stage(data_dir: Path, staging: Path) -> tuple[list[Member], dict, int]:
    """Snapshot the database and hard-link every file it names into `staging`."""
    files_dir = data_dir / "files"
    for _ in range(SNAPSHOT_ATTEMPTS):
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "files").mkdir(parents=True)
        snapshot = staging / DATABASE
        _snapshot(data_dir / DATABASE, snapshot)
        files, counts, schema = _facts(snapshot)
        members, vanished = [Member(DATABASE, snapshot)], False
        for file in files:
            name = f"files/{file.name}"
            linked = staging / name
            linked.parent.mkdir(exist_ok=True)
            try:
                os.link(files_dir / file.name, linked)
            except FileNotFoundError:
                vanished = True  # deleted since the snapshot (or missing: see below)
                break
            members.append(Member(name, linked))
        if not vanished:
            return members, counts, schema
    raise BackupError("A stored file is missing, so no consistent backup can be taken; "
                      "run `dms verify` to find it.")


def create_backup(data_dir: Path, out: Path, password: str | None = None,
                  progress_stream=sys.stderr) -> dict:
    """Write a backup of `data_dir` to `out`; returns the manifest."""
    import pyzipper

    if not (data_dir / DATABASE).is_file():
        raise BackupError(f"There is no dms database in {data_dir}.")
    out = out.resolve()
    staging = Path(tempfile.mkdtemp(prefix=".backup-", dir=data_dir))
    partial = out.with_name(out.name + ".partial")
    try:
        members, counts, schema = _stage(data_dir, staging)
        progress = Progress(sum(m.path.stat().st_size for m in members), len(members), progress_stream)
        manifest = {"format_version": FORMAT_VERSION, "app_version": __version__,
                    "schema_version": schema,
                    "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "counts": counts, "files": {}}
        options = {"encryption": pyzipper.WZ_AES} if password else {}
        with pyzipper.AESZipFile(partial, "w", compression=pyzipper.ZIP_STORED, **options) as archive:
            if password:
                archive.setpassword(password.encode("utf-8"))
            for member in members:
                manifest["files"][member.name] = _add(archive, member, progress)
            archive.writestr(MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
        os.replace(partial, out)
        progress.finish()
        return manifest
    finally:
        partial.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)


def _add(archive, member: Member, progress: Progress) -> dict:
    digest, size = hashlib.sha256(), 0
    info = archive.zipinfo_cls(member.name, date_time=time.gmtime(member.path.stat().st_mtime)[:6])
    info.file_size = member.path.stat().st_size
    with archive.open(info, "w", force_zip64=True) as target, open(member.path, "rb") as source:
        for chunk in iter(lambda: source.read(CHUNK_SIZE), b""):
            digest.update(chunk)
            target.write(chunk)
            size += len(chunk)
            progress.add(len(chunk))
    progress.add(0, files=1)
    return {"sha256": digest.hexdigest(), "size": size}
