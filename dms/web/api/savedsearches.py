"""Saved searches (api.md, "Saved searches"): a user's named queries; GET .../documents/ runs one
and answers the document list's shape, with its count."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from dms.db.models import SavedSearch
from dms.domain import savedsearches
from dms.search.found import documents_found
from dms.web.api.nodes import node_fieldsets, paginated_nodes
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.nodefields import FIELDS_QUERY
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

if TYPE_CHECKING:
    from dms.search.indexer import Indexer

routes = RouteTable()


def search_resource(search: SavedSearch) -> dict:
    return {"type": "saved-searches", "id": search.id, "attributes": {
        "name": search.name, "query": search.query, "sort": search.sort,
        "show_in_sidebar": bool(search.show_in_sidebar),
        "created_at": format_datetime(search.created_at)}}


@routes.get("/saved-searches/", Operation(
    "The caller's saved searches, by name", list_of(ref("SavedSearch")), query=PAGE_QUERY))
def list_searches(ctx: Context):
    return ctx.paginate(savedsearches.searches_of(ctx.user),
                        lambda rows: [search_resource(row) for row in rows])


@routes.post("/saved-searches/", Operation(
    "Save a search", data_of(ref("SavedSearch")), 201, request=ref("SavedSearchInput")))
def create_search(ctx: Context):
    _, attributes = ctx.resource("saved-searches")
    return created({"data": search_resource(savedsearches.create_search(ctx.user, attributes))})


@routes.get("/saved-searches/{search_id}/", Operation(
    "One saved search", data_of(ref("SavedSearch"))))
def get_search(ctx: Context, search_id: str):
    return {"data": search_resource(savedsearches.owned_search(ctx.user, search_id))}


@routes.patch("/saved-searches/{search_id}/", Operation(
    "Change a saved search", data_of(ref("SavedSearch")), request=ref("SavedSearchInput")))
def update_search(ctx: Context, search_id: str):
    _, attributes = ctx.resource("saved-searches")
    return {"data": search_resource(savedsearches.update_search(ctx.user, search_id,
                                                                attributes))}


@routes.delete("/saved-searches/{search_id}/", Operation("Delete a saved search", status=204))
def delete_search(ctx: Context, search_id: str):
    savedsearches.delete_search(ctx.user, search_id)
    return no_content()


@routes.get("/saved-searches/{search_id}/documents/", Operation(
    "The documents a saved search finds now", list_of(ref("Node")),
    query=PAGE_QUERY + FIELDS_QUERY, errors=(400, 503)))
def run_search(ctx: Context, search_id: str):
    saved = savedsearches.owned_search(ctx.user, search_id)
    # Services names the engine by a narrower protocol than the search takes (as GET /search/
    # does: a known gap of the type hints listed in mypy-baseline.txt).
    engine = cast("Indexer", ctx.services.search)
    fieldsets = node_fieldsets(ctx)  # before the search: a bad one costs nothing
    return paginated_nodes(ctx, documents_found(
        engine, ctx.user, saved.query, saved.sort,
        ctx.config.search_timeout_seconds, ctx.client_gone), fieldsets)
