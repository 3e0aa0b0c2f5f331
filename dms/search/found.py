"""The documents a query finds, as a listing (count, and a page at a time) in the shape every
document list has: what a saved search (api.md, "Saved searches") runs.

With words, the search (dms.search.service) gives the best MAX_LIMIT matches, documents only;
`sort` empty keeps them best first, a sort of the document list orders them by it. Without words
(blank, or only names, numbers and dates of the query language), every document the caller may
read that the query keeps, newest first or in `sort`, the query run as the document list's
conditions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dms.db.models import Node, User
from dms.domain import docfilters, listings
from dms.domain.searchquery import condition, has_words, is_plain, parse, resolve
from dms.search.service import MAX_LIMIT, query, utc_today

if TYPE_CHECKING:
    from dms.search.indexer import Indexer


class RankedListing:
    """Documents in the order of a search's ranking."""

    def __init__(self, user: User, ids: list[str]):
        self.user, self.ids = user, ids

    def count(self) -> int:
        return len(self.ids)

    def fetch(self, offset: int, limit: int) -> list[listings.NodeRow]:
        chosen = self.ids[offset:offset + limit]
        if not chosen:
            return []
        rows = {row.id: row for row in listings.of_kind(
            self.user, Node.DOCUMENT, extra=[docfilters.among(chosen)]).fetch(0, len(chosen))}
        return [rows[node_id] for node_id in chosen if node_id in rows]


def documents_found(engine: Indexer, user: User, text: str, sort: str = "",
                    timeout: float = 10.0, client_gone: Callable[[], bool] = lambda: False):
    """The listing of the documents `text` finds for the caller, in `sort` (best first if
    empty)."""
    tree = parse(text, utc_today(), "query")
    if tree is None:
        return listings.of_kind(user, Node.DOCUMENT, about={"sort": sort or "-created_at"})
    if not is_plain(tree):
        resolved = resolve(user, tree, utc_today(), "query")
        if not has_words(resolved):
            return listings.of_kind(user, Node.DOCUMENT, about={"sort": sort or "-created_at"},
                                    extra=[condition(resolved)])
    ids = [hit["id"] for hit in query(engine, user, text, MAX_LIMIT, timeout, client_gone,
                                      field="query") if hit["node_type"] == Node.DOCUMENT]
    if not sort or not ids:
        return RankedListing(user, ids)
    return listings.of_kind(user, Node.DOCUMENT, about={"sort": sort},
                            extra=[docfilters.among(ids)])
