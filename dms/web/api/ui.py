"""The web page (plain HTML, CSS and JavaScript modules from dms/web/static, no build step), served
at / and /ui/ by the same process. It talks only to the public REST API.

Caching (a decision, measured): the files are served under the page's version,
`static/<version>/<name>`, where the version is a hash of all of them, with `immutable` caching:
a browser that has the page asks for none of its 34 files again (revalidating each with a 304
cost ~180 ms of the first view of a folder, 2026-11-30). Only index.html is asked for each time
(`no-cache` and an ETag); the server puts the version into its addresses as it sends it, and the
modules' relative imports follow — no build step renames anything. An upgrade is seen at the next
load and never half: another version's addresses answer 404, so a tab still open on the old page
is told to reload (dom.js) instead of mixing old modules with new."""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from pathlib import Path

import bottle

from dms.web.endpoints import Context
from dms.web.jsonapi import ApiError, RouteTable, not_found
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
KEPT = {**SECURITY_HEADERS, "Cache-Control": "public, max-age=31536000, immutable"}
MEDIA_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css",
               ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon"}
OTHER_VERSION = ("This file belongs to another version of the page: dms was updated. Reload the "
                 "page.")


def static_dir() -> Path:
    """The page's files, inside the package (also inside a PyInstaller build)."""
    return Path(str(resources.files("dms.web") / "static"))


def page_version() -> str:
    """A hash of every file of the page: the same on every node of a cluster that runs the same
    code (unlike one made of mtimes), new whenever a file changes (their sizes and mtimes are the
    cache key, so a developer's edit is seen at the next load)."""
    fingerprint = tuple(sorted((path.name, stat.st_mtime_ns, stat.st_size)
                               for path in static_dir().iterdir()
                               if path.is_file() for stat in (path.stat(),)))
    return _version_of(fingerprint)


@functools.lru_cache(maxsize=4)
def _version_of(fingerprint: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in fingerprint:
        digest.update(name.encode() + b"\0" + (static_dir() / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def _index(version: str) -> tuple[bytes, str]:
    """index.html with its files' addresses under the version, and its strong validator."""
    text = (static_dir() / "index.html").read_text(encoding="utf-8")
    body = text.replace('"static/', f'"static/{version}/').encode("utf-8")
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def index_response() -> bottle.HTTPResponse:
    body, etag = _index(page_version())
    headers = {**SECURITY_HEADERS, "ETag": etag}
    # No Last-Modified: the answer changes with any file, not with index.html's own date.
    # From the environ: bottle.request.headers would keep a view of it inside it, a reference
    # cycle that only the cyclic garbage collector frees.
    if etag in bottle.request.environ.get("HTTP_IF_NONE_MATCH", ""):
        return bottle.HTTPResponse(status=304, headers=headers)
    return bottle.HTTPResponse(body, 200, {**headers, "Content-Type": "text/html; charset=utf-8"})


_served_version: list[str] = []


def _is_current(version: str) -> bool:
    """Compared with the version last computed; computed again only when they differ (a file
    changed since, or an old or made-up address)."""
    if _served_version and _served_version[0] == version:
        return True
    _served_version[:] = [page_version()]
    return _served_version[0] == version


def static_response(version: str, name: str) -> bottle.HTTPResponse:
    path = static_dir() / name
    media = MEDIA_TYPES.get(path.suffix)
    # Only plain file names of known types: nothing a client sends can reach another path.
    if media is None or "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        raise not_found()
    if not _is_current(version):
        raise ApiError(404, "not_found", OTHER_VERSION)
    return bottle.static_file(name, root=str(path.parent), mimetype=media, charset="utf-8",
                              etag=f'"{version}"', headers=dict(KEPT))


@routes.get("/", Operation(
    "The token web page", media={"text/html": STRING}), strict_slash=True, **UI)
def page(ctx: Context):
    return index_response()


@routes.get("/ui/", Operation("The token web page", media={"text/html": STRING}), **UI)
def page_under_ui(ctx: Context):
    """One page, one address: /ui/ sends the browser to the root, so the page's relative links
    (static/..., api/...) also work under a --url-prefix."""
    return bottle.HTTPResponse(status=302, headers={
        "Location": ctx.absolute_url("/"), **SECURITY_HEADERS})


@routes.get("/static/{version}/{name}", Operation(
    "Files of the token web page, under the page's version (index.html names it)",
    media={"text/javascript": STRING, "text/css": STRING, "image/svg+xml": STRING}), **UI)
def static(ctx: Context, version: str, name: str):
    return static_response(version, name)
