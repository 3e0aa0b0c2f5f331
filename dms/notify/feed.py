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
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from dms.db import database
from dms.db.events import TYPES
from dms.db.models import STORED_DATETIME, utcnow

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
    SELECT e.id, e.action, e.at, e.owner_id, e.node_id, e.details,
           coalesce(e.node_kind, n.kind), coalesce(e.node_title, n.title),
           CASE WHEN e.node_kind IS NULL THEN n.parent_id ELSE e.parent_id END
    FROM event AS e LEFT JOIN node AS n ON n.id = e.node_id AND e.node_kind IS NULL"""


def events_after(owner_id: str, after: int, limit: int = BATCH) -> list[FeedEvent]:
    """The owner's events with ids above `after`, oldest first, at most `limit`."""
    rows = database.execute_sql(f"{SELECT} WHERE e.owner_id = ? AND e.id > ? ORDER BY e.id "
                                "LIMIT ?", (owner_id, after, limit)).fetchall()
    return [_event(row) for row in rows]


def _event(row: tuple) -> FeedEvent:
    event_id, action, at, owner_id, node_id, details, kind, title, parent_id = row
    kind_type = TYPES.get(action, action)
    body = {"id": str(event_id), "type": kind_type, "at": iso(at), "user_id": owner_id,
            "node": {"id": node_id, "type": KIND_TYPES.get(kind, kind), "title": title,
                     "parent_id": parent_id},
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
