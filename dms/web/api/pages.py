"""Pages, text and OCR (api.md, "Pages, text and OCR"): a page as JSON:API, plain text or a JPEG
preview; a document's whole text; the installed OCR languages; re-running processing."""

from __future__ import annotations

import bottle

from dms.db.models import Node
from dms.domain import documents, previews
from dms.domain.access.rule import reach
from dms.processing.languages import accepted_languages
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, VND, RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.shapes import BINARY, JSON_OR_VND, STRING, UUID, obj, ref

routes = RouteTable()


def wants(ctx: Context, media: str) -> bool:
    accept = (ctx.header("Accept") or "").lower()
    return media in [part.split(";")[0].strip() for part in accept.split(",")]


@routes.get("/pages/{page_id}/", Operation(
    "A page as JSON:API, text or JPEG preview (by Accept)",
    media={VND: ref("Page"), "text/plain": STRING, "image/jpeg": BINARY}))
def get_page(ctx: Context, page_id: str):
    page, version = documents.reached_page(ctx.user, page_id)
    if wants(ctx, "image/jpeg"):
        path = previews.preview(ctx.services, page, version)
        return bottle.static_file(path.name, root=str(path.parent), mimetype="image/jpeg")
    if wants(ctx, "text/plain"):
        return bottle.HTTPResponse(page.text.encode("utf-8"), 200,
                                   {"Content-Type": "text/plain; charset=utf-8"})
    return {"data": {
        "type": "pages",
        "id": page.id,
        "attributes": {"number": page.number, "text": page.text, "lang": version.lang},
        "relationships": {"document_version": {"data": {"type": "document_versions",
                                                        "id": version.id}}},
    }}


@routes.get("/documents/{document_id}/ocr-text", Operation(
    "A document's text", obj({"text": STRING})), media_type=JSON)
def ocr_text(ctx: Context, document_id: str):
    document = reach(ctx.user, document_id, kind=Node.DOCUMENT).node
    return {"text": documents.latest_text(document.id)}


@routes.get("/ocr-languages/", Operation(
    "Installed OCR languages",
    obj({"languages": {"type": "array", "items": STRING}, "default": STRING})), media_type=JSON)
def ocr_languages(ctx: Context):
    return {"languages": list(accepted_languages()), "default": ctx.config.ocr_lang}


@routes.post("/ocr/", Operation(
    "Process a document again", obj({"status": STRING, "doc_id": UUID, "lang": STRING}),
    request=obj({"doc_id": UUID, "lang": STRING}, ["doc_id"]), accepts=JSON_OR_VND,
    errors=(404,)), media_type=JSON)
def rerun(ctx: Context):
    body = ctx.json()
    document = documents.reprocess(ctx.services, ctx.user, body.get("doc_id"), body.get("lang"))
    return {"status": "queued", "doc_id": document.id, "lang": document.lang}
