"""Access to a node (api.md §21, "Access to a node"): who a folder or document is shared with,
sharing it and taking it back; the rules are dms.domain.access.grants'."""

from __future__ import annotations

from dms.domain.access import grants
from dms.domain.access.grants import GrantRow
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, data_of, ref

routes = RouteTable()


def grant_resource(row: GrantRow) -> dict:
    return {"id": row.id, "node": row.node_id,
            "user": {"id": row.user_id, "username": row.username} if row.user_id else None,
            "group": {"id": row.group_id, "name": row.group_name} if row.group_id else None,
            "role": row.role, "granted_by": row.granted_by,
            "created_at": format_datetime(row.created_at)}


@routes.get("/nodes/{node_id}/access/", Operation(
    "Who a folder or document is shared with: its owner, and the grants on it and above it "
    "(the owner or a superuser)", data_of(ref("Access")), errors=(403,)))
def get_access(ctx: Context, node_id: str):
    access = grants.access_of(ctx.user, node_id)
    return {"data": {"type": "access", "id": access.node.id, "attributes": {
        "owner": {"id": access.owner.id, "username": access.owner.username},
        "grants": [grant_resource(row) for row in access.grants]}}}


@routes.post("/nodes/{node_id}/access/", Operation(
    "Share a folder or document with a user or a group, as a viewer or an editor (201; 200 "
    "when the grantee had a grant: its role changes)", data_of(ref("Grant")), 201,
    request=ref("GrantInput"), accepts=JSON_OR_VND, errors=(403,)))
def share(ctx: Context, node_id: str):
    row, new = grants.grant(ctx.user, node_id, ctx.json())
    body = {"data": grant_resource(row)}
    return created(body) if new else body


@routes.delete("/nodes/{node_id}/access/{grant_id}/", Operation(
    "Take a grant back (at once)", status=204, errors=(403,)))
def unshare(ctx: Context, node_id: str, grant_id: str):
    grants.revoke(ctx.user, node_id, grant_id)
    return no_content()
