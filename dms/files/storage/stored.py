"""What a database says is stored under `files/`: each version's original and its searchable PDF,
with the SHA-256 and size recorded for them (read by backups, restores and `dms verify`)."""

from __future__ import annotations

from dataclasses import dataclass

from dms.files.storage.base import SEARCHABLE_SUFFIX


@dataclass(frozen=True)
class StoredFile:
    """A file the database says is stored: `name` relative to `files/` (`aa/<id>` or
    `aa/<id>.searchable.pdf`), with the SHA-256 and size recorded for it."""
    name: str
    version_id: str
    sha256: str
    size: int


def stored_files(execute) -> list[StoredFile]:
    """Every file the versions of a database (`execute(sql)`, peewee's or sqlite3's) refer to:
    each original, and each searchable PDF (schema 8 on; older databases have none)."""
    # Selecting the column itself tells: "no such column" on an older SQLite schema.
    try:
        execute("SELECT searchable_size FROM document_version LIMIT 0").fetchall()
        searchable = True
    except Exception:  # sqlite3's or peewee's OperationalError: older schema
        searchable = False
    rows = execute("SELECT id, sha256, size" + (", searchable_sha256, searchable_size"
                                                if searchable else "")
                   + " FROM document_version").fetchall()
    files = []
    for row in rows:
        version_id = row[0]
        files.append(StoredFile(f"{version_id[:2]}/{version_id}", version_id, row[1], row[2]))
        if searchable and row[4] is not None:
            files.append(StoredFile(f"{version_id[:2]}/{version_id}{SEARCHABLE_SUFFIX}",
                                    version_id, row[3], row[4]))
    return files
