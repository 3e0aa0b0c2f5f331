"""Nested tags (api.md §8a, §17; Paperless-ngx's tag tree): a tag may sit under another tag of
its owner's (`parent_id`, migration 0030), at most MAX_DEPTH levels deep counting the top one.

- Putting a tag on a node puts the tags above it on too; taking a tag off takes the tags below
  it off too; replacing a node's tags does both — what was asked and the tags above it, less
  the tags below those it takes off (Paperless-ngx's rules, except that a parent the asked tags
  bring along is never "taken off": Paperless-ngx would then drop the child too). dms's tag
  routes, the dialect, rules and matching all put tags on through `above`.
- A tag cannot sit under itself or under a tag below it, nor make the tree deeper than
  MAX_DEPTH. Deleting a tag makes its children top-level tags (ON DELETE SET NULL): the nodes
  keep them.

Each walk takes at most MAX_DEPTH steps of one query, so it ends even on a damaged tree (a loop
in a hand-edited backup)."""

from __future__ import annotations

from dms.db import database
from dms.db.models import Tag, User
from dms.errors import Invalid

MAX_DEPTH = 5  # levels, the top one counted (Paperless-ngx's limit)
IDS_PER_QUERY = 10_000


def parent_of(user: User, tag_id: str | None, given: object) -> str | None:
    """The parent a body names for the tag `tag_id` (None: a new tag): null, or another tag of
    the user's that keeps the tree a tree of at most MAX_DEPTH levels. Read in the owner's write
    transaction."""
    if given is None:
        return None
    if not isinstance(given, str) or not given:
        raise Invalid("parent is the id of another of your tags, or null.", "parent")
    if Tag.get_or_none(Tag.id == given, Tag.owner == user.id) is None:
        raise Invalid("parent: you have no tag with that id.", "parent")
    if tag_id is not None and (given == tag_id or given in below([tag_id])):
        raise Invalid("A tag cannot sit under itself or under a tag below it.", "parent")
    levels_above = len(_chain_up(given)) + 1  # the parent's own level
    if levels_above + 1 + (_height(tag_id) if tag_id is not None else 0) > MAX_DEPTH:
        raise Invalid(f"Tags nest at most {MAX_DEPTH} levels deep.", "parent")
    return given


def above(tag_ids: list[str] | set[str]) -> set[str]:
    """Every tag above these (their parents, theirs, ...), these not included."""
    found: set[str] = set()
    level = set(tag_ids)
    for _ in range(MAX_DEPTH):
        level = _step("SELECT parent_id FROM tag WHERE id IN ({}) AND parent_id IS NOT NULL",
                      level) - found
        if not level:
            break
        found |= level
    return found - set(tag_ids)


def below(tag_ids: list[str] | set[str]) -> set[str]:
    """Every tag below these (their children, theirs, ...), these not included."""
    found: set[str] = set()
    level = set(tag_ids)
    for _ in range(MAX_DEPTH):
        level = _step("SELECT id FROM tag WHERE parent_id IN ({})", level) - found
        if not level:
            break
        found |= level
    return found - set(tag_ids)


def names(tag_ids: set[str]) -> dict[str, str]:
    """{tag id: name} of these tags."""
    found: dict[str, str] = {}
    listed = list(tag_ids)
    for start in range(0, len(listed), IDS_PER_QUERY):
        chunk = listed[start:start + IDS_PER_QUERY]
        found.update(database.execute_sql(
            f"SELECT id, name FROM tag WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    return found


def kept_after(before: set[str], asked: list[str], how: str) -> tuple[set[str], set[str]]:
    """(the tags to put on, the tags to take off) of a node carrying `before` for a change of
    its tags to, by or without `asked` (`replace`, `append`, `remove`)."""
    if how == "remove":
        return set(), (set(asked) | below(asked)) & before
    wanted = set(asked) | above(asked)
    if how == "append":
        return wanted - before, set()
    removed = before - wanted  # a parent the asked tags bring along is not taken off
    wanted -= below(removed)
    return wanted - before, before - wanted


def _chain_up(tag_id: str) -> list[str]:
    chain: list[str] = []
    current: str | None = tag_id
    for _ in range(MAX_DEPTH):
        row = database.execute_sql("SELECT parent_id FROM tag WHERE id = ?",
                                   (current,)).fetchone()
        current = row[0] if row else None
        if current is None or current in chain:
            break
        chain.append(current)
    return chain


def _height(tag_id: str) -> int:
    """Levels below the tag (0: it has no children)."""
    height, level = 0, {tag_id}
    for _ in range(MAX_DEPTH):
        level = _step("SELECT id FROM tag WHERE parent_id IN ({})", level)
        if not level:
            break
        height += 1
    return height


def _step(sql: str, ids: set[str]) -> set[str]:
    found: set[str] = set()
    listed = list(ids)
    for start in range(0, len(listed), IDS_PER_QUERY):
        chunk = listed[start:start + IDS_PER_QUERY]
        found.update(row[0] for row in database.execute_sql(
            sql.format(",".join("?" * len(chunk))), chunk))
    return found
