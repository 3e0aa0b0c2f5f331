"""Tags (api.md, "Tags"): each user's own labels, attached to their folders and documents.

A tag's name is unique for its owner regardless of case and width (`name_key`), 1-100 characters
without commas (lists of names travel comma-separated in query strings: `?tags=paid,2024`) or
control and invisible characters. Colours are `#RRGGBB` or `#RGB`. Another user's tag is, as
everything of theirs, "not found". Every change runs in one write transaction; the search
index learns of tag changes through the outbox triggers of migration 0007. A tag may file itself
as correspondents do (`match`, `matching_algorithm`, `is_insensitive`: a new document whose text
matches gets it) and be an inbox tag (`is_inbox_tag`: every new document gets it), migration 0029,
dms.domain.metadata.autofill. A tag may sit under another (`parent`, migration 0030): the rules of
the tree are dms.domain.tagtree's.
"""

from __future__ import annotations

import re
from typing import Any

from peewee import ModelSelect

from dms.db import database, events, owner_scope, write_transaction
from dms.db.models import Tag, User, new_id, utcnow
from dms.domain import tagtree
from dms.domain.access.rule import EDITOR, changing
from dms.domain.metadata import labels
from dms.domain.ownership import owned
from dms.domain.tagfilter import name_key
from dms.errors import Invalid
from dms.text import has_refused_characters, required_text

DEFAULT_BG_COLOR = "#c41fff"
DEFAULT_FG_COLOR = "#FFFFFF"
MAX_NAME_LENGTH = 100
MAX_DESCRIPTION_LENGTH = 1000
MAX_NAMES_PER_REQUEST = 100  # tag names in one POST/PATCH/DELETE /nodes/{id}/tags/ or filter
MAX_TAGS_PER_USER = 10_000
IDS_PER_QUERY = 10_000  # SQLite binds at most 32,766 values in one statement
COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
DUPLICATE = "A tag with this name already exists."


def check_name(value: object, field: str = "name") -> str:
    name = required_text(value, field, "tag name", MAX_NAME_LENGTH)
    if "," in name or has_refused_characters(name):
        raise Invalid("A tag name may not contain commas, control characters or invisible "
                      "formatting characters.", field)
    return name


def check_color(value: object, field: str) -> str:
    if not isinstance(value, str) or not COLOR.match(value):
        raise Invalid(f"{field} must be a colour such as #c41fff.", field)
    return value


def check_attributes(attributes: dict[str, Any], partial: bool) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if "name" in attributes or not partial:
        values["name"] = check_name(attributes.get("name"))
        values["name_key"] = name_key(values["name"])
    for color in ("bg_color", "fg_color"):
        if color in attributes:
            values[color] = check_color(attributes[color], color)
    if "description" in attributes:
        description = attributes["description"] if attributes["description"] is not None else ""
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_LENGTH \
                or has_refused_characters(description.replace("\n", "").replace("\t", "")):
            raise Invalid(f"description must be text of at most {MAX_DESCRIPTION_LENGTH} "
                          "characters.", "description")
        values["description"] = description.strip()
    if "pinned" in attributes:
        if not isinstance(attributes["pinned"], bool):
            raise Invalid("pinned must be true or false.", "pinned")
        values["pinned"] = attributes["pinned"]
    values.update(labels.check_matching(attributes))
    if "is_inbox_tag" in attributes:
        if not isinstance(attributes["is_inbox_tag"], bool):
            raise Invalid("is_inbox_tag must be true or false.", "is_inbox_tag")
        values["is_inbox_tag"] = attributes["is_inbox_tag"]
    return values


# -- tags ---------------------------------------------------------------------------------------

def tags_of_user(user: User) -> ModelSelect[Tag]:
    return Tag.select().where(Tag.owner == user.id).order_by(Tag.name_key)


def owned_tag(user: User, tag_id: str) -> Tag:
    return owned(Tag, user, tag_id)


def _name_taken(user: User, key: str, except_id: str | None = None) -> bool:
    query = Tag.select().where(Tag.owner == user.id, Tag.name_key == key)
    if except_id is not None:
        query = query.where(Tag.id != except_id)
    return query.exists()


def _check_room(user: User, adding: int) -> None:
    if Tag.select().where(Tag.owner == user.id).count() + adding > MAX_TAGS_PER_USER:
        raise Invalid(f"One user may have at most {MAX_TAGS_PER_USER} tags; delete unused ones "
                      "first.")


def create_tag(user: User, attributes: dict[str, Any]) -> Tag:
    values = check_attributes(attributes, partial=False)
    labels.check_pattern_of(None, values)
    with write_transaction(owner_scope(user.id)):
        if _name_taken(user, values["name_key"]):
            raise Invalid(DUPLICATE, "/data")
        _check_room(user, 1)
        if "parent" in attributes:
            values["parent"] = tagtree.parent_of(user, None, attributes["parent"])
        tag_id = new_id()
        Tag.insert(id=tag_id, owner=user.id, created_at=utcnow(), **values).execute()
    return Tag.get_by_id(tag_id)


def update_tag(user: User, tag_id: str, attributes: dict[str, Any]) -> Tag:
    values = check_attributes(attributes, partial=True)
    with write_transaction(owner_scope(user.id)):
        tag = owned_tag(user, tag_id)
        labels.check_pattern_of(tag, values)
        if "name_key" in values and _name_taken(user, values["name_key"], tag.id):
            raise Invalid(DUPLICATE, "/data")
        if "parent" in attributes:
            values["parent"] = tagtree.parent_of(user, tag.id, attributes["parent"])
        if values:
            Tag.update(**values).where(Tag.id == tag.id).execute()
    return Tag.get_by_id(tag_id)


def delete_tag(user: User, tag_id: str) -> None:
    """DELETE /tags/{id}/: the tag, and its links by their cascade; every node it labelled gets
    its `untagged` event in the same transaction, written by one INSERT ... SELECT however many
    nodes that is (MAX_TAGS_PER_USER bounds the tags, not the nodes each labels)."""
    with write_transaction(owner_scope(user.id)):
        tag = owned_tag(user, tag_id)
        events.record_for_each(user.id, "SELECT node_id FROM node_tag WHERE tag_id = ?",
                               (tag.id,), events.UNTAGGED, user.id, tags=[tag.name])
        Tag.delete().where(Tag.id == tag.id).execute()


def merge_tags(user: User, tag_id: str, into: object) -> Tag:
    """POST /tags/{id}/merge/ (api.md §22): every node labelled with the tag gets the tag `into`
    (and the tags above it) instead, and the tag is deleted, in one write transaction with each
    node's `untagged` and, where new, `tagged` events. Its sub-tags move up to where it was
    (its parent), which keeps the tree a tree however the two tags stood to each other."""
    if not isinstance(into, str) or not into:
        raise Invalid("`into` must be the id of the tag to merge this one into.", "into",
                      code="required" if into is None else "invalid")
    with write_transaction(owner_scope(user.id)):
        tag = owned_tag(user, tag_id)
        target = owned_tag(user, into)
        if target.id == tag.id:
            raise Invalid("A tag cannot be merged into itself; choose another tag.", "into")
        events.record_for_each(user.id, "SELECT node_id FROM node_tag WHERE tag_id = ?",
                               (tag.id,), events.UNTAGGED, user.id, tags=[tag.name])
        events.record_for_each(
            user.id, "SELECT node_id FROM node_tag WHERE tag_id = ? AND node_id NOT IN "
                     "(SELECT node_id FROM node_tag WHERE tag_id = ?)",
            (tag.id, target.id), events.TAGGED, user.id, tags=[target.name])
        for label_id in ({target.id} | tagtree.above([target.id])) - {tag.id}:
            database.execute_sql("INSERT INTO node_tag (node_id, tag_id) SELECT node_id, ? "
                                 "FROM node_tag WHERE tag_id = ? ON CONFLICT DO NOTHING",
                                 (label_id, tag.id))
        Tag.update(parent=tag.parent_id).where(Tag.parent == tag.id).execute()
        Tag.delete().where(Tag.id == tag.id).execute()
    return Tag.get_by_id(target.id)


# -- a node's tags ----------------------------------------------------------------------------

def check_names(value: object) -> list[str]:
    """The `tags` list of a /nodes/{id}/tags/ body: names, without repeats."""
    if not isinstance(value, list):
        raise Invalid("`tags` must be a list of tag names.", "tags", code="required"
                      if value is None else "invalid")
    if len(value) > MAX_NAMES_PER_REQUEST:
        raise Invalid(f"At most {MAX_NAMES_PER_REQUEST} tags at once.", "tags")
    names: dict[str, Any] = {}
    for index, item in enumerate(value):
        name = check_name(item, f"/tags/{index}")
        names.setdefault(name_key(name), name)
    return list(names.values())


def ensure_tags(user: User, names: list[str]) -> list[str]:
    """The ids of the caller's tags with these names, creating the missing ones (inside the
    caller's write transaction, in the owner's scope; also dms.domain.rules')."""
    keys = {name_key(name): name for name in names}
    existing = {tag.name_key: tag.id for tag in
                Tag.select(Tag.id, Tag.name_key).where(Tag.owner == user.id,
                                                        Tag.name_key.in_(list(keys)))}
    missing = [key for key in keys if key not in existing]
    if missing:
        _check_room(user, len(missing))
        now = utcnow()
        for key in missing:
            existing[key] = new_id()
            Tag.insert(id=existing[key], owner=user.id, name=keys[key], name_key=key,
                       created_at=now).execute()
    return [existing[key] for key in keys]


def change_node_tags(user: User, node_id: str, names_value: object, how: str) -> list[str]:
    """POST replaces the node's tags (creating missing tags), PATCH adds to them, DELETE takes
    the named ones off (the tags themselves stay). Returns the node's tag names after. Tags are
    each person's own (api.md §21): on a node shared with them as editor, someone changes their
    own tags on it and sees only theirs; the owner's stay as they are."""
    names = check_names(names_value)
    with changing(user, node_id, None, EDITOR, "", owner_scope(user.id)) as reached:
        node = reached.node
        before = [tag["name"] for tag in tags_of([node.id], user.id)[node.id]]
        asked = _ids_named(user, names) if how == "remove" else ensure_tags(user, names)
        adding, removing = tagtree.kept_after(_ids_on(node.id, user.id), asked, how)
        if removing:
            database.execute_sql(f"DELETE FROM node_tag WHERE node_id = ? AND tag_id IN "
                                 f"({','.join('?' * len(removing))})", (node.id, *removing))
        put_on(node.id, adding)
        after = [tag["name"] for tag in tags_of([node.id], user.id)[node.id]]
        for action, changed in ((events.TAGGED, [n for n in after if n not in before]),
                                (events.UNTAGGED, [n for n in before if n not in after])):
            if changed:
                events.record(node.owner_id, node.id, action, user.id, tags=changed)
    return after


def put_on(node_id: str, tag_ids: list[str] | set[str]) -> None:
    """These tags on the node (and, by dms.domain.tagtree's rule, the tags above them), in the
    caller's write transaction; those it has already stay."""
    for tag_id in set(tag_ids) | tagtree.above(tag_ids):
        database.execute_sql("INSERT INTO node_tag (node_id, tag_id) VALUES (?, ?) "
                             "ON CONFLICT DO NOTHING", (node_id, tag_id))


def _ids_on(node_id: str, owner_id: str) -> set[str]:
    return {row[0] for row in database.execute_sql(
        "SELECT nt.tag_id FROM node_tag AS nt JOIN tag AS t ON t.id = nt.tag_id "
        "WHERE nt.node_id = ? AND t.owner_id = ?", (node_id, owner_id))}


def _ids_named(user: User, names: list[str]) -> list[str]:
    keys = [name_key(name) for name in names]
    return [tag.id for tag in Tag.select(Tag.id).where(Tag.owner == user.id,
                                                       Tag.name_key.in_(keys))] if keys else []


def tags_of(node_ids: list[str], owner_id: str) -> dict[str, list[dict[str, Any]]]:
    """{node id: [{"name", "bg_color", "fg_color"}, ...] by name} for several nodes at once: the
    tags of `owner_id` (each person sees their own tags on a shared node)."""
    result: dict[str, list[dict[str, Any]]] = {node_id: [] for node_id in node_ids}
    for start in range(0, len(node_ids), IDS_PER_QUERY):
        chunk = node_ids[start:start + IDS_PER_QUERY]
        rows = database.execute_sql(
            f"SELECT nt.node_id, t.name, t.bg_color, t.fg_color FROM node_tag AS nt "
            f"JOIN tag AS t ON t.id = nt.tag_id WHERE nt.node_id IN ({','.join('?' * len(chunk))}) "
            f"AND t.owner_id = ? ORDER BY t.name_key", (*chunk, owner_id))
        for node_id, name, bg_color, fg_color in rows:
            result[node_id].append({"name": name, "bg_color": bg_color, "fg_color": fg_color})
    return result


def document_counts(tag_ids: list[str]) -> dict[str, int]:
    """{tag id: the live documents carrying it} for several tags at once."""
    found: dict[str, int] = {}
    for start in range(0, len(tag_ids), IDS_PER_QUERY):
        chunk = tag_ids[start:start + IDS_PER_QUERY]
        found.update(database.execute_sql(
            "SELECT nt.tag_id, count(*) FROM node_tag AS nt JOIN node AS n ON n.id = nt.node_id "
            f"WHERE nt.tag_id IN ({','.join('?' * len(chunk))}) AND n.kind = 'document' "
            "AND n.trash_id IS NULL GROUP BY nt.tag_id", chunk).fetchall())
    return found


def names_of(user: User, tag_ids: list[str]) -> dict[str, str]:
    """{tag id: name} of those of `tag_ids` that are the user's tags."""
    if not tag_ids:
        return {}
    return {tag.id: tag.name for tag in Tag.select(Tag.id, Tag.name).where(
        Tag.owner == user.id, Tag.id.in_(tag_ids))}
