"""Where a webhook's delivery stands (dms.notify.deliverer): its row — the event of its owner's
after `last_event_id` is the one waiting, with its tries — and its place in the events of each
owner who shares something with its owner (`webhook_cursor`, dms.notify.feed), read together as
a `Hook` and moved on together, in the write transaction of the deliverer's update."""

from __future__ import annotations

import dataclasses
import json

from dms.db import database
from dms.notify import feed


@dataclasses.dataclass(frozen=True)
class Hook:
    """What a turn needs of a webhook row and its owner."""
    id: str
    owner_id: str
    url: str
    events: frozenset[str]
    secret: str  # sealed
    last_event_id: int
    cursors: feed.Cursors  # its place: last_event_id as its owner's, then the other owners'
    stored: feed.Cursors  # its webhook_cursor rows as they are
    attempts: int
    retry_since: float | None
    next_attempt_at: float
    failures_in_a_row: int
    superuser: bool


HELD = ('SELECT w.id, w.owner_id, w.url, w.events, w.secret, w.last_event_id, w.attempts, '
        'w.retry_since, w.next_attempt_at, w.failures_in_a_row, u.is_superuser FROM webhook AS w '
        'JOIN "user" AS u ON u.id = w.owner_id '
        'WHERE w.id = ? AND w.enabled = ? AND u.is_active = ? AND w.lease_holder = ?')


def held(webhook_id: str, holder: str) -> Hook | None:
    """The webhook if `holder` holds it (and it and its owner are enabled and active), with its
    place: its rows for the owners who share with its owner now (and where to start for one it
    has none for yet)."""
    row = database.execute_sql(HELD, (webhook_id, True, True, holder)).fetchone()
    if row is None:
        return None
    kept = dict(database.execute_sql("SELECT owner_id, last_event_id FROM webhook_cursor "
                                     "WHERE webhook_id = ?", (webhook_id,)).fetchall())
    cursors = feed.starting_places(row[1], {**kept, row[1]: row[5]})
    return Hook(row[0], row[1], row[2], frozenset(json.loads(row[3])), row[4], row[5],
                cursors, kept, *row[6:10], bool(row[10]))


def move(hook: Hook, place: feed.Cursors) -> None:
    """The webhook's rows of other owners as `place` has them: those of owners who no longer
    share with its owner go."""
    gone = [owner_id for owner_id in hook.stored if owner_id not in place]
    if gone:
        database.execute_sql(f"DELETE FROM webhook_cursor WHERE webhook_id = ? AND owner_id IN "
                             f"({','.join('?' * len(gone))})", (hook.id, *gone))
    for owner_id, after in others(hook, place).items():
        if hook.stored.get(owner_id) != after:
            database.execute_sql(
                "INSERT INTO webhook_cursor (webhook_id, owner_id, last_event_id) VALUES (?, ?, ?) "
                "ON CONFLICT (webhook_id, owner_id) DO UPDATE SET last_event_id = "
                "excluded.last_event_id", (hook.id, owner_id, after))


def others(hook: Hook, place: feed.Cursors) -> feed.Cursors:
    """The place in other owners' events (the owner's own is `last_event_id`)."""
    return {owner_id: after for owner_id, after in place.items() if owner_id != hook.owner_id}
