"""Groups of users (api.md §21, "Groups"): parsing and serialising; who may do what is
dms.domain.access.groups'."""

from __future__ import annotations

from dms.db.models import Group
from dms.domain.access import groups
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def group_resources(rows: list[Group]) -> list[dict]:
    members = groups.members([row.id for row in rows])
    return [{"type": "groups", "id": row.id,
             "attributes": {"name": row.name, "members": members[row.id],
                            "created_at": format_datetime(row.created_at)}}
            for row in rows]


def one(row: Group) -> dict:
    return {"data": group_resources([row])[0]}


@routes.get("/groups/", Operation(
    "The groups: all of them for a superuser, else the caller's own", list_of(ref("Group")),
    query=PAGE_QUERY))
def list_groups(ctx: Context):
    return ctx.paginate(groups.visible(ctx.user), group_resources)


@routes.post("/groups/", Operation(
    "Create a group (superusers)", data_of(ref("Group")), 201, request=ref("GroupInput"),
    errors=(403,)))
def create_group(ctx: Context):
    _, attributes = ctx.resource("groups")
    return created(one(groups.create(ctx.user, attributes)))


@routes.get("/groups/{group_id}/", Operation(
    "One group (superusers, or a member)", data_of(ref("Group"))))
def get_group(ctx: Context, group_id: str):
    return one(groups.visible_group(ctx.user, group_id))


@routes.patch("/groups/{group_id}/", Operation(
    "Rename a group or replace its members (superusers)", data_of(ref("Group")),
    request=ref("GroupInput"), errors=(403,)))
def update_group(ctx: Context, group_id: str):
    _, attributes = ctx.resource("groups")
    return one(groups.update(ctx.user, group_id, attributes))


@routes.delete("/groups/{group_id}/", Operation(
    "Delete a group (superusers); its members stay", status=204, errors=(403,)))
def delete_group(ctx: Context, group_id: str):
    groups.delete(ctx.user, group_id)
    return no_content()
