"""The event log: every change of a node, written by the change's own write transaction (never
a change without its event, nor an event without its change), read as a node's history (GET
/nodes/{id}/history/) and, by id order, by what follows the log (webhooks and the event stream).

Here, at the bottom, so that every layer that changes nodes can write it in its transaction: the
domain (created, renamed, moved, ...) and processing (processed). The vocabulary is the
history's (api.md, "History").
`details` are small: titles and ids, never a document's text or a secret; bounded (DETAIL_LIMIT).

Each event also keeps the node as the change left it (its kind, title and parent, migration
0016), so that what webhooks and the event stream send of an event is the same whenever it is
read. Writing an event needs its owner's write scope (dms.db.transactions): with it, one owner's
events commit in the order of their ids, which is what lets a reader resume after an id without
ever skipping one. TYPES maps the history's actions to the event types of webhooks and the event
stream (api.md, "Webhooks and the event stream").
"""

from __future__ import annotations

import json
from typing import Any

from dms.db.engine import database
from dms.db.models import STORED_DATETIME, utcnow
from dms.db.transactions import holds_scope, owner_scope

CREATED, UPLOADED, IMPORTED, RENAMED, MOVED = "created", "uploaded", "imported", "renamed", "moved"
TAGGED, UNTAGGED, PAGES_CHANGED, PROCESSED = "tagged", "untagged", "pages_changed", "processed"
DELETED, RESTORED, VERSION_RESTORED = "deleted", "restored", "version_restored"
RULE_APPLIED, METADATA_CHANGED = "rule_applied", "metadata_changed"
ACCESS_GRANTED, ACCESS_REVOKED = "access_granted", "access_revoked"
SHARE_CREATED, SHARE_REVOKED, SHARE_ACCESSED = "share_created", "share_revoked", "share_accessed"
ACTIONS = (CREATED, UPLOADED, IMPORTED, RENAMED, MOVED, TAGGED, UNTAGGED, PAGES_CHANGED,
           PROCESSED, DELETED, RESTORED, VERSION_RESTORED, RULE_APPLIED, METADATA_CHANGED,
           ACCESS_GRANTED, ACCESS_REVOKED, SHARE_CREATED, SHARE_REVOKED, SHARE_ACCESSED)
DETAIL_LIMIT = 4096  # bytes of JSON: details name things, they do not carry them
LIST_LIMIT = 10

# The event types of webhooks and the event stream (api.md, "Events"): the history's actions in one
# vocabulary. A document made from a file in one step (an import, the consume folder, mail, a
# legacy upload) is `node.created` (details.source says from where); a version made the latest
# again is `document.uploaded`; tags put on and taken off are both `node.tagged`. What the
# history calls it stays in details.action.
TYPES = {
    CREATED: "node.created", IMPORTED: "node.created", UPLOADED: "document.uploaded",
    VERSION_RESTORED: "document.uploaded", PROCESSED: "document.processed",
    RENAMED: "node.renamed", MOVED: "node.moved", TAGGED: "node.tagged", UNTAGGED: "node.tagged",
    DELETED: "node.deleted", RESTORED: "node.restored", PAGES_CHANGED: "document.pages_changed",
    RULE_APPLIED: "rule.applied", METADATA_CHANGED: "document.updated",
    ACCESS_GRANTED: "node.access_changed", ACCESS_REVOKED: "node.access_changed",
    SHARE_CREATED: "share.changed", SHARE_REVOKED: "share.changed",
    SHARE_ACCESSED: "share.accessed",
}
EVENT_TYPES = tuple(dict.fromkeys(TYPES.values()))

# The node's kind, title and parent as the change left them, read in the same statement.
INSERT = ("INSERT INTO event (owner_id, node_id, actor_id, action, details, at, node_kind, "
          "node_title, parent_id) SELECT ?, id, ?, ?, ?, ?, kind, title, parent_id FROM node "
          "WHERE id = ?")


class OutsideOwnerScope(RuntimeError):
    """An event written without its owner's write scope (a bug: see the module docstring)."""


def record(owner_id: str, node_id: str, action: str, actor_id: str | None = None,
           **details: Any) -> None:
    """Append one event; call it inside the write transaction of the change it records, which
    holds owner_scope(owner_id)."""
    _check_scope(owner_id)
    database.execute_sql(INSERT, (owner_id, actor_id, action, encode(details), _now(), node_id))


def record_many(rows: list[tuple[str, str, str, str | None, dict[str, Any]]]) -> None:
    """Append (owner_id, node_id, action, actor_id, details) events of one change, in order."""
    now = _now()
    for owner_id, node_id, action, actor_id, details in rows:
        _check_scope(owner_id)
        database.execute_sql(INSERT, (owner_id, actor_id, action, encode(details), now, node_id))


def _check_scope(owner_id: str) -> None:
    if not holds_scope(owner_scope(owner_id)):
        raise OutsideOwnerScope(f"an event of user {owner_id} was written outside that user's "
                                "write scope (write_transaction(owner_scope(...)))")


def record_for_each(owner_id: str, node_ids_sql: str, params: tuple[Any, ...], action: str,
                    actor_id: str | None = None, **details: Any) -> int:
    """Append the same event for every node that `node_ids_sql` selects (a query of one column
    named `node_id`), in node id order, in one INSERT ... SELECT inside the caller's write
    transaction: a change of any number of nodes at once (a tag deleted from every node it
    labels) writes its events without the ids ever travelling through Python. The number written.
    Each keeps its node's kind, title and parent, as `record` does."""
    _check_scope(owner_id)
    cursor = database.execute_sql(
        "INSERT INTO event (owner_id, node_id, actor_id, action, details, at, node_kind, "
        "node_title, parent_id) "
        f"SELECT ?, n.id, ?, ?, ?, ?, n.kind, n.title, n.parent_id FROM ({node_ids_sql}) AS chosen "
        "JOIN node AS n ON n.id = chosen.node_id ORDER BY chosen.node_id",
        (owner_id, actor_id, action, encode(details), _now(), *params))
    rowcount: int = cursor.rowcount
    return rowcount


def encode(details: dict[str, Any]) -> str:
    """Compact JSON; past DETAIL_LIMIT (a hundred long tag names at once), lists are cut to their
    first LIST_LIMIT items with the number of all, so that recording never fails a change."""
    text = _json(details)
    if len(text.encode("utf-8")) > DETAIL_LIMIT:
        cut = {key: ({"first": value[:LIST_LIMIT], "count": len(value)}
                     if isinstance(value, list) else value) for key, value in details.items()}
        text = _json(cut)
    return text


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _now() -> str:
    return utcnow().strftime(STORED_DATETIME)
