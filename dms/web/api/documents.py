"""Documents (api.md, "Folders and documents", "Uploads, versions and downloads"): the caller's
list, one document with its versions, uploads and downloads of its files."""

from __future__ import annotations

from dms.db.models import DocumentVersion, Node
from dms.domain import documents, listings, trash, uploads
from dms.domain.access.rule import reach
from dms.domain.metadata import filters as metadata_filters
from dms.web.api.nodes import (
    paginated_nodes,
    searchable_asked,
    single,
    update,
    version_file,
)
from dms.web.endpoints import Context
from dms.web.jsonapi import ApiError, RouteTable, created, format_datetime, no_content
from dms.web.nodefields import FIELDS_QUERY
from dms.web.openapi import Operation
from dms.web.openapi.shapes import BINARY, FILES, FILE_TYPES, PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def version_resource(ctx: Context, version: DocumentVersion, page_ids: list[str]) -> dict:
    return {
        "id": version.id,
        "number": version.number,
        "file_name": version.file_name,
        "size": version.size,
        "page_count": version.page_count,
        "lang": version.lang,
        "created_at": format_datetime(version.created_at),
        # Absolute, like the pagination links: a path lost the proxy's --url-prefix (a 404).
        "download_url": ctx.absolute_url(f"/api/document-versions/{version.id}/download/"),
        "pages": [{"type": "pages", "id": page_id} for page_id in page_ids],
        "searchable_pdf": version.searchable_size is not None,
        "searchable_pdf_size": version.searchable_size,
        "short_description": version.short_description,
    }


def document_body(ctx: Context, document: Node) -> dict:
    """The full document: its node resource with `versions` (oldest first) in the attributes."""
    versions = documents.versions(document.id)
    pages = documents.page_ids([v.id for v in versions])
    return single(ctx.user, document,
                  versions=[version_resource(ctx, v, pages[v.id]) for v in versions])


@routes.get("/documents/", Operation(
    "All the documents the caller may read", list_of(ref("Node")),
    query=PAGE_QUERY + ("sort", "tags", "tags_op", "owner", *metadata_filters.PARAMETERS,
                        *FIELDS_QUERY),
    errors=(400,)))
def list_documents(ctx: Context):
    return paginated_nodes(ctx, listings.of_kind(ctx.user, Node.DOCUMENT, ctx.query.get("tags"),
                                                 ctx.query.get("tags_op"), ctx.query))


@routes.get("/documents/{document_id}/", Operation(
    "One document with versions", data_of(ref("Node"))))
def get_document(ctx: Context, document_id: str):
    return document_body(ctx, reach(ctx.user, document_id, kind=Node.DOCUMENT).node)


@routes.patch("/documents/{document_id}/", Operation(
    "Rename a document; its lang and ocr", data_of(ref("Node")), request=ref("NodeUpdate"),
    errors=(409,)))
def update_document(ctx: Context, document_id: str):
    return document_body(ctx, update(ctx, document_id, route_kind=Node.DOCUMENT))


@routes.delete("/documents/{document_id}/", Operation("Move a document to the trash", status=204))
def delete_document(ctx: Context, document_id: str):
    trash.delete(ctx.services, ctx.user, document_id, Node.DOCUMENT)
    return no_content()


@routes.put("/documents/{document_id}/upload/{file_name}", Operation(
    "Upload a new version of a document's file", data_of(ref("Node")), 201, request=BINARY,
    accepts=FILE_TYPES + ("application/octet-stream",), query=("if_duplicate",), errors=(409,)))
def upload(ctx: Context, document_id: str, file_name: str):
    if not (ctx.header("Content-Disposition") or "").strip():
        raise ApiError(400, "parse_error", "The Content-Disposition header is required, e.g. "
                                           "`Content-Disposition: attachment; filename=scan.pdf`.")
    # The stored name is the one in the URL; the header's name is only required
    # (api.md, "Uploading a file").
    document = uploads.upload_version(ctx.services, ctx.user, document_id,
                                        ctx.environ["wsgi.input"], ctx.content_length(), file_name,
                                        ctx.query.get("if_duplicate"))
    return created(document_body(ctx, document))


@routes.post("/documents/{document_id}/versions/{version_id}/restore/", Operation(
    "Make an older version the latest again (a new version, no OCR)", data_of(ref("Node")), 201))
def restore_version(ctx: Context, document_id: str, version_id: str):
    document = documents.restore_version(ctx.services, ctx.user, document_id, version_id)
    return created(document_body(ctx, document))


@routes.get("/documents/{document_id}/download/", Operation(
    "The latest version's file (or its searchable PDF)", media=FILES,
    query=("searchable", "inline"), errors=(416,)))
def download_latest(ctx: Context, document_id: str):
    return version_file(ctx, documents.latest_file(ctx.user, document_id), searchable_asked(ctx))


@routes.get("/document-versions/{version_id}/", Operation(
    "One version of a document", data_of(ref("VersionResource"))))
def get_version(ctx: Context, version_id: str):
    version = documents.reached_version(ctx.user, version_id)
    page_ids = documents.page_ids([version.id])[version.id]
    return {"data": {"type": "document_versions", "id": version.id,
                     "attributes": version_resource(ctx, version, page_ids)}}


@routes.get("/document-versions/{version_id}/download/", Operation(
    "One version's file (or its searchable PDF)", media=FILES, query=("searchable", "inline"),
    errors=(416,)))
def download_version(ctx: Context, version_id: str):
    return version_file(ctx, documents.reached_version(ctx.user, version_id), searchable_asked(ctx))
