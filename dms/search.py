"""Full-text search (api.md §8) over titles and document text, with SQLite FTS5.

The index (`search_index`, migration 0004) has one row per node, keyed by node.seq: triggers on
the node table add, retitle and remove rows in the same transaction as the node change, and
processing sets a document's text. Breadcrumbs are not indexed but computed per result, so a move
never has to touch the index. The tokenizer folds case and removes diacritics, for the text and
for the query alike.

User input never reaches FTS5's query syntax: `match_expression` keeps only words and quotes each
one, so no input can cause a syntax error.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from peewee import OperationalError

from dms import highlight, tree
from dms.db import database, interruptible, write_transaction
from dms.errors import Invalid, Unavailable
from dms.models import User

WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 16
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
TITLE_WEIGHT, BODY_WEIGHT = 5.0, 1.0  # a word in the title counts more than one in the text


def match_expression(owner_id: str, text: str) -> str | None:
    """An FTS5 query for `text`: every word must occur, as a prefix, in the owner's rows.
    None when `text` has no words."""
    words = WORD.findall(text)[:MAX_QUERY_WORDS]
    if not words:
        return None
    terms = " ".join(f'"{word}"*' for word in words)
    return f'owner : "{owner_id.replace("-", "")}" AND {{title body}} : ({terms})'


def set_document_text(document_id: str, text: str) -> None:
    database.execute_sql(
        "UPDATE search_index SET body = ? WHERE rowid = (SELECT seq FROM node WHERE id = ?)",
        (text, document_id))


def check_limit(raw: object) -> int:
    try:
        limit = int(raw)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit must be a whole number from 1 to {MAX_LIMIT}.")
    return limit


def query(user: User, text: str, limit: object = DEFAULT_LIMIT, timeout: float = 10.0,
          client_gone: Callable[[], bool] = lambda: False) -> list[dict]:
    """The caller's best matches first, in the shape of api.md §8. The work stops when it runs
    past `timeout` seconds (503) or when `client_gone()` says nobody waits for the answer."""
    limit = check_limit(limit)
    words = WORD.findall(text)[:MAX_QUERY_WORDS]
    expression = match_expression(user.id, text)
    if expression is None:
        return []
    deadline = time.monotonic() + timeout

    def should_stop() -> bool:
        return time.monotonic() > deadline or client_gone()

    prefixes = highlight.query_prefixes(words)
    try:
        with interruptible(should_stop):
            rows = _matches(user, expression, limit)
        results = []
        for node_id, kind, title, seq in rows:
            if should_stop():
                raise highlight.Stopped()
            results.append((node_id, kind, title, _highlight(seq, title, prefixes, should_stop)))
    except (OperationalError, highlight.Stopped) as error:
        if isinstance(error, OperationalError) and "interrupted" not in str(error):
            raise
        raise Unavailable(f"The search took longer than {timeout:g} s and was stopped; search "
                          "for longer or more words.") from None
    crumbs = tree.breadcrumbs([row[0] for row in results])
    return [{
        "id": node_id,
        "title": title,
        "node_type": kind,
        "breadcrumb": [title for title, _ in crumbs[node_id]],
        "tags": [],
        "highlight": found,
        "text": None,
        "user_id": None,
    } for node_id, kind, title, found in results]


def _matches(user: User, expression: str, limit: int) -> list[tuple]:
    return database.execute_sql(f"""
        SELECT node.id, node.kind, node.title, node.seq
        FROM search_index JOIN node ON node.seq = search_index.rowid
        WHERE search_index MATCH ? AND node.owner_id = ?
        ORDER BY bm25(search_index, {TITLE_WEIGHT}, {BODY_WEIGHT}, 0.0)
        LIMIT ?""", (expression, user.id, limit)).fetchall()


def _highlight(seq: int, title: str, prefixes: tuple[str, ...],
               should_stop: Callable[[], bool]) -> str | None:
    """Where the words were found: in the text if they were (its first SCAN_CHARS characters),
    else in the title."""
    row = database.execute_sql("SELECT substr(body, 1, ?) FROM search_index WHERE rowid = ?",
                               (highlight.SCAN_CHARS, seq)).fetchone()
    return (highlight.snippet(row[0] if row else "", prefixes, should_stop)
            or highlight.snippet(title, prefixes, whole=True))


def rebuild() -> int:
    """Rebuild the whole index from the nodes and the text of each document's latest version
    (`dms reindex`). Returns the number of rows indexed."""
    with write_transaction():
        database.execute_sql("DELETE FROM search_index")
        database.execute_sql("""
            INSERT INTO search_index (rowid, title, body, owner)
            SELECT node.seq, node.title,
                   coalesce((SELECT group_concat(page.text, char(10) || char(10))
                             FROM (SELECT text FROM page WHERE page.version_id = (
                                       SELECT id FROM document_version
                                       WHERE document_id = node.id ORDER BY number DESC LIMIT 1)
                                   ORDER BY number) AS page), ''),
                   replace(node.owner_id, '-', '')
            FROM node""")
        count = database.execute_sql("SELECT count(*) FROM search_index").fetchone()[0]
    with write_transaction():
        database.execute_sql("INSERT INTO search_index (search_index) VALUES ('optimize')")
    return count
