"""`dms restore`: a backup made by dms.ops.backup, checked and put into a new, empty data dir, and
into the configured database: SQLite in the data dir, or an empty PostgreSQL database.

A restore trusts nothing in the zip. In a temporary folder beside the target it checks the
manifest's every field, that the zip holds exactly the manifest's members, once each and all
regular files, writes each member's bytes itself (never following or making a link) and checks
its SHA-256 and size. The rows become an SQLite database there: format 2's table files are
loaded into a schema made by this dms's own migrations at the backup's version (each file's
columns and row count checked); format 1's `dms.db` must be SQLite and pass `integrity_check`.
Either must pass `foreign_key_check`, not be newer than this dms, hold a tree (no loop, every
node reachable from its owner's .home or .inbox, every parent a folder of the same owner), and
name exactly the zip's files. Then it is migrated forward, still in the temporary folder, its
rows' values checked by the API's rules (dms.ops.backup._rowchecks), and only then renamed into
place — or, for PostgreSQL, its rows copied in one transaction (dms.ops.backup.transfer). A refused
restore leaves the target as it was and nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from dms.files import modes
from dms.files.sealing import KEY_FILE
from dms.files.storage import CHUNK_SIZE, fsync_dir
from dms.files.storage.stored import stored_files
from dms.ops.backup import DATABASE, FILE_MEMBER, BackupError, Progress
from dms.ops.backup._loadrows import NEWER_DATABASE, load_tables
from dms.ops.backup._manifest import (
    COUNTS,
    SQLITE_HEADER,
    check_manifest,
    check_members,
    read_manifest,
    some_names,
)


def restore_backup(archive_path: Path, data_dir: Path, password: str | None = None,
                   latest_schema: int | None = None, progress_stream: IO[str] = sys.stderr,
                   copy_rows: Callable[[Path], None] | None = None) -> dict[str, Any]:
    """Restore `archive_path` into the new, empty `data_dir`; returns the manifest. With
    `copy_rows`, the rows go into another database: it is called with the checked, migrated
    SQLite file (and raises BackupError to refuse), and only the files land in `data_dir`.

    Everything is checked, and the database migrated forward, in a temporary folder beside
    `data_dir` before it is renamed into place; a refusal (BackupError, one sentence) leaves
    `data_dir` as it was and no temporary folder behind."""
    from dms.db.schema import latest_schema_version

    latest_schema = latest_schema_version() if latest_schema is None else latest_schema
    data_dir = data_dir.resolve()
    created: list[Path] = []
    restored = False
    try:
        if data_dir.exists() and not data_dir.is_dir():
            raise BackupError(f"{data_dir} is not a folder; restore into a new or empty folder.")
        if data_dir.exists() and any(data_dir.iterdir()):
            raise BackupError(f"{data_dir} is not empty; restore into a new or empty folder.")
        created = [parent for parent in data_dir.parents if not parent.exists()]
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{data_dir.name}.restore-", dir=data_dir.parent))
        try:
            manifest = _extract_and_check(archive_path, work, password, latest_schema,
                                          progress_stream)
            _migrate(work / DATABASE)
            _copy_derived(work / DATABASE)
            _check_values(work / DATABASE)
            if (work / KEY_FILE).exists():
                os.chmod(work / KEY_FILE, 0o600)
            if copy_rows is not None:
                copy_rows(work / DATABASE)  # the rows first: a refusal there leaves no files
                for leftover in work.glob(DATABASE + "*"):
                    leftover.unlink()
            if data_dir.exists():
                _move_into(work, data_dir)
            else:
                os.replace(work, data_dir)
            modes.tighten(modes.installation_paths(data_dir, data_dir / "files"))
            fsync_dir(data_dir.parent)
            restored = True
            return manifest
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError as error:
        raise BackupError(f"The restore failed: {error}.") from None
    finally:
        if not restored:
            for parent in created:  # deepest first: only the folders this restore made
                try:
                    parent.rmdir()
                except OSError:
                    pass


def _extract_and_check(archive_path: Path, work: Path, password: str | None, latest_schema: int,
                       progress_stream: IO[str]) -> dict[str, Any]:
    import pyzipper

    try:
        archive = pyzipper.AESZipFile(archive_path)
    except FileNotFoundError:
        raise BackupError(f"There is no backup at {archive_path}.") from None
    except Exception as error:  # not a zip, truncated, unreadable, ...
        raise BackupError(f"{archive_path} is not a readable backup: {error}") from None
    with archive:
        if password:
            archive.setpassword(password.encode("utf-8"))
        manifest: dict[str, Any] = read_manifest(archive, password_given=bool(password))
        files = check_manifest(manifest, latest_schema)
        check_members(archive, files)
        progress = Progress(sum(f["size"] for f in files.values()), len(files), progress_stream)
        # The rows first: a bad database is refused before any file is read.
        rows = [name for name in files if not FILE_MEMBER.match(name) and name != KEY_FILE]
        for name in rows:
            _extract(archive, name, work / name, files[name], progress)
        if manifest["format_version"] == 1:
            _check_database(work / DATABASE, manifest, latest_schema, files)
        else:
            load_tables(work, manifest, latest_schema)
            shutil.rmtree(work / "tables")
            _check_loaded(work / DATABASE, manifest, latest_schema, files)
        for name in sorted(files):
            if name not in rows:
                _extract(archive, name, work / name, files[name], progress)
    progress.finish()
    return manifest


def _extract(archive: Any, name: str, target: Path, expected: dict[str, Any],
             progress: Progress) -> None:
    """Write the member's bytes ourselves into a new regular file (never through a link)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | getattr(os, "O_CLOEXEC", 0), 0o600)
        with archive.open(name) as source, os.fdopen(descriptor, "wb") as out:
            for chunk in iter(lambda: source.read(CHUNK_SIZE), b""):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
                progress.add(len(chunk))
                if size > expected["size"]:
                    break
            out.flush()
            os.fsync(out.fileno())
    except OSError:
        raise  # our own disk: "The restore failed: ..."
    except RuntimeError as error:
        if "password" in str(error).lower():
            raise BackupError("The password is missing or wrong.") from None
        raise BackupError(f"{name} in the backup is damaged: {error}") from None
    except Exception as error:  # bad CRC, truncated data, ...
        raise BackupError(f"{name} in the backup is damaged: {error}") from None
    if size != expected["size"] or digest.hexdigest() != expected["sha256"]:
        raise BackupError(f"{name} in the backup does not match its checksum: the backup is "
                          "damaged.")
    written = os.lstat(target)
    if not stat.S_ISREG(written.st_mode) or written.st_size != size:
        raise BackupError(f"{name} could not be restored as a regular file.")
    progress.add(0, files=1)


def _check_database(path: Path, manifest: dict[str, Any], latest_schema: int,
                    files: dict[str, Any]) -> None:
    """SQLite, intact, not newer than this dms, a tree, and exactly the backup's files."""
    with open(path, "rb") as file:
        if file.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise BackupError(f"The backup's {DATABASE} is not an SQLite database.")
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        try:
            connection.execute("PRAGMA trusted_schema = OFF")
            connection.execute("PRAGMA query_only = ON")
            intact = connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        except sqlite3.DatabaseError:  # "database disk image is malformed", ...
            intact = False
        if not intact:
            raise BackupError("The backup's database is damaged: it fails SQLite's integrity "
                              "check.")
        try:
            _check_rows(connection, manifest, latest_schema, files)
        except sqlite3.DatabaseError as error:
            raise BackupError(f"The backup's database cannot be read: {error}.") from None
    finally:
        connection.close()


def _check_rows(connection: sqlite3.Connection, manifest: dict[str, Any], latest_schema: int,
                files: dict[str, Any]) -> None:
    from dms.ops.verify.tree import check_tree

    execute = connection.execute
    tables = {name: kind for kind, name in execute("SELECT type, name FROM sqlite_master")}
    if any(tables.get(name) != "table" for name in ("user", "node", "schema_migrations")):
        raise BackupError(f"The backup's {DATABASE} is not a dms database.")
    names = [row[0] for row in execute("SELECT name FROM schema_migrations")]
    if not all(isinstance(name, str) and re.match(r"\d+_", name) for name in names):
        raise BackupError("The backup's database is damaged: its schema_migrations table holds "
                          "a name that is no migration's.")
    schema = max((int(name.split("_", 1)[0]) for name in names), default=0)
    if schema > latest_schema:
        raise BackupError(NEWER_DATABASE)
    if schema != manifest["schema_version"]:
        raise BackupError(f"The backup's database is at schema version {schema}, its manifest "
                          f"says {manifest['schema_version']}: the backup is damaged.")
    violations = execute("PRAGMA foreign_key_check").fetchall()
    if violations:
        raise BackupError(f"The backup's database is damaged: {len(violations)} row(s) point at "
                          f"rows that are gone.")
    stored = stored_files(execute) if tables.get("document_version") == "table" else []
    versions = sorted({file.version_id for file in stored})
    counts = {
        "users": execute('SELECT count(*) FROM "user"').fetchone()[0],
        "folders": execute("SELECT count(*) FROM node WHERE kind = 'folder'").fetchone()[0],
        "documents": execute("SELECT count(*) FROM node WHERE kind = 'document'").fetchone()[0],
        "versions": len(versions)}
    if counts != {name: manifest["counts"][name] for name in COUNTS}:
        raise BackupError("The backup's database does not match the counts in its manifest: "
                          "the backup is damaged.")
    tree = check_tree(execute)
    if tree.loops:
        raise BackupError(f"The backup's database is damaged: its folder tree has a loop "
                          f"(nodes {some_names(tree.loop_ids())}).")
    if tree.misplaced:
        raise BackupError(f"The backup's database is damaged: nodes have a parent that belongs "
                          f"to another user or is a document ({some_names(tree.misplaced)}).")
    if tree.unreachable or tree.anchors:
        stray = {*tree.unreachable, *tree.anchors}
        raise BackupError(f"The backup's database is damaged: nodes cannot be reached from their "
                          f"owner's .home and .inbox ({some_names(stray)}).")
    referenced = {f"files/{file.name}": file.version_id for file in stored}
    lacking = sorted({version_id for name, version_id in referenced.items() if name not in files})
    if lacking:
        raise BackupError(f"The backup is incomplete: it lacks the files of {len(lacking)} "
                          f"versions its database refers to ({some_names(lacking)}).")
    unreferenced = {name for name in files if FILE_MEMBER.match(name)} - set(referenced)
    if unreferenced:
        raise BackupError(f"The backup holds {len(unreferenced)} files no version in its "
                          f"database refers to ({some_names(unreferenced)}).")


def _check_loaded(path: Path, manifest: dict[str, Any], latest_schema: int,
                  files: dict[str, Any]) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA query_only = ON")
        _check_rows(connection, manifest, latest_schema, files)
    finally:
        connection.close()


def _migrate(path: Path) -> None:
    """Bring the restored database's schema up to date, still in the work folder, on a database
    object of its own (the process' shared one may be serving another data dir)."""
    from dms.db import sqlite_engine
    from dms.db.schema import log_applied, runner_for

    restored = sqlite_engine(path)
    try:
        restored.connect()
        applied = runner_for(restored).up()
    except Exception as error:
        raise BackupError(f"The backup's database cannot be brought up to date: {error}.") from None
    finally:
        restored.close()
    log_applied(applied)


def _copy_derived(path: Path) -> None:
    """What the database keeps a copy of (the listing keys on custom field values) copied
    again from the restored rows: a backup's copy is not trusted to be in step."""
    from dms.db.models import COPY_VALUE_KEYS

    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute(COPY_VALUE_KEYS)
    finally:
        connection.close()


def _check_values(path: Path) -> None:
    """The rows' values by the API's rules (dms.ops.backup._rowchecks), on the migrated database."""
    from dms.ops.backup._rowchecks import check_values

    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA query_only = ON")
        check_values(connection.execute)
    finally:
        connection.close()


def _move_into(work: Path, data_dir: Path) -> None:
    """The target exists but is empty: move the restored entries in (renames, no copies)."""
    for entry in work.iterdir():
        os.replace(entry, data_dir / entry.name)

