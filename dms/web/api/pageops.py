"""Page operations (api.md §11, Papermerge 2.1's routes and bodies): delete, reorder, rotate and
move pages, merge documents, split a document. Papermerge answers them 204; a split answers 201
with the new documents."""

from __future__ import annotations

from dms.domain import pageops
from dms.web.api.documents import document_body
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, no_content

routes = RouteTable()


@routes.delete("/pages/{page_id}/")
def delete_page(ctx: Context, page_id: str):
    pageops.delete_pages(ctx.services, ctx.user, [page_id])
    return no_content()


@routes.delete("/pages/")
def delete_pages(ctx: Context):
    pageops.delete_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/reorder/")
def reorder_pages(ctx: Context):
    pageops.reorder_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/rotate/")
def rotate_pages(ctx: Context):
    pageops.rotate_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/move-to-document/")
def move_to_document(ctx: Context):
    body = ctx.json()
    pageops.move_to_document(ctx.services, ctx.user, body.get("pages"), body.get("dst"),
                             body.get("position", -1), body.get("merge", False))
    return no_content()


@routes.post("/pages/move-to-folder/")
def move_to_folder(ctx: Context):
    body = ctx.json()
    pageops.move_to_folder(ctx.services, ctx.user, body.get("pages"), body.get("dst"),
                           body.get("single_page", False), body.get("title_format"))
    return no_content()


@routes.post("/documents/merge/")
def merge_documents(ctx: Context):
    body = ctx.json()
    pageops.merge_documents(ctx.services, ctx.user, body.get("src"), body.get("dst"))
    return no_content()


@routes.post("/documents/{document_id}/split/")
def split_document(ctx: Context, document_id: str):
    parts = pageops.split_document(ctx.services, ctx.user, document_id, ctx.json())
    return created({"data": [document_body(ctx, part)["data"] for part in parts]})
