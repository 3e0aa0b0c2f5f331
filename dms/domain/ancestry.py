"""Walks up and down the folder tree: breadcrumbs, ancestors, depths and heights (dms.domain.tree
uses them for listings, moves' cycle and depth checks, and creation).

Every walk terminates even on a corrupt tree (a loop that only a bug or a hand-edited database
could make): walks collect ids with UNION, which stops at the first repetition, and the one walk
that counts levels is cut at a bound.
"""

from __future__ import annotations

from dms.db import database


def breadcrumbs(node_ids: list[str]) -> dict[str, list[list[str]]]:
    """{id: [[title, id], ...] from the root down to the node itself} in one recursive query.

    UNION (not UNION ALL) stops at a repeated row, so a corrupt loop cannot run forever; the path
    is put in order here by following the parent links, which also stops at a repetition."""
    if not node_ids:
        return {}
    marks = ",".join("?" * len(node_ids))
    rows = database.execute_sql(f"""
        WITH RECURSIVE up(start, id, parent_id, title) AS (
            SELECT id, id, parent_id, title FROM node WHERE id IN ({marks})
            UNION
            SELECT up.start, n.id, n.parent_id, n.title
            FROM node AS n JOIN up ON n.id = up.parent_id
        )
        SELECT start, id, parent_id, title FROM up""", node_ids).fetchall()
    nodes: dict[str, dict[str, tuple[str | None, str]]] = {node_id: {} for node_id in node_ids}
    for start, node_id, parent_id, title in rows:
        nodes[start][node_id] = (parent_id, title)
    result: dict[str, list[list[str]]] = {}
    for start, known in nodes.items():
        path, current, seen = [], start, set()
        while current in known and current not in seen:
            seen.add(current)
            parent_id, title = known[current]
            path.append([title, current])
            current = parent_id
        path.reverse()
        result[start] = path
    return result


def ancestor_ids(node_id: str) -> set[str]:
    """The ids of `node_id` and of every folder above it (terminates on a loop: UNION)."""
    rows = database.execute_sql("""
        WITH RECURSIVE up(id) AS (
            SELECT id FROM node WHERE id = ?
            UNION
            SELECT n.parent_id FROM node AS n JOIN up ON n.id = up.id WHERE n.parent_id IS NOT NULL
        )
        SELECT id FROM up""", (node_id,)).fetchall()
    return {row[0] for row in rows}


def depth(node_id: str) -> int:
    """How many levels below its special folder a node is (0 for .home and .inbox)."""
    return len(ancestor_ids(node_id)) - 1


def depths(node_ids: list[str]) -> dict[str, int]:
    """depth() of several nodes in one query (UNION: finite on any tree)."""
    if not node_ids:
        return {}
    marks = ",".join("?" * len(node_ids))
    rows = database.execute_sql(f"""
        WITH RECURSIVE up(start, id) AS (
            SELECT id, id FROM node WHERE id IN ({marks})
            UNION
            SELECT up.start, n.parent_id FROM node AS n JOIN up ON n.id = up.id
            WHERE n.parent_id IS NOT NULL
        )
        SELECT start, count(*) - 1 FROM up GROUP BY start""", node_ids).fetchall()
    return dict(rows)


def exceeds_height(node_ids: list[str], allowed: int) -> bool:
    """True if a node lies more than `allowed` levels below one of `node_ids`. The walk down
    counts levels and stops one level past `allowed`, so its work is bounded on any tree."""
    if allowed < 0:
        return True
    marks = ",".join("?" * len(node_ids))
    row = database.execute_sql(f"""
        WITH RECURSIVE below(id, level) AS (
            SELECT id, 0 FROM node WHERE id IN ({marks})
            UNION ALL
            SELECT n.id, below.level + 1 FROM node AS n JOIN below ON n.parent_id = below.id
            WHERE below.level <= ?
        )
        SELECT 1 FROM below WHERE level > ? LIMIT 1""", (*node_ids, allowed, allowed)).fetchone()
    return row is not None
