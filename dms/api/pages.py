"""Pages, text and OCR (api.md §6, §7): a page as JSON:API, plain text or a JPEG preview; a
document's whole text; the installed OCR languages; re-running processing."""

from __future__ import annotations

import bottle

from dms import documents, tree
from dms.api.nodes import document_settings
from dms.jsonapi import JSON, ApiError, RouteTable, invalid, not_found
from dms.languages import installed_languages
from dms.models import DocumentVersion, Node, Page
from dms.previews import preview
from dms.web import Context

routes = RouteTable()


def owned_page(ctx: Context, page_id: str) -> tuple[Page, DocumentVersion, Node]:
    row = (Page.select(Page, DocumentVersion, Node).join(DocumentVersion).join(Node)
           .where(Page.id == page_id, Node.owner == ctx.user.id).first())
    if row is None:
        raise not_found()
    return row, row.version, row.version.document


def wants(ctx: Context, media: str) -> bool:
    accept = (ctx.header("Accept") or "").lower()
    return media in [part.split(";")[0].strip() for part in accept.split(",")]


@routes.get("/pages/{page_id}/")
def get_page(ctx: Context, page_id: str):
    page, version, document = owned_page(ctx, page_id)
    if wants(ctx, "image/jpeg"):
        path = preview(ctx.config.data_dir / "previews", page.id, ctx.state.store.path(version.id),
                       version.mime_type, page.number, page.text)
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


@routes.get("/documents/{document_id}/ocr-text", media_type=JSON)
def ocr_text(ctx: Context, document_id: str):
    document = tree.owned_node(ctx.user, document_id, Node.DOCUMENT)
    return {"text": documents.latest_text(document.id)}


@routes.get("/ocr-languages/", media_type=JSON)
def ocr_languages(ctx: Context):
    return {"languages": list(installed_languages()), "default": ctx.config.ocr_lang}


@routes.post("/ocr/", media_type=JSON)
def rerun(ctx: Context):
    body = ctx.json()
    document_id = body.get("doc_id")
    if not isinstance(document_id, str) or not document_id:
        raise ApiError(400, "required", "doc_id, the id of the document to process, is required.",
                       "/doc_id")
    document = tree.owned_node(ctx.user, document_id, Node.DOCUMENT)
    settings = document_settings(ctx, {"lang": body["lang"]} if "lang" in body else {}, {})
    version = documents.latest_version(document.id)
    if version is None:
        raise invalid("This document has no file yet; upload one first.", "/doc_id")
    (Node.update(ocr_status="received", ocr_error=None, ocr_attempts=0, **settings)
     .where(Node.id == document.id).execute())
    ctx.state.processor.enqueue(version.id)
    return {"status": "queued", "doc_id": document.id, "lang": settings.get("lang", document.lang)}
