"""Page operations (api.md, "Page operations", Papermerge 2.1's routes and bodies): delete, reorder,
rotate and move pages, merge documents, split a document. Papermerge answers them 204; a split
answers 201 with the new documents, or, too large for one request, 202 with its run (`split-runs`),
which GET /split-runs/{id}/ follows."""

from __future__ import annotations

from dms.db.models import SplitRun
from dms.domain import splitruns
from dms.domain.pages import operations
from dms.web.api.documents import document_body
from dms.web.api.nodes import paginated_nodes
from dms.web.endpoints import Context
from dms.web.jsonapi import Reply, RouteTable, created, format_datetime, no_content
from dms.web.nodefields import FIELDS_QUERY
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, PAGE_QUERY, data_of, list_of, obj, ref

routes = RouteTable()


@routes.delete("/pages/{page_id}/", Operation(
    "Delete a page: a new version without it", status=204, errors=(404, 409)))
def delete_page(ctx: Context, page_id: str):
    operations.delete_pages(ctx.services, ctx.user, [page_id])
    return no_content()


@routes.delete("/pages/", Operation(
    "Delete pages of one document: a new version without them", status=204, request=ref("PageIds"),
    accepts=JSON_OR_VND, errors=(404, 409)))
def delete_pages(ctx: Context):
    operations.delete_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/reorder/", Operation(
    "Put pages in a new order: a new version", status=204, request=ref("PageReorder"),
    accepts=JSON_OR_VND, errors=(404, 409)))
def reorder_pages(ctx: Context):
    operations.reorder_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/rotate/", Operation(
    "Turn pages by multiples of 90 degrees: a new version", status=204, request=ref("PageRotate"),
    accepts=JSON_OR_VND, errors=(404, 409)))
def rotate_pages(ctx: Context):
    operations.rotate_pages(ctx.services, ctx.user, ctx.json().get("pages"))
    return no_content()


@routes.post("/pages/move-to-document/", Operation(
    "Move pages into another document (a new version of each)", status=204,
    request=ref("PagesToDocument"), accepts=JSON_OR_VND, errors=(404, 409)))
def move_to_document(ctx: Context):
    body = ctx.json()
    operations.move_to_document(ctx.services, ctx.user, body.get("pages"), body.get("dst"),
                                body.get("position", -1), body.get("merge", False))
    return no_content()


@routes.post("/pages/move-to-folder/", Operation(
    "Make pages a new document (or one per page) in a folder", status=204,
    request=ref("PagesToFolder"), accepts=JSON_OR_VND, errors=(404, 409)))
def move_to_folder(ctx: Context):
    body = ctx.json()
    operations.move_to_folder(ctx.services, ctx.user, body.get("pages"), body.get("dst"),
                              body.get("single_page", False), body.get("title_format"))
    return no_content()


@routes.post("/documents/merge/", Operation(
    "Append a document's pages to another; the first goes to the trash", status=204,
    request=ref("Merge"), accepts=JSON_OR_VND, errors=(404, 409)))
def merge_documents(ctx: Context):
    body = ctx.json()
    operations.merge_documents(ctx.services, ctx.user, body.get("src"), body.get("dst"))
    return no_content()


def split_run_resource(ctx: Context, run: SplitRun) -> dict:
    return {"type": "split-runs", "id": run.id, "attributes": {
        "state": run.state, "kind": run.kind, "parts": run.parts, "parts_made": run.parts_made,
        "error": run.error, "created_at": format_datetime(run.created_at),
        "started_at": format_datetime(run.started_at),
        "finished_at": format_datetime(run.finished_at)},
        "relationships": {
            "document": {"data": {"type": "documents", "id": run.document_id}},
            "documents": {"links": {"related": ctx.absolute_url(
                f"/api/split-runs/{run.id}/documents/")}}}}


@routes.post("/documents/{document_id}/split/", Operation(
    "Split a document after pages or at separator sheets (a large split: 202 with its run)",
    obj({"data": {"type": "array", "items": ref("Node")}}, ["data"]), 201, request=ref("Split"),
    accepts=JSON_OR_VND, errors=(404, 409, 429, 503), also={202: data_of(ref("SplitRun"))}))
def split_document(ctx: Context, document_id: str):
    """201 with the new documents; a large split 202 at once with its run (Location)."""
    result = ctx.runtime.split_runs.split(ctx.user, document_id, ctx.json())
    if isinstance(result, SplitRun):
        return Reply({"data": split_run_resource(ctx, result)}, status=202, headers={
            "Location": ctx.absolute_url(f"/api/split-runs/{result.id}/")})
    return created({"data": [document_body(ctx, part)["data"] for part in result]})


@routes.get("/split-runs/{run_id}/", Operation(
    "A split in the background: how far it got", data_of(ref("SplitRun"))))
def get_split_run(ctx: Context, run_id: str):
    return {"data": split_run_resource(ctx, splitruns.owned_run(ctx.user, run_id))}


@routes.get("/split-runs/{run_id}/documents/", Operation(
    "The documents a split's run made so far, by part number", list_of(ref("Node")),
    query=PAGE_QUERY + FIELDS_QUERY, errors=(400,)))
def split_run_documents(ctx: Context, run_id: str):
    """The documents the run made so far that are not in the trash, by part number."""
    return paginated_nodes(ctx, splitruns.parts_of(ctx.user, run_id))
