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
from dms.domain.access.rule import OWNER, RANK, ROLES, live_node, reach
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
# The same for many nodes at once: (the node, the grant's user, group and role).
COVERING = """
    WITH RECURSIVE up(start, id, depth) AS (
        SELECT id, id, 0 FROM node WHERE id IN ({marks})
        UNION
        SELECT up.start, n.parent_id, up.depth + 1 FROM node AS n JOIN up ON n.id = up.id
        WHERE n.parent_id IS NOT NULL AND up.depth < ?
    )
    SELECT up.start, g.user_id, g.group_id, g.role
    FROM node_grant AS g JOIN up ON up.id = g.node_id"""
IDS_PER_QUERY = 500
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
        node = _shareable(actor, node_id, owner_id)
        grantee, grantee_id, name = _grantee(named_by, named, node)
        grant_id, new = _put(actor, node, grantee, grantee_id, name, role)
    return _row(node.id, grant_id), new


def set_grants(actor: User, node_id: str, wanted: dict[tuple[str, str], str],
               merge: bool) -> None:
    """The node's own grants become `wanted` ({("user" or "group", id): role}) in one write
    transaction: missing ones granted, others' roles changed, and (unless `merge`, which only
    adds and raises) the rest revoked. The owner among them is passed over (they may do
    everything already); grants on folders above stay (they are the folder's). Each change is
    an event as a grant or revocation of its own is."""
    owner_id = _manageable(actor, node_id).owner_id
    if len(wanted) > MAX_GRANTS_PER_NODE:
        raise Invalid(f"A folder or document is shared with at most {MAX_GRANTS_PER_NODE} "
                      "users and groups.")
    with write_transaction(owner_scope(owner_id), USERS):
        node = _shareable(actor, node_id, owner_id)
        own = [GrantRow(*values) for values in
               database.execute_sql(GRANTS_ABOVE, (node.id, 0)).fetchall()]
        existing = {("user", row.user_id) if row.user_id else ("group", str(row.group_id)): row
                    for row in own}
        named = [(_grantee(kind, grantee_id, node, owner_passes=True), role)
                 for (kind, grantee_id), role in wanted.items()]
        if not merge:
            kept = {(kind, grantee_id) for (kind, grantee_id, _), _ in named}
            for key, row in existing.items():
                if key not in kept:
                    _remove(actor, node, row)
        for (kind, grantee_id, name), role in named:
            if not grantee_id:
                continue  # the owner
            had = existing.get((kind, grantee_id))
            if merge and had is not None and RANK[had.role] >= RANK[role]:
                continue
            _put(actor, node, kind, grantee_id, name, role)


def _shareable(actor: User, node_id: str, owner_id: str) -> Node:
    """Inside the write transaction: the node is still live, still the same owner's, and may be
    shared."""
    node = _manageable(actor, node_id)
    if node.owner_id != owner_id:
        raise NotFound()
    if node.special is not None:
        raise Invalid("The special folders .home and .inbox are not shared; share a folder "
                      "or document inside them.")
    return node


def _put(actor: User, node: Node, grantee: str, grantee_id: str, name: str,
         role: str) -> tuple[str, bool]:
    """The grant to this grantee made or its role changed, with its event: (its id, whether it
    is new)."""
    column = NodeGrant.user if grantee == "user" else NodeGrant.group
    existing = NodeGrant.get_or_none(NodeGrant.node == node.id, column == grantee_id)
    if existing is None:
        if NodeGrant.select().where(NodeGrant.node == node.id).count() >= MAX_GRANTS_PER_NODE:
            raise Invalid(f"A folder or document is shared with at most "
                          f"{MAX_GRANTS_PER_NODE} users and groups; take some back first.")
        grant_id, since = new_id(), newest_event(node.owner_id)
        NodeGrant.insert(id=grant_id, node=node.id, role=role, granted_by=actor.id,
                         created_at=utcnow(), since=since, **{grantee: grantee_id}).execute()
        follow_grant(node.owner_id, since, **{grantee: grantee_id})
        events.record(node.owner_id, node.id, events.ACCESS_GRANTED, actor.id,
                      **{grantee: name}, role=role)
        return grant_id, True
    if existing.role != role:
        NodeGrant.update(role=role).where(NodeGrant.id == existing.id).execute()
        events.record(node.owner_id, node.id, events.ACCESS_GRANTED, actor.id,
                      **{grantee: name}, role=role, was=existing.role)
    return existing.id, False


def revoke(actor: User, node_id: str, grant_id: str) -> None:
    owner_id = _manageable(actor, node_id).owner_id
    with write_transaction(owner_scope(owner_id)):
        node = _manageable(actor, node_id)
        found = NodeGrant.get_or_none(NodeGrant.id == grant_id, NodeGrant.node == node.id) \
            if isinstance(grant_id, str) and node.owner_id == owner_id else None
        if found is None:
            raise NotFound()
        _remove(actor, node, _row(node.id, found.id))


def _remove(actor: User, node: Node, row: GrantRow) -> None:
    NodeGrant.delete().where(NodeGrant.id == row.id).execute()
    grantee = {"user": row.username} if row.user_id else {"group": row.group_name}
    events.record(node.owner_id, node.id, events.ACCESS_REVOKED, actor.id, **grantee,
                  role=row.role)


def covering(node_ids: list[str]) -> dict[str, list[tuple[str | None, str | None, str]]]:
    """For each node, the grants on it and on the folders above it: (user id, group id, role)
    — one query per IDS_PER_QUERY nodes."""
    found: dict[str, list[tuple[str | None, str | None, str]]] = {
        node_id: [] for node_id in node_ids}
    for start in range(0, len(node_ids), IDS_PER_QUERY):
        chunk = node_ids[start:start + IDS_PER_QUERY]
        for node_id, user_id, group_id, role in database.execute_sql(
                COVERING.format(marks=",".join("?" * len(chunk))), (*chunk, MAX_WALK)):
            found[node_id].append((user_id, group_id, role))
    return found


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


def _grantee(grantee: str, named: str, node: Node,
             owner_passes: bool = False) -> tuple[str, str, str]:
    """("user" or "group", its id, its name) of the grantee the body named; the owner named,
    with `owner_passes`: ("user", "", name)."""
    if grantee in ("user", "username"):
        user = User.get_or_none(User.id == named if grantee == "user" else
                                User.username == named)
        if user is None:
            noun = "id" if grantee == "user" else "name"
            raise Invalid(f"There is no user with the {noun} {named[:60]!r}.", grantee)
        if user.id == node.owner_id:
            if owner_passes:
                return "user", "", str(user.username)
            raise Invalid("That is its owner, who may do everything with it already.", grantee)
        return "user", str(user.id), str(user.username)
    group = Group.get_or_none(Group.id == named)
    if group is None:
        raise Invalid(f"There is no group with the id {named[:60]!r}.", "group")
    return "group", str(group.id), str(group.name)


def _row(node_id: str, grant_id: str) -> GrantRow:
    return next(row for row in (GrantRow(*values) for values in database.execute_sql(
        GRANTS_ABOVE, (node_id, 0)).fetchall()) if row.id == grant_id)
