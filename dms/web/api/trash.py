"""The trash (api.md, "The trash"): what the caller deleted, until it is purged; restore, delete for
good, empty. The deletion itself is each resource's DELETE route."""

from __future__ import annotations

from dms.db.models import User
from dms.domain import listings, trash
from dms.web.api.nodes import resources, single
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def trashed_resources(user: User, rows: list[tuple[listings.NodeRow, tuple]]) -> list[dict]:
    """The caller's deletions (their own nodes: the trash is its owner's), with their entries."""
    listed = resources(user, [node for node, _ in rows])
    for resource, (_, (deleted_at, purge_at, parent_id, parent_title)) in zip(listed, rows,
                                                                            strict=True):
        resource["attributes"].update(
            deleted_at=format_datetime(deleted_at), purge_at=format_datetime(purge_at),
            original_parent={"id": parent_id, "title": parent_title} if parent_id else None)
    return listed


@routes.get("/trash/", Operation(
    "What the caller deleted, newest first", list_of(ref("TrashedNode")), query=PAGE_QUERY))
def list_trash(ctx: Context):
    return ctx.paginate(trash.trashed(ctx.user), lambda rows: trashed_resources(ctx.user, rows))


@routes.post("/trash/{node_id}/restore/", Operation(
    "Put a deleted node back, whole", data_of(ref("Node"))))
def restore_from_trash(ctx: Context, node_id: str):
    return single(ctx.user, trash.restore(ctx.services, ctx.user, node_id))


@routes.delete("/trash/{node_id}/", Operation("Delete a deleted node for good", status=204))
def delete_from_trash(ctx: Context, node_id: str):
    trash.purge(ctx.services, ctx.user, node_id)
    return no_content()


@routes.delete("/trash/", Operation("Delete everything in the trash for good", status=204))
def empty_trash(ctx: Context):
    trash.empty(ctx.services, ctx.user)
    return no_content()
