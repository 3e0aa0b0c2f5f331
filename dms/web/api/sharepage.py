"""The public page of a share link (api.md, "Share links"): `/s/<slug>` for anyone holding the URL,
without an account and without the app's JavaScript — plain HTML made here, one stylesheet.

- GET /s/<slug>: a document's title, size and a download button; a folder's documents, each
  downloadable, and a zip of them all. With a password, a form first (POST /s/<slug>), whose right
  answer sets a cookie for this link's path only (HttpOnly, SameSite=Lax, Secure over https).
- GET /s/<slug>/download/: the document, or the folder's zip; GET
  /s/<slug>/documents/<id>/download/: one document of a folder's link. Each counts as a download
  (a HEAD, or a Range that does not start at byte 0 — a resumed download —, does not).
- Unknown → 404, expired, revoked, used up → 410, too many wrong passwords → 429, each a plain page
  that tells nothing else. The app's strict headers (no script, nothing from elsewhere, never in a
  frame, no referrer), forms posting only to this origin, nothing cached or indexed.
"""

from __future__ import annotations

import html
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs

import bottle

from dms.domain import archives, sharelinks
from dms.domain.sharelinks import Visit
from dms.errors import DomainError, NotFound, Throttled
from dms.web.api.nodes import version_file
from dms.web.api.ui import SECURITY_HEADERS, page_version
from dms.web.downloads import content_disposition
from dms.web.endpoints import STATUS_OF_ERROR, Context
from dms.web.jsonapi import RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.shapes import BINARY, FILES, STRING

routes = RouteTable()
PUBLIC = {"auth": False, "prefixes": ("",)}
HTML_ANSWER = {"text/html": STRING}
COOKIE = "dms_share"
MAX_FORM_BYTES = 4096
HEADERS = {**SECURITY_HEADERS,
           "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace(
               "form-action 'none'", "form-action 'self'"),
           "Cache-Control": "no-store", "X-Robots-Tag": "noindex, nofollow"}
TITLES = {404: "Nothing here", 410: "This link no longer works", 429: "Please wait",
          400: "Not understood"}


def _page(ctx: Context, title: str, body: str, status: int = 200,
          headers: dict[str, str] | None = None) -> bottle.HTTPResponse:
    sheet = html.escape(ctx.absolute_url(f"/static/{page_version()}/share.css"))
    document = (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<meta name="robots" content="noindex, nofollow">'
                f"<title>{html.escape(title)}</title>"
                f'<link rel="stylesheet" href="{sheet}"></head>'
                f'<body><main class="share">{body}</main></body></html>\n')
    return bottle.HTTPResponse(document.encode("utf-8"), status, {
        **HEADERS, "Content-Type": "text/html; charset=utf-8", **(headers or {})})


def _refusal(ctx: Context, error: DomainError) -> bottle.HTTPResponse:
    status = next((code for cls, code in STATUS_OF_ERROR.items() if isinstance(error, cls)), 400)
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, Throttled) else {}
    title = TITLES.get(status, "Not available")
    return _page(ctx, title, f"<h1>{html.escape(title)}</h1>"
                             f"<p>{html.escape(error.message)}</p>", status, headers)


def _size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000  # type: ignore[assignment]
    return ""


def _visit(ctx: Context, slug: str) -> Visit:
    return sharelinks.open_visit(slug, ctx.config.data_dir)


def _unlocked(ctx: Context, visit: Visit) -> bool:
    cookie = SimpleCookie()
    try:
        cookie.load(ctx.environ.get("HTTP_COOKIE", ""))
    except CookieError:  # a malformed Cookie header is no cookie
        return visit.is_unlocked(None)
    morsel = cookie.get(COOKIE)
    return visit.is_unlocked(morsel.value if morsel is not None else None)


def _password_form(ctx: Context, slug: str, wrong: bool = False) -> bottle.HTTPResponse:
    action = html.escape(ctx.absolute_url(f"/s/{slug}"))
    note = '<p class="wrong" role="alert">That password is not right.</p>' if wrong else ""
    return _page(ctx, "Password needed", (
        "<h1>Password needed</h1><p>The person who shared this asked for a password.</p>"
        f'{note}<form method="post" action="{action}">'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" required autofocus '
        'autocomplete="current-password">'
        '<button type="submit">Open</button></form>'), 403 if wrong else 200)


def _listing(ctx: Context, slug: str, visit: Visit) -> bottle.HTTPResponse:
    shown = visit.documents()
    expiry = f"{visit.expires_at:%Y-%m-%d %H:%M} UTC"
    left = visit.downloads_left
    facts = f"<p class=\"facts\">Available until {expiry}" + (
        f", {left} download{'s' if left != 1 else ''} left" if left is not None else "") + ".</p>"
    if not visit.is_folder:
        if not shown:
            return _refusal(ctx, NotFound("This document has no file yet."))
        one = shown[0]
        download = html.escape(ctx.absolute_url(f"/s/{slug}/download/"))
        body = (f"<h1>{html.escape(one.title)}</h1>"
                f'<p class="file">{html.escape(one.file_name)} · {_size(one.size)}</p>{facts}'
                f'<p><a class="button" href="{download}" download>Download</a></p>')
        return _page(ctx, one.title, body)
    rows = "".join(
        f'<li><a href="{html.escape(ctx.absolute_url(f"/s/{slug}/documents/{doc.id}/download/"))}"'
        f' download>{html.escape(doc.title)}</a> <span class="size">{_size(doc.size)}</span></li>'
        for doc in shown)
    title = visit.node.title
    archive = html.escape(ctx.absolute_url(f"/s/{slug}/download/"))
    body = (f"<h1>{html.escape(title)}</h1>{facts}"
            + (f'<p><a class="button" href="{archive}" download>Download all (zip)</a></p>'
               f'<ul class="documents">{rows}</ul>' if shown else "<p>This folder is empty.</p>"))
    return _page(ctx, title, body)


@routes.get("/s/{slug}/", Operation("The public page of a share link", media=HTML_ANSWER,
                                    errors=(410, 429), error_media=HTML_ANSWER), **PUBLIC)
def share_page(ctx: Context, slug: str):
    try:
        visit = _visit(ctx, slug)
        if not _unlocked(ctx, visit):
            return _password_form(ctx, slug)
        visit.record_view()
        return _listing(ctx, slug, visit)
    except DomainError as error:
        return _refusal(ctx, error)


@routes.post("/s/{slug}/", Operation(
    "The password of a share link; the right one opens its page", media=HTML_ANSWER,
    errors=(403, 410, 429, 503, 507), error_media=HTML_ANSWER), **PUBLIC)
def unlock(ctx: Context, slug: str):
    try:
        visit = _visit(ctx, slug)
        if not visit.needs_password:
            return bottle.HTTPResponse(status=303, headers={
                **HEADERS, "Location": ctx.absolute_url(f"/s/{slug}")})
        length = ctx.content_length() or 0
        if length > MAX_FORM_BYTES or "form-urlencoded" not in (ctx.header("Content-Type") or ""):
            return _password_form(ctx, slug, wrong=True)
        form = parse_qs(ctx.environ["wsgi.input"].read(length).decode("utf-8", "replace"),
                        max_num_fields=5)
        token = visit.unlock((form.get("password") or [""])[0], ctx.remote_addr,
                             ctx.services.throttle)
        if not token:
            return _password_form(ctx, slug, wrong=True)
        path = ctx.environ.get("SCRIPT_NAME", "") + f"/s/{slug}"
        secure = "; Secure" if ctx.absolute_url().startswith("https:") else ""
        return bottle.HTTPResponse(status=303, headers={
            **HEADERS, "Location": ctx.absolute_url(f"/s/{slug}"),
            "Set-Cookie": f"{COOKIE}={token}; Path={path}; Max-Age="
                          f"{sharelinks.UNLOCK_SECONDS}; HttpOnly; SameSite=Lax{secure}"})
    except DomainError as error:
        return _refusal(ctx, error)
    except ValueError:  # more fields than parse_qs takes
        return _password_form(ctx, slug, wrong=True)


def _counts(ctx: Context) -> bool:
    """Whether this request is a download to count: not a HEAD, not a resumed download."""
    byte_range = (ctx.header("Range") or "").replace(" ", "")
    return ctx.environ.get("REQUEST_METHOD") != "HEAD" and byte_range in ("", "bytes=0-")


def _serve(ctx: Context, visit: Visit, document_id: str | None) -> bottle.HTTPResponse:
    if not _unlocked(ctx, visit):
        raise NotFound("Open the link's page and give its password first.")
    if visit.is_folder and document_id is None:
        if _counts(ctx):
            visit.take_download("archive")
        members = archives.entries([visit.node.id], ctx.services.store,
                                   visit.link.file_version == "searchable",
                                   ctx.config.max_tree_depth)
        stem = archives.safe_name(visit.node.title).lstrip(".") or "documents"
        return bottle.HTTPResponse(archives.stream_zip(members), 200, {
            **HEADERS, "Content-Type": "application/zip",
            "Content-Disposition": content_disposition(stem + ".zip")})
    shown = visit.document(document_id or visit.node.id)
    if _counts(ctx):
        visit.take_download("download", shown.id)
    answer = version_file(ctx, shown.version, visit.serves_searchable(shown))
    for name, value in HEADERS.items():
        answer.set_header(name, value)
    return answer


@routes.get("/s/{slug}/download/", Operation(
    "A share link's document, or its folder's documents as a zip",
    media={**FILES, "application/zip": BINARY}, errors=(410, 416, 429, 503, 507),
    error_media=HTML_ANSWER), **PUBLIC)
def download(ctx: Context, slug: str):
    try:
        return _serve(ctx, _visit(ctx, slug), None)
    except DomainError as error:
        return _refusal(ctx, error)


@routes.get("/s/{slug}/documents/{document_id}/download/", Operation(
    "One document of a folder's share link", media=FILES,
    errors=(410, 416, 429, 503, 507), error_media=HTML_ANSWER), **PUBLIC)
def download_document(ctx: Context, slug: str, document_id: str):
    try:
        return _serve(ctx, _visit(ctx, slug), document_id)
    except DomainError as error:
        return _refusal(ctx, error)

