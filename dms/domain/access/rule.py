"""The one question of sharing (api.md §21): what may this user do to this node?

A node's owner may do everything (`owner`). Anyone else has the highest role of the grants on the
node and on every folder above it that name them, directly or through a group they are in
(`editor` above `viewer`), or none: then the node is unknown to them (404), as every node not
theirs was before sharing. A node in the trash has no role for anyone here (the trash's own routes
are its owner's). The answer costs two queries however deep the node: its row, then one walk up
the tree joined with the grants (UNION: it ends on a loop a corrupt tree might hold).
"""

from __future__ import annotations

from typing import NamedTuple

from dms.db import database
from dms.db.models import Node, User, from_row
from dms.domain.tree import NODE_COLUMNS
from dms.errors import Forbidden, NotFound

OWNER, EDITOR, VIEWER = "owner", "editor", "viewer"
ROLES = (VIEWER, EDITOR)  # what a grant gives
RANK = {VIEWER: 1, EDITOR: 2, OWNER: 3}

LIVE_NODE = f"SELECT {', '.join(NODE_COLUMNS)} FROM node WHERE id = ? AND trash_id IS NULL"
# The roles the grants on the node and above it give `user` (directly or through a group).
GRANTED_ROLES = """
    WITH RECURSIVE up(id) AS (
        SELECT id FROM node WHERE id = ?
        UNION
        SELECT n.parent_id FROM node AS n JOIN up ON n.id = up.id WHERE n.parent_id IS NOT NULL
    )
    SELECT DISTINCT g.role FROM node_grant AS g JOIN up ON g.node_id = up.id
    WHERE g.user_id = ? OR g.group_id IN (SELECT group_id FROM group_member WHERE user_id = ?)"""


class Reached(NamedTuple):
    """A live node and the caller's role on it."""
    node: Node
    role: str


def role_of(user: User, node_id: object) -> Reached | None:
    """The live node `node_id` and what `user` may do to it, or None when it is not theirs,
    not shared with them, or gone."""
    node = live_node(node_id)
    if node is None:
        return None
    if node.owner_id == user.id:
        return Reached(node, OWNER)
    granted = [role for (role,) in database.execute_sql(GRANTED_ROLES,
                                                        (node.id, user.id, user.id))]
    if not granted:
        return None
    return Reached(node, max(granted, key=RANK.__getitem__))


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


def _refusal(role: str, need: str) -> str:
    if need == OWNER:
        return "Only its owner may do this; it is shared with you."
    return "It is shared with you to read; changing it needs the editor role."
