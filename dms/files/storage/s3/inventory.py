"""What operating a bucket needs beyond serving files (api.md §19): whether it answers, what it
holds under `<prefix>blobs/`, and writing an object for a row that names it already (`dms storage
migrate --to s3`). Used by dms.ops (verify, backup, storage), which hold objects with
dms.files.storage.s3.leases.hold; S3Store's own paths stay in dms.files.storage.s3.store, whose
helpers this module shares (same package)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

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
