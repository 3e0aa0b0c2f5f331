"""The database object and its two engines: one peewee proxy bound to SQLite (the default,
`<data-dir>/dms.db`) or PostgreSQL (`DMS_DATABASE_URL`, psycopg's pooled connections), opened
here and migrated by dms.db.schema. Every difference between the engines lives here, in
dms.db.transactions and in the search engines (dms.search): the domain writes one SQL, with `?`
placeholders and `"user"` quoted, that runs on both.

peewee keeps one connection per thread; WAL lets readers run beside the one writer. On PostgreSQL
the connections come from a bounded pool (DMS_DB_POOL_SIZE) and go back to it at the end of each
request and each unit of background work (release_connection).
"""

from __future__ import annotations

import functools
import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peewee import DatabaseProxy

from dms.db.sqlite import PRAGMAS, SqliteEngine
from dms.errors import Unavailable

if TYPE_CHECKING:
    from dms.config import Config

log = logging.getLogger("dms.db")

# Bound to SQLite or PostgreSQL by open_database(); models refer to it (a proxy, so importing has
# no effect).
database = DatabaseProxy()

WRITE_WAIT_SECONDS = 30.0  # a writer, or a request wanting a pooled connection, waits this long


def advisory_key(scope: str) -> int:
    """A scope's 64-bit advisory lock number (the same on every node and every version)."""
    return int.from_bytes(hashlib.blake2b(scope.encode(), digest_size=8).digest(), "big",
                          signed=True)



def is_postgresql() -> bool:
    return isinstance(database.obj, PostgresqlEngine) if database.obj is not None else False


class DatabaseUnavailable(Exception):
    """The configured database cannot be used (wrong URL, unreachable, no privileges): one line
    for the person starting dms."""


@functools.lru_cache(maxsize=2048)
def sqlstate(error: BaseException) -> str | None:
    """The SQLSTATE of a PostgreSQL failure (the psycopg error peewee wrapped), or None."""
    for cause in (error.__cause__, error.__context__, error):
        state = getattr(cause, "sqlstate", None)
        if state:
            return str(state)
    return None


def postgresql_sql(sql: str) -> str:
    """The domain's SQL with psycopg's placeholders: `?` outside quotes becomes %s, and a literal
    % is doubled."""
    out, quote = [], None
    for char in sql:
        if quote:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        if char == "%":
            out.append("%%")
            continue
        out.append(char)
    return "".join(out)


def _postgresql_engine_class() -> type[Any]:
    """Imported on demand: psycopg is an optional extra (dms[postgres])."""
    try:
        import psycopg  # noqa: F401
        from playhouse.pool import MaxConnectionsExceeded
        from playhouse.postgres_ext import PooledPsycopg3Database
    except ImportError:
        raise DatabaseUnavailable("DMS_DATABASE_URL names PostgreSQL, but psycopg is not "
                                  "installed: scripts/setup.sh --extras postgres in dms's "
                                  "checkout installs it.") from None

    class Engine(PooledPsycopg3Database, PostgresqlEngine):
        def connect(self, reuse_if_open: bool = False) -> Any:
            try:
                return super().connect(reuse_if_open)
            except MaxConnectionsExceeded:  # waited for a free connection in vain
                raise Unavailable("Every database connection of this server is in use "
                                  "(DMS_DB_POOL_SIZE); try again in a moment.") from None

        def execute_sql(self, sql: str, params: Any = None, **options: Any) -> Any:
            # The domain writes `?` (SQLite's style); peewee's own queries already use %s.
            if "?" in sql:
                sql = postgresql_sql(sql)
            elif not params and "%" in sql:
                sql = sql.replace("%", "%%")  # psycopg reads % as a placeholder even then
            return super().execute_sql(sql, params, **options)

    return Engine


class PostgresqlEngine:
    """Marks the PostgreSQL engine (its class is made on demand, see above)."""


def describe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{user}{host}{port}{parts.path}"


def open_configured(config: Config) -> DatabaseProxy:
    """The database the config names: PostgreSQL if `database_url` is set, else SQLite in the data
    directory. Not migrated: see dms.db.schema.open_migrated."""
    if config.database_url:
        return open_database(config.database_url, pool_size=config.db_pool_size)
    return open_database(config.db_path)


def open_database(target: Path | str, pool_size: int = 10) -> DatabaseProxy:
    """Point the shared database object at `target` (an SQLite file, created if needed, or a
    PostgreSQL URL), as it is: the schema is dms.db.schema's. Raises DatabaseUnavailable with one
    line."""
    if database.obj is not None and not database.is_closed():
        database.close()
    if isinstance(target, str):
        engine = _open_postgresql(target, pool_size)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        engine = SqliteEngine(str(target), pragmas=PRAGMAS, check_same_thread=False)
    database.initialize(engine)
    database.connect(reuse_if_open=True)
    return database


def sqlite_engine(path: Path) -> SqliteEngine:
    """A database object of its own for the SQLite file at `path`, with dms's pragmas, not yet
    connected: never the shared one, which may be serving another data dir (a restore builds and
    migrates its database so)."""
    return SqliteEngine(str(path), pragmas=PRAGMAS)


def _open_postgresql(url: str, pool_size: int) -> Any:
    engine = _postgresql_engine_class()(
        None, max_connections=pool_size, stale_timeout=300, timeout=WRITE_WAIT_SECONDS)
    engine.init(url, max_connections=pool_size, stale_timeout=300, timeout=WRITE_WAIT_SECONDS,
                connect_timeout=10, application_name="dms")
    where = describe_url(url)
    try:
        engine.connect()
        version = engine.execute_sql("SHOW server_version_num").fetchone()[0]
    except Exception as error:  # psycopg's message says what failed: refused, auth, no database
        reason = str(getattr(error, "__cause__", None) or error).strip().splitlines()
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: "
                                  f"{reason[0] if reason else type(error).__name__}") from None
    if int(version) < 150000:
        raise DatabaseUnavailable(f"PostgreSQL at {where} is version {int(version) // 10000}; "
                                  "dms needs 15 or newer.")
    engine.close()
    return engine


def release_connection() -> None:
    """Give this thread's connection back to the pool (PostgreSQL; called after each request).
    SQLite keeps one connection per thread for good: opening one costs more than a query."""
    if is_postgresql() and not database.is_closed() and not database.in_transaction():
        database.close()
