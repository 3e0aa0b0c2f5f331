"""The tree of folders and documents (api.md, "Folders and documents"): ownership, titles,
breadcrumbs, creation, renames, moves, the trash's marks and deletes for good (listings are
dms.domain.listings').

The tree is an adjacency list (`node.parent_id`) with indexes per listing order, so:
- listing a folder reads one index range (no scan of the tree, no sorting in Python);
- a move is one UPDATE of the moved nodes' parent_id, whatever lies below them;
- ancestors (breadcrumbs, the cycle check of a move) are a recursive query up the parents,
  as long as the path is deep, not as large as the tree;
- a subtree is deleted in one statement inside one transaction.
Every lookup asks dms.domain.access.rule: a node neither the caller's nor shared with them is
indistinguishable from an unknown id. A node's owner is its folder's (a node made in a shared
folder is the folder owner's), and never changes: a move stays inside one owner's tree.

Concurrency rules: every change runs in `write_transaction()` and re-reads what it checks inside
it (the cycle check and the move it allows are one transaction), and writes only the columns it
changes. Every recursive query terminates even on a corrupt tree (a loop that only a bug or a
hand-edited database could make): walks collect ids with UNION, which stops at the first
repetition, and the one walk that counts depth is cut at a bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from dms.db import database, events, owner_scope, write_transaction
from dms.db.models import (
    Node,
    OcrStatus,
    User,
    from_row,
    insert_row,
    new_id,
    title_sort_key,
    update_rows,
    utcnow,
)
from dms.domain.access.rule import (
    EDITOR,
    NODE_COLUMNS,
    OWNER,
    RANK,
    changing,
    reach,
    role_of,
)
from dms.domain.ancestry import ancestor_ids, breadcrumbs, depth, depths, exceeds_height  # noqa: F401
from dms.domain.preferences import ocr_language
from dms.errors import Conflict, Forbidden, Invalid, NotFound
from dms.files.storage import Blob, version_blobs
from dms.processing.languages import check_lang
from dms.text import has_refused_characters, required_text

MAX_TITLE_LENGTH = 200
FORBIDDEN_TITLE_CHARACTERS = "/\\"
# Levels below .home/.inbox (DMS_MAX_TREE_DEPTH): every walk up a path is bounded by it.
DEFAULT_MAX_DEPTH = 1000
MAX_MOVED_NODES = 10_000  # per POST /nodes/move/ (SQLite binds at most 32,766 values at once)

# A node in the trash behaves as if it did not exist, except to the trash's own routes. Raw SQL
# made a model directly: every request about a node reads it (dms.db.models.from_row).
OWNED_NODE = (f"SELECT {', '.join(NODE_COLUMNS)} FROM node "
              "WHERE id = ? AND owner_id = ? AND trash_id IS NULL")
LIVE = "trash_id IS NULL"


def check_title(value: object, field: str = "title") -> str:
    """A title: 1-200 characters after trimming; no slash, backslash, control or invisible
    formatting character (dms.text)."""
    title = required_text(value, field, "title", MAX_TITLE_LENGTH)
    if any(c in FORBIDDEN_TITLE_CHARACTERS for c in title) or has_refused_characters(title):
        raise Invalid("A title may not contain /, \\, control characters or invisible formatting "
                      "characters such as right-to-left overrides.", field)
    return title


def owned_node(user: User, node_id: str, kind: str | None = None) -> Node:
    """The caller's own node `node_id` (of `kind`, if given), else the 404 of an unknown id —
    for what only ever concerns one's own tree (intake's folders, rules' targets); a node
    someone shares is reached through dms.domain.access.rule."""
    node = _live_node(user, node_id)
    if node is None or (kind is not None and node.kind != kind):
        raise NotFound()
    return node


def _live_node(user: User, node_id: str) -> Node | None:
    row = database.execute_sql(OWNED_NODE, (node_id, user.id)).fetchone()
    return from_row(Node, NODE_COLUMNS, row) if row is not None else None


def reached_nodes(user: User, node_ids: list[str]) -> list[Node]:
    """Several nodes the caller may read, in the order asked; 404 if any is unknown or foreign."""
    return [reach(user, node_id).node for node_id in node_ids]


def special_folder(user: User, special: str) -> Node:
    return Node.get(Node.owner == user.id, Node.special == special)


# -- walking the tree ----------------------------------------------------------------------------

def too_deep(max_depth: int) -> str:
    return (f"Folders can be nested at most {max_depth} levels deep (DMS_MAX_TREE_DEPTH); "
            "choose a folder higher up.")


# -- changes ---------------------------------------------------------------------------------

def parent_folder(user: User, parent_id: object, field: str) -> Node:
    """The folder a new node goes into: the caller's, or one shared with them as editor;
    unknown and foreign ids read alike (api.md, "Creating a folder or document")."""
    if not isinstance(parent_id, str) or not parent_id:
        raise Invalid("A parent folder is required.", field, code="required")
    try:
        parent = reach(user, parent_id, EDITOR).node  # 403 for a viewer
    except NotFound:  # one read of the node (inside a create's write lock too)
        raise Invalid(f"Invalid parent {parent_id!r}: the folder does not exist.", field,
                      code="does_not_exist") from None
    if not parent.is_folder:
        raise Invalid("A document cannot contain other nodes; choose a folder as parent.", field)
    return parent


def insert_node(user: User, kind: str, parent: Node, title: str, lang: str | None = None,
                ocr: bool = True, node_id: str | None = None) -> Node:
    """Add a node (inside the caller's write transaction; no checks): the row and its model.
    It is the folder owner's, whoever makes it (`user`, in its history)."""
    now = utcnow()
    fields: dict[str, Any] = dict(
        id=node_id or new_id(), owner=parent.owner_id, parent=parent.id, kind=kind, special=None,
        title=title, title_sort=title_sort_key(title), created_at=now, updated_at=now)
    if kind == Node.DOCUMENT:
        fields.update(lang=lang, ocr=ocr, ocr_status=OcrStatus.RECEIVED, file_name=None, size=0,
                      page_count=0)
    insert_row(Node, fields)
    return Node(**fields)


def document_settings(attributes: dict[str, Any],
                      default_lang: str | None = None) -> dict[str, Any]:
    """A document's validated `lang` (default `default_lang`, if given) and `ocr`."""
    values: dict[str, Any] = {}
    if "lang" in attributes or default_lang is not None:
        values["lang"] = check_lang(attributes.get("lang", default_lang))
    if "ocr" in attributes:
        if not isinstance(attributes["ocr"], bool):
            raise Invalid("ocr must be true or false.", "ocr")
        values["ocr"] = attributes["ocr"]
    return values


def find_child_folder(user: User, parent_id: str, title: str) -> Node | None:
    """The user's oldest folder called `title` in the folder `parent_id`, if any."""
    return cast("Node | None",
                Node.select().where(Node.parent == parent_id, Node.kind == Node.FOLDER,
                                    Node.title == title, Node.owner == user.id,
                                    Node.trash_id.is_null())
                .order_by(Node.created_at, Node.id).first())


def child_folder(user: User, parent_id: str, title: object,
                 max_depth: int = DEFAULT_MAX_DEPTH, source: str = "import") -> tuple[Node, bool]:
    """The user's folder called `title` in the folder `parent_id`, made if there is none (the
    oldest one if several share the name): (folder, made now). For imports, which re-run; the
    history names the `source` (import, consume, mail) and no actor."""
    title = check_title(title)
    with write_transaction(owner_scope(user.id)):
        parent = owned_node(user, parent_id, Node.FOLDER)
        existing = find_child_folder(user, parent.id, title)
        if existing is not None:
            return existing, False
        if depth(parent.id) + 1 > max_depth:
            raise Invalid(too_deep(max_depth))
        folder = insert_node(user, Node.FOLDER, parent, title)
        record_created(folder, parent, None, source=source)
        return folder, True


def record_created(node: Node, parent: Node, actor_id: str | None, **details: Any) -> None:
    """The `created` event of a node just inserted (in its write transaction)."""
    events.record(node.owner_id, node.id, events.CREATED, actor_id, title=node.title,
                  kind=node.kind, parent={"id": parent.id, "title": parent.title}, **details)


def create_node(user: User, kind: str, attributes: dict[str, Any], parent_id: object, *,
                parent_field: str, default_lang: str, max_depth: int = DEFAULT_MAX_DEPTH) -> Node:
    """A new folder or document under the caller's folder `parent_id` (POST /nodes/); a
    document without `lang` is read in the caller's preferred language (dms.domain.preferences)."""
    title = check_title(attributes.get("title"))
    settings = {}
    if kind == Node.DOCUMENT:
        settings = document_settings(attributes, ocr_language(user, default_lang))
    owner_id = parent_folder(user, parent_id, parent_field).owner_id
    with write_transaction(owner_scope(owner_id)):
        parent = parent_folder(user, parent_id, parent_field)
        if depth(parent.id) + 1 > max_depth:
            raise Invalid(too_deep(max_depth), parent_field)
        node = insert_node(user, kind, parent, title, **settings)
        record_created(node, parent, user.id)
        return node


def update_node(user: User, node_id: str, kind: str, attributes: dict[str, Any],
                route_kind: str | None = None,
                also: Callable[[Node], dict[str, Any]] | None = None) -> Node:
    """Rename a node and, for a document, change its `lang` or `ocr`, and what `also` changes in
    the same transaction (dms.domain.metadata.document.update_node: the metadata; it returns the
    changes for the `metadata_changed` event): only those columns are written, so a move or an
    upload committed meanwhile is never undone. `kind` is the type the request says the node is
    (409 if it is not); `route_kind` the kind the URL promises (404)."""
    changes = {}
    if "title" in attributes:
        changes["title"] = check_title(attributes["title"])
    if kind == Node.DOCUMENT:
        changes.update(document_settings(attributes))
    with changing(user, node_id, route_kind) as reached:
        node = reached.node
        if node.is_special:
            raise Forbidden(f"The special folder {node.title} cannot be renamed.")
        if node.kind != kind:
            # In the words of the request: its JSON:API types are the kinds' plurals.
            raise Conflict(f'The resource type "{kind}s" does not match `{node.kind}s`.',
                           "/data/type")
        columns: dict[str, Any] = {}
        if "title" in changes:
            columns.update(title=changes["title"], title_sort=title_sort_key(changes["title"]))
        if node.is_document:
            columns.update({k: changes[k] for k in ("lang", "ocr") if k in changes})
        changed_about = also(node) if also is not None and node.is_document else {}
        if columns or changed_about:
            columns["updated_at"] = utcnow()
            update_rows(Node, [node.id], columns)
            if columns.get("title", node.title) != node.title:
                events.record(node.owner_id, node.id, events.RENAMED, user.id,
                              title=columns["title"], previous=node.title)
            if changed_about:
                events.record(node.owner_id, node.id, events.METADATA_CHANGED, user.id,
                              changes=changed_about)
            for name, value in columns.items():
                setattr(node, name, value)
    return node


def move_nodes(user: User, node_ids: list[str], target_id: str,
               max_depth: int = DEFAULT_MAX_DEPTH) -> list[Node]:
    """Move several nodes under `target_id`, all or nothing (api.md, "Moving", POST /nodes/move/).
    The checks and the move are one write transaction: two moves that would close a loop
    between them (A into B, B into A) are serialised, and the second one is refused.

    In a folder shared with them as editor, someone moves nodes only inside it: a move never
    takes a node to another owner's tree, nor out of the shared folder, nor moves the shared
    folder itself (each node's and the target's role is read with the rule)."""
    node_ids = list(dict.fromkeys(node_ids))
    if not node_ids:
        reach(user, target_id)  # nothing to move, but an unknown target is still unknown
        return []
    if len(node_ids) > MAX_MOVED_NODES:
        raise Invalid(f"At most {MAX_MOVED_NODES} nodes can be moved at once; move them in parts.",
                      "/nodes")
    with changing(user, target_id) as reached:
        target = reached.node
        if reached.role == OWNER:
            # By id only, the owner compared here: with the owner in SQL, SQLite walks all the
            # owner's nodes (see dms.search.service._owned).
            rows = database.execute_sql(
                f"SELECT {', '.join(NODE_COLUMNS)} FROM node WHERE id IN "
                f"({','.join('?' * len(node_ids))})", node_ids)
            nodes = [node for node in (from_row(Node, NODE_COLUMNS, row) for row in rows)
                     if node.owner_id == user.id and node.trash_id is None]
        else:
            nodes = _moved_by_editor(user, node_ids, target)
        if len(nodes) != len(node_ids):
            raise NotFound()
        for node in nodes:
            if node.is_special:
                raise Forbidden(f"The special folder {node.title} cannot be moved.")
        if not target.is_folder:
            raise Invalid("The target is a document; nodes can only be moved into a folder.",
                          "/target_parent/id")
        above = ancestor_ids(target.id)  # the target and its folders up to its special folder
        if above & set(node_ids):
            raise Invalid("A folder cannot be moved into itself or into one of its own folders.",
                          "/target_parent/id")
        new_depth = len(above)  # depth(target) + 1, without walking up again
        # Only a folder that goes deeper than it is can take its subtree past the limit (the
        # tree below it already fits): walking those subtrees is the costly part of a move.
        deeper = [node_id for node_id, old in depths(
            [node.id for node in nodes if node.is_folder]).items() if old < new_depth]
        if new_depth > max_depth or (deeper and exceeds_height(deeper, max_depth - new_depth)):
            raise Invalid(too_deep(max_depth), "/target_parent/id")
        now = utcnow()
        update_rows(Node, node_ids, {"parent": target.id, "updated_at": now})
        old_parents = list({node.parent_id for node in nodes})
        sources = dict(database.execute_sql(
            f"SELECT id, title FROM node WHERE id IN ({','.join('?' * len(old_parents))})",
            old_parents).fetchall())
        events.record_many([
            (target.owner_id, node.id, events.MOVED, user.id,
             {"title": node.title, "from": {"id": node.parent_id,
                                            "title": sources.get(node.parent_id)},
              "to": {"id": target.id, "title": target.title}})
            for node in nodes if node.parent_id != target.id])
    for node in nodes:
        node.parent_id, node.updated_at = target.id, now
    return nodes


def _moved_by_editor(user: User, node_ids: list[str], target: Node) -> list[Node]:
    """The nodes an editor moves into `target` (a folder of a tree shared with them): each must be
    reached as editor from inside a grant that covers the target too (so it stays in the shared
    folder; the grant's own node never moves). A node that is not theirs to see → 404 (in the
    caller's loop: fewer nodes), one they may not move → 403. At most MAX_MOVED_NODES nodes,
    two queries each."""
    above_target = ancestor_ids(target.id)
    nodes = []
    for node_id in node_ids:
        reached = role_of(user, node_id)
        if reached is None or reached.node.owner_id != target.owner_id:
            continue
        if RANK[reached.role] < RANK[EDITOR]:
            raise Forbidden("It is shared with you to read; changing it needs the editor role.")
        if not any(RANK[role] >= RANK[EDITOR] and where != node_id and where in above_target
                   for where, role in reached.grants):
            raise Forbidden(f"{reached.node.title} can only be moved inside the folder shared "
                            "with you.")
        nodes.append(reached.node)
    return nodes


SUBTREE = """
    WITH RECURSIVE below(id) AS (
        SELECT id FROM node WHERE id = ?
        UNION
        SELECT n.id FROM node AS n JOIN below ON n.parent_id = below.id
    )"""


def subtree_version_ids(node_id: str) -> list[str]:
    """The ids of every version of every document in the subtree of `node_id`."""
    return [row[0] for row in database.execute_sql(
        SUBTREE + " SELECT v.id FROM document_version AS v "
        "JOIN below ON v.document_id = below.id", (node_id,))]


def delete_subtree_rows(node_id: str) -> list[Blob]:
    """Delete the node and everything below it for good, in the caller's write transaction and
    one DELETE statement; returns the files of its versions, which the caller removes once that
    has committed.

    parent_id has no ON DELETE action, so SQLite checks the foreign key once, at the end of the
    statement, when the whole subtree is gone together; versions, pages, tags, the history and
    trash entries follow by their own cascades."""
    files = [blob for row in database.execute_sql(
        SUBTREE + " SELECT v.id, v.sha256, v.searchable_sha256 FROM document_version AS v "
        "JOIN below ON v.document_id = below.id", (node_id,)) for blob in version_blobs(*row)]
    database.execute_sql(f"DELETE FROM node WHERE id IN ({SUBTREE} SELECT id FROM below)",
                         (node_id,))
    return files


# The live test sits inside the subquery: beside `id IN (...)` in the outer WHERE, SQLite chose
# an index on trash_id and stepped over every live node of the table for each call.
MARK_TRASHED = (f"UPDATE node SET trash_id = ? WHERE id IN ({SUBTREE} SELECT below.id FROM below "
                f"JOIN node AS live ON live.id = below.id WHERE live.{LIVE})")


def trash_subtree(node_id: str) -> list[str]:
    """Put the live nodes of the subtree of `node_id` in the trash, marked with its id (in the
    caller's write transaction); returns their ids. Nodes below that a deletion of their own put
    in the trash before keep their mark: restoring this one leaves them there."""
    database.execute_sql(MARK_TRASHED, (node_id, node_id))
    return [row[0] for row in database.execute_sql(
        "SELECT id FROM node WHERE trash_id = ?", (node_id,))]
