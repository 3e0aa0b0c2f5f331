"""Filtering nodes by tags (`?tags=paid,2024&tags_op=all|any`, api.md, "Tags"): the caller's tag
names become a condition listings and searches add to their queries. Here, not in dms.domain.tags,
so that dms.domain.tree can use it (dms.domain.tags builds on dms.domain.tree)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from dms.db import database
from dms.db.models import User
from dms.errors import Invalid

TAG_OPS = ("all", "any")
MAX_FILTER_TAGS = 100


def name_key(name: str) -> str:
    """What makes two tag names the same: `Paid` and `paid`."""
    return unicodedata.normalize("NFKC", name).casefold()


@dataclass(frozen=True)
class TagFilter:
    """Nodes carrying all (or any) of some of the caller's tags; `tag_ids` None when a named tag
    does not exist (then nothing matches `all`)."""
    tag_ids: tuple[str, ...]
    op: str
    matches_nothing: bool = False

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        """A condition on `node.id` (or `id`) for a WHERE clause, and its parameters."""
        if self.matches_nothing or not self.tag_ids:
            return "FALSE", ()
        if self.op == "all":
            clause = " AND ".join(
                "EXISTS (SELECT 1 FROM node_tag WHERE node_tag.node_id = node.id "
                "AND node_tag.tag_id = ?)" for _ in self.tag_ids)
            return f"({clause})", self.tag_ids
        marks = ",".join("?" * len(self.tag_ids))
        return (f"EXISTS (SELECT 1 FROM node_tag WHERE node_tag.node_id = node.id "
                f"AND node_tag.tag_id IN ({marks}))", self.tag_ids)


def tag_filter(user: User, raw_names: str | None, raw_op: str | None) -> TagFilter | None:
    """`?tags=a,b&tags_op=all|any` (default all); None without `tags`."""
    op = raw_op or "all"
    if op not in TAG_OPS:
        raise Invalid("tags_op must be all or any.", "/tags_op")
    if raw_names is None or not raw_names.strip():
        return None
    names = [name.strip() for name in raw_names.split(",") if name.strip()]
    if len(names) > MAX_FILTER_TAGS:
        raise Invalid(f"At most {MAX_FILTER_TAGS} tags in a filter.", "/tags")
    keys = list(dict.fromkeys(name_key(name) for name in names))
    # A name with a null character names no tag (names refuse control characters), and
    # PostgreSQL's text cannot even be compared with one.
    possible = [key for key in keys if "\x00" not in key]
    found = [tag_id for (tag_id,) in database.execute_sql(
        f"SELECT id FROM tag WHERE owner_id = ? AND name_key IN ({','.join('?' * len(possible))})",
        (user.id, *possible))] if possible else []
    return TagFilter(tuple(found), op, matches_nothing=(op == "all" and len(found) < len(keys))
                     or not found)
