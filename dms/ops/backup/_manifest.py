"""A backup's manifest and members, checked before a byte is written (dms.ops.backup.restore): every
field a restore relies on, strictly, and that the zip holds exactly the manifest's members, once
each and all regular files. A backup is hostile input: each refusal is one line naming what is
wrong."""

from __future__ import annotations

import json
import re
import stat
import zipfile
from collections.abc import Iterable
from typing import Any, TypeGuard

from dms.files.sealing import KEY_FILE
from dms.ops.backup import DATABASE, FILE_MEMBER, FORMAT_VERSION, MANIFEST, BackupError
from dms.ops.backup._loadrows import NEWER_DATABASE
from dms.ops.backup._rowfiles import TABLE_MEMBER

NO_PASSWORD = ("The backup is encrypted: give its password on standard input, e.g. "
               "dms restore BACKUP.zip --password-stdin --data-dir DIR < password-file.")
WRONG_PASSWORD = "The password is wrong."
MANIFEST_LIMIT = 1 << 30  # bytes: a manifest lists ~150 bytes per file
SQLITE_HEADER = b"SQLite format 3\x00"
SHA256 = re.compile(r"[0-9a-f]{64}\Z")
COUNTS = ("users", "folders", "documents", "versions")


def read_manifest(archive: zipfile.ZipFile, password_given: bool = False) -> Any:
    try:
        if archive.getinfo(MANIFEST).file_size > MANIFEST_LIMIT:
            raise BackupError("The backup's manifest is too large to be a dms manifest.")
        data = archive.read(MANIFEST)
    except KeyError:
        raise BackupError("This is not a dms backup: it has no manifest.json.") from None
    except RuntimeError as error:
        if "password" in str(error).lower():
            raise BackupError(WRONG_PASSWORD if password_given else NO_PASSWORD) from None
        raise BackupError(f"The backup cannot be read: {error}") from None
    except BackupError:
        raise
    except Exception as error:  # a damaged manifest: bad CRC, truncated, ...
        raise BackupError(f"The backup is damaged: {error}") from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, absurdly nested
        raise BackupError("The backup's manifest is malformed: it is not JSON.") from None


def _whole(value: object, low: int = 0) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _malformed(what: str) -> BackupError:
    return BackupError(f"The backup's manifest is malformed: {what}.")


def check_manifest(manifest: object, latest_schema: int) -> dict[str, dict[str, Any]]:
    """Every field a restore relies on, strictly; returns the manifest's `files`."""
    if not isinstance(manifest, dict):
        raise _malformed("it is not a JSON object")
    version = manifest.get("format_version")
    if not _whole(version, 1):
        raise _malformed("format_version is missing or not a whole number from 1 up")
    if version > FORMAT_VERSION:
        raise BackupError(f"This backup was made by a newer dms (format {version}); "
                          f"upgrade dms to restore it.")
    if not _whole(manifest.get("schema_version")):
        raise _malformed("schema_version is missing or not a whole number")
    if manifest["schema_version"] > latest_schema:
        raise BackupError(NEWER_DATABASE)
    for name in ("app_version", "created_at"):
        if not isinstance(manifest.get(name), str):
            raise _malformed(f"{name} is missing or not a string")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or not all(_whole(counts.get(name)) for name in COUNTS):
        raise _malformed(f"counts is not an object with the whole numbers {', '.join(COUNTS)}")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise _malformed("files is not an object")
    rows = _check_tables(manifest, files) if version >= 2 else {DATABASE}
    for name, entry in files.items():
        if name not in rows and not FILE_MEMBER.match(name) and name != KEY_FILE:
            raise BackupError(f"The backup holds an unexpected member {name!r}.")
        if not isinstance(entry, dict):
            raise _malformed(f"the entry of {name} is not an object")
        if not _whole(entry.get("size")):
            raise _malformed(f"the size of {name} is missing or not a whole number")
        if not isinstance(entry.get("sha256"), str) or not SHA256.match(entry["sha256"]):
            raise _malformed(f"the sha256 of {name} is missing or not 64 hexadecimal digits")
    if version == 1 and DATABASE not in files:
        raise _malformed(f"it lists no {DATABASE}")
    return files


def _check_tables(manifest: dict[str, Any], files: dict[str, Any]) -> set[str]:
    """Format 2: `tables` gives a whole number of rows for each table file `files` lists; the
    names of those members."""
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or not all(_whole(count) for count in tables.values()):
        raise _malformed("tables is not an object of whole numbers")
    members = {f"tables/{table}.jsonl": table for table in tables}
    if not all(TABLE_MEMBER.match(name) for name in members):
        raise _malformed("tables names a table that no dms database has")
    listed = {name for name in files if name.startswith("tables/")}
    if listed != set(members):
        raise _malformed("tables and files do not list the same tables")
    for required in ("user", "node", "schema_migrations"):
        if required not in tables:
            raise BackupError(f"This is not a dms backup: it has no table {required}.")
    return set(members)


def some_names(names: Iterable[str], limit: int = 3) -> str:
    """The first few of many names, for a one-line message (a name that is not printable, say
    one with a line break in it, is shown quoted and escaped)."""
    names = [name if name.isprintable() else repr(name) for name in sorted(names)]
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def check_members(archive: zipfile.ZipFile, files: dict[str, dict[str, Any]]) -> None:
    """The archive holds exactly the manifest's members, once each, all regular files."""
    infos = archive.infolist()
    seen: set[str] = set()
    for info in infos:
        if info.filename in seen:
            raise BackupError(f"The backup holds the member {info.filename!r} twice.")
        seen.add(info.filename)
        mode = info.external_attr >> 16
        if info.is_dir() or (stat.S_IFMT(mode) and not stat.S_ISREG(mode)):
            raise BackupError(f"The backup's member {info.filename!r} is not a regular file.")
    unlisted = seen - {MANIFEST} - set(files)
    if unlisted:
        raise BackupError(f"The backup holds {len(unlisted)} members its manifest does not list "
                          f"({some_names(unlisted)}).")
    absent = set(files) - seen
    if absent:
        raise BackupError(f"The backup lacks {len(absent)} members its manifest lists "
                          f"({some_names(absent)}).")
