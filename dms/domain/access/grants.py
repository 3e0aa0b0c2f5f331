"""Grants (api.md §21, "Access to a node"): a node's owner (or a superuser) shares a folder or a
document with a user or a group, as a viewer or an editor, and takes it back. A folder's grant
covers everything below it, now and later (dms.domain.access.rule reads grants by walking up).

One grant per node and grantee: granting again changes the role. Each grant and revocation is an
event of the node (`access_granted`, `access_revoked`, with who did it), written in the same write
transaction, in the node's owner's write scope (the events' order) — a grant in USERS as well,
beside users' and groups' deletions. From the grant on, its owner's events about what it covers
reach the grantee's event streams and webhooks (dms.domain.access.following). The special folders
are not shared (sharing .home would share everything at once, .inbox what arrives tomorrow); a
grant to the owner is refused, as is one to an unknown user or group. At most MAX_GRANTS_PER_NODE
grants on one node. Every route honours them through dms.domain.access.rule."""

from __future__ import annotations

from typing import Any, NamedTuple

from dms.db import USERS, database, events, owner_scope, write_transaction
from dms.db.models import Group, Node, NodeGrant, User, new_id, utcnow
from dms.domain.access.following import follow_grant, newest_event
from dms.domain.access.rule import OWNER, ROLES, live_node, reach
from dms.errors import Invalid, NotFound

MAX_GRANTS_PER_NODE = 100
ONLY_THE_OWNER = "Only its owner (or a superuser) sees and changes who it is shared with."

# Every grant on the node and the folders above it, nearest first, with the grantee's name.
GRANTS_ABOVE = """
    WITH RECURSIVE up(id, depth) AS (
        SELECT id, 0 FROM node WHERE id = ?
        UNION
        SELECT n.parent_id, up.depth + 1 FROM node AS n JOIN up ON n.id = up.id
        WHERE n.parent_id IS NOT NULL AND up.depth < ?
    )
    SELECT g.id, g.node_id, g.user_id, u.username, g.group_id, ug.name, g.role, b.username,
           g.created_at
    FROM node_grant AS g JOIN up ON up.id = g.node_id
    LEFT JOIN "user" AS u ON u.id = g.user_id
    LEFT JOIN user_group AS ug ON ug.id = g.group_id
    LEFT JOIN "user" AS b ON b.id = g.granted_by
    ORDER BY up.depth, coalesce(u.username, ug.name), g.id"""
MAX_WALK = 100_000  # levels walked up; the tree's own depth limit is far below it


class GrantRow(NamedTuple):
    id: str
    node_id: str  # where the grant is: the node itself or a folder above it
    user_id: str | None
    username: str | None
    group_id: str | None
    group_name: str | None
    role: str
    granted_by: str | None  # a username
    created_at: str


class Access(NamedTuple):
    node: Node
    owner: User
    grants: list[GrantRow]


def access_of(actor: User, node_id: str) -> Access:
    node = _manageable(actor, node_id)
    rows = database.execute_sql(GRANTS_ABOVE, (node.id, MAX_WALK)).fetchall()
    return Access(node, User.get_by_id(node.owner_id), [GrantRow(*row) for row in rows])


def grant(actor: User, node_id: str, body: dict[str, Any]) -> tuple[GrantRow, bool]:
    """Share the node with the user or group the body names, as its role: (the grant, whether
    it is new). Everything is checked before the first write; a refusal changes nothing."""
    named_by, named, role = _parsed(body)
    owner_id = _manageable(actor, node_id).owner_id
    # USERS too: a user's or group's deletion (in that scope) never slips between the check of
    # the grantee and the insert.
    with write_transaction(owner_scope(owner_id), USERS):
        node = _manageable(actor, node_id)  # again, inside: still live, still the same owner's
        if node.owner_id != owner_id:
            raise NotFound()
        if node.special is not None:
            raise Invalid("The special folders .home and .inbox are not shared; share a folder "
                          "or document inside them.")
        grantee, grantee_id, name = _grantee(named_by, named, node)
        column = NodeGrant.user if grantee == "user" else NodeGrant.group
        existing = NodeGrant.get_or_none(NodeGrant.node == node.id, column == grantee_id)
        if existing is None:
            if NodeGrant.select().where(NodeGrant.node == node.id).count() >= \
                    MAX_GRANTS_PER_NODE:
                raise Invalid(f"A folder or document is shared with at most "
                              f"{MAX_GRANTS_PER_NODE} users and groups; take some back first.")
            grant_id, since = new_id(), newest_event(node.owner_id)
            NodeGrant.insert(id=grant_id, node=node.id, role=role, granted_by=actor.id,
                             created_at=utcnow(), since=since, **{grantee: grantee_id}).execute()
            follow_grant(node.owner_id, since, **{grantee: grantee_id})
            events.record(node.owner_id, node.id, events.ACCESS_GRANTED, actor.id,
                          **{grantee: name}, role=role)
        else:
            grant_id = existing.id
            if existing.role != role:
                NodeGrant.update(role=role).where(NodeGrant.id == grant_id).execute()
                events.record(node.owner_id, node.id, events.ACCESS_GRANTED, actor.id,
                              **{grantee: name}, role=role, was=existing.role)
    return _row(node.id, grant_id), existing is None


def revoke(actor: User, node_id: str, grant_id: str) -> None:
    owner_id = _manageable(actor, node_id).owner_id
    with write_transaction(owner_scope(owner_id)):
        node = _manageable(actor, node_id)
        found = NodeGrant.get_or_none(NodeGrant.id == grant_id, NodeGrant.node == node.id) \
            if isinstance(grant_id, str) and node.owner_id == owner_id else None
        if found is None:
            raise NotFound()
        row = _row(node.id, found.id)
        NodeGrant.delete().where(NodeGrant.id == found.id).execute()
        grantee = {"user": row.username} if row.user_id else {"group": row.group_name}
        events.record(node.owner_id, node.id, events.ACCESS_REVOKED, actor.id, **grantee,
                      role=row.role)


def _manageable(actor: User, node_id: str) -> Node:
    """The live node whose grants `actor` may see and change: theirs, or any for a superuser;
    403 for one shared with them, 404 for the rest."""
    if actor.is_superuser:
        node = live_node(node_id)
        if node is None:
            raise NotFound()
        return node
    return reach(actor, node_id, OWNER, refusal=ONLY_THE_OWNER).node


def _parsed(body: dict[str, Any]) -> tuple[str, str, str]:
    """(grantee kind, what names it, role). A user is named by id or, as a person sharing knows
    them, by username (`{"username": "bob"}`): the page's Share dialog types a name."""
    named = [key for key in ("user", "username", "group") if body.get(key) is not None]
    if len(named) != 1:
        raise Invalid("Name either a user or a group to share with: {\"user\": id}, "
                      "{\"username\": name} or {\"group\": id}.",
                      named[1] if len(named) > 1 else "user",
                      code="required" if not named else "invalid")
    grantee = named[0]
    if not isinstance(body[grantee], str):
        noun = "the name of a user" if grantee == "username" else f"the id of a {grantee}"
        raise Invalid(f"{grantee} is {noun}.", grantee)
    role = body.get("role")
    if role not in ROLES:
        raise Invalid(f"role is one of {', '.join(ROLES)}.", "role")
    return grantee, body[grantee], role


def _grantee(grantee: str, named: str, node: Node) -> tuple[str, str, str]:
    """("user" or "group", its id, its name) of the grantee the body named."""
    if grantee in ("user", "username"):
        user = User.get_or_none(User.id == named if grantee == "user" else
                                User.username == named)
        if user is None:
            noun = "id" if grantee == "user" else "name"
            raise Invalid(f"There is no user with the {noun} {named[:60]!r}.", grantee)
        if user.id == node.owner_id:
            raise Invalid("That is its owner, who may do everything with it already.", grantee)
        return "user", str(user.id), str(user.username)
    group = Group.get_or_none(Group.id == named)
    if group is None:
        raise Invalid(f"There is no group with the id {named[:60]!r}.", "group")
    return "group", str(group.id), str(group.name)


def _row(node_id: str, grant_id: str) -> GrantRow:
    return next(row for row in (GrantRow(*values) for values in database.execute_sql(
        GRANTS_ABOVE, (node_id, 0)).fetchall()) if row.id == grant_id)
