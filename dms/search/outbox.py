"""The database side of the search index: the outbox of nodes whose indexed state changed
(filled by triggers, migration 0006), and what the index should hold for a node.

Rows are read in order and deleted only after the index committed them (dms.search.indexer):
a crash in between makes the indexer apply them again, which is harmless because applying a row
means "make the index hold what the database holds now". A row whose node_id is REBUILD asks for
the whole index to be rebuilt (`dms reindex` while a server runs).

"Done" means findable (dms.search.freshness): before it runs, a search looks for the newest pending
row of the caller's documents whose reading has ended (`newest_of`) and waits for the index to hold
it; the indexer applies the rows of owners whose searches wait ahead of the rest (`pending_of`). The
outbox has no owner column: its rows are joined to their nodes, outbox first (each row looked at
costs one lookup, ~0.4 µs), at most LOOK_ROWS rows a look.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from dms.db import database, write_transaction
from dms.db.models import DOCUMENT_DATE, PAGE_SEPARATOR, Node, OcrStatus
from dms.domain.metadata.words import MAX_SEARCH_CHARS, NOTES, search_words
from dms.search.index import Entry

REBUILD = "*"
# What the index holds of a node's row (dms.search.index.Entry), its latest version's type too.
COLUMNS = (f"id, owner_id, kind, title, parent_id, correspondent_id, document_type_id, "
           f"{DOCUMENT_DATE}, substr(created_at, 1, 10), asn, "
           "(SELECT mime_type FROM document_version WHERE document_id = node.id "
           "ORDER BY number DESC LIMIT 1)")
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


# The pending rows one look goes through for an owner's: at most ~4 ms however long another
# user's backlog is (a bulk import's). A search looks at the newest ones written since its
# owner's last look (a change it waits for was just committed); the indexer goes through the
# oldest, window after window.
LOOK_ROWS = 10_000
# The outbox is joined first (CROSS JOIN: SQLite keeps that order), each row's node by its key;
# the other way round would read every node of the owner. Rows of nodes deleted or in the trash
# are left out: search checks every hit against the database, so their entries never show.
OF_OWNER = """
    FROM (SELECT seq, node_id FROM search_outbox WHERE seq > ? AND seq <= ?
          ORDER BY seq {order} LIMIT ?) AS o
    CROSS JOIN node AS n ON n.id = o.node_id
    WHERE n.owner_id = ? AND n.trash_id IS NULL"""
DONE = " AND n.kind = ? AND n.ocr_status IN (?, ?)"
ENDED = (OcrStatus.SUCCEEDED, OcrStatus.FAILED)


def newest_of(owner_id: str, after: int, up_to: int) -> int | None:
    """The seq of the newest row from `after` (excluded) to `up_to` that changes one of
    `owner_id`'s documents whose reading has ended, among the newest LOOK_ROWS rows (None if
    none): what a search waits for. A folder made or a document still being read is found a
    moment later, as the index follows; "done" is the promise, and waiting for every
    change made a user who writes and searches by turns wait for an index commit each time."""
    return database.execute_sql(
        "SELECT max(o.seq) " + OF_OWNER.format(order="DESC") + DONE,
        (after, up_to, LOOK_ROWS, owner_id, Node.DOCUMENT, *ENDED)).fetchone()[0]


def pending_of(owner_id: str, after: int, limit: int) -> tuple[list[tuple[int, str]], int]:
    """`owner_id`'s oldest rows after `after` (at most `limit`), and the seq up to which they
    are all of the owner's rows: the last one's if there may be more, else the end of the
    LOOK_ROWS rows looked through (rows are committed in the order of their seq, so none can
    appear below it later)."""
    end = database.execute_sql(
        "SELECT max(seq) FROM (SELECT seq FROM search_outbox WHERE seq > ? ORDER BY seq "
        "LIMIT ?) AS window", (after, LOOK_ROWS)).fetchone()[0] or after
    rows = database.execute_sql(
        "SELECT o.seq, o.node_id " + OF_OWNER.format(order="") + " ORDER BY o.seq LIMIT ?",
        (after, end, LOOK_ROWS, owner_id, limit)).fetchall()
    return rows, (rows[-1][0] if len(rows) == limit else end)


def pending_count() -> int:
    return database.execute_sql("SELECT count(*) FROM search_outbox").fetchone()[0]


def high_water_mark() -> int:
    """The seq of the newest row (0 if none): a rebuild started now covers every row up to it."""
    return database.execute_sql("SELECT coalesce(max(seq), 0) FROM search_outbox").fetchone()[0]


def applied(up_to_seq: int) -> None:
    """The index committed every row up to `up_to_seq`: they can go."""
    with write_transaction():
        database.execute_sql("DELETE FROM search_outbox WHERE seq <= ?", (up_to_seq,))


def applied_rows(seqs: list[int]) -> None:
    """The index committed these rows (one owner's, applied ahead of the others): they can go."""
    marks = ",".join("?" * len(seqs))
    with write_transaction():
        database.execute_sql(f"DELETE FROM search_outbox WHERE seq IN ({marks})", seqs)


def request_rebuild() -> None:
    with write_transaction():
        database.execute_sql("INSERT INTO search_outbox (node_id) VALUES (?)", (REBUILD,))


def entries(node_ids: list[str]) -> Iterator[tuple[str, Entry | None]]:
    """(node id, what the index should hold for it now — None if the node is gone or in the
    trash), the nodes read in one query and each document's text when its turn comes."""
    marks = ",".join("?" * len(node_ids))
    rows = {row[0]: row for row in database.execute_sql(
        f"SELECT {COLUMNS} FROM node WHERE id IN ({marks}) "
        "AND trash_id IS NULL", node_ids)}
    for node_id in node_ids:
        row = rows.get(node_id)
        yield node_id, (_entry(row) if row else None)


def _day(text: str | None) -> int | None:
    try:
        return dt.date.fromisoformat(text).toordinal() if text else None
    except ValueError:  # not a day: the index has no date for it (nor would a query match it)
        return None


def _entry(row: tuple) -> Entry:
    (node_id, owner_id, kind, title, parent_id, correspondent_id, document_type_id, created,
     added, asn, mime) = row
    body, notes = "", ""
    if kind == "document":
        body = PAGE_SEPARATOR.join(
            text for (text,) in database.execute_sql(TEXT, (node_id,)) if text)
    tags = database.execute_sql(TAGS, (node_id,)).fetchall()
    # The subject and sender of the message a document came by, and its metadata's words
    # (correspondent, type, custom field texts, notes), are searched with its tag names.
    mail = database.execute_sql(MAIL, (node_id,)).fetchall() if kind == "document" else []
    about = [search_words(node_id)] if kind == "document" else []
    if kind == "document":
        notes = "\n".join(note for (note,) in database.execute_sql(
            NOTES, (MAX_SEARCH_CHARS, node_id)))[:MAX_SEARCH_CHARS]
    return Entry(node_id, owner_id, title, body,
                 [name for _, name in tags] + [words for found in mail for words in found]
                 + [words for words in about if words],
                 [tag_id for tag_id, _ in tags], notes, parent_id, correspondent_id,
                 document_type_id, mime, _day(created) if kind == "document" else None,
                 _day(added) if kind == "document" else None, asn)


def all_entries(batch: int = 1000) -> Iterator[Entry]:
    """Every node, in batches by seq, so that a rebuild never holds the whole table."""
    last = 0
    while True:
        rows = database.execute_sql(
            f"SELECT seq, {COLUMNS} FROM node WHERE seq > ? AND trash_id IS NULL "
            "ORDER BY seq LIMIT ?",
            (last, batch)).fetchall()
        if not rows:
            return
        for row in rows:
            yield _entry(row[1:])
        last = rows[-1][0]


def node_count() -> int:
    return database.execute_sql("SELECT count(*) FROM node WHERE trash_id IS NULL").fetchone()[0]
