"""The one question of sharing (api.md §21): what may this user do to this node?

A node's owner may do everything (`owner`). Anyone else has the highest role of the grants on the
node and on every folder above it that name them, directly or through a group they are in
(`editor` above `viewer`), or none: then the node is unknown to them (404), as every node not
theirs was before sharing. A node in the trash has no role for anyone here (the trash's own routes
are its owner's). The answer costs two queries however deep the node: its row, then one walk up
the tree joined with the grants (UNION: it ends on a loop a corrupt tree might hold).

`reach` answers a route's question (404, or 403 with a sentence); `changing` is the write
transaction of a change, in the owner's scope, the question asked again inside it. For search,
`sharers` (whose documents to look through) and `shared_among` (which hits a grant covers).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from dms.db import database, owner_scope, write_transaction
from dms.db.models import Node, User, columns_of, from_row
from dms.errors import Forbidden, NotFound

OWNER, EDITOR, VIEWER = "owner", "editor", "viewer"
ROLES = (VIEWER, EDITOR)  # what a grant gives
RANK = {VIEWER: 1, EDITOR: 2, OWNER: 3}

# Raw SQL made a model directly: every request about a node reads it (dms.db.models.from_row).
NODE_COLUMNS = columns_of(Node)
LIVE_NODE = f"SELECT {', '.join(NODE_COLUMNS)} FROM node WHERE id = ? AND trash_id IS NULL"
# The grants that name a user, directly or through a group they are in (two parameters: the
# user's id twice).
TO_USER = "(g.user_id = ? OR g.group_id IN (SELECT group_id FROM group_member WHERE user_id = ?))"
# The grants on the node and above it that name the user: where each is, and its role.
GRANTED_ROLES = f"""
    WITH RECURSIVE up(id) AS (
        SELECT id FROM node WHERE id = ?
        UNION
        SELECT n.parent_id FROM node AS n JOIN up ON n.id = up.id WHERE n.parent_id IS NOT NULL
    )
    SELECT g.node_id, g.role FROM node_grant AS g JOIN up ON g.node_id = up.id WHERE {TO_USER}"""


class Reached(NamedTuple):
    """A live node and the caller's role on it; `grants`: where the grants that give it are and
    their roles (empty for the owner)."""
    node: Node
    role: str
    grants: tuple[tuple[str, str], ...] = ()

    @property
    def inside(self) -> bool:
        """Whether the caller may edit the folder above the node too: its owner, or an editor by
        a grant on a folder above it. A grant's own node (the shared root) is not inside: an
        editor may not move it out nor delete it."""
        return self.role == OWNER or any(
            RANK[role] >= RANK[EDITOR] and where != self.node.id for where, role in self.grants)


def role_of(user: User, node_id: object) -> Reached | None:
    """The live node `node_id` and what `user` may do to it, or None when it is not theirs,
    not shared with them, or gone."""
    node = live_node(node_id)
    if node is None:
        return None
    if node.owner_id == user.id:
        return Reached(node, OWNER)
    granted = tuple((where, role) for where, role in database.execute_sql(
        GRANTED_ROLES, (node.id, user.id, user.id)))
    if not granted:
        return None
    return Reached(node, max((role for _, role in granted), key=RANK.__getitem__), granted)


def live_node(node_id: object) -> Node | None:
    """The node `node_id` unless it is in the trash or does not exist, whoever owns it."""
    if not isinstance(node_id, str):
        return None
    row = database.execute_sql(LIVE_NODE, (node_id,)).fetchone()
    return from_row(Node, NODE_COLUMNS, row) if row is not None else None


def reach(user: User, node_id: object, need: str = VIEWER, kind: str | None = None,
          refusal: str = "") -> Reached:
    """The node and the caller's role, when that role is at least `need`: 404 if the node is not
    theirs nor shared with them (or not of `kind`), 403 with `refusal` if shared with a lesser
    role."""
    reached = role_of(user, node_id)
    if reached is None or (kind is not None and reached.node.kind != kind):
        raise NotFound()
    if RANK[reached.role] < RANK[need]:
        raise Forbidden(refusal or _refusal(reached.role, need))
    return reached


@contextmanager
def changing(user: User, node_id: object, kind: str | None = None, need: str = EDITOR,
             refusal: str = "", *scopes: str) -> Iterator[Reached]:
    """The write transaction of a change to the node `node_id`, in its owner's write scope (and
    `scopes`): the node and the caller's role, read again inside it (a grant taken back
    meanwhile counts). A node never changes owner, so the scope learnt before is the right one."""
    owner_id = reach(user, node_id, need, kind, refusal).node.owner_id
    with write_transaction(owner_scope(owner_id), *scopes):
        yield reach(user, node_id, need, kind, refusal)


def _refusal(role: str, need: str) -> str:
    if need == OWNER:
        return "Only its owner may do this; it is shared with you."
    return "It is shared with you to read; changing it needs the editor role."


IDS_PER_WALK = 500  # nodes one walk up starts from
MAX_SHARERS = 50  # owners whose shared documents one search looks through (api.md §21)


def sharers(user: User) -> list[str]:
    """The owners of what is shared with the user (not the user), at most MAX_SHARERS."""
    return [owner for (owner,) in database.execute_sql(
        f"SELECT DISTINCT n.owner_id FROM node_grant AS g JOIN node AS n ON n.id = g.node_id "
        f"WHERE {TO_USER} AND n.owner_id <> ? ORDER BY n.owner_id LIMIT ?",
        (user.id, user.id, user.id, MAX_SHARERS))]


def shared_among(user_id: str, node_ids: list[str], need: str = VIEWER) -> set[str]:
    """Those of `node_ids` that a grant to the user covers now (on them or on a folder above),
    with at least the role `need`: one walk up from IDS_PER_WALK of them at once (UNION: it
    ends on a loop), bounded by their number and the tree's depth."""
    found: set[str] = set()
    for start in range(0, len(node_ids), IDS_PER_WALK):
        found |= _shared_among(user_id, node_ids[start:start + IDS_PER_WALK], need)
    return found


def _shared_among(user_id: str, node_ids: list[str], need: str) -> set[str]:
    if not node_ids:
        return set()
    marks = ",".join("?" * len(node_ids))
    roles = [role for role in ROLES if RANK[role] >= RANK[need]]
    return {start for (start,) in database.execute_sql(f"""
        WITH RECURSIVE up(start, id) AS (
            SELECT id, id FROM node WHERE id IN ({marks})
            UNION
            SELECT up.start, n.parent_id FROM node AS n JOIN up ON n.id = up.id
            WHERE n.parent_id IS NOT NULL
        )
        SELECT DISTINCT up.start FROM up JOIN node_grant AS g ON g.node_id = up.id
        WHERE {TO_USER} AND g.role IN ({','.join('?' * len(roles))})""",
        (*node_ids, user_id, user_id, *roles))}
