"""The dialect's share links (api.md §17) are dms's (§5b), to documents: by number, in
Paperless-ngx's shape (`document`, `expiration`, `slug`, `file_version` `original` or `archive` —
dms's `searchable`). Its links cannot carry a password or a download cap; a link made here without
an expiration expires DMS_SHARE_MAX_DAYS after it is made (dms's links always expire).
`GET /share/{slug}` (under the dialect's prefix, where Paperless-ngx's apps build it) sends the
browser to dms's public page's download (or to the page itself when the link needs a password or
no longer works, which says why)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import bottle

from dms.domain import numbers, sharelinks
from dms.domain.rows import User
from dms.errors import Gone, NotFound
from dms.web.paperless import translate
from dms.web.paperless.documents import reached_document
from dms.web.paperless.protocol import (
    Call,
    DrfError,
    Reply,
    Routes,
    invalid,
    not_found,
    number,
)

routes = Routes()

VERSIONS = {"original": "original", "archive": "searchable"}  # Paperless-ngx's: dms's
NAMES = {ours: theirs for theirs, ours in VERSIONS.items()}
FIELDS = {"node": "document", "expires_at": "expiration", "file_version": "file_version"}


def _time(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="microseconds") + "Z"


def _document_links(user: User, document_id: str | None = None) -> tuple[list[Any], dict]:
    """The caller's links (not revoked) to documents, newest first, with their documents'
    numbers."""
    rows = list(sharelinks.links_of(user, document_id))
    documents = numbers.numbers_of("document", list({row.node_id for row in rows}))
    return [row for row in rows if row.node_id in documents], documents


def shaped(call: Call, rows: list[Any], documents: dict[str, int]) -> list[dict[str, Any]]:
    found = numbers.numbers_of("share_link", [row.id for row in rows])
    return [{"id": found[row.id], "created": _time(row.created_at),
             "expiration": _time(row.expires_at),
             "slug": sharelinks.slug_of(row, call.config.data_dir),
             "document": documents[row.node_id],
             "file_version": NAMES.get(row.file_version, "original")} for row in rows]


@routes.add("GET", "/api/share_links/")
def list_links(call: Call) -> dict[str, Any]:
    rows, documents = _document_links(call.user)
    found = numbers.numbers_of("share_link", [row.id for row in rows])
    return call.page(len(rows), lambda offset, limit: shaped(call, rows[offset:offset + limit],
                                                             documents),
                     lambda: [found[row.id] for row in rows])


@routes.add("POST", "/api/share_links/", fields=FIELDS)
def create_link(call: Call) -> Reply:
    body = call.body()
    if body.get("document") is None:
        raise invalid("document", "This field is required.")
    given = translate.pk("document", body["document"])
    try:
        document_id = reached_document(call, given)
    except DrfError:
        raise invalid("document", f'Invalid pk "{given}" - object does not exist.') from None
    version = body.get("file_version", "archive")
    if version not in VERSIONS:
        raise invalid("file_version", f'"{version}" is not a valid choice.')
    expiration = body.get("expiration")
    if expiration is None:
        expiration = (dt.datetime.now(dt.UTC) + dt.timedelta(days=call.config.share_max_days)
                      - dt.timedelta(seconds=1)).isoformat()
    link, _ = sharelinks.create_link(call.user, {
        "node": document_id, "expires_at": expiration, "file_version": VERSIONS[version]},
        call.config.data_dir, call.config.share_max_days)
    return Reply(shaped(call, [link], numbers.numbers_of("document", [document_id]))[0], 201)


def _found(call: Call, raw: str) -> Any:
    try:
        return sharelinks.owned_link(call.user, numbers.id_of("share_link", number(raw)))
    except NotFound:
        raise not_found("Share Link") from None


@routes.add("GET", "/api/share_links/{link_id}/")
def get_link(call: Call, link_id: str) -> dict[str, Any]:
    link = _found(call, link_id)
    documents = numbers.numbers_of("document", [link.node_id])
    if link.node_id not in documents:  # a folder's link: not a Paperless-ngx share link
        raise not_found("Share Link")
    return shaped(call, [link], documents)[0]


@routes.add("DELETE", "/api/share_links/{link_id}/")
def delete_link(call: Call, link_id: str) -> Reply:
    sharelinks.revoke_link(call.user, _found(call, link_id).id)
    return Reply(None, 204)


@routes.add("GET", "/api/documents/{document_id}/share_links/")
def document_links(call: Call, document_id: str) -> list[dict[str, Any]]:
    """The links to a document: its owner's (anyone else it is shared with sees none)."""
    found = reached_document(call, number(document_id))
    rows, documents = _document_links(call.user, found)
    return shaped(call, rows, documents)


@routes.add("GET", "/share/{slug}", auth=False)
def public_share(call: Call, slug: str) -> bottle.HTTPResponse:
    try:
        visit = sharelinks.open_visit(slug, call.config.data_dir)
        target = f"/s/{slug}" if visit.needs_password else f"/s/{slug}/download/"
    except Gone:
        target = f"/s/{slug}"
    except NotFound:
        raise not_found() from None
    return bottle.HTTPResponse(status=302, headers={"Location": call.dms_url(target)})
