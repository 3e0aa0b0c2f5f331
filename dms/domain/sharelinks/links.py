"""The owner's side of share links: make one for a document or folder, list them, revoke one.

- Only the node's owner makes links to it (an editor it is shared with may not: a public link
  hands the owner's paper to anyone holding the URL) — 403 for them, 404 for anyone else.
- The slug is 192 random bits (32 URL-safe characters), looked up by its SHA-256 digest and kept
  sealed with the data dir's key (dms.files.sealing) so that the owner can copy the URL again.
- `expires_at` is required and at most DMS_SHARE_MAX_DAYS ahead; a password (8 to 1024
  characters) is stored as a salted scrypt hash; `max_downloads` caps the files served.
- Revoking keeps the row (its URL answers 410 instead of 404), and takes it out of the lists.
- At most MAX_LINKS_PER_USER live links per user (revoked and expired ones do not count).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from pathlib import Path
from typing import Any

from peewee import ModelSelect

from dms.db import events, owner_scope, write_transaction
from dms.db.models import Node, ShareLink, User, new_id, utcnow
from dms.domain.access.rule import OWNER, reach
from dms.domain.credentials import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hash_password
from dms.errors import Conflict, Invalid, NotFound
from dms.files import sealing
from dms.text import has_refused_characters

FILE_VERSIONS = (ShareLink.ORIGINAL, ShareLink.SEARCHABLE)
SLUG_BYTES = 24  # 192 bits
MAX_LINKS_PER_USER = 1000
MAX_DOWNLOADS = 1_000_000
SHAREABLE = (Node.DOCUMENT, Node.FOLDER)
REFUSED_OWNER = "Only the owner of a document or folder can share it with a link."


def slug_digest(slug: str) -> str:
    return hashlib.sha256(slug.encode("utf-8", "replace")).hexdigest()


def slug_of(link: ShareLink, data_dir: Path) -> str:
    """The slug of the link's public URL, for its owner to copy."""
    return sealing.unseal(sealing.load_key(data_dir), link.slug_sealed, link.id)


def links_of(user: User, node_id: str | None = None) -> ModelSelect[ShareLink]:
    """The caller's live and expired links (not revoked ones), newest first; with `node_id`,
    only that node's."""
    query = ShareLink.select().where(ShareLink.owner == user.id, ShareLink.revoked_at.is_null())
    if node_id is not None:
        query = query.where(ShareLink.node == node_id)
    return query.order_by(ShareLink.created_at.desc(), ShareLink.id)


def owned_link(user: User, link_id: object) -> ShareLink:
    link = ShareLink.get_or_none(ShareLink.id == str(link_id), ShareLink.owner == user.id,
                                 ShareLink.revoked_at.is_null()) if isinstance(link_id, str) \
        else None
    if link is None:
        raise NotFound()
    return link


def check_expiry(value: object, max_days: int, now: dt.datetime) -> dt.datetime:
    """A naive UTC datetime from an ISO 8601 text with a time zone (or a bare date: its end,
    UTC), in the future and at most `max_days` ahead."""
    if value is None:
        raise Invalid("expires_at is required: a link must stop working by itself.",
                      "expires_at", code="required")
    if not isinstance(value, str) or len(value) > 40 or not value.isascii():
        raise Invalid("expires_at must be a date and time such as 2026-12-31T18:00:00Z.",
                      "expires_at")
    try:
        if len(value) == 10:
            moment = dt.datetime.combine(dt.date.fromisoformat(value), dt.time(23, 59, 59))
        else:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
            if parsed.tzinfo is None:
                raise Invalid("expires_at needs a time zone, such as 2026-12-31T18:00:00Z.",
                              "expires_at")
            moment = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    except ValueError:
        raise Invalid("expires_at must be a date and time such as 2026-12-31T18:00:00Z.",
                      "expires_at") from None
    if moment <= now:
        raise Invalid("A share link must expire in the future.", "expires_at")
    if moment > now + dt.timedelta(days=max_days):
        raise Invalid(f"A share link expires at most {max_days} days after it is made.",
                      "expires_at")
    return moment


def check_password(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not MIN_PASSWORD_LENGTH <= len(value) <= MAX_PASSWORD_LENGTH \
            or has_refused_characters(value):
        raise Invalid(f"password must be {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} "
                      "characters without control characters, or left out.", "password")
    return value


def check_max_downloads(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DOWNLOADS:
        raise Invalid(f"max_downloads must be a whole number from 1 to {MAX_DOWNLOADS:,}, or "
                      "null for no limit.", "max_downloads")
    return value


def check_file_version(value: object) -> str:
    if value is None:
        return ShareLink.ORIGINAL
    if value not in FILE_VERSIONS:
        raise Invalid("file_version must be original or searchable.", "file_version")
    return str(value)


def create_link(user: User, attributes: dict[str, Any], data_dir: Path, max_days: int,
                actor: User | None = None) -> tuple[ShareLink, str]:
    """A new link to the caller's document or folder, and its slug (shown once here, and to the
    owner later through slug_of)."""
    node_id = attributes.get("node")
    if not isinstance(node_id, str):
        raise Invalid("node is required: the id of a document or folder of yours.", "node",
                      code="required" if node_id is None else "invalid")
    now = utcnow()
    expires_at = check_expiry(attributes.get("expires_at"), max_days, now)
    password = check_password(attributes.get("password"))
    max_downloads = check_max_downloads(attributes.get("max_downloads"))
    file_version = check_file_version(attributes.get("file_version"))
    node = reach(user, node_id, OWNER, refusal=REFUSED_OWNER).node
    if node.kind not in SHAREABLE or node.special is not None:
        raise Invalid("Only a document or a folder you made can be shared with a link, not "
                      f"{Node.SPECIAL_TITLES.get(node.special or '', 'this node')}.", "node")
    password_hash = hash_password(password) if password is not None else None  # outside the lock
    slug = secrets.token_urlsafe(SLUG_BYTES)
    link_id = new_id()
    sealed = sealing.seal(sealing.load_key(data_dir), slug, link_id)
    with write_transaction(owner_scope(user.id)):
        reach(user, node_id, OWNER, refusal=REFUSED_OWNER)  # still theirs, still live
        live = ShareLink.select().where(ShareLink.owner == user.id,
                                        ShareLink.revoked_at.is_null(),
                                        ShareLink.expires_at > now).count()
        if live >= MAX_LINKS_PER_USER:
            raise Conflict(f"You have {MAX_LINKS_PER_USER:,} share links that still work; revoke "
                           "some before making more.")
        ShareLink.insert(id=link_id, node=node.id, owner=user.id, slug_digest=slug_digest(slug),
                         slug_sealed=sealed, password_hash=password_hash,
                         file_version=file_version, expires_at=expires_at,
                         max_downloads=max_downloads, created_at=now).execute()
        events.record(user.id, node.id, events.SHARE_CREATED, (actor or user).id,
                      link=link_id, expires_at=expires_at.isoformat() + "Z",
                      password=password_hash is not None, max_downloads=max_downloads)
    return ShareLink.get_by_id(link_id), slug


def revoke_link(user: User, link_id: object) -> None:
    """The link stops working at once; its URL answers 410 from now on."""
    with write_transaction(owner_scope(user.id)):
        link = owned_link(user, link_id)
        ShareLink.update(revoked_at=utcnow()).where(ShareLink.id == link.id).execute()
        events.record(user.id, link.node_id, events.SHARE_REVOKED, user.id, link=link.id)
