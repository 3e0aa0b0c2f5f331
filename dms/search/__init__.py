"""Full-text search over titles and document text (api.md §8), behind one narrow interface:

- `Indexer` (dms.search.indexer): the index's one writer, a thread of the server, kept exact by
  the database's outbox; `indexer.ready`, `indexer.status()`.
- `query(indexer, user, text, ...)` (dms.search.service): what GET /search/ answers.

The embedded engine is tantivy (dms.search.index), in `<data-dir>/search/`.
"""

from dms.search.indexer import Indexer
from dms.search.service import DEFAULT_LIMIT, MAX_LIMIT, query

__all__ = ["Indexer", "query", "DEFAULT_LIMIT", "MAX_LIMIT"]
