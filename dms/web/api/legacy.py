"""The legacy document endpoints (api.md, "Legacy endpoints"), under /api only, answering plain JSON
objects. Uploads here land in the caller's .inbox as new documents."""

from __future__ import annotations

from dms.db.models import Node, User
from dms.domain import listings, tags, uploads
from dms.domain.access.rule import reach
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, Reply, RouteTable, format_datetime
from dms.web.openapi import Operation
from dms.web.openapi.shapes import BINARY, FILE_TYPES, ref

routes = RouteTable()
LEGACY = {"prefixes": ("/api",), "media_type": JSON}


def legacy_object(document: Node | listings.NodeRow, labels: list[dict]) -> dict:
    return {
        "id": document.id,
        "title": document.title,
        "file_name": document.file_name,
        "size": document.size,
        "page_count": document.page_count,
        "lang": document.lang,
        "ocr_status": document.ocr_status,
        "parent_id": document.parent_id,
        "created_at": format_datetime(document.created_at),
        "updated_at": format_datetime(document.updated_at),
        "tags": labels,
    }


def legacy_objects(user: User, documents: list) -> list[dict]:
    labels = tags.tags_of([document.id for document in documents], user.id)
    return [legacy_object(document, labels[document.id]) for document in documents]


@routes.get("/documents", Operation(
    "Legacy: all the caller's documents",
    {"type": "array", "items": ref("LegacyDocument")}), strict_slash=True, **LEGACY)
def list_documents_legacy(ctx: Context):
    listing = listings.of_kind(ctx.user, Node.DOCUMENT)
    return legacy_objects(ctx.user, listing.fetch(0, listing.count()))


@routes.get("/document/{document_id}", Operation(
    "Legacy: one document", ref("LegacyDocument")), **LEGACY)
def get_document_legacy(ctx: Context, document_id: str):
    return legacy_objects(ctx.user, [reach(ctx.user, document_id, kind=Node.DOCUMENT).node])[0]


def upload_to_inbox(ctx: Context, file_name: str | None) -> Reply:
    document = uploads.upload_to_inbox(ctx.services, ctx.user, ctx.environ["wsgi.input"],
                                         ctx.content_length(), file_name,
                                         ctx.query.get("if_duplicate"))
    return Reply(legacy_objects(ctx.user, [document])[0], status=201)


@routes.put("/document/upload/", Operation(
    "Legacy: upload into .inbox under a random name", ref("LegacyDocument"), 201, request=BINARY,
    accepts=FILE_TYPES, query=("if_duplicate",), errors=(409,)), strict_slash=True, **LEGACY)
def upload_unnamed(ctx: Context):
    return upload_to_inbox(ctx, None)


@routes.put("/document/upload/{file_name}", Operation(
    "Legacy: upload into .inbox", ref("LegacyDocument"), 201, request=BINARY,
    accepts=FILE_TYPES, query=("if_duplicate",), errors=(409,)), **LEGACY)
def upload_named(ctx: Context, file_name: str):
    return upload_to_inbox(ctx, file_name)
