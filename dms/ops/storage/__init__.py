"""Operating the file store (api.md §19): `dms storage gc` (the garbage collection now) and `dms
storage migrate --to s3|local` (dms.ops.storage.migrate: every file copied to the other kind of
store). The package's face: `collect_garbage` here, `migrate` beside it."""

from __future__ import annotations

from dataclasses import dataclass

from dms.config import Config
from dms.domain.documents import referenced_version_ids
from dms.files.storage import FileStore

MINUTE, HOUR = 60.0, 3600.0


@dataclass(frozen=True)
class Collected:
    """What one garbage collection removed."""
    bucket: bool  # objects of a bucket (else the local sweep's files)
    removed: int  # objects, or files no version names
    interrupted: int  # interrupted uploads (the local sweep)
    grace_seconds: float


def collect_garbage(store: FileStore, config: Config, grace_hours: float | None) -> Collected:
    """In a bucket: objects no row names older than `grace_hours` (default a day, as the periodic
    job). On local disk: the sweep, files no row names older than `grace_hours` (default
    DMS_SWEEP_GRACE_MINUTES) and interrupted uploads."""
    collect = getattr(store, "collect_garbage", None)
    if collect is not None:
        from dms.files.storage.s3.store import GARBAGE_AGE_SECONDS

        grace = GARBAGE_AGE_SECONDS if grace_hours is None else grace_hours * HOUR
        return Collected(True, collect(grace), 0, grace)
    grace = config.sweep_grace_minutes * MINUTE if grace_hours is None else grace_hours * HOUR
    interrupted, orphans = store.sweep(referenced_version_ids(), grace)
    return Collected(False, orphans, interrupted, grace)
