"""The command line: `python -m dms COMMAND` or `dms COMMAND`. Argument parsing only; the work is
done by the modules it calls."""

from __future__ import annotations

import argparse
import getpass
import logging
import sys

from dms import __version__
from dms.config import LOG_LEVELS, Config, ConfigError
from dms.files.pdfprocess import CHILD_COMMAND


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dms", description="A self-hosted document management appliance.")
    parser.add_argument("--version", action="version", version=f"dms {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the web server (and the OCR workers)")
    serve.add_argument("--host", help="address to listen on (DMS_HOST, default 127.0.0.1)")
    serve.add_argument("--port", help="port to listen on, 0 for any free one (DMS_PORT, default 8000)")
    serve.add_argument("--threads", help="request threads (DMS_THREADS, default 8)")
    serve.add_argument("--trusted-proxy", help="address of a reverse proxy whose X-Forwarded-* "
                                               "headers are believed (DMS_TRUSTED_PROXY)")
    serve.add_argument("--url-prefix", help="serve under this sub-path, e.g. /dms (DMS_URL_PREFIX)")
    serve.add_argument("--no-worker", action="store_const", const="1", default=None,
                       help="a web-only node: read no pages here, `dms worker` processes do "
                            "(DMS_NO_WORKER=1; needs --queue-url)")
    _data_dir_options(serve)
    _cluster_options(serve)

    worker = commands.add_parser("worker", help="read pages (OCR) of documents queued by the web "
                                                "nodes; needs --queue-url")
    worker.add_argument("--concurrency", dest="ocr_workers",
                        help="documents read at once (DMS_OCR_WORKERS, default cores - 1)")
    _data_dir_options(worker)
    _cluster_options(worker)

    importing = commands.add_parser("import", help="import files and directory trees as a "
                                                   "user's documents and folders")
    importing.add_argument("paths", nargs="+", metavar="PATH", help="files and directories")
    importing.add_argument("--user", required=True, help="whose documents they become")
    importing.add_argument("--into", metavar="FOLDER_ID",
                           help="the folder to import into (default the user's .inbox)")
    importing.add_argument("--dry-run", action="store_true",
                           help="check every file and say what would happen; change nothing")
    _data_dir_options(importing)
    _cluster_options(importing)

    reindex = commands.add_parser("reindex", help="rebuild the full-text search index")
    _data_dir_options(reindex)

    backup = commands.add_parser("backup", help="write a consistent backup zip (server may run)")
    backup.add_argument("out", help="the zip file to write")
    backup.add_argument("--password-stdin", action="store_true",
                        help="encrypt with AES-256, the password read from standard input")
    _data_dir_options(backup)
    _files_dir_option(backup)

    restore = commands.add_parser("restore", help="restore a backup into a new, empty data dir")
    restore.add_argument("archive", help="the backup zip")
    restore.add_argument("--password-stdin", action="store_true",
                         help="read the backup's password from standard input")
    _data_dir_options(restore)

    migrate = commands.add_parser("migrate", help="bring the database's schema up to date and exit")
    _data_dir_options(migrate)

    verify = commands.add_parser("verify", help="check every file and row; non-zero exit on problems")
    verify.add_argument("--repair", action="store_true",
                        help="fix what is safely fixable (one line per fix), then check again")
    _data_dir_options(verify)
    _files_dir_option(verify)

    for name, text in (("createsuperuser", "create a superuser"),
                       ("changepassword", "set a user's password")):
        command = commands.add_parser(name, help=text)
        command.add_argument("username")
        command.add_argument("--password-stdin", action="store_true",
                             help="read the password from standard input instead of prompting")
        _data_dir_options(command)
    return parser


def _data_dir_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--data-dir", help="where the database and files live "
                                            "(DMS_DATA_DIR, default ./data)")
    command.add_argument("--database-url", help="postgresql://user:password@host/db to use "
                                                "PostgreSQL (DMS_DATABASE_URL; default SQLite "
                                                "in the data dir)")
    command.add_argument("--log-level", choices=LOG_LEVELS,
                         help="logging detail (DMS_LOG_LEVEL, default info)")


def _files_dir_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--files-dir", help="where the stored files live, e.g. a mount every "
                                             "node shares (DMS_FILES_DIR, default DATA_DIR/files)")


def _cluster_options(command: argparse.ArgumentParser) -> None:
    _files_dir_option(command)
    command.add_argument("--queue-url", help="redis://host:6379/0: the processing queue in Redis, "
                                             "shared by every node (DMS_QUEUE_URL; default the "
                                             "queue inside dms serve)")


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password (again): ") != first:
        raise SystemExit("dms: the two passwords differ; nothing changed.")
    return first


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [CHILD_COMMAND]:  # a PDF reader process of a running dms (dms.files.pdfprocess)
        from dms.files import pdfchild
        return pdfchild.main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        config = Config.load(vars(args))
    except ConfigError as error:
        print(f"dms: {error}", file=sys.stderr)
        return 2
    configure_logging(config.log_level)
    # waitress warns on every request that waits for a free thread: normal under load, and
    # thousands of lines a minute with many keep-alive clients.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)

    from dms.db import DatabaseUnavailable
    from dms.processing.queue import QueueUnavailable

    try:
        return run_command(args, config)
    except (DatabaseUnavailable, QueueUnavailable) as error:
        print(f"dms: {error}", file=sys.stderr)
        return 1


class OneLineFormatter(logging.Formatter):
    """Every log message on one line as it looks: names from clients and files (a file name with
    ESC and a newline) cannot forge log lines; a traceback after the message stays as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        from dms.text import escape_controls

        record.message = escape_controls(record.message)
        return super().formatMessage(record)


def configure_logging(level: str, stream=None) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def run_command(args: argparse.Namespace, config: Config) -> int:
    if args.command in ("serve", "worker") and config.embedded_queue \
            and (args.command == "worker" or config.no_worker):
        print(f"dms: {'dms worker' if args.command == 'worker' else '--no-worker'} needs the "
              "queue that web nodes and workers share: set --queue-url (DMS_QUEUE_URL), e.g. "
              "redis://localhost:6379/0, on every node.", file=sys.stderr)
        return 2
    if args.command == "serve":
        _import_http_client_without_tls()
        from dms.web.server import serve
        return serve(config)
    if args.command == "worker":
        from dms.cli.worker import run_worker
        return run_worker(config)
    if args.command == "reindex":
        return reindex(config)
    if args.command == "import":
        return import_files(args, config)
    if args.command in ("backup", "restore"):
        return backup_or_restore(args, config)
    if args.command == "verify":
        return verify(config, args.repair)
    if args.command == "migrate":
        return migrate(config)
    return manage_user(args, config)


def migrate(config: Config) -> int:
    from dms.db import open_configured
    from dms.db.schema import schema_version

    open_configured(config)
    print(f"The database's schema is up to date (migration {schema_version():04d}).")
    return 0


def _import_http_client_without_tls() -> None:
    """Bottle imports http.client, which loads the ssl module (5 MiB of resident memory) only to
    offer HTTPS client connections, which the server never makes. Hide ssl from that one import;
    anything that imports ssl itself later (mail import over IMAPS) still gets it."""
    if "http.client" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # makes `import ssl` fail, which http.client tolerates
    try:
        import http.client  # noqa: F401
    finally:
        del sys.modules["ssl"]


def backup_or_restore(args: argparse.Namespace, config: Config) -> int:
    from pathlib import Path

    from dms.ops import backup, restore
    from dms.db.schema import latest_schema_version

    password = None
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n") or None
    try:
        if args.command == "backup":
            manifest = backup.create_backup(config.data_dir, Path(args.out), password,
                                            database_url=config.database_url,
                                            files_dir=config.files_path)
            counts = manifest["counts"]
            print(f"Backup written to {args.out}: {counts['users']} users, {counts['folders']} "
                  f"folders, {counts['documents']} documents, "
                  f"{sum(name.startswith('files/') for name in manifest['files'])} files.")
            return 0
        if config.files_dir is not None and config.files_dir != config.data_dir / "files":
            raise backup.BackupError(
                "dms restore puts the files into DATA_DIR/files: unset DMS_FILES_DIR for the "
                "restore and move the files to the shared directory afterwards (README, "
                "\"Moving from one box to several\").")
        copy_rows = None
        if config.database_url:  # the rows into PostgreSQL, the files into the data dir
            from dms.ops import transfer
            from dms.db import open_configured

            open_configured(config, migrate=False)  # the schema comes with the rows, or not
            transfer.check_empty()
            copy_rows = transfer.copy_into_database
        # Checked, and migrated forward from an older schema, before it lands in the data dir.
        manifest = restore.restore_backup(Path(args.archive), config.data_dir, password,
                                          latest_schema_version(), copy_rows=copy_rows)
    except backup.BackupError as error:
        print(f"dms: {error}", file=sys.stderr)
        return 1
    where = str(config.data_dir)
    if config.database_url:
        from dms.db import describe_url

        where += f" and {describe_url(config.database_url)}"
    print(f"Restored {args.archive} into {where} (made by dms {manifest['app_version']} at "
          f"{manifest['created_at']}).")
    return 0


def verify(config: Config, repair: bool = False) -> int:
    from dms.ops import verify as checks
    from dms.db import open_configured
    from dms.errors import DomainError

    if not config.database_url and not config.db_path.is_file():
        print(f"dms: there is no dms database in {config.data_dir}.", file=sys.stderr)
        return 2
    open_configured(config)
    report = checks.run(config.data_dir, files_dir=config.files_path,
                        grace_seconds=config.sweep_grace_minutes * 60)
    if repair:
        try:
            fixes = checks.repair(report)
        except DomainError as error:  # busy (the server writing for long), disk full
            print(f"dms: {error.message} Nothing was repaired.", file=sys.stderr)
            return 1
        if report.search_drift:
            from dms.search import check as search_check
            fixes.append(search_check.rebuild(config.data_dir))
        print("\n".join(fixes or ["Nothing to repair."]))
        report = checks.run(config.data_dir, files=report)  # the files are as they were
    checks.save(report)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


def import_files(args: argparse.Namespace, config: Config) -> int:
    """dms import: exit status 0 when every file was imported or already there, 1 when some
    were refused (listed), 2 when nothing could start (unknown user or folder)."""
    from pathlib import Path

    from dms.intake import importer
    from dms.web.app import build_services
    from dms.db import open_configured
    from dms.errors import DomainError
    from dms.db.models import User

    open_configured(config)
    user = User.get_or_none(User.username == args.user)
    if user is None or not user.is_active:
        print(f"dms: there is no active user {args.user!r}.", file=sys.stderr)
        return 2
    services = build_services(config)
    try:
        summary = importer.run(services, user, [Path(p) for p in args.paths], args.into,
                               args.dry_run)
    except DomainError as error:  # the --into folder is not the user's, the disk is full, ...
        print(f"dms: {error.message}", file=sys.stderr)
        return 2
    finally:
        services.mail.stop()
        services.processor.stop()
        services.pdf.stop()
    print("\n".join(summary.lines(args.dry_run)))
    return 1 if summary.refused else 0


def reindex(config: Config) -> int:
    """Rebuild the search index from the database: here if no server runs on this data dir,
    else by the server's own indexer (one writer per index). On PostgreSQL the index is in the
    database: rebuilt here, whatever runs."""
    from dms.db import open_configured
    from dms.search import engine
    from dms.search.outbox import request_rebuild

    open_configured(config)
    try:
        count = engine(config.data_dir).rebuild_now()
    except RuntimeError:
        request_rebuild()
        print("The running dms server rebuilds the search index now; searches answer 503 until "
              "it is done.")
        return 0
    print(f"Search index rebuilt: {count} folders and documents.")
    return 0


def manage_user(args: argparse.Namespace, config: Config) -> int:
    """createsuperuser and changepassword, straight on the database (no server needed)."""
    from dms.domain import accounts
    from dms.db import open_configured
    from dms.errors import DomainError
    from dms.db.models import User

    open_configured(config)
    password = read_password(args.password_stdin)
    try:
        if args.command == "createsuperuser":
            accounts.create_user(args.username, password, is_superuser=True, is_staff=True)
            print(f"Superuser {args.username!r} created.")
        else:
            user = User.get_or_none(User.username == args.username)
            if user is None:
                print(f"dms: there is no user {args.username!r}.", file=sys.stderr)
                return 1
            accounts.set_password(user, password)
            print(f"Password changed for {args.username!r}.")
    except DomainError as error:
        print(f"dms: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
