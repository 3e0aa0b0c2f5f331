"""Groups of users (api.md §21, "Groups"): superusers create, rename, fill and delete them; every
user sees the groups they are in, and no other (404, as an unknown id).

A name is 1-150 characters (Paperless-ngx's limit), unique regardless of case and width
(`name_key`, as tags' and usernames' are). `members` is the whole list of user ids, replaced on
each change; each must be a user (active or not), at most MAX_MEMBERS of them. Every change runs
in the USERS write scope, so that a name is checked and taken in one step and a user deleted
meanwhile is never added (a user's deletion removes their memberships: ON DELETE CASCADE). A new
member receives the events of what is shared with the group from joining on
(dms.domain.access.following)."""

from __future__ import annotations

from typing import Any, cast

from peewee import ModelSelect

from dms.db import USERS, database, write_transaction
from dms.db.models import Group, GroupMember, User, new_id, utcnow
from dms.domain.access.following import follow_membership, newest_event_of_anyone
from dms.domain.tagfilter import name_key
from dms.errors import Forbidden, Invalid, NotFound
from dms.text import has_refused_characters, required_text

MAX_NAME_LENGTH = 150
MAX_MEMBERS = 1_000
MAX_GROUPS = 1_000
ONLY_SUPERUSERS = "Only a superuser creates, changes or deletes groups."


def visible(actor: User) -> ModelSelect[Group]:
    """The groups `actor` may see, by name: all of them for a superuser, else their own."""
    query = Group.select().order_by(Group.name_key, Group.id)
    if not actor.is_superuser:
        query = query.where(Group.id.in_(
            GroupMember.select(GroupMember.group).where(GroupMember.user == actor.id)))
    return query


def visible_group(actor: User, group_id: object) -> Group:
    group = visible(actor).where(Group.id == group_id).first() \
        if isinstance(group_id, str) else None
    if group is None:
        raise NotFound()
    return cast(Group, group)


def memberships(user_ids: list[str]) -> dict[str, list[str]]:
    """{user id: the ids of the groups they are in} for these users, in one query."""
    found: dict[str, list[str]] = {}
    if user_ids:
        for user_id, group_id in database.execute_sql(
                "SELECT user_id, group_id FROM group_member "
                f"WHERE user_id IN ({','.join('?' * len(user_ids))})", user_ids):
            found.setdefault(user_id, []).append(group_id)
    return found


def members(group_ids: list[str]) -> dict[str, list[str]]:
    """{group id: its members' user ids, by username}, in one query."""
    found: dict[str, list[str]] = {group_id: [] for group_id in group_ids}
    if group_ids:
        rows = database.execute_sql(
            "SELECT m.group_id, m.user_id FROM group_member AS m JOIN \"user\" AS u "
            f"ON u.id = m.user_id WHERE m.group_id IN ({','.join('?' * len(group_ids))}) "
            "ORDER BY u.username, u.id", group_ids)
        for group_id, user_id in rows:
            found[group_id].append(user_id)
    return found


def create(actor: User, attributes: dict[str, Any]) -> Group:
    _require_superuser(actor)
    values, wanted = _checked(attributes, partial=False)
    with write_transaction(USERS):
        _check_name_free(values["name_key"])
        if Group.select().count() >= MAX_GROUPS:
            raise Invalid(f"There are {MAX_GROUPS} groups already, the most dms keeps; delete "
                          "one first.")
        group_id = new_id()
        Group.insert(id=group_id, created_at=utcnow(), **values).execute()
        _set_members(group_id, wanted or [])
    return Group.get_by_id(group_id)


def update(actor: User, group_id: str, attributes: dict[str, Any]) -> Group:
    _require_superuser(actor)
    values, wanted = _checked(attributes, partial=True)
    with write_transaction(USERS):
        group = visible_group(actor, group_id)
        if "name_key" in values:
            _check_name_free(values["name_key"], group.id)
            Group.update(**values).where(Group.id == group.id).execute()
        if wanted is not None:
            _set_members(group.id, wanted)
    return Group.get_by_id(group_id)


def delete(actor: User, group_id: str) -> None:
    _require_superuser(actor)
    with write_transaction(USERS):
        group = visible_group(actor, group_id)
        Group.delete().where(Group.id == group.id).execute()


def join(actor: User, user_id: str, group_ids: list[str]) -> None:
    """The user becomes a member of these groups too (a superuser's doing), in one write
    transaction; an unknown group changes nothing."""
    _require_superuser(actor)
    with write_transaction(USERS):
        known = {group.id for group in Group.select(Group.id).where(Group.id.in_(group_ids))}
        unknown = next((group_id for group_id in group_ids if group_id not in known), None)
        if unknown is not None:
            raise Invalid(f"There is no group with the id {unknown[:60]!r}.", "groups")
        for group_id in dict.fromkeys(group_ids):
            members = [row[0] for row in database.execute_sql(
                "SELECT user_id FROM group_member WHERE group_id = ?", (group_id,))]
            if user_id not in members:
                if len(members) >= MAX_MEMBERS:
                    raise Invalid(f"A group has at most {MAX_MEMBERS:,} members.", "groups")
                _set_members(group_id, [*members, user_id])


def _require_superuser(actor: User) -> None:
    if not actor.is_superuser:
        raise Forbidden(ONLY_SUPERUSERS)


def _checked(attributes: dict[str, Any], partial: bool) -> tuple[dict[str, Any], list[str] | None]:
    """(the group's columns to set, the members asked for or None); Invalid for the first thing
    wrong, before anything is read or written."""
    values: dict[str, Any] = {}
    if "name" in attributes or not partial:
        name = check_name(attributes.get("name"))
        values.update(name=name, name_key=name_key(name))
    wanted = None
    if "members" in attributes:
        given = attributes["members"]
        if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
            raise Invalid("members is a list of user ids.", "members")
        if len(given) > MAX_MEMBERS:
            raise Invalid(f"A group has at most {MAX_MEMBERS:,} members.", "members")
        wanted = list(dict.fromkeys(given))
    return values, wanted


def check_name(value: object) -> str:
    """A group's name as given, trimmed; Invalid if it cannot be one (a restore checks its rows
    with it too)."""
    name = required_text(value, "name", "group name", MAX_NAME_LENGTH)
    if has_refused_characters(name):
        raise Invalid("A group name may not contain control characters or invisible formatting "
                      "characters.", "name")
    return name


def _check_name_free(key: str, except_id: str | None = None) -> None:
    query = Group.select().where(Group.name_key == key)
    if except_id is not None:
        query = query.where(Group.id != except_id)
    if query.exists():
        raise Invalid("A group with this name already exists.", "name")


def _set_members(group_id: str, wanted: list[str]) -> None:
    if wanted:
        known = {row[0] for row in database.execute_sql(
            f"SELECT id FROM \"user\" WHERE id IN ({','.join('?' * len(wanted))})", wanted)}
        unknown = next((user_id for user_id in wanted if user_id not in known), None)
        if unknown is not None:
            raise Invalid(f"members: there is no user with the id {unknown[:60]!r}.", "members")
    # Members who stay keep their row (and `since`: from when the group's shares reach them).
    staying = {row[0] for row in database.execute_sql(
        "SELECT user_id FROM group_member WHERE group_id = ?", (group_id,))}
    gone = [user_id for user_id in staying if user_id not in wanted]
    if gone:
        GroupMember.delete().where(GroupMember.group == group_id,
                                   GroupMember.user.in_(gone)).execute()
    joining = [user_id for user_id in wanted if user_id not in staying]
    if joining:
        since = newest_event_of_anyone()
        GroupMember.insert_many([{"group": group_id, "user": user_id, "since": since}
                                 for user_id in joining]).execute()
        follow_membership(group_id, joining, since)
