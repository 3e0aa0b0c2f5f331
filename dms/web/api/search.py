"""Search (api.md, "Search"): the caller's folders and documents by title and text.

Without `page` the answer is Papermerge 2.1's plain array, unchanged for its clients; with `page`
an object of the page's results and the total (`count`, `pages`): the total is part of the body
(no header a fetch wrapper or a proxy could drop, nothing to expose to scripts), and only a
caller that asks for pages gets the new shape."""

from __future__ import annotations

from dms import search
from dms.domain.metadata import filters as metadata_filters
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.shapes import INTEGER, obj, ref

routes = RouteTable()

RESULTS = {"type": "array", "items": ref("SearchResult")}
PAGE = obj({"results": RESULTS, "count": INTEGER, "page": INTEGER, "pages": INTEGER,
            "page_size": INTEGER}, ["results", "count", "page", "pages", "page_size"], extra=False)

@routes.get("/search/", Operation(
    "Search titles and text",
    {"oneOf": [RESULTS, PAGE]},
    query=("q", "limit", "page", "page_size", "tags", "tags_op", "owner",
           *metadata_filters.PARAMETERS),
    errors=(400, 503)),
    media_type=JSON)
def search_nodes(ctx: Context):
    query = ctx.query
    if "page" in query:
        return search.query_page(
            ctx.services.search, ctx.user, query.get("q"), query.get("page"),
            query.get("page_size", query.get("limit", search.DEFAULT_LIMIT)),
            ctx.config.search_timeout_seconds, ctx.client_gone, query.get("tags"),
            query.get("tags_op"), query)
    return search.query(ctx.services.search, ctx.user, query.get("q"),
                        query.get("limit", search.DEFAULT_LIMIT),
                        ctx.config.search_timeout_seconds, ctx.client_gone,
                        query.get("tags"), query.get("tags_op"), query)
