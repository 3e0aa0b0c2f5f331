"""BucketAccess: the calls of an S3Store (dms.files.storage.s3.store) to its bucket — the keys
of objects and of shared work, one call with its failures as dms's (FileMissing, BucketDown,
BucketRefused) and a pause after the bucket could not be reached, streamed reads, listings by
prefix, removals in batches, and the checks at start and for GET /health."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

from dms.config import ConfigError
from dms.files.storage.base import CHUNK_SIZE, Blob, FileMissing, StoreUnavailable
from dms.files.storage.s3.client import (
    BucketDown,
    BucketRefused,
    BucketSettings,
    error_code,
    is_down,
    is_missing,
    is_refused,
    make_client,
)

log = logging.getLogger("dms.storage")

DELETE_BATCH = 1000  # keys per DeleteObjects call (S3's own limit)
DOWN_PAUSE_SECONDS = 3

T = TypeVar("T")


class BucketAccess:
    """The bucket of an S3Store: its client, name and prefix, and the calls to it."""

    def __init__(self, settings: BucketSettings, client: Any = None):
        self.settings = settings
        self.bucket = settings.bucket
        self.prefix = settings.prefix
        self.client = client if client is not None else make_client(settings)
        self._down_until = 0.0  # monotonic time until which the bucket counts as down

    # -- names ------------------------------------------------------------------------------
    def key(self, sha256: str) -> str:
        return f"{self.prefix}blobs/{sha256[:2]}/{sha256}"

    def work_key(self, version_id: str, name: str = "") -> str:
        return f"{self.prefix}work/{version_id}/{name}"

    def _key_of(self, blob: Blob) -> str:
        if not blob.sha256:
            raise FileMissing(f"{blob.version_id}: no file recorded")
        return self.key(blob.sha256)

    def _call(self, action: Callable[[], T]) -> T:
        """One call to the bucket, its failures as dms's: FileMissing, BucketDown. After a
        failure to reach it, calls fail at once for DOWN_PAUSE_SECONDS (a request then gets its
        503 in no time rather than after the timeouts), then the next call tries again."""
        if time.monotonic() < self._down_until:
            raise BucketDown()
        try:
            return action()
        except Exception as error:
            if is_missing(error):
                raise FileMissing(str(error)) from None
            if is_refused(error):
                log.error("the bucket %r refuses dms's requests (check DMS_S3_BUCKET and the "
                          "keys): %s", self.bucket, error)
                raise BucketRefused() from None
            if is_down(error):
                self._down_until = time.monotonic() + DOWN_PAUSE_SECONDS
                log.warning("the bucket cannot be reached: %s", error)
                raise BucketDown() from None
            raise

    def check(self) -> None:
        """At start: the bucket answers and lets dms in. Refused (no such bucket, wrong keys):
        ConfigError, the node does not start; unreachable: a warning, the node starts (and
        recovers by itself when the bucket answers)."""
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception as error:
            where = self.settings.endpoint or "AWS S3"
            if is_refused(error) or is_missing(error):
                code = error_code(error)
                reason = {"404": "no such bucket", "NoSuchBucket": "no such bucket",
                          "403": "access denied"}.get(code, code or str(error))
                raise ConfigError(
                    f"The bucket {self.bucket!r} at {where} refuses dms ({reason}): check "
                    f"DMS_S3_BUCKET (it must exist), DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY."
                ) from None
            if is_down(error):
                log.warning("the bucket %r at %s cannot be reached (%s): uploads and downloads "
                            "answer 503 until it can", self.bucket, where, error)
                return
            raise

    def status(self) -> dict[str, object]:
        """For GET /health: the bucket, and whether it answers now."""
        try:
            self._call(partial(self.client.head_bucket, Bucket=self.bucket))
            reachable = True
        except StoreUnavailable:
            reachable = False
        return {"kind": "s3", "bucket": self.bucket, "reachable": reachable}

    def _stream(self, key: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """The object's bytes, asked for now (FileMissing, BucketDown at once), read as
        iterated."""
        extra = {}
        if start or end is not None:
            extra["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        answer = self._call(lambda: self.client.get_object(Bucket=self.bucket, Key=key, **extra))
        return self._chunks(answer["Body"])

    def _chunks(self, body: Any) -> Iterator[bytes]:
        try:
            while True:
                try:
                    chunk = body.read(CHUNK_SIZE)
                except Exception as error:
                    if is_down(error):
                        raise BucketDown() from None
                    raise
                if not chunk:
                    return
                yield chunk
        finally:
            body.close()

    def _keys(self, prefix: str) -> Iterator[str]:
        for item in self._objects(prefix):
            yield item["Key"]

    def _objects(self, prefix: str) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self._call(partial(self.client.list_objects_v2, Bucket=self.bucket,
                                      Prefix=prefix, MaxKeys=1000, **extra))
            yield from page.get("Contents", [])
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return

    def _delete_keys(self, keys: list[str]) -> None:
        for start in range(0, len(keys), DELETE_BATCH):
            batch = keys[start:start + DELETE_BATCH]
            answer = self._call(partial(
                self.client.delete_objects, Bucket=self.bucket,
                Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True}))
            for failed in answer.get("Errors", [])[:10]:
                log.warning("could not remove %s from the bucket: %s", failed.get("Key"),
                            failed.get("Message"))
