"""Search (api.md §8): the caller's folders and documents by title and text."""

from __future__ import annotations

from dms import search
from dms.jsonapi import JSON, RouteTable, invalid
from dms.web import Context

routes = RouteTable()


@routes.get("/search/", media_type=JSON)
def search_nodes(ctx: Context):
    raw_limit = ctx.query.get("limit", str(search.DEFAULT_LIMIT))
    try:
        limit = int(raw_limit)
    except ValueError:
        limit = 0
    if not 1 <= limit <= search.MAX_LIMIT:
        raise invalid(f"limit must be a whole number from 1 to {search.MAX_LIMIT}.")
    return search.query(ctx.user, ctx.query.get("q", ""), limit)
