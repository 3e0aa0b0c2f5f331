"""`dms storage gc` and `dms storage migrate --to s3|local` (api.md §19): the garbage collection
run now, and every file copied to the other kind of store (dms.ops.storage)."""

from __future__ import annotations

import argparse
import functools
import sys

from dms.cli.status import ExitStatus
from dms.config import Config


def run(args: argparse.Namespace, config: Config) -> ExitStatus:
    if not config.database_url and not config.db_path.is_file():
        print(f"dms: there is no dms database in {config.data_dir}.", file=sys.stderr)
        return ExitStatus.REFUSED
    from dms.db.schema import open_migrated

    open_migrated(config)
    if args.storage_command == "gc":
        return collect_garbage(args, config)
    return migrate(args, config)


def open_checked_store(config: Config):
    """The configured store; a bucket checked first, so that one refusing dms (its name or
    keys wrong) is a ConfigError naming the settings (exit status 2), not a failure later."""
    from dms.files.storage import open_store

    store = open_store(config)
    check = getattr(store, "check", None)
    if check is not None:
        check()
    return store


def collect_garbage(args: argparse.Namespace, config: Config) -> ExitStatus:
    from dms.files.storage import StoreUnavailable
    from dms.ops import storage

    try:
        collected = storage.collect_garbage(open_checked_store(config), config,
                                            args.grace_hours)
    except StoreUnavailable:
        print(f"dms: the bucket {config.s3_bucket} cannot be reached, so nothing was removed; "
              f"try again in a moment.", file=sys.stderr)
        return ExitStatus.FAILED
    age = _duration(collected.grace_seconds)
    if collected.bucket:
        print(f"Removed {collected.removed} objects of the bucket {config.s3_bucket} that no "
              f"version names and that are older than {age}.")
    else:
        print(f"The files are on local disk (DMS_STORAGE=local): the sweep removed "
              f"{collected.removed} files no version names and {collected.interrupted} "
              f"interrupted uploads, each older than {age}.")
    return ExitStatus.DONE


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return "1 hour" if hours == 1 else f"{hours} hours"
    minutes = seconds / 60
    return "1 minute" if minutes == 1 else f"{minutes:g} minutes"


def migrate(args: argparse.Namespace, config: Config) -> ExitStatus:
    from dms.files.storage import DirectoryStore, StoreUnavailable, bucket_settings
    from dms.files.storage.s3.client import BucketDown
    from dms.files.storage.s3.inventory import check_reachable, describe
    from dms.files.storage.s3.store import S3Store
    from dms.ops.storage import migrate as migration

    if args.target == config.storage:
        where = "in the bucket" if config.storage == "s3" else "on local disk"
        other = "local" if config.storage == "s3" else "s3"
        print(f"dms: the files are {where} already (DMS_STORAGE={config.storage}): "
              f"--to {other} copies them to the other kind of store.", file=sys.stderr)
        return ExitStatus.REFUSED
    bucket = S3Store(bucket_settings(config), config.data_dir)
    try:
        check_reachable(bucket)
    except BucketDown:
        print(f"dms: {describe(bucket)} cannot be reached; nothing was copied.",
              file=sys.stderr)
        return ExitStatus.REFUSED
    try:
        directory = DirectoryStore(config.files_path, config.data_dir)
    except OSError as error:
        print(f"dms: the folder {config.files_path} cannot be used: {error.strerror}.",
              file=sys.stderr)
        return ExitStatus.REFUSED
    copy = migration.ToBucket(directory, bucket) if args.target == "s3" \
        else migration.ToDirectory(bucket, directory)
    target = describe(bucket) if args.target == "s3" else f"the folder {config.files_path}"
    try:
        result = migration.run(copy, args.limit_files, args.progress_every,
                               functools.partial(print, flush=True))
    except StoreUnavailable:
        print(f"dms: {describe(bucket)} stopped answering; what was copied stays: run the same "
              f"command again to continue.", file=sys.stderr)
        return ExitStatus.FAILED
    except OSError as error:  # the target folder's disk is full, ...
        print(f"dms: copying into {config.files_path} failed: {error.strerror or error}; what "
              f"was copied stays: run the same command again to continue.", file=sys.stderr)
        return ExitStatus.FAILED
    print(f"Copied {result.copied} files ({migration.mebibytes(result.copied_bytes)}) to "
          f"{target}; {result.present} were there already; {result.total} files in all.")
    if result.stopped:
        print(f"Stopped after {result.copied} files, as --limit asks: run the same command "
              f"again to copy the rest.")
    if result.problems:
        print(f"{len(result.problems)} files could not be copied:")
        print("\n".join(f"  {problem}" for problem in result.problems))
        print("They are missing or damaged where they are now (dms verify lists them; a backup "
              "has them). Switch only once you know what to do about them.")
        return ExitStatus.FAILED
    if not result.stopped:
        print("\n".join(_switch_lines(args.target, config, target)))
    return ExitStatus.DONE


def _switch_lines(target: str, config: Config, where: str) -> list[str]:
    """The settings that make dms use the copy (it does not switch by itself)."""
    if target == "s3":
        settings = ["DMS_STORAGE=s3"]
        if config.s3_endpoint:
            settings.append(f"DMS_S3_ENDPOINT={config.s3_endpoint}")
        settings += [f"DMS_S3_BUCKET={config.s3_bucket}", f"DMS_S3_REGION={config.s3_region}"]
        if config.s3_prefix:
            settings.append(f"DMS_S3_PREFIX={config.s3_prefix}")
        settings.append("DMS_S3_ACCESS_KEY and DMS_S3_SECRET_KEY (or DMS_S3_SECRET_KEY_FILE) "
                        "as for this command")
        source = f"the folder {config.files_path}"
    else:
        settings = ["DMS_STORAGE=local (or unset it)"]
        if config.files_path != config.data_dir / "files":
            settings.append(f"DMS_FILES_DIR={config.files_path}")
        source = "the bucket"
    return [f"Every file is in {where} now. To use it: stop dms (every node), run this command "
            f"once more (it copies what was uploaded meanwhile), then set",
            *(f"  {setting}" for setting in settings),
            f"and start dms again. The files in {source} stay as they are: remove them yourself "
            f"once dms works from the new store."]
