"""The event log as scripts receive it (api.md, "Events"): a user's events after an id, each as the
JSON body a webhook POSTs and the event stream's `data:` line carries — the same bytes for both, and
for every retry (the body is made from the event row alone).

    {"id": "1234", "type": "node.renamed", "at": "2026-11-22T08:21:54.624117Z",
     "user_id": "<owner>", "node": {"id", "type": "folders"|"documents", "title", "parent_id"},
     "details": {..., "action": "renamed"}}

`type` is the history's action in the one vocabulary (dms.db.events.TYPES); `details` are the
history's (titles and ids, never text or secrets) plus `action`, the history's own word; `node`
is the node as the change left it. Reading "after an id" never skips an event: one owner's events
commit in the order of their ids (dms.db.events).

A reader's events are their own and, of each owner who shares something with them, those about
the nodes a grant covers when they are read (dms.domain.access.following); for them a shared
root's parent is the reader's .shared folder, as everywhere (dms.domain.access.sight). Events of
different owners do not commit in the order of their ids, so a reader's place is one position per
owner (`Cursors`); as text (the stream's `id:`, Last-Event-ID) it is the reader's own event id,
then `<owner id>:<event id>` for each other owner, separated by spaces: `1234` for a reader with
nothing shared with them.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from dms.db import database
from dms.db.events import TYPES
from dms.db.models import STORED_DATETIME, utcnow
from dms.domain.access.following import sharer_starts
from dms.domain.access.rule import MAX_SHARERS, shared_among
from dms.domain.access.sight import shared_folder_id

BATCH = 100  # events read at once
KIND_TYPES = {"folder": "folders", "document": "documents"}  # the JSON:API types of nodes
PING = "ping"
# The X-DMS-Delivery of an event to a webhook: the same for each try, from the two ids alone.
DELIVERY_NAMESPACE = uuid.UUID("5b0c3bde-5f0e-4c8f-9d43-8f1c5f1f9a28")


@dataclass(frozen=True)
class FeedEvent:
    id: int
    type: str
    body: bytes  # UTF-8 JSON


def encode(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def iso(stored: str) -> str:
    """A stored UTC time (`2026-11-22 08:21:54.624117`) as the API writes times."""
    return stored.replace(" ", "T", 1) + "Z"


# Events recorded before migration 0016 have no node columns: the node as it is now.
SELECT = """
    SELECT e.id AS id, e.action AS action, e.at AS at, e.owner_id AS owner_id,
           e.node_id AS node_id, e.details AS details, coalesce(e.node_kind, n.kind) AS kind,
           coalesce(e.node_title, n.title) AS title,
           CASE WHEN e.node_kind IS NULL THEN n.parent_id ELSE e.parent_id END AS parent_id
    FROM event AS e LEFT JOIN node AS n ON n.id = e.node_id AND e.node_kind IS NULL"""

Cursors = dict[str, int]  # owner id: the last of their events read (delivered or passed over)


def events_after(owner_id: str, after: int, limit: int = BATCH) -> list[FeedEvent]:
    """The owner's events with ids above `after`, oldest first, at most `limit`."""
    rows = database.execute_sql(f"{SELECT} WHERE e.owner_id = ? AND e.id > ? ORDER BY e.id "
                                "LIMIT ?", (owner_id, after, limit)).fetchall()
    return [_event(row) for row in rows]


@dataclass(frozen=True)
class Read:
    """What one read found: each event the reader may see with the reader's place after it,
    and the place after everything read (events passed over included); `full`: as many were
    read as asked for, more may wait."""
    events: list[tuple[FeedEvent, Cursors]]
    cursors: Cursors
    full: bool


def read(reader_id: str, cursors: Cursors, limit: int = BATCH) -> Read:
    """The next events after `cursors` (the reader's own place and one per owner who shares
    with them), oldest first: the first `limit` of all those owners' events after their places
    (each owner's at most `limit`, so the work is bounded however far behind a place is), of
    which the other owners' about nodes not shared with the reader now are passed over."""
    owners = list(cursors.items())
    part = f"SELECT * FROM ({SELECT} WHERE e.owner_id = ? AND e.id > ? ORDER BY e.id LIMIT ?) AS p"
    rows = database.execute_sql(
        " UNION ALL ".join([part] * len(owners)) + " ORDER BY id LIMIT ?",
        [*(value for owner_id, after in owners for value in (owner_id, after, limit)),
         limit]).fetchall()
    others = [row for row in rows if row[3] != reader_id]
    visible = shared_among(reader_id, list({id_ for row in others for id_ in (row[4], row[8])
                                            if id_ is not None})) if others else set()
    shared = shared_folder_id(reader_id)
    place, found = dict(cursors), []
    for row in rows:
        place[row[3]] = row[0]
        if row[3] == reader_id:
            found.append((_event(row), dict(place)))
        elif row[4] in visible:
            found.append((_event(row, row[8] if row[8] in visible else shared), dict(place)))
    return Read(found, place, len(rows) == limit)


def starting_places(reader_id: str, given: Cursors) -> Cursors:
    """`given` for the owners who share something with the reader now, and where to start for
    those it lacks (from their first grant or membership on); owners who no longer share are
    dropped. The reader's own place is kept as given."""
    starts = sharer_starts(reader_id)
    return {reader_id: given[reader_id],
            **{owner_id: given.get(owner_id, start) for owner_id, start in starts.items()}}


# A place as text: the reader's own event id, then up to MAX_SHARERS `<owner id>:<event id>`.
PLACE = re.compile(r"[0-9]{1,18}(?: [0-9A-Za-z-]{1,64}:[0-9]{1,18}){0,"
                   f"{MAX_SHARERS}" r"}\Z")


def place_text(reader_id: str, cursors: Cursors) -> str:
    return " ".join([str(cursors[reader_id]), *(f"{owner_id}:{after}" for owner_id, after in
                                                sorted(cursors.items()) if owner_id != reader_id)])


def parse_place(reader_id: str, text: str) -> Cursors | None:
    """The place `place_text` wrote, or None when `text` is not one."""
    if not PLACE.match(text):
        return None
    own, *others = text.split(" ")
    cursors = {owner_id: int(after) for owner_id, after in
               (other.rsplit(":", 1) for other in others)}
    cursors[reader_id] = int(own)
    return cursors


def _event(row: tuple, parent_shown: str | None = None) -> FeedEvent:
    """The event of a row of SELECT; `parent_shown`: the parent its reader sees, if not the
    node's own."""
    event_id, action, at, owner_id, node_id, details, kind, title, parent_id = row
    kind_type = TYPES.get(action, action)
    body = {"id": str(event_id), "type": kind_type, "at": iso(at), "user_id": owner_id,
            "node": {"id": node_id, "type": KIND_TYPES.get(kind, kind), "title": title,
                     "parent_id": parent_shown or parent_id},
            "details": {**json.loads(details), "action": action}}
    return FeedEvent(event_id, kind_type, encode(body))


def delivery_id(webhook_id: str, event_id: int) -> str:
    return str(uuid.uuid5(DELIVERY_NAMESPACE, f"{webhook_id}/{event_id}"))


def ping(webhook_id: str, owner_id: str) -> tuple[str, bytes]:
    """A `ping` (POST /webhooks/{id}/test/): its delivery id, also its body's id, and its body."""
    ping_id = str(uuid.uuid4())
    body = {"id": ping_id, "type": PING, "at": iso(utcnow().strftime(STORED_DATETIME)),
            "user_id": owner_id, "node": None, "details": {"webhook_id": webhook_id}}
    return ping_id, encode(body)
