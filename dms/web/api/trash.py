"""The trash (api.md, "The trash"): what the caller deleted, until it is purged; restore, delete for
good, empty. The deletion itself is each resource's DELETE route."""

from __future__ import annotations

from dms.domain import listings, tags, trash, tree
from dms.domain.mailaccounts import mail_of
from dms.domain.metadata import document as metadata
from dms.web.api.nodes import node_resource, single
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def trashed_resources(rows: list[tuple[listings.NodeRow, tuple]]) -> list[dict]:
    ids = [node.id for node, _ in rows]
    crumbs, labels, mail = tree.breadcrumbs(ids), tags.tags_of(ids), mail_of(ids)
    about = metadata.about(ids)
    return [node_resource(
        node, crumbs[node.id], labels[node.id], mail.get(node.id), about.get(node.id),
        deleted_at=format_datetime(deleted_at), purge_at=format_datetime(purge_at),
        original_parent={"id": parent_id, "title": parent_title} if parent_id else None)
        for node, (deleted_at, purge_at, parent_id, parent_title) in rows]


@routes.get("/trash/", Operation(
    "What the caller deleted, newest first", list_of(ref("TrashedNode")), query=PAGE_QUERY))
def list_trash(ctx: Context):
    return ctx.paginate(trash.trashed(ctx.user), trashed_resources)


@routes.post("/trash/{node_id}/restore/", Operation(
    "Put a deleted node back, whole", data_of(ref("Node"))))
def restore_from_trash(ctx: Context, node_id: str):
    return single(trash.restore(ctx.services, ctx.user, node_id))


@routes.delete("/trash/{node_id}/", Operation("Delete a deleted node for good", status=204))
def delete_from_trash(ctx: Context, node_id: str):
    trash.purge(ctx.services, ctx.user, node_id)
    return no_content()


@routes.delete("/trash/", Operation("Delete everything in the trash for good", status=204))
def empty_trash(ctx: Context):
    trash.empty(ctx.services, ctx.user)
    return no_content()
