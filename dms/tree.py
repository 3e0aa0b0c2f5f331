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

from dms.db import database
from dms.jsonapi import ApiError, invalid, not_found, permission_denied
from dms.models import Node, User, utcnow

MAX_TITLE_LENGTH = 200
FORBIDDEN_TITLE_CHARACTERS = "/\\"

# sort= value -> ORDER BY; each matches one index of migration 0002 (forwards or backwards).
SORTS = {
    "title": (Node.title_sort, Node.id),
    "created_at": (Node.created_at, Node.id),
    "updated_at": (Node.updated_at, Node.id),
}
DEFAULT_ORDER = (Node.kind.desc(), Node.title_sort, Node.id)  # folders first, then by title


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
    query = Node.select().where(Node.id == node_id, Node.owner == user.id)
    if kind is not None:
        query = query.where(Node.kind == kind)
    node = query.first()
    if node is None:
        raise not_found()
    return node


def special_folders(user: User):
    return (Node.select().where(Node.owner == user.id, Node.special.is_null(False))
            .order_by(Node.title_sort))


def children(folder: Node, sort: str | None = None):
    """The children of `folder` in listing order: folders first then documents, by title, unless
    `sort` names an attribute (`title`, `created_at`, `updated_at`; `-` in front reverses)."""
    query = Node.select().where(Node.parent == folder.id)
    if not sort:
        return query.order_by(*DEFAULT_ORDER)
    descending = sort.startswith("-")
    order = SORTS.get(sort.lstrip("-"))
    if order is None:
        raise invalid(f"Cannot sort by {sort!r}; use one of {', '.join(SORTS)}, "
                      "optionally with a leading -.")
    return query.order_by(*(column.desc() if descending else column for column in order))


def of_kind(user: User, kind: str):
    return Node.select().where(Node.owner == user.id, Node.kind == kind).order_by(
        Node.title_sort, Node.id)


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


def delete_subtree(node: Node) -> None:
    """Delete a node and everything below it in one transaction and one DELETE statement.

    parent_id has no ON DELETE action, so SQLite checks the foreign key once, at the end of the
    statement, when the whole subtree is gone together."""
    if node.is_special:
        raise permission_denied(f"The special folder {node.title} cannot be deleted.")
    with database.atomic("IMMEDIATE"):
        database.execute_sql("""
            DELETE FROM node WHERE id IN (
                WITH RECURSIVE below(id) AS (
                    SELECT ?
                    UNION ALL
                    SELECT n.id FROM node AS n JOIN below ON n.parent_id = below.id
                )
                SELECT id FROM below)""", (node.id,))
