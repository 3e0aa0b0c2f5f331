"""Backups you can trust: `dms backup` writes one (README, "Backup and restore").

A backup is one zip (AES-256 with a password) that either engine restores (dms.ops.backup.restore):
- `tables/<table>.jsonl`: every row of every table (dms.ops.backup._rowfiles), all read in one
  consistent snapshot while the server may be running: SQLite's online backup API copies dms.db into
  the staging folder first; PostgreSQL reads in one REPEATABLE READ transaction;
- every stored file as `files/<aa>/<id>`;
- `mail.key`, the key of the mail accounts' passwords (dms.files.sealing), when the data dir
  has one;
- `manifest.json`: the format, app and schema versions, counts, each table's number of rows and
  each member's SHA-256 and size.
Files never change once stored, so the snapshot plus the files it names is consistent; to be sure
a file deleted right after the snapshot is still there to copy, every file is first hard-linked
into a staging folder (no copying) and the snapshot retaken if one vanished.

Format 1 (dms 0.1) held the SQLite file `dms.db` instead of the tables; restores still read it.
The manifest's names (FORMAT_VERSION, MANIFEST, DATABASE, FILE_MEMBER) are defined here, where
it is written.

The package dms.ops.backup, backup and restore: this module is its face, with `restore` (`dms
restore`) and `transfer` (a restore's rows into PostgreSQL). Private: `_manifest` (a backup's
manifest and members checked), `_rowfiles` (the table files of format 2), `_loadrows` (them
loaded into SQLite) and `_rowchecks` (the rows' values checked by the API's rules).
"""

from __future__ import annotations

import contextlib
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
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dms import __version__
from dms.files import modes, sealing
from dms.files.storage import FileMissing, read_file
from dms.files.storage.stored import StoredFile, stored_files
from dms.ops.backup import _bucket
from dms.ops.backup._rowfiles import NOT_BACKED_UP, member, write_table

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
DATABASE = "dms.db"  # format 1's member; also the SQLite file a restore builds
FILE_MEMBER = re.compile(r"files/[0-9a-f]{2}/[0-9a-f-]{36}(\.searchable\.pdf)?\Z")
SNAPSHOT_ATTEMPTS = 5


class BackupError(Exception):
    """A backup or restore cannot be done; the message says why, for the person running it."""


Execute = Callable[[str], Any]  # execute(sql) -> a cursor (psycopg's or sqlite3's)


@dataclass
class Member:
    name: str  # inside the archive
    path: Path | None  # on disk; None for an object of a bucket (`chunks`)
    size: int | None = None  # an object's (a file's is its size on disk)
    chunks: Callable[[], Iterator[bytes]] | None = None  # an object's bytes, streamed

    def length(self) -> int:
        return self.size if self.path is None and self.size is not None \
            else self.path.stat().st_size  # type: ignore[union-attr]

    def read(self) -> Iterator[bytes]:
        if self.chunks is not None:
            return self.chunks()
        assert self.path is not None
        return read_file(self.path)


def _object_member(name: str, size: int, chunks: Callable[[], Iterator[bytes]]) -> Member:
    return Member(name, None, size, chunks)


class Progress:
    """Bytes and files done, rate and time left, on one terminal line; silent when not a TTY."""

    def __init__(self, total_bytes: int, total_files: int, stream: IO[str] = sys.stderr,
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


@contextlib.contextmanager
def _snapshot(data_dir: Path, database_url: str | None, staging: Path
              ) -> Iterator[tuple[Execute, Execute, list[tuple[str, list[str]]]]]:
    """`execute(sql)` (returning a cursor) over one consistent state of the database, `stream(sql)`
    the same for a large result (PostgreSQL: a server-side cursor, rows fetched as they are
    read), and its tables with their columns, as [(table, [column, ...])]."""
    if database_url:
        import psycopg

        from dms.db import postgresql_sql

        with psycopg.connect(database_url) as connection:
            connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            connection.read_only = True
            execute = lambda sql: connection.execute(postgresql_sql(sql))  # noqa: E731
            tables = [row[0] for row in execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name")]
            columns: dict[str, list[str]] = {}
            for table, column in execute(
                    "SELECT table_name, column_name FROM information_schema.columns WHERE "
                    "table_schema = current_schema() ORDER BY table_name, ordinal_position"):
                columns.setdefault(table, []).append(column)
            def stream(sql: str) -> Any:
                cursor = connection.cursor(name="dms_backup")  # one at a time: read to the end
                cursor.execute(sql)
                return cursor

            yield execute, stream, [(t, columns[t]) for t in tables if t not in NOT_BACKED_UP]
        return
    copy = staging / DATABASE
    source = sqlite3.connect(f"file:{data_dir / DATABASE}?mode=ro", uri=True)
    destination = sqlite3.connect(copy)
    try:
        source.backup(destination)  # pages copied under a read transaction: one consistent state
    finally:
        destination.close()
        source.close()
    copied = sqlite3.connect(copy)
    try:
        tables = [row[0] for row in copied.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        yield copied.execute, copied.execute, [
            (table, [row[1] for row in copied.execute(f'PRAGMA table_info("{table}")')])
            for table in tables if table not in NOT_BACKED_UP]
    finally:
        copied.close()
        copy.unlink(missing_ok=True)


def _facts(execute: Execute) -> tuple[list[StoredFile], dict[str, int], int]:
    """(the stored files it refers to, counts, schema version) of a database snapshot."""
    files = stored_files(execute)
    count = lambda sql: execute(sql).fetchone()[0]  # noqa: E731
    counts = {
        "users": count('SELECT count(*) FROM "user"'),
        "folders": count("SELECT count(*) FROM node WHERE kind = 'folder'"),
        "documents": count("SELECT count(*) FROM node WHERE kind = 'document'"),
        "versions": len({file.version_id for file in files}),
    }
    names = [row[0] for row in execute("SELECT name FROM schema_migrations")]
    schema = max((int(name.split("_", 1)[0]) for name in names), default=0)
    return files, counts, schema


def _stage(data_dir: Path, files_dir: Path, database_url: str | None, staging: Path,
           bucket: Any = None) -> tuple[list[Member], dict[str, int], dict[str, int], int,
                                        list[int]]:
    """Write every table of one snapshot and hard-link every file it names into `staging`, or
    hold the objects of `bucket` it names (dms.ops.backup._bucket): (members, counts, rows per
    table, schema version, the leases to release at the end)."""
    for _ in range(SNAPSHOT_ATTEMPTS):
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "files").mkdir(parents=True)
        (staging / "tables").mkdir()
        members: list[Member] = []
        rows: dict[str, int] = {}
        with _snapshot(data_dir, database_url, staging) as (execute, stream, tables):
            files, counts, schema = _facts(execute)
            for table, columns in tables:
                name = member(table)
                rows[table] = write_table(stream, table, columns, staging / name)
                members.append(Member(name, staging / name))
        # The key the mail accounts' passwords are sealed with: without it they cannot be read.
        key = sealing.key_path(data_dir)
        if key.is_file():
            shutil.copyfile(key, staging / sealing.KEY_FILE)
            members.append(Member(sealing.KEY_FILE, staging / sealing.KEY_FILE))
        if bucket is not None:
            staged = _bucket.stage_objects(bucket, files, _object_member)
            if staged is not None:
                return members + staged[0], counts, rows, schema, staged[1]
            continue
        vanished = False
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
            return members, counts, rows, schema, []
    raise BackupError("A stored file is missing, so no consistent backup can be taken; "
                      "run `dms verify` to find it.")


def create_backup(data_dir: Path, out: Path, password: str | None = None,
                  progress_stream: IO[str] = sys.stderr, database_url: str | None = None,
                  files_dir: Path | None = None, bucket: Any = None) -> dict[str, Any]:
    """Write a backup of `data_dir` (and of the PostgreSQL database at `database_url`, when
    given; of the files in `files_dir`, default <data_dir>/files, or the objects of `bucket`, an
    S3Store on the open database) to `out`; returns the manifest."""
    import pyzipper

    if not database_url and not (data_dir / DATABASE).is_file():
        raise BackupError(f"There is no dms database in {data_dir}.")
    data_dir.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    files_dir = files_dir or data_dir / "files"
    if bucket is None:
        files_dir.mkdir(parents=True, exist_ok=True)
    # Beside the files (maybe a shared mount): the stored files are hard-linked into it. With a
    # bucket, only the tables are staged, in the data dir (not tmp/, whose sweep would take a
    # long backup's folder).
    staging = Path(tempfile.mkdtemp(prefix=".backup-",
                                    dir=files_dir if bucket is None else data_dir))
    partial = out.with_name(out.name + ".partial")
    held: list[int] = []
    try:
        members, counts, rows, schema, held = _stage(data_dir, files_dir, database_url, staging,
                                                     bucket)
        progress = Progress(sum(m.length() for m in members), len(members), progress_stream)
        manifest: dict[str, Any] = {"format_version": FORMAT_VERSION, "app_version": __version__,
                    "schema_version": schema,
                    "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    "counts": counts, "tables": rows, "files": {}}
        options = {"encryption": pyzipper.WZ_AES} if password else {}
        # Owner-only before a byte is written, whatever the umask: it holds every user's papers
        # and the password hashes (dms.files.modes).
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, modes.FILE_MODE))
        os.chmod(partial, modes.FILE_MODE)
        with pyzipper.AESZipFile(partial, "w", compression=pyzipper.ZIP_STORED,
                                 **options) as archive:
            if password:
                archive.setpassword(password.encode("utf-8"))
            for member_ in members:
                manifest["files"][member_.name] = _add(archive, member_, progress)
            archive.writestr(MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
        os.replace(partial, out)
        progress.finish()
        return manifest
    finally:
        partial.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        if held:
            _bucket.release(held)


def _add(archive: Any, member: Member, progress: Progress) -> dict[str, Any]:  # AESZipFile
    digest, size = hashlib.sha256(), 0
    modified = member.path.stat().st_mtime if member.path is not None else time.time()
    info = archive.zipinfo_cls(member.name, date_time=time.gmtime(modified)[:6])
    info.file_size = member.length()
    if member.name.startswith("tables/"):  # text, unlike the stored files (mostly compressed)
        info.compress_type = zipfile.ZIP_DEFLATED
    try:
        chunks = member.read()
    except FileMissing:  # held by a lease since the snapshot: removed by hand
        raise BackupError(f"{member.name} vanished from the bucket during the backup; run "
                          f"`dms verify`, then the backup again.") from None
    with archive.open(info, "w", force_zip64=True) as target:
        for chunk in chunks:
            digest.update(chunk)
            target.write(chunk)
            size += len(chunk)
            progress.add(len(chunk))
    progress.add(0, files=1)
    return {"sha256": digest.hexdigest(), "size": size}
