"""S3Store: originals and searchable PDFs in an S3-compatible bucket (api.md §19), for several
nodes without a shared disk.

Objects are content-addressed — `<prefix>blobs/<sha256[:2]>/<sha256>` — and written once: the
same bytes uploaded twice (by anyone) are one object, and nothing is ever renamed or rewritten in
the bucket. The order is the directory store's: object first, row second; an object no row names
is garbage, removed by `collect_garbage` (the sweep job; `dms storage gc`) once it is older than a
day, and at once by a purge when nobody else names it — both through the leases of
dms.files.storage.s3.leases, which keep an object while an upload of the same bytes commits its
row.

On the node's own disk, and rebuildable: uploads being received (`<data-dir>/tmp`), copies fetched
for reading (`<data-dir>/cache/fetched`, kept minutes: dms.files.storage.s3.fetching), previews
(`<data-dir>/cache/previews`) and the page PDFs of a searchable PDF being made
(`<data-dir>/cache/work`, shared with the other nodes through `<prefix>work/<version id>/` so that
any worker can finish a reading another began).

The bucket down: every call fails within seconds with BucketDown (503 `unavailable`); previews
already made are still served; processing waits and tries again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from dms.files.storage.base import (
    Blob,
    FileMissing,
    ReceivedFile,
    receive_into,
    versions_of,
)
from dms.files.storage.localspace import LocalSpace, entries, remove_if_old
from dms.files.storage.s3 import leases
from dms.files.storage.s3.bucket import BucketAccess
from dms.files.storage.s3.client import (
    BucketDown,
    BucketSettings,
)
from dms.files.storage.s3.fetching import FetchCache

log = logging.getLogger("dms.storage")

MULTIPART_BYTES = 8 * 1024 * 1024  # larger files go up in parts of this size
GARBAGE_AGE_SECONDS = 24 * 3600


class S3Store(LocalSpace, BucketAccess):
    """A FileStore in a bucket (see the module docstring)."""

    def __init__(self, settings: BucketSettings, data_dir: Path, client: Any = None):
        LocalSpace.__init__(self, data_dir)
        BucketAccess.__init__(self, settings, client)
        cache = data_dir / "cache"
        self.previews_dir = cache / "previews"
        self.work_root = cache / "work"
        self.copies = FetchCache(cache / "fetched")
        # Leases taken for objects whose rows are not written yet: settled by those rows'
        # transactions (settle), in this process.
        self._pending: dict[tuple[str, bool], int] = {}

    # -- reading ----------------------------------------------------------------------------
    def local_path(self, blob: Blob) -> None:
        return None

    def fetched(self, blob: Blob) -> contextlib.AbstractContextManager[Path]:
        """A copy of the object on this node's disk (dms.files.storage.s3.fetching: kept a few
        minutes after its last use, so a document's pages are not each a whole download)."""
        key = self._key_of(blob)

        def fetch(target: Path) -> None:
            with open(target, "wb") as out:
                for chunk in self._stream(key):
                    out.write(chunk)
        return self.copies.copy_of(key.rsplit("/", 1)[-1], fetch)

    def size(self, blob: Blob) -> int | None:
        try:
            head = self._call(lambda: self.client.head_object(Bucket=self.bucket,
                                                              Key=self._key_of(blob)))
        except FileMissing:
            return None
        return int(head["ContentLength"])

    def read(self, blob: Blob, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        return self._stream(self._key_of(blob), start, end)

    # -- writing ----------------------------------------------------------------------------
    def receive(self, stream: BinaryIO, length: int | None, limit: int) -> ReceivedFile:
        return receive_into(self.tmp_dir, stream, length, limit)

    def store(self, received: ReceivedFile, version_id: str) -> None:
        """The received file into the bucket (unless these bytes are there already), then out of
        tmp/; leased until its row is written."""
        lease = self._put(received.path, received.sha256, received.size)
        self._pending[(version_id, False)] = lease
        received.discard()

    def place_searchable(self, source: Path, version_id: str, sha256: str) -> None:
        lease = self._put(source, sha256, source.stat().st_size)
        self._pending[(version_id, True)] = lease
        source.unlink(missing_ok=True)

    def settle(self, blobs: Iterable[Blob]) -> None:
        """These blobs' rows are being written (in the caller's transaction): their objects are
        kept by the rows from now on."""
        leases.settle([lease for blob in blobs
                       if (lease := self._pending.pop((blob.version_id, blob.searchable), None))
                       is not None])

    def _put(self, path: Path, sha256: str, size: int) -> int:
        """Write the object `sha256` from `path` once: a lease first (no removal of it can
        start), then nothing if it is there with this size, else a conditional put (multipart
        above MULTIPART_BYTES). The lease's id."""
        lease = leases.take_upload(sha256)
        try:
            key = self.key(sha256)
            damaged = False
            try:
                head = self._call(lambda: self.client.head_object(Bucket=self.bucket, Key=key))
                if int(head["ContentLength"]) == size:
                    return lease
                damaged = True  # these bytes' key with other bytes: write the right ones
                log.warning("object %s in the bucket has %s bytes instead of %d: written again",
                            key, head["ContentLength"], size)
            except FileMissing:
                pass
            self._call(lambda: self._upload(path, key, size, overwrite=damaged))
        except BaseException:
            with contextlib.suppress(Exception):
                leases.release([lease])
            raise
        return lease

    def _upload(self, path: Path, key: str, size: int, overwrite: bool = False) -> None:
        if size <= MULTIPART_BYTES:
            condition = {} if overwrite else {"IfNoneMatch": "*"}
            with open(path, "rb") as body:
                try:
                    self.client.put_object(Bucket=self.bucket, Key=key, Body=body,
                                           ContentLength=size, **condition)
                except Exception as error:
                    if getattr(error, "response", {}).get("Error", {}).get("Code") \
                            not in ("PreconditionFailed", "412"):
                        raise
            return  # written, or someone wrote the same bytes first
        from boto3.s3.transfer import TransferConfig

        self.client.upload_file(str(path), self.bucket, key, Config=TransferConfig(
            multipart_threshold=MULTIPART_BYTES, multipart_chunksize=MULTIPART_BYTES,
            max_concurrency=4))

    def duplicate(self, version_id: str, new_version_id: str) -> None:
        """Nothing to write: the new version's row names the same objects."""

    # -- the work of a reading --------------------------------------------------------------
    def preview_path(self, version_id: str, page_number: int, width: int = 1000) -> Path:
        name = f"{page_number}.jpg" if width == 1000 else f"{page_number}-{width}.jpg"
        return self.previews_dir / version_id[:2] / version_id / name

    def work_dir(self, version_id: str) -> Path:
        return self.work_root / version_id[:2] / version_id

    def place_work(self, source: Path, version_id: str, name: str) -> None:
        target = self.work_dir(version_id) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        self.share_work(version_id, [name])

    def share_work(self, version_id: str, names: Iterable[str]) -> None:
        """Copy these files of the local work folder to the bucket, for any other worker."""
        folder = self.work_dir(version_id)
        for name in names:
            path = folder / name
            if path.is_file():
                self._call(partial(self.client.upload_file, str(path), self.bucket,
                                   self.work_key(version_id, name)))

    def gather_work(self, version_id: str) -> None:
        """Fetch the work files other workers shared that this node lacks."""
        folder = self.work_dir(version_id)
        for key in self._keys(self.work_key(version_id)):
            name = key.rsplit("/", 1)[-1]
            target = folder / name
            if not name or target.exists():
                continue
            folder.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(descriptor, "wb") as out:
                    for chunk in self._stream(key):
                        out.write(chunk)
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise

    # -- removing ---------------------------------------------------------------------------
    def remove(self, blobs: Iterable[Blob]) -> None:
        """The versions' local previews and work, their shared work, and each object nobody
        else names (the others stay; the garbage collection retries what fails). An upload
        whose row was not written (its transaction failed) lets go of its own lease first."""
        blobs = list(blobs)
        unsettled = [lease for blob in blobs
                     if (lease := self._pending.pop((blob.version_id, blob.searchable), None))
                     is not None]
        if unsettled:
            leases.release(unsettled)
        for version_id in versions_of(blobs):
            shutil.rmtree(self.previews_dir / version_id[:2] / version_id, ignore_errors=True)
            self.drop_work(version_id)
        try:
            self.remove_unreferenced([blob.sha256 for blob in blobs if blob.sha256])
        except BucketDown:
            log.warning("the bucket is down: the files of %d version(s) stay until the garbage "
                        "collection", len(blobs))

    def drop_searchable(self, version_id: str) -> None:
        """Forget a version's searchable PDF and the page PDFs of its reading (a new reading
        starts over): its object is garbage once no row names it (a lease not settled yet is
        released)."""
        lease = self._pending.pop((version_id, True), None)
        if lease is not None:
            leases.release([lease])
        self.drop_work(version_id)

    def drop_work(self, version_id: str) -> None:
        """The page PDFs of a reading are no longer needed, here and in the bucket (if it is
        down, the garbage collection removes them after a day)."""
        shutil.rmtree(self.work_dir(version_id), ignore_errors=True)
        try:
            self._delete_keys(list(self._keys(self.work_key(version_id))))
        except BucketDown:
            log.warning("the bucket is down: the page PDFs of version %s stay there until the "
                        "garbage collection", version_id)

    def remove_unreferenced(self, shas: Iterable[str], now: float | None = None) -> int:
        """Remove the objects of these SHA-256s that nobody needs (leases.claim); how many."""
        claimed = leases.claim(shas, now)
        if not claimed:
            return 0
        try:
            self._delete_keys([self.key(sha) for sha in claimed])
        finally:
            leases.release(claimed.values())
        return len(claimed)

    def collect_garbage(self, grace_seconds: float = GARBAGE_AGE_SECONDS) -> int:
        """Remove objects no row names that are older than `grace_seconds`, expired leases and
        shared work that old (a reading ends within its budget, hours); how many objects
        were removed."""
        leases.expire()
        cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=grace_seconds)
        removed, old = 0, []
        for item in self._objects(f"{self.prefix}blobs/"):
            if item["LastModified"] < cutoff:
                old.append(item["Key"].rsplit("/", 1)[-1])
            if len(old) >= leases.CLAIM_BATCH:
                removed += self.remove_unreferenced(old, time.time())
                old = []
        removed += self.remove_unreferenced(old, time.time())
        self._delete_keys([item["Key"] for item in self._objects(f"{self.prefix}work/")
                           if item["LastModified"] < cutoff])
        if removed:
            log.info("the garbage collection removed %d object(s) no version names", removed)
        return removed

    def sweep(self, referenced: set[str], grace_seconds: float) -> tuple[int, int]:
        """What a crash left on this node: interrupted uploads in tmp/, fetched copies no longer
        kept, previews and work of versions that are gone. (The bucket's garbage:
        collect_garbage.)"""
        cutoff = time.time() - grace_seconds
        temporary = 0
        for entry in entries(self.tmp_dir):
            temporary += remove_if_old(entry, cutoff)
        self.copies.sweep()
        for root in (self.work_root, self.previews_dir):
            for bucket in entries(root):
                for entry in entries(bucket) if bucket.is_dir() else ():
                    if entry.name not in referenced:
                        remove_if_old(entry, cutoff)
        return temporary, 0

