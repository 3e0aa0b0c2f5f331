"""Walks up and down the folder tree: breadcrumbs, ancestors, depths and heights (dms.domain.tree
uses them for listings, moves' cycle and depth checks, and creation).

Every walk terminates even on a corrupt tree (a loop that only a bug or a hand-edited database
could make): walks collect ids with UNION, which stops at the first repetition, breadcrumbs never
read an id twice, and the one walk that counts levels is cut at a bound.
"""

from __future__ import annotations

from collections.abc import Sized

from dms.db import database

LEVEL_QUERIES = 2  # levels of breadcrumbs read one query each; the rest in one recursive query


def _marks(ids: Sized) -> str:
    return ",".join("?" * len(ids))


def breadcrumbs(node_ids: list[str], known: dict[str, tuple[str | None, str]] | None = None
                ) -> dict[str, list[list[str]]]:
    """{id: [[title, id], ...] from the root down to the node itself}. `known`: {id: (parent id,
    title)} of nodes the caller has read already (search's hits), not read again.

    The first LEVEL_QUERIES levels one query each, reading the not yet known parents of the
    level below with `id IN (...)`: ancestors that several nodes share (siblings in a listing) are
    read once, and SQLite reads a sorted list of ids faster than a recursive query that walks up
    from each node (at a million nodes, 100 random documents: 2.4 ms against 3.5; 100 siblings
    1.0 against 2.7). Anything higher up, in one recursive query (one round trip to PostgreSQL
    however deep the tree). An id is never read twice and the recursive query stops at a repeated
    row (UNION), so the walk ends even on a corrupt tree (a loop). The path is put in order here
    by following the parent links, which also stops at a repetition."""
    if not node_ids:
        return {}
    nodes = dict(known or {})
    wanted = {node_id for node_id in node_ids if node_id not in nodes}
    wanted |= {parent for parent, _ in nodes.values() if parent is not None and parent not in nodes}
    for _ in range(LEVEL_QUERIES):
        if not wanted:
            break
        rows = database.execute_sql(
            f"SELECT id, parent_id, title FROM node WHERE id IN ({_marks(wanted)})",
            list(wanted)).fetchall()
        for node_id, parent_id, title in rows:
            nodes[node_id] = (parent_id, title)
        wanted = {parent_id for _, parent_id, _ in rows
                  if parent_id is not None and parent_id not in nodes}
    if wanted:
        for node_id, parent_id, title in database.execute_sql(f"""
                WITH RECURSIVE up(id, parent_id, title) AS (
                    SELECT id, parent_id, title FROM node WHERE id IN ({_marks(wanted)})
                    UNION
                    SELECT n.id, n.parent_id, n.title FROM node AS n JOIN up ON n.id = up.parent_id
                )
                SELECT id, parent_id, title FROM up""", list(wanted)):
            nodes.setdefault(node_id, (parent_id, title))
    result: dict[str, list[list[str]]] = {}
    for start in node_ids:
        path, current, seen = [], start, set()
        while current in nodes and current not in seen:
            seen.add(current)
            parent_id, title = nodes[current]
            path.append([title, current])
            current = parent_id  # type: ignore[assignment]  # None ends the walk
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
