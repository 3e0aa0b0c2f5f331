"""Share links (api.md, "Share links"), the owner's side: make, list, read and revoke the links
that hand a document or folder to someone without an account. The visitor's side, the public page
at /s/<slug>, is dms.web.api.sharepage."""

from __future__ import annotations

from dms.db.models import ShareLink
from dms.domain import sharelinks
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def public_url(ctx: Context, slug: str) -> str:
    return ctx.absolute_url(f"/s/{slug}")


def link_resource(ctx: Context, link: ShareLink, slug: str | None = None) -> dict:
    slug = slug or sharelinks.slug_of(link, ctx.config.data_dir)
    return {"type": "share-links", "id": link.id, "attributes": {
        "node": link.node_id, "expires_at": format_datetime(link.expires_at),
        "has_password": link.password_hash is not None, "max_downloads": link.max_downloads,
        "file_version": link.file_version, "downloads": link.downloads,
        "url": public_url(ctx, slug), "created_at": format_datetime(link.created_at),
        "last_accessed_at": format_datetime(link.last_accessed_at)}}


@routes.get("/share-links/", Operation(
    "The caller's share links (not revoked ones), newest first", list_of(ref("ShareLink")),
    query=(*PAGE_QUERY, "node")))
def list_links(ctx: Context):
    return ctx.paginate(sharelinks.links_of(ctx.user, ctx.query.get("node")),
                        lambda rows: [link_resource(ctx, link) for link in rows])


@routes.post("/share-links/", Operation(
    "Share a document or folder of the caller's with a public link", data_of(ref("ShareLink")),
    201, request=ref("ShareLinkInput"), errors=(403, 409)))
def create_link(ctx: Context):
    _, attributes = ctx.resource("share-links")
    link, slug = sharelinks.create_link(ctx.user, attributes, ctx.config.data_dir,
                                        ctx.config.share_max_days)
    return created({"data": link_resource(ctx, link, slug)})


@routes.get("/share-links/{link_id}/", Operation("One share link", data_of(ref("ShareLink"))))
def get_link(ctx: Context, link_id: str):
    return {"data": link_resource(ctx, sharelinks.owned_link(ctx.user, link_id))}


@routes.delete("/share-links/{link_id}/", Operation(
    "Revoke a share link: its URL answers 410 from now on", status=204))
def revoke_link(ctx: Context, link_id: str):
    sharelinks.revoke_link(ctx.user, link_id)
    return no_content()
