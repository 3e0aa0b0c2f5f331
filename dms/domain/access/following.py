"""Whose events reach a user (api.md §21: "events and webhooks reach everyone with access to the
node"): their own, and those of each owner who shares something with them, for the nodes a grant
covers when the event is read (a revocation takes effect at once; a node moved out of the shared
folder drops out with it).

One owner's events commit in the order of their ids, events of different owners do not (each
owner's changes have their own write scope), so a reader keeps one position per owner. Where it
starts in the events of an owner it meets for the first time is the grant's or the group
membership's `since` (migration 0026): the grant's own `access_granted` event is the first the
grantee can receive. A webhook keeps its positions in other owners' events as rows
(`webhook_cursor`), made here when a grant or a membership begins, so that the deliverer sees at
once that there is something to deliver.
"""

from __future__ import annotations

from dms.db import database
from dms.domain.access.rule import MAX_SHARERS

# The owners who share something with a user (at most MAX_SHARERS, as search reads), each with
# the event id after which the first thing shared can show (the earliest grant's since, or the
# membership's when it began later than the grant).
STARTS = f"""
    SELECT owner_id, min(since) FROM (
        SELECT n.owner_id AS owner_id, g.since AS since FROM node_grant AS g
        JOIN node AS n ON n.id = g.node_id WHERE g.user_id = ?
        UNION ALL
        SELECT n.owner_id, CASE WHEN m.since > g.since THEN m.since ELSE g.since END
        FROM group_member AS m JOIN node_grant AS g ON g.group_id = m.group_id
        JOIN node AS n ON n.id = g.node_id WHERE m.user_id = ?
    ) AS shared WHERE owner_id <> ? GROUP BY owner_id ORDER BY owner_id LIMIT {MAX_SHARERS}"""


def sharer_starts(user_id: str) -> dict[str, int]:
    """{owner id: the event id to read their events after} for each owner who shares something
    with the user, at most MAX_SHARERS."""
    return dict(database.execute_sql(STARTS, (user_id, user_id, user_id)).fetchall())


def newest_event(owner_id: str) -> int:
    """The owner's newest event (0 for none). In the owner's write scope, every event of the
    owner still to commit will have a larger id."""
    return int(database.execute_sql("SELECT coalesce(max(id), 0) FROM event WHERE owner_id = ?",
                                    (owner_id,)).fetchone()[0])


def newest_event_of_anyone() -> int:
    return int(database.execute_sql("SELECT coalesce(max(id), 0) FROM event").fetchone()[0])


# A webhook's position in an owner's events, unless it has one (then that one is behind or at
# this start: it was made from an earlier start of the same owner's).
FOLLOW = ("INSERT INTO webhook_cursor (webhook_id, owner_id, last_event_id) "
          "SELECT DISTINCT w.id, {owner}, ? FROM webhook AS w {join} WHERE {which} "
          "ON CONFLICT (webhook_id, owner_id) DO NOTHING")


def follow_grant(owner_id: str, since: int, user: str | None = None,
                 group: str | None = None) -> None:
    """In the grant's write transaction: the webhooks of the grantee (the user, or each member
    of the group) follow the owner's events after `since`."""
    which = "w.owner_id = ?" if user is not None else \
        "w.owner_id IN (SELECT m.user_id FROM group_member AS m WHERE m.group_id = ?)"
    database.execute_sql(FOLLOW.format(owner="?", join="", which=f"{which} AND w.owner_id <> ?"),
                         (owner_id, since, user or group, owner_id))


def follow_membership(group_id: str, user_ids: list[str], since: int) -> None:
    """In the membership's write transaction: the new members' webhooks follow the owners who
    share something with the group, after `since`."""
    if user_ids:
        database.execute_sql(FOLLOW.format(
            owner="n.owner_id", join="JOIN node_grant AS g ON g.group_id = ? "
                                     "JOIN node AS n ON n.id = g.node_id",
            which=f"w.owner_id IN ({','.join('?' * len(user_ids))}) "
                  "AND n.owner_id <> w.owner_id"), (since, group_id, *user_ids))


def follow_sharers_from_now(webhook_id: str, user_id: str) -> None:
    """A webhook made or enabled again: it follows each owner who shares something with its
    owner from their newest event on (what happened before it was made is not sent)."""
    database.execute_sql("DELETE FROM webhook_cursor WHERE webhook_id = ?", (webhook_id,))
    for owner_id in sharer_starts(user_id):
        database.execute_sql("INSERT INTO webhook_cursor (webhook_id, owner_id, last_event_id) "
                             "VALUES (?, ?, ?)", (webhook_id, owner_id, newest_event(owner_id)))


def sharers_of(user_ids: list[str]) -> dict[str, set[str]]:
    """{user id: the owners who share something with them} for these users at once (what the
    event stream's watch looks at; each set may hold more than MAX_SHARERS, the watch only
    wakes)."""
    found: dict[str, set[str]] = {user_id: set() for user_id in user_ids}
    if user_ids:
        marks = ",".join("?" * len(user_ids))
        for user_id, owner_id in database.execute_sql(
                "SELECT g.user_id, n.owner_id FROM node_grant AS g JOIN node AS n "
                f"ON n.id = g.node_id WHERE g.user_id IN ({marks}) AND n.owner_id <> g.user_id "
                "UNION SELECT m.user_id, n.owner_id FROM group_member AS m JOIN node_grant AS g "
                "ON g.group_id = m.group_id JOIN node AS n ON n.id = g.node_id "
                f"WHERE m.user_id IN ({marks}) AND n.owner_id <> m.user_id",
                (*user_ids, *user_ids)):
            found[user_id].add(owner_id)
    return found
