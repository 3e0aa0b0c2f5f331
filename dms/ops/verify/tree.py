"""The folder-tree checks and their repair: is the node table a tree, and re-parenting into
`lost+found` what is not.

A tree here means: no loop, every node reachable from its owner's special folders (.home, .inbox)
through folders of the same owner. `check_tree()` finds loops, nodes below a loop or a misplaced
node (unreachable), and nodes whose parent belongs to another user or is a document (misplaced);
`repair_tree()` moves the nodes that anchor those problems into a `lost+found` folder in their
owner's .home (`dms verify --repair`, in dms.ops.verify's write transaction).

Every query terminates on a corrupt tree: the one recursive query walks down from the special
folders with UNION over node ids (a node is visited once), and loops are told from nodes below
them in Python, following parent links with a visited set. The checks take any `execute(sql,
params)` (peewee's or sqlite3's), so a restore (dms.ops.backup.restore) runs them on the database it
is about to restore.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dms.db.models import new_id

LOST_AND_FOUND = "lost+found"

# Nodes not reachable from the special folders by links that stay with one owner and go through
# folders only. UNION (not UNION ALL) over ids: each node enters once, so a loop ends the walk.
UNREACHABLE = """
    WITH RECURSIVE reach(id) AS (
        SELECT id FROM node WHERE special IS NOT NULL
        UNION
        SELECT n.id FROM reach AS r JOIN node AS p ON p.id = r.id
        JOIN node AS n ON n.parent_id = r.id
        WHERE p.kind = 'folder' AND n.owner_id = p.owner_id
    )
    SELECT n.id, n.parent_id, n.owner_id, n.parent_id IS NOT NULL AND p.id IS NULL
    FROM node AS n LEFT JOIN node AS p ON p.id = n.parent_id
    WHERE n.id NOT IN (SELECT id FROM reach)"""

MISPLACED = """
    SELECT n.id, n.parent_id, n.owner_id != p.owner_id, p.kind != 'folder'
    FROM node AS n JOIN node AS p ON p.id = n.parent_id
    WHERE n.owner_id != p.owner_id OR p.kind != 'folder'"""

Execute = Callable[..., Any]  # execute(sql, params=()) -> a cursor (peewee's or sqlite3's)


@dataclass
class Tree:
    """What is wrong with the folder tree; every id maps to the node's parent id."""
    loops: list[list[str]] = field(default_factory=list)  # each in parent order, smallest id first
    misplaced: dict[str, str] = field(default_factory=dict)  # id -> why ("a document", ...)
    unreachable: dict[str, str | None] = field(default_factory=dict)  # below a loop or the above
    parents: dict[str, str | None] = field(default_factory=dict)  # of every node found
    owners: dict[str, str] = field(default_factory=dict)  # of every node found
    # The nodes a repair moves into lost+found (the rest come along below them): id -> why.
    anchors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.loops or self.misplaced or self.unreachable or self.anchors)

    def loop_ids(self) -> list[str]:
        return sorted(node_id for loop in self.loops for node_id in loop)


def check_tree(execute: Execute) -> Tree:
    """Loops, misplaced and unreachable nodes: one recursive query that always ends, then Python."""
    tree = Tree()
    gone: set[str] = set()
    node_id: str | None
    for node_id, parent_id, owner_id, parent_gone in execute(UNREACHABLE, ()).fetchall():
        tree.parents[node_id], tree.owners[node_id] = parent_id, owner_id
        if parent_gone or parent_id is None:
            gone.add(node_id)
    for node_id, parent_id, other_owner, not_folder in execute(MISPLACED, ()).fetchall():
        tree.misplaced[node_id] = ("another user's document" if other_owner and not_folder
                                   else "another user's folder" if other_owner else "a document")
        tree.parents.setdefault(node_id, parent_id)
    # Follow parent links from each unreachable node; a node met again on the same walk closes
    # a loop. Every node is walked through once (`done`), so this is linear and always ends.
    done: set[str] = set()
    for start in sorted(tree.parents):
        path: list[str] = []
        on_path: dict[str, int] = {}
        node_id = start
        while node_id is not None and node_id in tree.parents and node_id not in done:
            if node_id in on_path:
                loop = path[on_path[node_id]:]
                smallest = loop.index(min(loop))
                tree.loops.append(loop[smallest:] + loop[:smallest])
                break
            on_path[node_id] = len(path)
            path.append(node_id)
            node_id = tree.parents[node_id]
        done.update(path)
    tree.loops.sort()
    in_loops = set(tree.loop_ids())
    for node_id in sorted(tree.parents):
        if node_id not in in_loops and node_id not in tree.misplaced and \
                (node_id not in gone or tree.parents[node_id] is None):
            tree.unreachable[node_id] = tree.parents[node_id]
    # What a repair moves: misplaced nodes, one node of each loop that has none of them (its
    # smallest id: the rest of the loop stays below it), and nodes whose parent is gone.
    for node_id, why in tree.misplaced.items():
        tree.anchors[node_id] = f"its parent is {why}"
    for loop in tree.loops:
        if not any(node_id in tree.misplaced for node_id in loop):
            tree.anchors[loop[0]] = "it was in a loop"
    for node_id in gone:
        if node_id not in tree.anchors:
            tree.anchors[node_id] = "its parent is gone" if tree.parents[node_id] else \
                "it had no parent"
    return tree


def repair_tree(execute: Execute, tree: Tree, now: str) -> list[str]:
    """Move `tree`'s anchors into their owner's lost+found (made in .home when missing); one line
    per fix. Run inside the caller's write transaction; `now` is the stored updated_at."""
    fixes: list[str] = []
    found: dict[str, str | None] = {}  # owner -> their lost+found folder

    def lost_and_found(owner_id: str) -> str | None:
        if owner_id in found:
            return found[owner_id]
        row = execute("SELECT n.id, u.username FROM node AS n "
                      "JOIN \"user\" AS u ON u.id = n.owner_id "
                      "WHERE n.owner_id = ? AND n.special = 'home' AND n.kind = 'folder'",
                      (owner_id,)).fetchone()
        if row is None:
            found[owner_id] = None
            return None
        home_id, username = row
        existing = execute("SELECT id FROM node WHERE parent_id = ? AND owner_id = ? AND "
                           "kind = 'folder' AND special IS NULL AND title = ? ORDER BY id LIMIT 1",
                           (home_id, owner_id, LOST_AND_FOUND)).fetchone()
        if existing:
            found[owner_id] = existing[0]
        else:
            found[owner_id] = new_id()
            execute("INSERT INTO node (id, owner_id, parent_id, kind, special, title, title_sort, "
                    "ocr_attempts, size, page_count, created_at, updated_at) "
                    "VALUES (?, ?, ?, 'folder', NULL, ?, ?, 0, 0, 0, ?, ?)",
                    (found[owner_id], owner_id, home_id, LOST_AND_FOUND,
                     LOST_AND_FOUND.casefold(), now, now))
            fixes.append(f"Created the folder {LOST_AND_FOUND} ({found[owner_id]}) in the .home "
                         f"of {username}.")
        return found[owner_id]

    for node_id, why in sorted(tree.anchors.items()):
        owner_id = tree.owners.get(node_id) or execute(
            "SELECT owner_id FROM node WHERE id = ?", (node_id,)).fetchone()[0]
        target = lost_and_found(owner_id)
        if target is None:
            fixes.append(f"Not repaired: node {node_id} ({why}): its owner has no .home folder "
                         f"to hold a {LOST_AND_FOUND}.")
            continue
        execute("UPDATE node SET parent_id = ?, updated_at = ? WHERE id = ?",
                (target, now, node_id))
        fixes.append(f"Moved node {node_id} into {LOST_AND_FOUND} ({target}): {why}.")
    return fixes
