"""The command line's arguments: every subcommand and its options, each naming the DMS_* setting
it overrides (dms.config).

Options are never abbreviated (allow_abbrev=False): argparse would otherwise take `--password x`
for `--password-stdin` and then refuse `x`, or wait on standard input for a bare `--password`.
Options people guess (`--password`, `--encrypt`) are hidden and answer in one line how to give a
password instead."""

from __future__ import annotations

import argparse

from dms import __version__
from dms.cli.status import ExitStatus
from dms.config import LOG_LEVELS


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that takes only whole option names; its subcommands' parsers too (they
    are made of the parser's class)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)


class PasswordOnStdin(argparse.Action):
    """A guessed option that would put a password on the command line (where `ps` shows it): one
    line naming --password-stdin, exit status 2, nothing done."""

    def __init__(self, option_strings, dest, purpose: str, **kwargs):
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS)
        self.purpose = purpose

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(ExitStatus.REFUSED,
                    f"dms: {parser.prog} has no {option_string} option: {self.purpose}, give "
                    "the password on standard input with --password-stdin (e.g. "
                    "--password-stdin < FILE); on the command line others could read it in "
                    "`ps`.\n")


def _password_options(command: argparse.ArgumentParser, purpose: str, *guesses: str) -> None:
    for guess in ("--password", *guesses):
        command.add_argument(guess, action=PasswordOnStdin, purpose=purpose)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="dms", description="A self-hosted document management appliance.")
    parser.add_argument("--version", action="version", version=f"dms {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the web server (and the OCR workers)")
    serve.add_argument("--host", help="address to listen on (DMS_HOST, default 127.0.0.1)")
    serve.add_argument("--port", help="port to listen on, 0 for any free one "
                                      "(DMS_PORT, default 8000)")
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
                                                   "user's documents and folders, or a "
                                                   "Paperless-ngx export")
    importing.add_argument("paths", nargs="+", metavar="PATH",
                           help="files and directories; with --from paperless, the export "
                                "(its directory or zip); with --from papermerge, the backup")
    importing.add_argument("--from", dest="source", choices=("files", "paperless", "papermerge"),
                           default="files", help="what PATH is: files, a Paperless-ngx export, "
                                                 "a Papermerge 2.1 backup (default: files)")
    importing.add_argument("--user", help="whose documents they become (required for files; "
                                          "for an export: everything goes to this user "
                                          "instead of the exported users)")
    importing.add_argument("--into", metavar="FOLDER_ID",
                           help="the folder to import into (default the user's .inbox)")
    importing.add_argument("--folder", default="Paperless",
                           help="an export's documents go into .home/<FOLDER> of their owner "
                                "(default: Paperless)")
    importing.add_argument("--folders", choices=("one", "storage-paths"), default="one",
                           help="storage-paths: a sub-folder per storage path")
    importing.add_argument("--time-zone", default="UTC",
                           help="the time zone of the Paperless-ngx server (for the dates of "
                                "exports before 2.16; default UTC)")
    importing.add_argument("--dry-run", action="store_true",
                           help="check every file and say what would happen; change nothing")
    _data_dir_options(importing)
    _cluster_options(importing)

    reindex = commands.add_parser("reindex", help="rebuild the full-text search index")
    _data_dir_options(reindex)

    backup = commands.add_parser("backup", help="write a consistent backup zip (server may run)")
    backup.add_argument("out", help="the zip file to write (with --to-bucket: its name there)")
    backup.add_argument("--to-bucket", action="store_true",
                        help="put the backup into the S3 bucket (DMS_S3_*), under backups/")
    backup.add_argument("--password-stdin", action="store_true",
                        help="encrypt with AES-256, the password read from standard input")
    _password_options(backup, "to encrypt the backup", "--encrypt")
    _data_dir_options(backup)
    _files_dir_option(backup)

    restore = commands.add_parser("restore", help="restore a backup into a new, empty data dir")
    restore.add_argument("archive", help="the backup zip (with --from-bucket: its name there)")
    restore.add_argument("--from-bucket", action="store_true",
                         help="take the backup from the S3 bucket (DMS_S3_*), under backups/")
    restore.add_argument("--password-stdin", action="store_true",
                         help="read the backup's password from standard input")
    _password_options(restore, "to restore an encrypted backup")
    _data_dir_options(restore)

    migrate = commands.add_parser("migrate", help="bring the database's schema up to date and exit")
    _data_dir_options(migrate)

    verify = commands.add_parser("verify",
                                 help="check every file and row; non-zero exit on problems")
    verify.add_argument("--repair", action="store_true",
                        help="fix what is safely fixable (one line per fix), then check again")
    verify.add_argument("--deep", action="store_true",
                        help="with DMS_STORAGE=s3, also read and hash every object (files on "
                             "local disk are always hashed)")
    _data_dir_options(verify)
    _files_dir_option(verify)

    _storage_commands(commands)

    for name, text in (("createsuperuser", "create a superuser"),
                       ("createuser", "create a user (with .home and .inbox)"),
                       ("changepassword", "set a user's password")):
        command = commands.add_parser(name, help=text)
        command.add_argument("username")
        command.add_argument("--password-stdin", action="store_true",
                             help="read the password from standard input instead of prompting")
        _password_options(command, "to set the password without being asked for it")
        if name == "createuser":
            command.add_argument("--staff", action="store_true",
                                 help="an admin who manages accounts (not a superuser)")
            command.add_argument("--email", help="the user's e-mail address")
        _data_dir_options(command)
    users = commands.add_parser("users", help="list every account")
    _data_dir_options(users)
    for name, text in (("activate", "let a deactivated user log in again"),
                       ("deactivate", "stop a user from logging in (their papers stay)")):
        command = commands.add_parser(name, help=text)
        command.add_argument("username")
        _data_dir_options(command)
    return parser


def _storage_commands(commands) -> None:
    """`dms storage gc` and `dms storage migrate` (api.md §19)."""
    storage = commands.add_parser("storage", help="the file store: remove garbage now, copy every "
                                                  "file to or from an S3 bucket")
    actions = storage.add_subparsers(dest="storage_command", required=True, metavar="ACTION")
    gc = actions.add_parser("gc", help="remove the files (or bucket objects) no version names, "
                                       "now")
    gc.add_argument("--grace-hours", dest="grace_hours", type=_positive_number,
                    help="only those older than this (default: a day in a bucket, "
                         "DMS_SWEEP_GRACE_MINUTES on local disk)")
    _data_dir_options(gc)
    _files_dir_option(gc)
    migrate = actions.add_parser("migrate", help="copy every file to the other kind of store, "
                                                 "checked; prints the settings to switch to")
    migrate.add_argument("--to", dest="target", choices=("s3", "local"), required=True,
                         help="s3: into the bucket of the DMS_S3_* settings; local: into "
                              "--files-dir (default DATA_DIR/files)")
    migrate.add_argument("--limit", dest="limit_files", type=_whole_number,
                         help="copy at most this many files in this run (run it again to go on)")
    migrate.add_argument("--progress-every", dest="progress_every", type=_whole_number,
                         default=100, help="a progress line every this many files (default 100)")
    _data_dir_options(migrate)
    _files_dir_option(migrate)


def _whole_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not 1 or more")
    return value


def _positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not 0 or more")
    return value


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
