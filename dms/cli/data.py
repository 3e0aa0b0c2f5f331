"""The commands about an installation's data, working on the data dir (and database) directly,
with or without a running server: migrate, backup, restore, verify, reindex, import."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dms.cli.status import ExitStatus
from dms.config import Config, ConfigError


def migrate(config: Config) -> ExitStatus:
    from dms.db.schema import open_migrated, schema_version

    open_migrated(config)
    print(f"The database's schema is up to date (migration {schema_version():04d}).")
    return ExitStatus.DONE


def backup_or_restore(args: argparse.Namespace, config: Config) -> ExitStatus:
    from dms.db.schema import latest_schema_version
    from dms.files.storage import StoreUnavailable
    from dms.ops import backup
    from dms.ops.backup import restore

    password = None
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n") or None
    try:
        if args.command == "backup":
            bucket = _bucket_of(config) if config.storage == "s3" or args.to_bucket else None
            with _into_bucket(bucket, args.out, config) if args.to_bucket \
                    else contextlib.nullcontext(Path(args.out)) as out:
                manifest = backup.create_backup(
                    config.data_dir, out, password, database_url=config.database_url,
                    files_dir=config.files_path,
                    bucket=bucket if config.storage == "s3" else None)
            where = f"the bucket {config.s3_bucket} as backups/{args.out}" if args.to_bucket \
                else args.out
            counts = manifest["counts"]
            print(f"Backup written to {where}: {counts['users']} users, {counts['folders']} "
                  f"folders, {counts['documents']} documents, "
                  f"{sum(name.startswith('files/') for name in manifest['files'])} files.")
            return ExitStatus.DONE
        if config.files_dir is not None and config.files_dir != config.data_dir / "files":
            raise backup.BackupError(
                "dms restore puts the files into DATA_DIR/files: unset DMS_FILES_DIR for the "
                "restore and move the files to the shared directory afterwards (docs/scaling.md, "
                "\"Moving from one box to several\").")
        copy_rows = None
        if config.database_url:  # the rows into PostgreSQL, the files into the data dir
            from dms.db import open_configured
            from dms.ops.backup import transfer

            open_configured(config)  # not migrated: the schema comes with the rows, or not
            transfer.check_empty()
            copy_rows = transfer.copy_into_database
        # Checked, and migrated forward from an older schema, before it lands in the data dir.
        with _from_bucket(args.archive, config) if args.from_bucket \
                else contextlib.nullcontext(Path(args.archive)) as archive:
            manifest = restore.restore_backup(archive, config.data_dir, password,
                                              latest_schema_version(), copy_rows=copy_rows)
    except backup.BackupError as error:
        print(f"dms: {error}", file=sys.stderr)
        return ExitStatus.FAILED
    except StoreUnavailable:
        print(f"dms: the bucket {config.s3_bucket} cannot be reached, so no backup was written; "
              f"try again in a moment.", file=sys.stderr)
        return ExitStatus.FAILED
    where = str(config.data_dir)
    if config.database_url:
        from dms.db import describe_url

        where += f" and {describe_url(config.database_url)}"
    print(f"Restored {args.archive} into {where} (made by dms {manifest['app_version']} at "
          f"{manifest['created_at']}).")
    if args.from_bucket:
        return _files_into_bucket(config)
    return ExitStatus.DONE


def _files_into_bucket(config: Config) -> ExitStatus:
    """After a restore from the bucket: the files it wrote under DATA_DIR/files go into the
    bucket (those it lacks: a new bucket or prefix), each checked, then off the node's disk."""
    import shutil

    from dms.db.schema import open_migrated
    from dms.files.storage import DirectoryStore, bucket_settings
    from dms.files.storage.s3.store import S3Store
    from dms.ops.storage import migrate as migration

    open_migrated(config)
    directory = DirectoryStore(config.data_dir / "files", config.data_dir)
    copied = migration.run(migration.ToBucket(directory, S3Store(bucket_settings(config),
                                                                 config.data_dir)), every=0)
    if not copied.complete:
        print(f"dms: {len(copied.problems)} restored files could not be put into the bucket; "
              f"they stay in {config.data_dir / 'files'}:", file=sys.stderr)
        print("\n".join(f"  {problem}" for problem in copied.problems), file=sys.stderr)
        return ExitStatus.FAILED
    shutil.rmtree(config.data_dir / "files")
    print(f"The files are in the bucket {config.s3_bucket} ({copied.copied} copied there, "
          f"{copied.present} there already); none stay in {config.data_dir}.")
    return ExitStatus.DONE


@contextlib.contextmanager
def _into_bucket(store: Any, name: str, config: Config) -> Iterator[Path]:
    """A file beside the data dir to write the backup to, put into the bucket as
    `backups/<name>` when it is whole, then removed."""
    from dms.files.storage.s3 import inventory

    if store is None or not hasattr(store, "bucket"):
        raise ConfigError("--to-bucket needs the bucket's settings: DMS_STORAGE=s3 and DMS_S3_*.")
    inventory.backup_key(store, name)  # a name the bucket takes, before the work
    config.data_dir.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=config.data_dir, prefix=".backup-upload-")
    os.close(descriptor)
    path = Path(temporary)
    try:
        yield path
        inventory.put_backup(store, path, name)
    finally:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _from_bucket(name: str, config: Config) -> Iterator[Path]:
    """The backup `backups/<name>` of the bucket, fetched beside the data dir (which must stay
    empty for the restore) and removed after."""
    from dms.files.storage import FileMissing, bucket_settings
    from dms.files.storage.s3 import inventory
    from dms.files.storage.s3.bucket import BucketAccess

    if config.storage != "s3":
        raise ConfigError("--from-bucket needs the bucket's settings: DMS_STORAGE=s3 and "
                          "DMS_S3_*.")
    store = BucketAccess(bucket_settings(config))  # the bucket alone: the data dir stays empty
    store.check()
    where = config.data_dir.resolve().parent
    where.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=where, prefix=".dms-restore-", suffix=".zip")
    os.close(descriptor)
    path = Path(temporary)
    try:
        try:
            inventory.get_backup(store, name, path)
        except FileMissing:
            raise ConfigError(f"The bucket {config.s3_bucket} has no backup named {name!r} "
                              f"under backups/.") from None
        yield path
    finally:
        path.unlink(missing_ok=True)


def _bucket_of(config: Config):
    """With DMS_STORAGE=s3, the bucket (on the database, opened: its leases hold the objects a
    backup reads); else None."""
    if config.storage != "s3":
        return None
    from dms.cli.storage import open_checked_store
    from dms.db.schema import open_migrated

    if not config.database_url and not config.db_path.is_file():
        return None  # create_backup says there is no database
    open_migrated(config)
    return open_checked_store(config)


def verify(config: Config, repair: bool = False, deep: bool = False) -> ExitStatus:
    from dms.cli.storage import open_checked_store
    from dms.db.schema import open_migrated
    from dms.errors import DomainError
    from dms.files.storage import StoreUnavailable
    from dms.ops import verify as checks

    if not config.database_url and not config.db_path.is_file():
        print(f"dms: there is no dms database in {config.data_dir}.", file=sys.stderr)
        return ExitStatus.REFUSED
    open_migrated(config)
    bucket = open_checked_store(config) if config.storage == "s3" else None
    try:
        report = checks.run(config.data_dir, files_dir=config.files_path,
                            grace_seconds=config.sweep_grace_minutes * 60, bucket=bucket,
                            deep=deep)
    except StoreUnavailable:
        print(f"dms: the bucket {config.s3_bucket} cannot be reached, so its files were not "
              f"checked; try again in a moment.", file=sys.stderr)
        return ExitStatus.FAILED
    if repair:
        try:
            fixes = checks.repair(report)
        except DomainError as error:  # busy (the server writing for long), disk full
            print(f"dms: {error.message} Nothing was repaired.", file=sys.stderr)
            return ExitStatus.FAILED
        if report.search_drift:
            from dms.search import check as search_check
            fixes.append(search_check.rebuild(config.data_dir))
        print("\n".join(fixes or ["Nothing to repair."]))
        report = checks.run(config.data_dir, files=report)  # the files are as they were
    checks.save(report)
    print("\n".join(report.lines()))
    return ExitStatus.DONE if report.ok else ExitStatus.FAILED


def import_files(args: argparse.Namespace, config: Config) -> ExitStatus:
    """dms import: exit status 0 when every file was imported or already there, 1 when some
    were refused (listed), 2 when nothing could start (unknown user or folder)."""
    from pathlib import Path

    from dms.db.models import User
    from dms.db.schema import open_migrated
    from dms.errors import DomainError
    from dms.intake import importer
    from dms.runtime import Runtime

    if args.source in ("paperless", "papermerge"):
        return import_library(args, config)
    if args.user is None:
        print("dms: say whose documents the files become: --user NAME.", file=sys.stderr)
        return ExitStatus.REFUSED
    open_migrated(config)
    user = User.get_or_none(User.username == args.user)
    if user is None or not user.is_active:
        print(f"dms: there is no active user {args.user!r}.", file=sys.stderr)
        return ExitStatus.REFUSED
    runtime = Runtime(config)
    try:
        summary = importer.run(runtime.services, user, [Path(p) for p in args.paths], args.into,
                               args.dry_run)
    except DomainError as error:  # the --into folder is not the user's, the disk is full, ...
        print(f"dms: {error.message}", file=sys.stderr)
        return ExitStatus.REFUSED
    finally:
        runtime.stop(close_database=False)
    print("\n".join(summary.lines(args.dry_run)))
    return ExitStatus.FAILED if summary.refused else ExitStatus.DONE


def import_library(args: argparse.Namespace, config: Config) -> ExitStatus:
    """dms import --from paperless|papermerge (api.md §18): 0 when everything was imported (or
    was there), 1 when some was skipped (listed), 2 when nothing could be read or nothing could
    start."""
    from pathlib import Path
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from dms.db.models import User
    from dms.db.schema import open_migrated
    from dms.errors import DomainError
    from dms.intake import papermerge
    from dms.intake.paperless import run
    from dms.runtime import Runtime

    if len(args.paths) != 1 or args.into:
        print(f"dms: --from {args.source} takes one export or backup and no --into.",
              file=sys.stderr)
        return ExitStatus.REFUSED
    try:
        zone = ZoneInfo(args.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        print(f"dms: {args.time_zone!r} is not a time zone (such as Europe/Berlin).",
              file=sys.stderr)
        return ExitStatus.REFUSED
    open_migrated(config)
    only = None
    if args.user is not None:
        only = User.get_or_none(User.username == args.user)
        if only is None or not only.is_active:
            print(f"dms: there is no active user {args.user!r}.", file=sys.stderr)
            return ExitStatus.REFUSED
    default = only or (User.select().where(User.is_superuser == True)  # noqa: E712 -- SQL
                       .order_by(User.date_joined, User.id).first())
    if default is None:
        print("dms: there is no superuser yet: start dms once (it makes admin) or use --user.",
              file=sys.stderr)
        return ExitStatus.REFUSED
    runtime = Runtime(config)
    options = run.Options(folder=args.folder, folders=args.folders, only_user=only,
                          dry_run=args.dry_run, time_zone=zone)
    try:
        if args.source == "papermerge":
            report = papermerge.run(runtime.services, Path(args.paths[0]), default, only,
                                    args.dry_run)
        else:
            report = run.run(runtime.services, Path(args.paths[0]), default, options)
    except DomainError as error:  # the disk is full, ...
        print(f"dms: {error.message}", file=sys.stderr)
        return ExitStatus.REFUSED
    finally:
        runtime.stop(close_database=False)
    print("\n".join(report.lines(args.dry_run)))
    return ExitStatus(report.exit_status)


def reindex(config: Config) -> ExitStatus:
    """Rebuild the search index from the database: here if no server runs on this data dir,
    else by the server's own indexer (one writer per index). On PostgreSQL the index is in the
    database: rebuilt here, whatever runs."""
    from dms.db.schema import open_migrated
    from dms.search import engine
    from dms.search.outbox import request_rebuild

    open_migrated(config)
    try:
        count = engine(config.data_dir).rebuild_now()
    except RuntimeError:
        request_rebuild()
        print("The running dms server rebuilds the search index now; searches answer 503 until "
              "it is done.")
        return ExitStatus.DONE
    print(f"Search index rebuilt: {count} folders and documents.")
    return ExitStatus.DONE
