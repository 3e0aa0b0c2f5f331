"""The file checks of `dms verify`: every file the database names against its recorded size and
SHA-256, and what the store holds that no row names — in a directory (every file read and
hashed, as always) or in a bucket (api.md §19: one listing of its objects gives each one's size,
1,000 objects per request; `deep` also reads and hashes every object, which costs reading the
whole bucket)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dms.db import database
from dms.files.storage import SEARCHABLE_SUFFIX, Blob, FileMissing, read_file, sha256_of
from dms.files.storage.stored import StoredFile, stored_files

if TYPE_CHECKING:
    from dms.files.storage.s3.store import S3Store


def _what(file: StoredFile) -> str:
    return f"version {file.version_id}" + (" (its searchable PDF)"
                                           if file.name.endswith(SEARCHABLE_SUFFIX) else "")


def check_directory(report: Any, files_dir: Path, grace_seconds: float = 0) -> None:
    """Every stored file (originals and searchable PDFs) against its recorded SHA-256 and size,
    and files nothing refers to — problems once older than `grace_seconds`, before that expected
    (previews and work folders, `.previews` and `.work`, are derived and not checked)."""
    known = set()
    cutoff = time.time() - grace_seconds
    for file in stored_files(database.execute_sql):
        known.add(file.name.split("/", 1)[1])
        path = files_dir / file.name
        if not path.is_file():
            report.missing.append(_what(file))
            continue
        report.files_checked += 1
        if sha256_of(read_file(path)) != (file.sha256, file.size):
            report.corrupt.append(f"{_what(file)} ({path})")
    if files_dir.is_dir():
        for bucket in sorted(files_dir.iterdir()):
            if bucket.name.startswith("."):
                continue
            for entry in sorted(bucket.iterdir()) if bucket.is_dir() else ():
                if entry.name not in known:
                    young = entry.lstat().st_mtime > cutoff
                    (report.recent_orphans if young else report.orphaned).append(str(entry))


def check_bucket(report: Any, store: S3Store, deep: bool = False,
                 grace_seconds: float | None = None) -> None:
    """Every file the rows name has its object, of the recorded size (`deep`: and SHA-256); the
    objects no row names are problems once older than `grace_seconds` (default: the garbage
    collection's day), before that expected. The rows are read before the bucket is listed, so
    a row committed meanwhile makes at most a young object without a row (its upload's)."""
    from dms.files.storage.s3.inventory import blob_objects
    from dms.files.storage.s3.store import GARBAGE_AGE_SECONDS

    grace = GARBAGE_AGE_SECONDS if grace_seconds is None else grace_seconds
    report.in_bucket = True
    files = stored_files(database.execute_sql)
    objects = {item.sha256: item for item in blob_objects(store)}
    hashed: dict[str, tuple[str, int] | None] = {}  # one read per object, whoever names it
    for file in files:
        item = objects.get(file.sha256 or "")
        if item is None:
            report.missing.append(_what(file))
            continue
        report.files_checked += 1
        if item.size != file.size:
            report.corrupt.append(f"{_what(file)} ({item.key}: {item.size} bytes, recorded "
                                  f"{file.size})")
            continue
        if not deep:
            continue
        if file.sha256 not in hashed:
            try:
                hashed[file.sha256] = sha256_of(store.read(Blob(file.version_id, file.sha256)))
            except FileMissing:  # removed since the listing (its last version purged)
                hashed[file.sha256] = None
        digest = hashed[file.sha256]
        if digest is None:
            report.missing.append(_what(file))
        elif digest != (file.sha256, file.size):
            report.corrupt.append(f"{_what(file)} ({item.key}: its bytes' SHA-256 is "
                                  f"{digest[0]})")
    named = {file.sha256 for file in files}
    cutoff = time.time() - grace
    for sha256, item in sorted(objects.items()):
        if sha256 not in named:
            young = item.modified.timestamp() > cutoff
            (report.recent_orphans if young else report.orphaned).append(item.key)
