"""What operating a bucket needs beyond serving files (api.md §19): whether it answers, what it
holds under `<prefix>blobs/`, and writing an object for a row that names it already (`dms storage
migrate --to s3`). Used by dms.ops (verify, backup, storage); S3Store's own paths stay in
dms.files.storage.s3.store, whose helpers this module shares (same package)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dms.db import database, write_transaction
from dms.files.storage.s3 import leases
from dms.files.storage.s3.store import S3Store


@dataclass(frozen=True)
class BlobObject:
    sha256: str  # the last part of its key
    key: str
    size: int
    modified: datetime  # aware, UTC


def describe(store: S3Store) -> str:
    """The bucket in words: `bucket NAME at ENDPOINT` (and its prefix)."""
    where = f" at {store.settings.endpoint}" if store.settings.endpoint else ""
    prefix = f", prefix {store.prefix}" if store.prefix else ""
    return f"the bucket {store.bucket}{where}{prefix}"


def check_reachable(store: S3Store) -> None:
    """The bucket lets dms in (S3Store.check: ConfigError naming the settings, when it refuses)
    and answers a listing of one key now (BucketDown when it cannot be reached)."""
    store.check()
    store._call(lambda: store.client.list_objects_v2(Bucket=store.bucket, Prefix=store.prefix,
                                                     MaxKeys=1))


def blob_objects(store: S3Store) -> Iterator[BlobObject]:
    """Every object under `<prefix>blobs/`, a listing of 1,000 per call."""
    for item in store._objects(f"{store.prefix}blobs/"):
        key = item["Key"]
        yield BlobObject(key.rsplit("/", 1)[-1], key, int(item["Size"]), item["LastModified"])


def put_blob(store: S3Store, path: Path, sha256: str, size: int) -> None:
    """Write the object `sha256` from `path` as an upload does (its lease, a conditional put,
    nothing when it is there with this size); a row names it already, so the lease ends here."""
    lease = store._put(path, sha256, size)
    leases.release([lease])


def hold(shas: list[str]) -> tuple[list[int], list[str]]:
    """Upload leases on these objects, so that no purge or garbage collection removes them while
    a backup reads them (released with leases.release; a crashed holder's expire after a day),
    in write transactions of CLAIM_BATCH objects: (the leases' ids, the objects a removal is
    under way for, which got none)."""
    held: list[int] = []
    removing: list[str] = []
    for start in range(0, len(shas), leases.CLAIM_BATCH):
        batch = shas[start:start + leases.CLAIM_BATCH]
        now = time.time()
        with write_transaction(*map(leases.blob_scope, batch)):
            for sha in batch:
                busy = database.execute_sql(
                    "SELECT 1 FROM blob_lease WHERE sha256 = ? AND purpose = ? AND "
                    "created_at >= ? LIMIT 1",
                    (sha, leases.DELETE, now - leases.DELETE_LEASE_SECONDS)).fetchone()
                if busy:
                    removing.append(sha)
                    continue
                held.append(int(database.execute_sql(
                    "INSERT INTO blob_lease (sha256, purpose, created_at) VALUES (?, ?, ?) "
                    "RETURNING id", (sha, leases.UPLOAD, now)).fetchone()[0]))
    return held, removing
