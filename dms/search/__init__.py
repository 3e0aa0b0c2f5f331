"""Full-text search over titles and document text (api.md, "Search"), behind one narrow interface:

- the engine (`engine(data_dir)`): `ready`, `status()`, `view(owner_id, seconds)` (something
  with `search(owner_id, words, limit, tag_ids, tags_op)` that holds the owner's changes committed
  so far, or None while it cannot search), `searchable()` (the same for everyone's, as it is),
  `start()`/`stop()`/`notify()`;
- `query(engine, user, text, ...)` (dms.search.service): what GET /search/ answers, and
  `query_page(...)` one page of it with the total.

On SQLite the engine is an embedded tantivy index in `<data-dir>/search/` (dms.search.index),
kept exact by the database's outbox (dms.search.indexer); on PostgreSQL it is the database's own
full-text search (dms.search.postgres).
"""

from __future__ import annotations

from pathlib import Path

from dms.search.indexer import Indexer
from dms.search.service import DEFAULT_LIMIT, MAX_LIMIT, query, query_page

__all__ = ["Indexer", "engine", "query", "query_page", "DEFAULT_LIMIT", "MAX_LIMIT"]


def engine(data_dir: Path):
    """The search engine of the open database."""
    from dms.db import is_postgresql

    if is_postgresql():
        from dms.search.postgres import PostgresSearch

        return PostgresSearch()
    return Indexer(data_dir)
