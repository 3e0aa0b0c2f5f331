"""Leases on objects (migration 0036): an object in the bucket is named by the SHA-256 of its bytes
and may be shared by several versions (the same file uploaded twice, a restored version, a user's
and another's), so it may be removed only when no version names it — and never while an upload of
the same bytes is between writing the object and committing its row (that upload found the object
there and wrote nothing).

- `take_upload(sha)` before the object is written: an `upload` lease, in a write transaction of
  the object's own scope. If a `delete` lease is there (a removal under way), it waits for it to
  end, so that the upload writes the object again afterwards.
- `settle(ids)` in the transaction that writes the row: from then on the row keeps the object.
- `claim(shas)` before removing objects: for each object that no version names and no fresh
  upload lease holds, a `delete` lease, in the object's scope; the objects are removed, then
  `release(ids)`. One statement checks rows and leases (one snapshot on PostgreSQL).
- Leases of a node that died expire: an upload's after UPLOAD_LEASE_SECONDS (its object is then
  garbage once no row names it), a removal's after DELETE_LEASE_SECONDS (its uploader goes ahead).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from dms.db import database, write_transaction
from dms.errors import Unavailable

UPLOAD_LEASE_SECONDS = 24 * 3600
DELETE_LEASE_SECONDS = 600
WAIT_FOR_DELETE_SECONDS = 30
CLAIM_BATCH = 100

UPLOAD, DELETE = "upload", "delete"


def blob_scope(sha256: str) -> str:
    """One object of the bucket: its leases and removal."""
    return f"blob:{sha256}"


def take_upload(sha256: str) -> int:
    """An upload lease on the object `sha256`, once no removal of it is under way; its id."""
    deadline = time.monotonic() + WAIT_FOR_DELETE_SECONDS
    while True:
        now = time.time()
        with write_transaction(blob_scope(sha256)):
            database.execute_sql("DELETE FROM blob_lease WHERE sha256 = ? AND purpose = ? AND "
                                 "created_at < ?", (sha256, DELETE, now - DELETE_LEASE_SECONDS))
            removing = database.execute_sql(
                "SELECT 1 FROM blob_lease WHERE sha256 = ? AND purpose = ? LIMIT 1",
                (sha256, DELETE)).fetchone()
            if removing is None:
                return int(database.execute_sql(
                    "INSERT INTO blob_lease (sha256, purpose, created_at) VALUES (?, ?, ?) "
                    "RETURNING id", (sha256, UPLOAD, now)).fetchone()[0])
        if time.monotonic() > deadline:
            raise Unavailable("The file store is busy removing a file; try again in a moment.")
        time.sleep(0.2)


def settle(lease_ids: Iterable[int]) -> None:
    """The rows naming these uploads' objects are written (in the caller's transaction)."""
    ids = list(lease_ids)
    if ids:
        database.execute_sql(f"DELETE FROM blob_lease WHERE id IN ({','.join('?' * len(ids))})",
                             ids)


def claim(shas: Iterable[str], now: float | None = None) -> dict[str, int]:
    """Delete leases on those of these objects nobody needs: {sha: lease id}."""
    now = time.time() if now is None else now
    wanted = list(dict.fromkeys(sha for sha in shas if sha))
    claimed: dict[str, int] = {}
    for start in range(0, len(wanted), CLAIM_BATCH):
        batch = wanted[start:start + CLAIM_BATCH]
        with write_transaction(*map(blob_scope, batch)):
            for sha in batch:
                needed = database.execute_sql(
                    "SELECT EXISTS (SELECT 1 FROM document_version WHERE sha256 = ?) "
                    "OR EXISTS (SELECT 1 FROM document_version WHERE searchable_sha256 = ?) "
                    "OR EXISTS (SELECT 1 FROM blob_lease WHERE sha256 = ? AND "
                    "(purpose = ? OR created_at >= ?))",
                    (sha, sha, sha, DELETE, now - UPLOAD_LEASE_SECONDS)).fetchone()[0]
                if not needed:
                    claimed[sha] = int(database.execute_sql(
                        "INSERT INTO blob_lease (sha256, purpose, created_at) VALUES (?, ?, ?) "
                        "RETURNING id", (sha, DELETE, now)).fetchone()[0])
    return claimed


def release(lease_ids: Iterable[int]) -> None:
    """The claimed objects are removed (or were not: the next collection tries again)."""
    ids = list(lease_ids)
    for start in range(0, len(ids), CLAIM_BATCH):
        with write_transaction():
            settle(ids[start:start + CLAIM_BATCH])


def expire(now: float | None = None) -> int:
    """Remove the leases of nodes that died (see the module docstring); how many."""
    now = time.time() if now is None else now
    with write_transaction():
        cursor = database.execute_sql(
            "DELETE FROM blob_lease WHERE (purpose = ? AND created_at < ?) OR "
            "(purpose = ? AND created_at < ?)",
            (UPLOAD, now - UPLOAD_LEASE_SECONDS, DELETE, now - DELETE_LEASE_SECONDS))
        return cursor.rowcount or 0


def hold(shas: list[str]) -> tuple[list[int], list[str]]:
    """Upload leases on these objects, so that no purge or garbage collection removes them while
    a backup reads them (released with release; a crashed holder's expire after a day),
    in write transactions of CLAIM_BATCH objects: (the leases' ids, the objects a removal is
    under way for, which got none)."""
    held: list[int] = []
    removing: list[str] = []
    for start in range(0, len(shas), CLAIM_BATCH):
        batch = shas[start:start + CLAIM_BATCH]
        now = time.time()
        with write_transaction(*map(blob_scope, batch)):
            for sha in batch:
                busy = database.execute_sql(
                    "SELECT 1 FROM blob_lease WHERE sha256 = ? AND purpose = ? AND "
                    "created_at >= ? LIMIT 1",
                    (sha, DELETE, now - DELETE_LEASE_SECONDS)).fetchone()
                if busy:
                    removing.append(sha)
                    continue
                held.append(int(database.execute_sql(
                    "INSERT INTO blob_lease (sha256, purpose, created_at) VALUES (?, ?, ?) "
                    "RETURNING id", (sha, UPLOAD, now)).fetchone()[0]))
    return held, removing
