"""The tree of folders and documents (api.md §5): ownership, titles, listing order, breadcrumbs,
moves and deletes.

The tree is an adjacency list (`node.parent_id`) with indexes per listing order, so:
- listing a folder reads one index range (no scan of the tree, no sorting in Python);
- a move is one UPDATE of the moved nodes' parent_id, whatever lies below them;
- ancestors (breadcrumbs, the cycle check of a move) are a recursive query up the parents,
  as long as the path is deep, not as large as the tree;
- a subtree is deleted in one statement inside one transaction.
Every lookup is by owner: another user's node is indistinguishable from an unknown id.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

from dms.db import database
from dms.jsonapi import ApiError, invalid, not_found, permission_denied
from dms.models import Node, User, utcnow

MAX_TITLE_LENGTH = 200
FORBIDDEN_TITLE_CHARACTERS = "/\\"

# sort= value -> ORDER BY columns; each matches one index of migration 0002 (read either way).
SORTS = {
    "title": ("title_sort", "id"),
    "created_at": ("created_at", "id"),
    "updated_at": ("updated_at", "id"),
}
DEFAULT_ORDER = "kind DESC, title_sort, id"  # folders first ('folder' > 'document'), then by title
OWNED_NODE = "SELECT * FROM node WHERE id = ? AND owner_id = ?"


class NodeRow(NamedTuple):
    """A node as listings read it: plain values straight from SQLite, no peewee model.
    Building models made a page of 100 nodes five times slower; datetimes stay stored text."""
    id: str
    parent_id: str | None
    kind: str
    special: str | None
    title: str
    lang: str | None
    ocr: int | None
    ocr_status: str | None
    ocr_error: str | None
    file_name: str | None
    size: int
    page_count: int
    created_at: str
    updated_at: str

    is_special = Node.is_special
    is_folder = Node.is_folder
    is_document = Node.is_document


ROW_COLUMNS = ", ".join(NodeRow._fields)


class NodeListing:
    """The nodes matching `where`, in `order`, a page at a time, as NodeRows.

    Hand-written SQL on purpose: on these hot paths peewee's query builder cost more than
    SQLite's own work. `where` and `order` come from this module's constants, never from a
    request; request values travel only as parameters."""

    def __init__(self, where: str, params: tuple, order: str):
        self.where, self.params, self.order = where, params, order

    def count(self) -> int:
        return database.execute_sql(f"SELECT COUNT(*) FROM node WHERE {self.where}",
                                    self.params).fetchone()[0]

    def fetch(self, offset: int, limit: int) -> list[NodeRow]:
        cursor = database.execute_sql(
            f"SELECT {ROW_COLUMNS} FROM node WHERE {self.where} ORDER BY {self.order} "
            "LIMIT ? OFFSET ?", (*self.params, limit, offset))
        return [NodeRow._make(row) for row in cursor]


def check_title(value: object, pointer: str = "/data/attributes/title") -> str:
    """A title: 1-200 characters after trimming, no slash, backslash or control character."""
    if value is None:
        raise ApiError(400, "required", "A title is required.", pointer)
    if not isinstance(value, str):
        raise invalid("The title must be text.", pointer)
    title = value.strip()
    if not title:
        raise ApiError(400, "blank", "The title may not be blank.", pointer)
    if len(title) > MAX_TITLE_LENGTH:
        raise invalid(f"A title has at most {MAX_TITLE_LENGTH} characters.", pointer)
    if any(c in FORBIDDEN_TITLE_CHARACTERS or unicodedata.category(c) == "Cc" for c in title):
        raise invalid("A title may not contain /, \\ or control characters.", pointer)
    return title


def owned_node(user: User, node_id: str, kind: str | None = None) -> Node:
    """The caller's node `node_id` (of `kind`, if given), else the 404 of an unknown id."""
    node = next(iter(Node.raw(OWNED_NODE, node_id, user.id)), None)
    if node is None or (kind is not None and node.kind != kind):
        raise not_found()
    return node


def special_folders(user: User) -> NodeListing:
    return NodeListing("owner_id = ? AND special IS NOT NULL", (user.id,), "title_sort")


def children(folder: Node, sort: str | None = None) -> NodeListing:
    """The children of `folder` in listing order: folders first then documents, by title, unless
    `sort` names an attribute (`title`, `created_at`, `updated_at`; `-` in front reverses)."""
    order = DEFAULT_ORDER
    if sort:
        columns = SORTS.get(sort.lstrip("-"))
        if columns is None:
            raise invalid(f"Cannot sort by {sort!r}; use one of {', '.join(SORTS)}, "
                          "optionally with a leading -.")
        direction = " DESC" if sort.startswith("-") else ""
        order = ", ".join(column + direction for column in columns)
    return NodeListing("parent_id = ?", (folder.id,), order)


def of_kind(user: User, kind: str) -> NodeListing:
    return NodeListing("owner_id = ? AND kind = ?", (user.id, kind), "title_sort, id")


def breadcrumbs(node_ids: list[str]) -> dict[str, list[list[str]]]:
    """{id: [[title, id], ...] from the root down to the node itself} in one recursive query."""
    if not node_ids:
        return {}
    marks = ",".join("?" * len(node_ids))
    rows = database.execute_sql(f"""
        WITH RECURSIVE up(start, id, parent_id, title, depth) AS (
            SELECT id, id, parent_id, title, 0 FROM node WHERE id IN ({marks})
            UNION ALL
            SELECT up.start, n.id, n.parent_id, n.title, up.depth + 1
            FROM node AS n JOIN up ON n.id = up.parent_id
        )
        SELECT start, id, title FROM up ORDER BY start, depth DESC""", node_ids).fetchall()
    result: dict[str, list[list[str]]] = {node_id: [] for node_id in node_ids}
    for start, node_id, title in rows:
        result[start].append([title, node_id])
    return result


def ancestor_ids(node_id: str) -> set[str]:
    """The ids of `node_id` and of every folder above it."""
    rows = database.execute_sql("""
        WITH RECURSIVE up(id, parent_id) AS (
            SELECT id, parent_id FROM node WHERE id = ?
            UNION ALL
            SELECT n.id, n.parent_id FROM node AS n JOIN up ON n.id = up.parent_id
        )
        SELECT id FROM up""", (node_id,)).fetchall()
    return {row[0] for row in rows}


def parent_folder(user: User, parent_id: object, pointer: str) -> Node:
    """The folder a new node goes into; unknown and foreign ids read alike (api.md §5)."""
    if not isinstance(parent_id, str) or not parent_id:
        raise ApiError(400, "required", "A parent folder is required.", pointer)
    parent = Node.select().where(Node.id == parent_id, Node.owner == user.id).first()
    if parent is None:
        raise ApiError(400, "does_not_exist",
                       f"Invalid parent {parent_id!r}: the folder does not exist.", pointer)
    if not parent.is_folder:
        raise invalid("A document cannot contain other nodes; choose a folder as parent.", pointer)
    return parent


def create_node(user: User, kind: str, parent: Node, title: str, **document_fields) -> Node:
    now = utcnow()
    fields = {}
    if kind == Node.DOCUMENT:
        fields = {"lang": document_fields["lang"], "ocr": document_fields.get("ocr", True),
                  "ocr_status": "received", "file_name": None, "size": 0, "page_count": 0}
    return Node.create(owner=user, parent=parent, kind=kind, title=title, created_at=now,
                       updated_at=now, **fields)


def update_node(node: Node, values: dict) -> Node:
    """Rename a node and, for a document, change its `lang` or `ocr`."""
    if node.is_special:
        raise permission_denied(f"The special folder {node.title} cannot be renamed.")
    if values:
        for name, value in values.items():
            setattr(node, name, value)
        node.updated_at = utcnow()
        node.save()
    return node


def move_nodes(user: User, node_ids: list[str], target_id: str) -> list[Node]:
    """Move several nodes under `target_id`, all or nothing (api.md §5, POST /nodes/move/)."""
    with database.atomic("IMMEDIATE"):
        target = owned_node(user, target_id)
        nodes = list(Node.select().where(Node.id.in_(node_ids), Node.owner == user.id))
        if len(nodes) != len(node_ids):
            raise not_found()
        for node in nodes:
            if node.is_special:
                raise permission_denied(f"The special folder {node.title} cannot be moved.")
        if not target.is_folder:
            raise invalid("The target is a document; nodes can only be moved into a folder.",
                          "/target_parent/id")
        if ancestor_ids(target.id) & set(node_ids):
            raise invalid("A folder cannot be moved into itself or into one of its own folders.",
                          "/target_parent/id")
        now = utcnow()
        Node.update(parent=target.id, updated_at=now).where(Node.id.in_(node_ids)).execute()
    for node in nodes:
        node.parent_id, node.updated_at = target.id, now
    return nodes


SUBTREE = """
    WITH RECURSIVE below(id) AS (
        SELECT ?
        UNION ALL
        SELECT n.id FROM node AS n JOIN below ON n.parent_id = below.id
    )"""


def delete_subtree(node: Node) -> list[str]:
    """Delete a node and everything below it in one transaction and one DELETE statement; returns
    the ids of the versions whose files the caller removes once this has committed.

    parent_id has no ON DELETE action, so SQLite checks the foreign key once, at the end of the
    statement, when the whole subtree is gone together; versions follow by their own cascade."""
    if node.is_special:
        raise permission_denied(f"The special folder {node.title} cannot be deleted.")
    with database.atomic("IMMEDIATE"):
        version_ids = [row[0] for row in database.execute_sql(
            SUBTREE + " SELECT v.id FROM document_version AS v JOIN below ON v.document_id = below.id",
            (node.id,))]
        database.execute_sql(f"DELETE FROM node WHERE id IN ({SUBTREE} SELECT id FROM below)",
                             (node.id,))
    return version_ids
