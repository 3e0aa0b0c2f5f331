"""Tags (api.md, "Tags"): the caller's own tags, and the tags of one of their nodes."""

from __future__ import annotations

from dms.db.models import Tag
from dms.domain import tags
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, Reply, RouteTable, created, no_content
from dms.web.openapi import Operation
from dms.web.openapi.core import NAMES
from dms.web.openapi.shapes import JSON_OR_VND, PAGE_QUERY, UUID, data_of, list_of, obj, ref

routes = RouteTable()


def tag_resources(rows: list[Tag]) -> list[dict]:
    """Tags with how many documents each labels, counted for the page at once."""
    counts = tags.document_counts([tag.id for tag in rows])
    return [tag_resource(tag, counts.get(tag.id, 0)) for tag in rows]


def tag_resource(tag: Tag, document_count: int | None = None) -> dict:
    if document_count is None:
        document_count = tags.document_counts([tag.id]).get(tag.id, 0)
    return {"type": "tags", "id": tag.id, "attributes": {
        "name": tag.name, "bg_color": tag.bg_color, "fg_color": tag.fg_color,
        "description": tag.description, "pinned": bool(tag.pinned), "match": tag.match,
        "matching_algorithm": tag.matching_algorithm,
        "is_insensitive": bool(tag.is_insensitive), "is_inbox_tag": bool(tag.is_inbox_tag),
        "parent": tag.parent_id, "document_count": document_count}}


@routes.get("/tags/", Operation("The caller's tags", list_of(ref("Tag")), query=PAGE_QUERY))
def list_tags(ctx: Context):
    return ctx.paginate(tags.tags_of_user(ctx.user), tag_resources)


@routes.post("/tags/", Operation(
    "Create a tag", data_of(ref("Tag")), 201, request=ref("TagInput"), errors=(409,)))
def create_tag(ctx: Context):
    _, attributes = ctx.resource("tags")
    return created({"data": tag_resource(tags.create_tag(ctx.user, attributes))})


@routes.get("/tags/{tag_id}/", Operation("One tag", data_of(ref("Tag"))))
def get_tag(ctx: Context, tag_id: str):
    return {"data": tag_resource(tags.owned_tag(ctx.user, tag_id))}


@routes.patch("/tags/{tag_id}/", Operation(
    "Change a tag", data_of(ref("Tag")), request=ref("TagInput"), errors=(409,)))
def update_tag(ctx: Context, tag_id: str):
    _, attributes = ctx.resource("tags")
    return {"data": tag_resource(tags.update_tag(ctx.user, tag_id, attributes))}


@routes.delete("/tags/{tag_id}/", Operation("Delete a tag (nodes lose it)", status=204))
def delete_tag(ctx: Context, tag_id: str):
    tags.delete_tag(ctx.user, tag_id)
    return no_content()


@routes.post("/tags/{tag_id}/merge/", Operation(
    "Merge a tag into another: its nodes get the other, it is deleted", data_of(ref("Tag")),
    request=obj({"into": UUID}, ["into"]), accepts=JSON_OR_VND, errors=(400, 404)))
def merge_tag(ctx: Context, tag_id: str):
    return {"data": tag_resource(tags.merge_tags(ctx.user, tag_id, ctx.json().get("into")))}


@routes.post("/nodes/{node_id}/tags/", Operation(
    "Set a node's tags, creating missing ones", NAMES, 201, request=NAMES,
    accepts=JSON_OR_VND), media_type=JSON)
def replace_node_tags(ctx: Context, node_id: str):
    names = tags.change_node_tags(ctx.user, node_id, ctx.json().get("tags"), "replace")
    return Reply({"tags": names}, status=201)


@routes.patch("/nodes/{node_id}/tags/", Operation(
    "Add tags to a node", NAMES, request=NAMES, accepts=JSON_OR_VND), media_type=JSON)
def add_node_tags(ctx: Context, node_id: str):
    return {"tags": tags.change_node_tags(ctx.user, node_id, ctx.json().get("tags"), "append")}


@routes.delete("/nodes/{node_id}/tags/", Operation(
    "Take tags off a node", status=204, request=NAMES, accepts=JSON_OR_VND), media_type=JSON)
def remove_node_tags(ctx: Context, node_id: str):
    tags.change_node_tags(ctx.user, node_id, ctx.json().get("tags"), "remove")
    return no_content()
