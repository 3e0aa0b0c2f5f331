"""Pages, text and OCR (api.md, "Pages, text and OCR"): a page as JSON:API, plain text or a JPEG
preview, a preview in a chosen width and a document's thumbnail (§22); a document's whole text;
the installed OCR languages; re-running processing."""

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


def jpeg(path, immutable: bool = False):
    """A cached preview: the browser may keep it but asks again (304 while it is the same); an
    address that names what it shows (`?v=`) is kept without asking."""
    response = bottle.static_file(path.name, root=str(path.parent), mimetype="image/jpeg")
    response.set_header("Cache-Control", "private, max-age=31536000, immutable" if immutable
                        else "private, no-cache")
    return response


@routes.get("/pages/{page_id}/preview/", Operation(
    "A page's JPEG preview in a width", media={"image/jpeg": BINARY}, query=("width",),
    errors=(400, 429, 503)))
def page_preview(ctx: Context, page_id: str):
    width = previews.preview_width(ctx.query.get("width", previews.PREVIEW_WIDTH))
    page, version = documents.reached_page(ctx.user, page_id)
    return jpeg(previews.preview(ctx.services, page, version, width))


# What a document without a page to show yet (no file, or its first reading) answers instead.
PLACEHOLDER = (b'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="340" '
               b'viewBox="0 0 240 340"><rect width="240" height="340" fill="#eee"/>'
               b'<path d="M70 90h100M70 130h100M70 170h70" stroke="#bbb" stroke-width="12"/></svg>')


@routes.get("/documents/{document_id}/thumbnail/", Operation(
    "A small image of a document's first page (an SVG placeholder while it has none)",
    media={"image/jpeg": BINARY, "image/svg+xml": BINARY}, query=("v",), errors=(429, 503)))
def thumbnail(ctx: Context, document_id: str):
    """`v`: whatever the caller knows changes with the picture (the page: the document's
    `updated_at` and `ocr_status`), which makes the answer one to keep without asking again."""
    first = documents.first_page(ctx.user, document_id)
    if first is None:
        return bottle.HTTPResponse(PLACEHOLDER, 200, {"Content-Type": "image/svg+xml",
                                                      "Cache-Control": "no-store"})
    return jpeg(previews.preview(ctx.services, *first, previews.THUMBNAIL_WIDTH),
                immutable=bool(ctx.query.get("v")))


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
