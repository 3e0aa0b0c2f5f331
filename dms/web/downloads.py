"""Files as downloads: the Content-Disposition of a name, what a browser may show inline, and a
stored file's answer with Range, HEAD and conditional requests (from the node's disk or streamed
from a bucket)."""

from __future__ import annotations

from urllib.parse import quote

import bottle

from dms.files.storage import Blob, FileStore
from dms.web.jsonapi import ApiError

# RFC 7230's `token` characters: a name made only of these needs no quotes.
TOKEN_CHARACTERS = frozenset("!#$%&'*+-.^_`|~0123456789"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def content_disposition(file_name: str, disposition: str = "attachment") -> str:
    """RFC 6266. A name that is an RFC 7230 token goes bare (`filename=scan.pdf`): naive clients
    such as papermerge-cli split the header at `=` and would save `"scan.pdf"`, quotes included.
    Any other name gets a quoted ASCII fallback plus the exact name as UTF-8 in `filename*`."""
    if file_name and set(file_name) <= TOKEN_CHARACTERS:
        return f"{disposition}; filename={file_name}"
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in file_name)
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{quote(file_name, safe='')}"


# What a browser may show in place of downloading (`?inline=1`): documents and pictures that run
# no script on dms's origin (never HTML or SVG).
INLINE_TYPES = frozenset({"application/pdf", "image/jpeg", "image/png", "image/tiff", "image/gif",
                          "image/webp", "text/plain"})


def file_response(store: FileStore, blob: Blob, mime_type: str, file_name: str, etag: str,
                  inline: bool = False) -> bottle.HTTPResponse:
    """A stored file as a download, with Range, HEAD and conditional requests: Bottle's own for a
    file on this node's disk, the same answers streamed from object storage otherwise;
    `inline`: to be shown by the browser, where its type is one of INLINE_TYPES. 404 when the
    store has lost it."""
    disposition = "inline" if inline and mime_type in INLINE_TYPES else "attachment"
    headers = {"Content-Disposition": content_disposition(file_name, disposition)}
    path = store.local_path(blob)
    if path is not None:
        if not path.is_file():
            raise _missing()
        return bottle.static_file(path.name, root=str(path.parent), mimetype=mime_type,
                                  charset=None, etag=etag, headers=headers)
    size = store.size(blob)
    if size is None:
        raise _missing()
    headers.update({"Content-Type": mime_type, "ETag": etag, "Accept-Ranges": "bytes",
                    "Content-Length": str(size)})
    environ = bottle.request.environ
    if environ.get("HTTP_IF_NONE_MATCH") == etag:
        return bottle.HTTPResponse(status=304, **headers)
    start, end, status = 0, size, 200
    if environ.get("HTTP_RANGE"):
        ranges = list(bottle.parse_range_header(environ["HTTP_RANGE"], size))
        if not ranges:
            raise ApiError(416, "invalid", "The range asked for is not within the file.")
        (start, end), status = ranges[0], 206
        headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
        headers["Content-Length"] = str(end - start)
    body = b"" if bottle.request.method == "HEAD" or end <= start \
        else store.read(blob, start, end)
    return bottle.HTTPResponse(body, status, **headers)


def _missing() -> ApiError:
    return ApiError(404, "not_found", "The file of this version is missing from the store; ask "
                                      "the administrator to run `dms verify`.")
