"""`dms verify` for the search index: does it hold what the database holds?

PostgreSQL: one search row per node, none left stale. SQLite (tantivy): the number of folders
and documents (when no change is waiting in the outbox) and a random sample of nodes, each of
which must be in the index. A drifting index is repaired by
rebuilding it (`dms reindex`, or `dms verify --repair`)."""

from __future__ import annotations

from pathlib import Path

from dms.db import database, is_postgresql
from dms.search import engine, outbox
from dms.search.index import IndexUnusable, SearchIndex
from dms.search.postgres import PostgresSearch

SAMPLE = 200
SHOWN = 10  # ids named in the report


def compare(data_dir: Path) -> tuple[list[str], str | None]:
    """(differences found, a note when there is no index to compare)."""
    if is_postgresql():
        return _compare_postgresql(), None
    index = SearchIndex(data_dir / "search")
    try:
        index.open()
    except IndexUnusable as reason:
        return [], (f"The search index is not built ({reason}): the server builds it when it "
                    "starts, or run `dms reindex`.")
    problems = []
    pending = outbox.pending_count()
    nodes, held = outbox.node_count(), index.count()
    if pending == 0 and held != nodes:
        problems.append(f"the index holds {held} folders and documents, the database {nodes}")
    sample = [row[0] for row in database.execute_sql(
        "SELECT id FROM node WHERE id NOT IN (SELECT node_id FROM search_outbox) "
        "AND trash_id IS NULL ORDER BY random() LIMIT ?", (SAMPLE,))]
    missing = [node_id for node_id in sample if not index.holds(node_id)]
    if missing:
        shown = ", ".join(missing[:SHOWN]) + (", ..." if len(missing) > SHOWN else "")
        problems.append(f"{len(missing)} of {len(sample)} sampled nodes are not in the index: "
                        f"{shown}")
    return problems, None


def _compare_postgresql() -> list[str]:
    """The search rows of PostgreSQL: one per node (a foreign key and the triggers keep it so),
    none left marked for recomputation after its transaction committed."""
    problems = []
    nodes, held = outbox.node_count(), PostgresSearch().count()
    if held != nodes:
        problems.append(f"the index holds {held} folders and documents, the database {nodes}")
    stale = database.execute_sql("SELECT node_id FROM search_entry WHERE stale <> 0 "
                                 "ORDER BY node_id LIMIT ?", (SHOWN + 1,)).fetchall()
    if stale:
        shown = ", ".join(row[0] for row in stale[:SHOWN]) + (", ..." if len(stale) > SHOWN else "")
        problems.append(f"search entries not brought up to date: {shown}")
    return problems


def rebuild(data_dir: Path) -> str:
    """Rebuild here, or ask the running server to; says which."""
    try:
        count = engine(data_dir).rebuild_now()
    except RuntimeError:
        outbox.request_rebuild()
        return "Asked the running server to rebuild the search index."
    return f"Rebuilt the search index: {count} folders and documents."
