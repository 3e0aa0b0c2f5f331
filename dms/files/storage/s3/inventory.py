"""What operating a bucket needs beyond serving files (api.md §19): whether it answers, what it
holds under `<prefix>blobs/`, and writing an object for a row that names it already (`dms storage
migrate --to s3`). Used by dms.ops (verify, backup, storage), which hold objects with
dms.files.storage.s3.leases.hold; S3Store's own paths stay in dms.files.storage.s3.store, whose
helpers this module shares (same package)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from dms.config import ConfigError
from dms.files.storage.s3 import leases
from dms.files.storage.s3.bucket import BucketAccess
from dms.files.storage.s3.client import BucketDown
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


# A backup's name in the bucket (`<prefix>backups/<name>`): a plain file name.
BACKUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\Z")


def backup_key(store: BucketAccess, name: str) -> str:
    if not BACKUP_NAME.match(name):
        raise ConfigError(f"A backup's name in the bucket is a plain file name (letters, digits, "
                          f". _ -), not {name!r}.")
    return f"{store.prefix}backups/{name}"


def put_backup(store: S3Store, path: Path, name: str) -> None:
    """A backup written on this node's disk, into the bucket under `backups/` (multipart, its
    size checked after)."""
    key, size = backup_key(store, name), path.stat().st_size
    store._call(partial(store.client.upload_file, str(path), store.bucket, key))
    head = store._call(partial(store.client.head_object, Bucket=store.bucket, Key=key))
    if int(head["ContentLength"]) != size:
        raise BucketDown(f"The backup in the bucket has {head['ContentLength']} bytes instead "
                         f"of {size}; run the backup again.")


def get_backup(store: BucketAccess, name: str, target: Path) -> None:
    """A backup in the bucket, fetched to `target` (1 MiB at a time)."""
    with open(target, "wb") as out:
        for chunk in store._stream(backup_key(store, name)):
            out.write(chunk)
