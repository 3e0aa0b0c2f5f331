"""The database side of the search index: the outbox of nodes whose indexed state changed
(filled by triggers, migration 0006), and what the index should hold for a node.

Rows are read in order and deleted only after the index committed them (dms.search.indexer):
a crash in between makes the indexer apply them again, which is harmless because applying a row
means "make the index hold what the database holds now". A row whose node_id is REBUILD asks for
the whole index to be rebuilt (`dms reindex` while a server runs).
"""

from __future__ import annotations

from typing import Iterator

from dms.db import database, write_transaction
from dms.db.models import PAGE_SEPARATOR
from dms.search.index import Entry

REBUILD = "*"
MAIL = "SELECT subject, sender FROM document_mail WHERE document_id = ?"
TAGS = ("SELECT t.id, t.name FROM node_tag AS nt JOIN tag AS t ON t.id = nt.tag_id "
        "WHERE nt.node_id = ?")
# The text of a document's latest version: its pages in order.
TEXT = """
    SELECT text FROM page WHERE version_id = (
        SELECT id FROM document_version WHERE document_id = ? ORDER BY number DESC LIMIT 1)
    ORDER BY number"""


def pending(limit: int) -> list[tuple[int, str]]:
    """The oldest rows: (seq, node_id)."""
    return database.execute_sql("SELECT seq, node_id FROM search_outbox ORDER BY seq LIMIT ?",
                                (limit,)).fetchall()


def pending_count() -> int:
    return database.execute_sql("SELECT count(*) FROM search_outbox").fetchone()[0]


def high_water_mark() -> int:
    """The seq of the newest row (0 if none): a rebuild started now covers every row up to it."""
    return database.execute_sql("SELECT coalesce(max(seq), 0) FROM search_outbox").fetchone()[0]


def applied(up_to_seq: int) -> None:
    """The index committed every row up to `up_to_seq`: they can go."""
    with write_transaction():
        database.execute_sql("DELETE FROM search_outbox WHERE seq <= ?", (up_to_seq,))


def request_rebuild() -> None:
    with write_transaction():
        database.execute_sql("INSERT INTO search_outbox (node_id) VALUES (?)", (REBUILD,))


def entries(node_ids: list[str]) -> Iterator[tuple[str, Entry | None]]:
    """(node id, what the index should hold for it now — None if the node is gone or in the
    trash), the nodes read in one query and each document's text when its turn comes."""
    marks = ",".join("?" * len(node_ids))
    rows = {row[0]: row for row in database.execute_sql(
        f"SELECT id, owner_id, kind, title FROM node WHERE id IN ({marks}) "
        "AND trash_id IS NULL", node_ids)}
    for node_id in node_ids:
        row = rows.get(node_id)
        yield node_id, (_entry(*row) if row else None)


def _entry(node_id: str, owner_id: str, kind: str, title: str) -> Entry:
    body = ""
    if kind == "document":
        body = PAGE_SEPARATOR.join(
            text for (text,) in database.execute_sql(TEXT, (node_id,)) if text)
    tags = database.execute_sql(TAGS, (node_id,)).fetchall()
    # The subject and sender of the message a document came by are searched with its tag names.
    mail = database.execute_sql(MAIL, (node_id,)).fetchall() if kind == "document" else []
    return Entry(node_id, owner_id, title, body,
                 [name for _, name in tags] + [words for row in mail for words in row],
                 [tag_id for tag_id, _ in tags])


def all_entries(batch: int = 1000) -> Iterator[Entry]:
    """Every node, in batches by seq, so that a rebuild never holds the whole table."""
    last = 0
    while True:
        rows = database.execute_sql(
            "SELECT seq, id, owner_id, kind, title FROM node WHERE seq > ? AND trash_id IS NULL "
            "ORDER BY seq LIMIT ?",
            (last, batch)).fetchall()
        if not rows:
            return
        for seq, node_id, owner_id, kind, title in rows:
            yield _entry(node_id, owner_id, kind, title)
        last = rows[-1][0]


def node_count() -> int:
    return database.execute_sql("SELECT count(*) FROM node WHERE trash_id IS NULL").fetchone()[0]
