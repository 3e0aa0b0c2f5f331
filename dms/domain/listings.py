"""Reading the folder tree a page at a time (api.md, "Listing a folder"): what a request lists — a
folder's children, all of a user's folders or documents (their own and what is shared with them),
the special folders, the inbox's count — with its filters and sort. Live nodes only (a node in the
trash is dms.domain.trash's). The rows and SQL of a listing are dms.domain.nodepages'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from dms.db import database
from dms.db.models import Node, User
from dms.domain.access.rule import TO_USER, reach
from dms.domain.access.sight import SHARED, SHARED_TITLE, shared_folder, shared_folder_id
from dms.domain.metadata import filters as metadata_filters
from dms.domain.metadata.orderedquery import OrderedMatches
from dms.domain.nodepages import (
    ROW_COLUMNS,
    FieldSortListing,
    Filter,
    Filters,
    NodeListing,
    NodeRow,
    OrderedListing,
    row_columns,
)
from dms.domain.tagfilter import tag_filter
from dms.domain.tree import LIVE
from dms.errors import Invalid

# The rows and SQL of a listing live in dms.domain.nodepages; callers keep naming them here.
__all__ = ["DEFAULT_ORDER", "ROW_COLUMNS", "SORTS", "FieldSortListing", "Filter", "Filters",
           "NodeListing", "NodeRow", "OrderedListing", "SpecialFolders", "WithShared", "children",
           "folder_of", "has_shares", "inbox_count", "listing", "of_kind", "order_of",
           "owner_filter", "row_columns", "special_folders"]

# sort= value -> ORDER BY columns; each matches one index of migration 0002 (read either way).
SORTS = {
    "title": ("title_sort", "id"),
    "created_at": ("created_at", "id"),
    "updated_at": ("updated_at", "id"),
}
DEFAULT_ORDER = "kind DESC, title_sort, id"  # folders first ('folder' > 'document'), then by title


class SpecialFolders(NodeListing):
    """The caller's .home and .inbox, then .shared (not a row: dms.domain.access.sight)."""

    def __init__(self, user: User):
        super().__init__("owner_id = ? AND special IS NOT NULL", (user.id,), "title_sort")
        self.user = user

    def count(self) -> int:
        return super().count() + 1

    def numbers(self) -> str:
        return self._numbers_of_rows()

    def fetch(self, offset: int, limit: int) -> list[NodeRow]:
        shared = shared_folder(self.user)
        rows = [*super().fetch(0, 2), NodeRow._make((
            shared.id, None, Node.FOLDER, shared.special, SHARED_TITLE, None, None, None, None,
            None, 0, 0, shared.created_at, shared.updated_at, self.user.id, None, None, None,
            None, None))]
        return rows[offset:offset + limit]


class WithShared(NodeListing):
    """The caller's own nodes and those below what is shared with them, in one order: each part
    read on its own (the caller's from their indexes, the shared ones from a walk down the shared
    folders), the first offset + limit of each, then merged. One condition with OR made SQLite
    scan the whole table for every page and count."""

    def __init__(self, own: NodeListing, shared: NodeListing, order: str,
                 order_params: tuple[Any, ...]):
        super().__init__(own.where, own.params, order, order_params)
        self.own, self.shared = own, shared

    def count(self) -> int:
        return self.own.count() + self.shared.count()

    def page_sql(self, offset: int, limit: int,
                 columns: str = ROW_COLUMNS) -> tuple[str, tuple[Any, ...]]:
        parts = [f"SELECT id FROM (SELECT id FROM node WHERE {part.where} "
                 f"ORDER BY {self.order} LIMIT ?) AS {name}"
                 for part, name in ((self.own, "own"), (self.shared, "shared"))]
        return (f"SELECT {columns} FROM node WHERE id IN ({parts[0]} UNION ALL {parts[1]}) "
                f"ORDER BY {self.order} LIMIT ? OFFSET ?",
                (*self.own.params, *self.order_params, offset + limit,
                 *self.shared.params, *self.order_params, offset + limit,
                 *self.order_params, limit, offset))


def special_folders(user: User) -> NodeListing:
    return SpecialFolders(user)


# The nodes shared with the caller directly (the roots .shared lists): a grant to them or to a
# group they are in; never their own (a grant to the owner is refused; a group's may name them).
SHARED_ROOTS = (f"id IN (SELECT g.node_id FROM node_grant AS g WHERE {TO_USER}) "
                f"AND owner_id <> ? AND {LIVE}")
# Every node at or below those roots (live or not: the caller adds its own conditions). Only
# folders are looked into: probing each document for children was half the walk's time.
SHARED_BELOW = f"""id IN (WITH RECURSIVE below(id, kind) AS (
        SELECT n.id, n.kind FROM node_grant AS g JOIN node AS n ON n.id = g.node_id
        WHERE {TO_USER}
        UNION
        SELECT n.id, n.kind FROM below JOIN node AS n ON n.parent_id = below.id
        WHERE below.kind = 'folder'
    ) SELECT id FROM below)"""


def has_shares(user: User) -> bool:
    """Whether anything is shared with the user (one index lookup, or two)."""
    return database.execute_sql(f"SELECT 1 FROM node_grant AS g WHERE {TO_USER} LIMIT 1",
                                (user.id, user.id)).fetchone() is not None


def folder_of(user: User, folder_id: str) -> Node:
    """A folder the caller may read, or their .shared folder; else the 404 of an unknown id."""
    if folder_id == shared_folder_id(user.id):
        return shared_folder(user)
    return reach(user, folder_id, kind=Node.FOLDER).node


class OwnerFilter:
    """`owner=me|others|<username>` (api.md §21): whose nodes a list keeps."""

    def __init__(self, user: User, value: str):
        self.user, self.value = user, value

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        if "\x00" in self.value:  # no username holds one (and PostgreSQL cannot compare one)
            return "1 = 0", ()
        if self.value == "me":
            return "owner_id = ?", (self.user.id,)
        if self.value == "others":
            return "owner_id <> ?", (self.user.id,)
        return 'owner_id = (SELECT id FROM "user" WHERE username = ?)', (self.value,)


def owner_filter(user: User, value: str | None) -> OwnerFilter | None:
    if value is None or value == "":
        return None
    if len(value) > 150:
        raise Invalid("owner is me, others or a username.", "owner")
    return OwnerFilter(user, value)


def children(folder: Node, sort: str | None = None, only: Filters = (),
             user: User | None = None) -> NodeListing:
    """The children of `folder` in listing order: folders first then documents, by title, unless
    `sort` names an attribute (`title`, `created_at`, `updated_at`, or one of the metadata sorts
    of dms.domain.metadata.filters, which need the `user`; `-` in front reverses); with `only`,
    just those matching every filter (tags, metadata)."""
    order, order_params = DEFAULT_ORDER, ()
    matches = _ordered_matches(sort, only)
    if matches is not None:
        return OrderedListing(matches, "parent_id = ?", (folder.id,))
    by_field = _field_sort(sort, only, user)
    if by_field is not None:
        return FieldSortListing(f"parent_id = ? AND {LIVE}", (folder.id,), "parent_id = ? AND ",
                                (folder.id,), *by_field)
    if sort:
        order, order_params = order_of(sort, user)
    return _filtered(f"parent_id = ? AND {LIVE}", (folder.id,), order, only, order_params)


def _field_sort(sort: str | None, only: Filters, user: User | None
                ) -> tuple[str, str, bool] | None:
    """(field id, value column, descending) of a sort by a custom field that the value-order
    indexes answer, when the listing has no filter."""
    if not sort or user is None or any(condition is not None for condition in only):
        return None
    found = metadata_filters.field_sort(user, sort.removeprefix("-"))
    return None if found is None else (*found, sort.startswith("-"))


def _ordered_matches(sort: str | None, only: Filters) -> OrderedMatches | None:
    """The ordered form of a custom field query when it is the listing's only filter and the
    order is by title (documents only: folders come first, and carry no values)."""
    present = [condition for condition in only if condition is not None]
    if sort not in (None, "", "title") or len(present) != 1 or \
            not isinstance(present[0], metadata_filters.MetadataFilter):
        return None
    return present[0].ordered


def order_of(sort: str, user: User | None) -> tuple[str, tuple[Any, ...]]:
    """The ORDER BY of a sort of the lists and its parameters; Invalid for another sort."""
    name = sort[1:] if sort.startswith("-") else sort
    columns: tuple[str, ...] | None = SORTS.get(name)
    params: tuple[Any, ...] = ()
    if columns is None and user is not None:
        found = metadata_filters.sort_order(user, name)
        if found is not None:
            columns, params = found[0] + ("id",), found[1]
    if columns is None:
        names = [*SORTS, *metadata_filters.SORTS, "cf_<field id>"]
        raise Invalid(f"Cannot sort by {sort!r}; use one of {', '.join(names)}, optionally "
                      "with a leading -.")
    direction = " DESC" if sort.startswith("-") else ""
    # `(x IS NULL)` keeps documents without a value last, whichever way the values run.
    return ", ".join(column + ("" if column.endswith("IS NULL)") else direction)
                     for column in columns), params


def _filtered(where: str, params: tuple[Any, ...], order: str, only: Filters,
              order_params: tuple[Any, ...] = ()) -> NodeListing:
    for condition_of in only:
        if condition_of is not None:
            condition, condition_params = condition_of.sql()
            where, params = f"{where} AND {condition}", (*params, *condition_params)
    return NodeListing(where, params, order, order_params)


def listing(user: User, folder_id: str, sort: str | None = None, tags: str | None = None,
            tags_op: str | None = None, about: Mapping[str, str] | None = None
            ) -> tuple[Node, NodeListing]:
    """A folder the caller may read and its children (GET /nodes/{id}/), optionally only those
    with all (or any) of the named tags and matching the metadata filters in `about` (the
    request's query). Their .shared folder's children are the roots shared with them."""
    about = about or {}
    only = (tag_filter(user, tags, tags_op), metadata_filters.metadata_filter(user, about),
            owner_filter(user, about.get("owner")))
    folder = folder_of(user, folder_id)
    if folder.special == SHARED:
        order, order_params = order_of(sort, user) if sort else (DEFAULT_ORDER, ())
        return folder, _filtered(SHARED_ROOTS, (user.id, user.id, user.id), order, only,
                                 order_params)
    return folder, children(folder, sort, only, user)


def inbox_count(user: User) -> int:
    """The direct children of the caller's .inbox, folders and documents."""
    return cast(int, database.execute_sql(
        f"SELECT count(*) FROM node WHERE parent_id = (SELECT id FROM node WHERE owner_id = ? "
        f"AND special = ?) AND {LIVE}", (user.id, Node.INBOX)).fetchone()[0])


def of_kind(user: User, kind: str, tags: str | None = None, tags_op: str | None = None,
            about: Mapping[str, str] | None = None, extra: Filters = ()) -> NodeListing:
    """All the folders or documents the caller may read (theirs, and those below what is shared
    with them), optionally only those with the named tags, (documents) matching the metadata
    filters, of the owner `owner=` names, matching each of `extra` (dms.domain.docfilters), and
    sorted by `sort` in `about` (the query)."""
    about = about or {}
    only = (tag_filter(user, tags, tags_op), metadata_filters.metadata_filter(user, about),
            owner_filter(user, about.get("owner")), *extra)
    order, order_params = "title_sort, id", ()
    if has_shares(user):
        if about.get("sort"):
            order, order_params = order_of(about["sort"], user)
        own = _filtered(f"owner_id = ? AND kind = ? AND {LIVE}", (user.id, kind), order, only)
        shared = _filtered(f"{SHARED_BELOW} AND owner_id <> ? AND kind = ? AND {LIVE}",
                           (user.id, user.id, user.id, kind), order, only)
        return WithShared(own, shared, order, order_params)
    matches = _ordered_matches(about.get("sort"), only)
    if matches is not None and kind == Node.DOCUMENT:  # the fields are the user's: no owner_id
        return OrderedListing(matches, "", ())
    by_field = _field_sort(about.get("sort"), only, user)
    if by_field is not None and kind == Node.DOCUMENT:
        return FieldSortListing(f"owner_id = ? AND kind = ? AND {LIVE}", (user.id, kind), "",
                                (), *by_field)
    if about.get("sort"):
        order, order_params = order_of(about["sort"], user)
    return _filtered(f"owner_id = ? AND kind = ? AND {LIVE}", (user.id, kind), order, only,
                     order_params)
