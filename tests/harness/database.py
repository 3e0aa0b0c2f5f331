"""The database behind a server's back: a snapshot of every row (to prove a refused request changed
nothing), SQL to age or break rows and to read them, on either engine, the nodes a loop cut off,
and documents written straight into the database."""

from __future__ import annotations

import sqlite3

from dms.db import write_transaction
from dms.db.models import DocumentVersion, Node, Page, new_id, utcnow

# Work queues the server empties in the background (whatever a request changes shows in the
# tables they point at), and the rows of running processes: workers' heartbeats, leases, periodic
# job claims, failed logins (a refused login counts one: tests/domain/test_auth.py checks those),
# open event streams.
NOT_STATE = ("search_outbox", "worker", "lease", "periodic_job", "login_failure",
             "event_stream")


def _connect(target):
    """A DB-API connection to the database of `target`: a Config (its PostgreSQL database or its
    SQLite file) or the path of an SQLite file; and the SQL dialect's placeholder fix."""
    url = getattr(target, "database_url", None)
    if url:
        import psycopg

        from dms.db import postgresql_sql
        return psycopg.connect(url), postgresql_sql
    path = target.db_path if hasattr(target, "db_path") else target
    return sqlite3.connect(path), lambda sql: sql


def _tables(connection, url: str | None) -> list[str]:
    if url:
        sql = ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
               "ORDER BY table_name")
    else:
        sql = ("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
               "ORDER BY name")
    return [row[0] for row in connection.execute(sql) if row[0] not in NOT_STATE]


def snapshot(target) -> dict:
    """Every row of every table, to prove that a refused request changed nothing. `target`: the
    test's Config (either engine) or an SQLite file."""
    connection, _ = _connect(target)
    try:
        url = getattr(target, "database_url", None)
        return {table: sorted(map(repr, connection.execute(f'SELECT * FROM "{table}"')))
                for table in _tables(connection, url)}
    finally:
        connection.close()


def execute_sql(target, sql: str, *params) -> None:
    """Change the database behind the server's back (to age a token, to break a table)."""
    connection, dialect = _connect(target)
    try:
        connection.execute(dialect(sql), params)
        connection.commit()
    finally:
        connection.close()


def query_sql(target, sql: str, *params) -> list[tuple]:
    """Read the database behind the server's back."""
    connection, dialect = _connect(target)
    try:
        return [tuple(row) for row in connection.execute(dialect(sql), params).fetchall()]
    finally:
        connection.close()


def unreachable(config) -> list[str]:
    """Nodes that cannot be reached from a .home or .inbox (they sit in, or below, a loop);
    UNION keeps this query finite on any tree."""
    return [row[0] for row in query_sql(config, """
        WITH RECURSIVE reach(id) AS (
            SELECT id FROM node WHERE parent_id IS NULL
            UNION
            SELECT n.id FROM node AS n JOIN reach ON n.parent_id = reach.id)
        SELECT id FROM node WHERE id NOT IN (SELECT id FROM reach)""")]


def add_document(owner_id: str, parent_id: str, title: str, text: str) -> str:
    """A processed document with one page of `text`, written straight into the database."""
    now = utcnow()
    node_id, version_id = new_id(), new_id()
    with write_transaction():
        Node.insert(id=node_id, owner=owner_id, parent=parent_id, kind=Node.DOCUMENT, title=title,
                    title_sort=title.casefold(), lang="eng", ocr=True, ocr_status="succeeded",
                    file_name="x.txt", size=len(text), page_count=1, created_at=now,
                    updated_at=now).execute()
        DocumentVersion.insert(id=version_id, document=node_id, number=1, file_name="x.txt",
                               mime_type="text/plain", size=len(text), page_count=1,
                               sha256="0" * 64, lang="eng", created_at=now).execute()
        Page.insert(id=new_id(), version=version_id, number=1, text=text, method="text").execute()
    return node_id
