"""The web page (plain HTML, CSS and JavaScript modules from dms/web/static, no build step), served
at / and /ui/ by the same process. It talks only to the public REST API.

Caching (a decision): every file is sent with `Cache-Control: no-cache` and a strong
`ETag` (a hash of its bytes) plus `Last-Modified`, so a browser keeps the files and asks each time
whether they changed — a 304 of a few hundred bytes — instead of versioned names with immutable
caching, which would need a build step to rename the files and rewrite the modules' imports. An
upgrade is seen at the next load, never half (a module of the old page with one of the new)."""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path

import bottle

from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, not_found
from dms.web.openapi import Operation
from dms.web.openapi.shapes import STRING

routes = RouteTable()
UI = {"auth": False, "prefixes": ("",)}

# No inline script or style, nothing from another origin, never inside a frame.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-cache",
}
MEDIA_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css",
               ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon"}


def static_dir() -> Path:
    """The page's files, inside the package (also inside a PyInstaller build)."""
    return Path(str(resources.files("dms.web") / "static"))


@functools.lru_cache(maxsize=64)
def _etag(path: str, mtime_ns: int, size: int) -> str:
    """A strong validator from the file's bytes: the same on every node of a cluster (unlike one
    made of inode and mtime), new whenever the file changes (mtime and size are the cache key)."""
    return '"' + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32] + '"'


def static_response(name: str) -> bottle.HTTPResponse:
    path = static_dir() / name
    media = MEDIA_TYPES.get(path.suffix)
    # Only plain file names of known types: nothing a client sends can reach another path.
    if media is None or "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        raise not_found()
    stat = path.stat()
    return bottle.static_file(name, root=str(path.parent), mimetype=media, charset="utf-8",
                              etag=_etag(str(path), stat.st_mtime_ns, stat.st_size),
                              headers=dict(SECURITY_HEADERS))


@routes.get("/", Operation(
    "The token web page", media={"text/html": STRING}), strict_slash=True, **UI)
def page(ctx: Context):
    return static_response("index.html")


@routes.get("/ui/", Operation("The token web page", media={"text/html": STRING}), **UI)
def page_under_ui(ctx: Context):
    """One page, one address: /ui/ sends the browser to the root, so the page's relative links
    (static/..., api/...) also work under a --url-prefix."""
    return bottle.HTTPResponse(status=302, headers={
        "Location": ctx.absolute_url("/"), **SECURITY_HEADERS})


@routes.get("/static/{name}", Operation(
    "Files of the token web page",
    media={"text/javascript": STRING, "text/css": STRING, "image/svg+xml": STRING}), **UI)
def static(ctx: Context, name: str):
    return static_response(name)
