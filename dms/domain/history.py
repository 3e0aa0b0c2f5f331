"""A node's history (api.md, "History"): its events, newest first, with who did what (the actor: the
user, or None where dms itself acted — processing, the consume folder, mail), read from the one
event log (dms.db.events). A node in the trash has its history too; another user's node has
none (404, as if it did not exist)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, NamedTuple, cast

from dms.db import database
from dms.db.models import Node, User
from dms.domain.access.rule import reach


class EventRow(NamedTuple):
    id: int
    at: str
    action: str
    details: dict[str, Any]
    actor_id: str | None
    actor_username: str | None


class History:
    """The events of one node, newest first, a page at a time."""

    def __init__(self, node_id: str):
        self.node_id = node_id

    def count(self) -> int:
        return cast(int, database.execute_sql("SELECT count(*) FROM event WHERE node_id = ?",
                                              (self.node_id,)).fetchone()[0])

    def fetch(self, offset: int, limit: int) -> list[EventRow]:
        rows = database.execute_sql(
            'SELECT e.id, e.at, e.action, e.details, e.actor_id, u.username FROM event AS e '
            'LEFT JOIN "user" AS u ON u.id = e.actor_id WHERE e.node_id = ? '
            "ORDER BY e.id DESC LIMIT ? OFFSET ?", (self.node_id, limit, offset)).fetchall()
        return [EventRow(id_, at, action, json.loads(details), actor_id, username)
                for id_, at, action, details, actor_id, username in rows]


def history_of(user: User, node_id: str) -> History:
    """GET /nodes/{id}/history/: the caller's node, live or in the trash, or a live node shared
    with them."""
    owned = database.execute_sql("SELECT 1 FROM node WHERE id = ? AND owner_id = ?",
                                 (node_id, user.id)).fetchone()
    if owned is None:
        reach(user, node_id)
    return History(node_id)


def created_at(row: EventRow) -> dt.datetime | None:
    """The event's time as a datetime (stored as fixed-width UTC text)."""
    return Node.created_at.python_value(row.at)
