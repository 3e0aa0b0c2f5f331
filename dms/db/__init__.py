"""The database: the engines and opening them (dms.db.engine), writing (dms.db.transactions: the
one write-transaction helper and its concurrency rules), the schema and its migrations
(dms.db.schema, dms.db.migrations) and the models (dms.db.models). Opening a database does not
migrate it: dms.db.schema.open_migrated does both.

This package's face is the names below; callers import them from `dms.db`."""

from dms.db.deadline import DeadlinePassed, statement_deadline
from dms.db.engine import (
    DatabaseUnavailable,
    advisory_key,
    database,
    describe_url,
    is_postgresql,
    open_configured,
    open_database,
    postgresql_sql,
    release_connection,
    sqlite_engine,
)
from dms.db.kept import kept_until_change
from dms.db.transactions import (
    USERS,
    document_scope,
    is_disk_full,
    on_commit,
    owner_scope,
    register_space_reserve,
    take_turns_by,
    with_space_reserve,
    write_transaction,
)

__all__ = ["DatabaseUnavailable", "DeadlinePassed", "USERS", "advisory_key", "database",
           "describe_url", "document_scope", "is_disk_full", "is_postgresql", "kept_until_change",
           "on_commit", "open_configured", "open_database", "owner_scope", "postgresql_sql",
           "register_space_reserve", "release_connection", "sqlite_engine", "statement_deadline",
           "take_turns_by", "with_space_reserve", "write_transaction"]
