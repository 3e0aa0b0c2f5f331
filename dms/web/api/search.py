"""Search (api.md, "Search"): the caller's folders and documents by title and text."""

from __future__ import annotations

from dms import search
from dms.domain.metadata import filters as metadata_filters
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.shapes import ref

routes = RouteTable()


@routes.get("/search/", Operation(
    "Search titles and text", {"type": "array", "items": ref("SearchResult")},
    query=("q", "limit", "tags", "tags_op", "owner", *metadata_filters.PARAMETERS),
    errors=(400, 503)),
    media_type=JSON)
def search_nodes(ctx: Context):
    return search.query(ctx.services.search, ctx.user, ctx.query.get("q"),
                        ctx.query.get("limit", search.DEFAULT_LIMIT),
                        ctx.config.search_timeout_seconds, ctx.client_gone,
                        ctx.query.get("tags"), ctx.query.get("tags_op"), ctx.query)
