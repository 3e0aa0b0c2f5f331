"""The command line: `python -m dms COMMAND` or `dms COMMAND`. `main(argv, environ)` parses
(dms.cli.parser), reads the settings (flags over DMS_* variables over defaults) and runs one
command, returning the exit status (dms.cli.status.ExitStatus): 0 done, 1 failed (one line on
standard error), 2 refused before anything started (a wrong setting, an unknown user). Nothing
imports this package."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from dms.cli.logs import configure_logging
from dms.cli.parser import build_parser
from dms.cli.status import ExitStatus
from dms.config import Config, ConfigError
from dms.files.pdf.process import CHILD_COMMAND

__all__ = ["build_parser", "main"]

# dms.search.build.BUILD_COMMAND, spelled out: importing it would import the search package into
# every command (a test starts the build through this command).
SEARCH_BUILD_COMMAND = "_search-build"
# dms.intake.mail.unpacking.UNPACK_COMMAND, spelled out for the same reason (mail, email).
MAIL_UNPACK_COMMAND = "_mail-unpack"
# dms.domain.rules.matcher.MATCH_COMMAND, spelled out for the same reason (the domain's rules).
RULES_MATCH_COMMAND = "_rules-match"


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [CHILD_COMMAND]:  # a PDF reader process of a running dms (dms.files.pdf.process)
        from dms.files.pdf import child
        return child.main(argv[1:])
    if argv[:1] == [SEARCH_BUILD_COMMAND]:  # a search index build of a running dms
        from dms.search.build import child_main
        return child_main(argv[1:])
    if argv[:1] == [MAIL_UNPACK_COMMAND]:  # a large message of a mail check, unpacked
        from dms.intake.mail import unpacking
        return unpacking.main(argv[1:])
    if argv[:1] == [RULES_MATCH_COMMAND]:  # a dry run's matching over many documents
        # Its last argument names the engine: PostgreSQL's driver costs SQLite's child ~0.1 s.
        _import_hiding(postgresql=argv[-1:] != ["postgresql"], redis=True, queue=False)
        from dms.domain.rules import matcher
        return matcher.main(argv[1:])
    args = build_parser().parse_args(argv)
    # Whatever the umask: the data dir, the database, stored files and backups are owner-only
    # (dms.files.modes).
    from dms.files.modes import restrict_umask
    restrict_umask()
    try:
        config = Config.load(vars(args), environ)
    except ConfigError as error:
        print(f"dms: {error}", file=sys.stderr)
        return ExitStatus.REFUSED
    configure_logging(config.log_level)
    _import_libraries_without_unused_drivers(config)

    from dms.db import DatabaseUnavailable
    from dms.processing.queue import QueueUnavailable

    try:
        return run_command(args, config)
    except ConfigError as error:  # a setting only the running application can check
        print(f"dms: {error}", file=sys.stderr)
        return ExitStatus.REFUSED
    except (DatabaseUnavailable, QueueUnavailable) as error:
        print(f"dms: {error}", file=sys.stderr)
        return ExitStatus.FAILED


def run_command(args: argparse.Namespace, config: Config) -> int:
    if args.command in ("serve", "worker") and config.embedded_queue \
            and (args.command == "worker" or config.no_worker):
        print(f"dms: {'dms worker' if args.command == 'worker' else '--no-worker'} needs the "
              "queue that web nodes and workers share: set --queue-url (DMS_QUEUE_URL), e.g. "
              "redis://localhost:6379/0, on every node.", file=sys.stderr)
        return ExitStatus.REFUSED
    if args.command in ("serve", "worker"):
        from dms.cli.heap import TrimWhenQuiet, limit_malloc_arenas
        limit_malloc_arenas()
        TrimWhenQuiet().start()
    if args.command == "serve":
        _import_http_client_without_tls()
        from dms.runtime import CannotStart
        from dms.web.server import serve
        try:
            return serve(config, command=how_to_run())  # its own 0 on a clean stop
        except CannotStart as error:
            print(f"dms: {error}", file=sys.stderr)
            return ExitStatus.FAILED
    if args.command == "worker":
        from dms.cli.worker import run_worker
        from dms.runtime import CannotStart
        try:
            return run_worker(config)
        except CannotStart as error:
            print(f"dms: {error}", file=sys.stderr)
            return ExitStatus.FAILED
    from dms.cli import data, users

    if args.command == "reindex":
        return data.reindex(config)
    if args.command == "import":
        return data.import_files(args, config)
    if args.command in ("backup", "restore"):
        return data.backup_or_restore(args, config)
    if args.command == "verify":
        return data.verify(config, args.repair, args.deep)
    if args.command == "storage":
        from dms.cli import storage

        return storage.run(args, config)
    if args.command == "migrate":
        return data.migrate(config)
    return users.manage_user(args, config)


def how_to_run() -> str:
    """The command that runs this dms again from any shell, whatever is on its PATH: the
    executable of a PyInstaller build, the `dms` script by its absolute path, or this Python
    with `-m dms`."""
    if getattr(sys, "frozen", False):
        return sys.executable
    script = Path(sys.argv[0])
    if script.name == "dms" and script.is_file():
        return str(script.absolute())
    return f"{sys.executable} -m dms"


def _import_libraries_without_unused_drivers(config: Config) -> None:
    """peewee, its migration runner and huey import the PostgreSQL driver (psycopg, with its own
    libpq) and huey the Redis client whenever they are installed, which cost a process that uses
    neither 16 MiB of resident memory (bench/idle.py: 64 against 48 MiB with both extras
    installed). A command on SQLite with the embedded queue hides the drivers it does not use from
    those imports; what a PostgreSQL or Redis installation uses is imported as before."""
    _import_hiding(postgresql=not config.database_url, redis=config.embedded_queue, queue=True)


def _import_hiding(postgresql: bool, redis: bool, queue: bool) -> None:
    """peewee (and with `queue` huey and the migration runner) imported with PostgreSQL's client
    hidden if `postgresql`, Redis' if `redis`."""
    hidden = []
    if postgresql:
        hidden += ["psycopg", "psycopg2", "psycopg2cffi"]
    if redis:
        hidden += ["redis"]
    if not hidden or any(name in sys.modules for name in ("peewee", "huey", *hidden)):
        return
    for name in hidden:
        sys.modules[name] = None  # makes `import redis` fail, which these libraries tolerate
    try:
        import peewee  # noqa: F401
        if queue:
            import huey.storage  # noqa: F401
            import playhouse.migrations  # noqa: F401
    finally:
        for name in hidden:
            del sys.modules[name]


def _import_http_client_without_tls() -> None:
    """Bottle imports http.client, which loads the ssl module only to offer HTTPS client
    connections, which the server never makes. Hide ssl from that one import; anything that
    imports ssl itself later (a mail check over IMAPS) still gets it. Measured on this tree:
    1.1 MiB less idle RSS after a login (47.6 against 48.7 MiB, bench/idle.py), so it stays."""
    if "http.client" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # makes `import ssl` fail, which http.client tolerates
    try:
        import http.client  # noqa: F401
    finally:
        del sys.modules["ssl"]
