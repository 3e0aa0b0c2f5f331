"""The tree's walks and the trash's marks use indexes, not whole-table scans (migration 0018):
after migration 0013 made the listing indexes partial, a walk down a subtree made SQLite build an
automatic index over the whole node table each time, and marking a subtree as trashed stepped
over every live node. Checked on SQLite's query plans (structure, not time: tests never assert a
time; bench/trash.py measures it)."""

from __future__ import annotations

import pytest

from dms.domain.tree import MARK_TRASHED, SUBTREE
from tests.harness.database import query_sql

pytestmark = pytest.mark.sqlite_only  # SQLite's planner; PostgreSQL plans by its statistics


def plan(config, sql: str, *params) -> list[str]:
    return [row[-1] for row in query_sql(config, "EXPLAIN QUERY PLAN " + sql, *params)]


def test_a_subtree_walk_finds_children_by_the_parent_index(config, alice):
    steps = plan(config, f"{SUBTREE} SELECT id FROM below", alice.home_id)
    assert "SEARCH n USING INDEX node_parent_all (parent_id=?)" in steps
    assert not [step for step in steps if "AUTOMATIC" in step or step.startswith("SCAN n")]


def test_marking_a_subtree_as_trashed_looks_up_its_own_nodes_only(config, alice):
    steps = plan(config, MARK_TRASHED, alice.home_id, alice.home_id)
    assert steps[0] == "SEARCH node USING COVERING INDEX sqlite_autoindex_node_1 (id=?)"
    assert not [step for step in steps if "AUTOMATIC" in step or "node_trash" in step]


def test_the_trash_index_holds_only_trashed_nodes(config, alice):
    [(sql,)] = query_sql(config, "SELECT sql FROM sqlite_master WHERE name = 'node_trash'")
    assert sql == "CREATE INDEX node_trash ON node (trash_id) WHERE trash_id IS NOT NULL"
    assert plan(config, "SELECT id FROM node WHERE trash_id = ?", alice.home_id) == [
        "SEARCH node USING INDEX node_trash (trash_id=?)"]
