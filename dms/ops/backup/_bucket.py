"""A backup of an installation whose files are in a bucket (api.md §19): the objects the
snapshot names, held by leases so that no purge or garbage collection removes one while the
backup runs, checked to be there, then streamed into the zip one chunk at a time (no object is
copied to disk or held in memory whole)."""

from __future__ import annotations

import functools
from typing import Any

from dms.files.storage import Blob
from dms.files.storage.stored import StoredFile


def stage_objects(bucket: Any, files: list[StoredFile], member: Any
                  ) -> tuple[list[Any], list[int]] | None:
    """The zip's members for the files of a snapshot (`member(name, size, chunks)` makes one)
    and the leases holding their objects; None (nothing held) when one is missing or being
    removed: deleted since the snapshot, so the snapshot is taken again."""
    from dms.files.storage.s3 import leases
    from dms.files.storage.s3.inventory import blob_objects

    shas = list(dict.fromkeys(file.sha256 for file in files))
    if not all(shas):
        return None  # a row without a SHA-256 has no object: a file that is missing
    held, removing = leases.hold(shas)
    there = {item.sha256 for item in blob_objects(bucket)} if not removing else set()
    if removing or not there.issuperset(shas):
        leases.release(held)
        return None
    members = [member(f"files/{file.name}", file.size, functools.partial(
        bucket.read, Blob(file.version_id, file.sha256))) for file in files]
    return members, held


def release(held: list[int]) -> None:
    from dms.files.storage.s3 import leases

    leases.release(held)
