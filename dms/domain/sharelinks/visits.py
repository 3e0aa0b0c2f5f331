"""The visitor's side of a share link: what `/s/<slug>` may show and serve, to anyone holding the
URL, without an account.

- A slug nobody was given is NotFound (404); a link that expired, was revoked, is used up, or
  whose node went to the trash is Gone (410). Nothing else is told: not the owner, not other
  nodes, not why a slug is unknown.
- A password is asked first. Wrong guesses are limited (dms.domain.credentials.LoginThrottle, the
  table every node of a cluster counts in): per link and address GUESSES_PER_LINK_ADDRESS in 5
  minutes, past FREE_GUESSES of them each a second, then twice as long as the last wait, later;
  per link GUESSES_PER_LINK from anywhere; per address GUESSES_PER_ADDRESS over all links. The
  right password unlocks the link in that browser for UNLOCK_SECONDS (an HMAC of the link, its
  password hash and the time, keyed by the data dir's key: changing nothing on the server).
- A folder's link shows the live documents below it (at most LIST_LIMIT, by path) and serves each
  of them and a zip of them all; a document's link serves that document. Which file: the link's
  `file_version` (the searchable PDF where the version has one, else the original).
- Every file served counts as one download, taken by one conditional UPDATE before it is sent, so
  that `max_downloads` holds whatever visitors do at once.
- The node's history gets `share_accessed` for every download and wrong password, and for page
  views at most once a minute per link (each view would otherwise be a write any visitor could
  repeat without end).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from dms.db import database, events, owner_scope, write_transaction
from dms.db.models import DocumentVersion, Node, ShareLink, utcnow
from dms.domain.ancestry import ancestor_ids
from dms.domain.credentials import LoginThrottle, address_key, verify_password
from dms.domain.documents import latest_version, searchable_name
from dms.domain.sharelinks.links import slug_digest
from dms.errors import Gone, NotFound, StorageFull, Throttled, Unavailable
from dms.files import sealing
from dms.text import is_whole_number

log = logging.getLogger("dms.share")

LINK_ADDRESS, LINK, ADDRESS = "share+addr", "share", "share-addr"
GUESSES_PER_LINK_ADDRESS, GUESSES_PER_LINK, GUESSES_PER_ADDRESS = 10, 30, 50
FREE_GUESSES = 3
UNLOCK_SECONDS = 3600
VIEW_EVENT_SECONDS = 60
LIST_LIMIT = 500
MAX_SLUG_LENGTH = 64
NO_LONGER = "This link no longer works."


GUESS_LIMITS = {LINK_ADDRESS: GUESSES_PER_LINK_ADDRESS, LINK: GUESSES_PER_LINK,
                ADDRESS: GUESSES_PER_ADDRESS}


@dataclass
class Shown:
    """A document as the link shows it: its title, file name, size and type, no more."""
    id: str
    title: str
    file_name: str
    size: int
    mime_type: str
    version: DocumentVersion


def open_visit(slug: str, data_dir: Path) -> Visit:
    """The link a slug names, if it still works."""
    if not slug or len(slug) > MAX_SLUG_LENGTH or not slug.isascii():
        raise NotFound("There is nothing at this address.")
    link = ShareLink.get_or_none(ShareLink.slug_digest == slug_digest(slug))
    if link is None:
        raise NotFound("There is nothing at this address.")
    visit = Visit(link, data_dir)
    visit.check_works()
    return visit


class Visit:
    def __init__(self, link: ShareLink, data_dir: Path):
        self.link = link
        self.data_dir = data_dir
        self.node = Node.get_by_id(link.node_id)

    # -- whether it works ------------------------------------------------------------------------
    def check_works(self) -> None:
        link, now = self.link, utcnow()
        if link.revoked_at is not None:
            raise Gone("This link was withdrawn by the person who shared it.")
        if link.expires_at <= now:
            raise Gone(f"This link expired on {link.expires_at:%Y-%m-%d at %H:%M} UTC.")
        if link.max_downloads is not None and link.downloads >= link.max_downloads:
            raise Gone("This link has been used as many times as it allows.")
        if self.node.trash_id is not None:
            raise Gone(NO_LONGER)

    @property
    def expires_at(self) -> dt.datetime:
        return cast(dt.datetime, self.link.expires_at)

    @property
    def downloads_left(self) -> int | None:
        if self.link.max_downloads is None:
            return None
        return max(0, self.link.max_downloads - self.link.downloads)

    # -- the password ----------------------------------------------------------------------------
    @property
    def needs_password(self) -> bool:
        return self.link.password_hash is not None

    def _keys(self, address: str) -> list[tuple[str, ...]]:
        where = address_key(address)
        return [(LINK_ADDRESS, self.link.id, where), (LINK, self.link.id), (ADDRESS, where)]

    def unlock(self, password: str, address: str, throttle: LoginThrottle) -> str:
        """The unlock token for a browser that gave the right password, "" for a wrong one;
        Throttled while this link or this address must wait."""
        keys = self._keys(address)
        wait = throttle.retry_after(keys, GUESS_LIMITS) or throttle.slowed(keys[0], FREE_GUESSES)
        if wait is not None:
            raise Throttled(f"Too many wrong passwords; try again in {wait} seconds.", wait)
        if not verify_password(password, self.link.password_hash):
            throttle.record_failure(keys)
            self.record("wrong_password")
            return ""
        throttle.reset(keys[:1])
        return self.unlock_token(int(time.time()) + UNLOCK_SECONDS)

    def _mac(self, until: int) -> str:
        key = hmac.new(sealing.load_key(self.data_dir), b"dms share link unlock",
                       hashlib.sha256).digest()
        message = f"{self.link.id}|{self.link.password_hash}|{until}".encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    def unlock_token(self, until: int) -> str:
        return f"{until}.{self._mac(until)}"

    def is_unlocked(self, token: str | None) -> bool:
        """Without a password always; with one, when `token` is this link's and still fresh."""
        if not self.needs_password:
            return True
        until, _, mac = (token or "").partition(".")
        if not is_whole_number(until, 12):
            return False
        return int(until) > time.time() and hmac.compare_digest(mac, self._mac(int(until)))

    # -- what it shows ---------------------------------------------------------------------------
    @property
    def is_folder(self) -> bool:
        return self.node.kind == Node.FOLDER

    def documents(self) -> list[Shown]:
        """What the link shows: its document, or the live documents below its folder."""
        if not self.is_folder:
            shown = self._shown(self.node, latest_version(self.node.id))
            return [shown] if shown is not None else []
        rows = database.execute_sql("""
            WITH RECURSIVE below(id, depth) AS (
                SELECT id, 0 FROM node WHERE id = ?
                UNION ALL
                SELECT n.id, below.depth + 1 FROM node AS n JOIN below ON n.parent_id = below.id
                WHERE below.depth < 100 AND n.trash_id IS NULL
            )
            SELECT n.id FROM below JOIN node AS n ON n.id = below.id
            WHERE n.kind = 'document' ORDER BY below.depth, n.title_sort, n.id LIMIT ?""",
            (self.node.id, LIST_LIMIT)).fetchall()
        ids = [row[0] for row in rows]
        found = {node.id: node for node in Node.select().where(Node.id.in_(ids))}
        latest: dict[str, DocumentVersion] = {}
        for version in (DocumentVersion.select().where(DocumentVersion.document.in_(ids))
                        .order_by(DocumentVersion.number)):  # one query; the newest stays
            latest[version.document_id] = version
        return [shown for node_id in ids
                if (shown := self._shown(found[node_id], latest.get(node_id))) is not None]

    def document(self, document_id: str) -> Shown:
        """One document the link serves: its own, or a live one below its folder."""
        if not self.is_folder:
            if document_id != self.node.id:
                raise NotFound("There is nothing at this address.")
            node = self.node
        else:
            below = Node.get_or_none(Node.id == document_id, Node.kind == Node.DOCUMENT,
                                     Node.owner == self.link.owner_id, Node.trash_id.is_null())
            if below is None or self.node.id not in ancestor_ids(below.id) - {below.id}:
                raise NotFound("There is nothing at this address.")
            node = below
        shown = self._shown(node, latest_version(node.id))
        if shown is None:
            raise NotFound("This document has no file yet.")
        return shown

    def _shown(self, node: Node, version: DocumentVersion | None) -> Shown | None:
        if version is None:
            return None
        if self.link.file_version == ShareLink.SEARCHABLE and version.searchable_size is not None:
            return Shown(node.id, node.title, searchable_name(version.file_name),
                         version.searchable_size, "application/pdf", version)
        return Shown(node.id, node.title, version.file_name, version.size, version.mime_type,
                     version)

    def serves_searchable(self, shown: Shown) -> bool:
        return self.link.file_version == ShareLink.SEARCHABLE \
            and shown.version.searchable_size is not None

    # -- counting and history --------------------------------------------------------------------
    def take_download(self, what: str, document_id: str | None = None) -> None:
        """Count one download before a file is sent, and record it; Gone when the link stopped
        working meanwhile (used up by another visitor, revoked, expired)."""
        now = utcnow()
        with write_transaction(owner_scope(self.link.owner_id)):
            taken = database.execute_sql(
                "UPDATE share_link SET downloads = downloads + 1, last_accessed_at = ? "
                "WHERE id = ? AND revoked_at IS NULL AND expires_at > ? "
                "AND (max_downloads IS NULL OR downloads < max_downloads)",
                (ShareLink.last_accessed_at.db_value(now), self.link.id,
                 ShareLink.expires_at.db_value(now))).rowcount
            if not taken:
                self.link = ShareLink.get_by_id(self.link.id)
                self.check_works()
                raise Gone(NO_LONGER)
            events.record(self.link.owner_id, self.node.id, events.SHARE_ACCESSED,
                          link=self.link.id, what=what,
                          **({"document": document_id} if document_id else {}))

    def record_view(self) -> None:
        """A page view: recorded at most once a minute per link."""
        now, last = utcnow(), self.link.last_accessed_at
        if last is not None and now - last < dt.timedelta(seconds=VIEW_EVENT_SECONDS):
            return
        self.record("page")

    def record(self, what: str) -> None:
        now = utcnow()
        try:
            with write_transaction(owner_scope(self.link.owner_id)):
                ShareLink.update(last_accessed_at=now).where(
                    ShareLink.id == self.link.id).execute()
                events.record(self.link.owner_id, self.node.id, events.SHARE_ACCESSED,
                              link=self.link.id, what=what)
        except (StorageFull, Unavailable) as error:  # the visit is not refused for it
            log.warning("could not record a share link's %s: %s", what, error.message)
