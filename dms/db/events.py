"""The event log: every change of a node, written by the change's own write transaction (never
a change without its event, nor an event without its change), read as a node's history (GET
/nodes/{id}/history/) and, by id order, by what follows the log (webhooks and the event stream).

Here, at the bottom, so that every layer that changes nodes can write it in its transaction: the
domain (created, renamed, moved, ...) and processing (processed). The vocabulary is api.md §12's.
`details` are small: titles and ids, never a document's text or a secret; bounded (DETAIL_LIMIT).
"""

from __future__ import annotations

import json

from dms.db.engine import database
from dms.db.models import STORED_DATETIME, utcnow

CREATED, UPLOADED, IMPORTED, RENAMED, MOVED = "created", "uploaded", "imported", "renamed", "moved"
TAGGED, UNTAGGED, PAGES_CHANGED, PROCESSED = "tagged", "untagged", "pages_changed", "processed"
DELETED, RESTORED, VERSION_RESTORED = "deleted", "restored", "version_restored"
RULE_APPLIED = "rule_applied"
ACTIONS = (CREATED, UPLOADED, IMPORTED, RENAMED, MOVED, TAGGED, UNTAGGED, PAGES_CHANGED,
           PROCESSED, DELETED, RESTORED, VERSION_RESTORED, RULE_APPLIED)
DETAIL_LIMIT = 4096  # bytes of JSON: details name things, they do not carry them
LIST_LIMIT = 10

INSERT = ("INSERT INTO event (owner_id, node_id, actor_id, action, details, at) "
          "VALUES (?, ?, ?, ?, ?, ?)")


def record(owner_id: str, node_id: str, action: str, actor_id: str | None = None,
           **details) -> None:
    """Append one event; call it inside the write transaction of the change it records."""
    database.execute_sql(INSERT, (owner_id, node_id, actor_id, action, encode(details),
                                  _now()))


def record_many(rows: list[tuple[str, str, str, str | None, dict]]) -> None:
    """Append (owner_id, node_id, action, actor_id, details) events of one change, in order."""
    now = _now()
    for owner_id, node_id, action, actor_id, details in rows:
        database.execute_sql(INSERT, (owner_id, node_id, actor_id, action, encode(details), now))


def record_for_each(owner_id: str, node_ids_sql: str, params: tuple, action: str,
                    actor_id: str | None = None, **details) -> int:
    """Append the same event for every node that `node_ids_sql` selects (a query of one column
    named `node_id`), in node id order, in one INSERT ... SELECT inside the caller's write
    transaction: a change of any number of nodes at once (a tag deleted from every node it
    labels) writes its events without the ids ever travelling through Python. The number written."""
    cursor = database.execute_sql(
        "INSERT INTO event (owner_id, node_id, actor_id, action, details, at) "
        f"SELECT ?, chosen.node_id, ?, ?, ?, ? FROM ({node_ids_sql}) AS chosen "
        "ORDER BY chosen.node_id",
        (owner_id, actor_id, action, encode(details), _now(), *params))
    return cursor.rowcount


def encode(details: dict) -> str:
    """Compact JSON; past DETAIL_LIMIT (a hundred long tag names at once), lists are cut to their
    first LIST_LIMIT items with the number of all, so that recording never fails a change."""
    text = _json(details)
    if len(text.encode("utf-8")) > DETAIL_LIMIT:
        cut = {key: ({"first": value[:LIST_LIMIT], "count": len(value)}
                     if isinstance(value, list) else value) for key, value in details.items()}
        text = _json(cut)
    return text


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _now() -> str:
    return utcnow().strftime(STORED_DATETIME)
