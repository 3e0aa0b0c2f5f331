"""The tree's walks and the trash's marks use indexes, not whole-table scans (migration 0018):
after migration 0013 made the listing indexes partial, a walk down a subtree made SQLite build an
automatic index over the whole node table each time, and marking a subtree as trashed stepped
over every live node. And listings filtered by a correspondent, a type or a custom field read
their own index range in the listing's order (migration 0022), while the unfiltered listing keeps
its own index (an index led by parent_id for the correspondents once drew it away: 30x slower);
names and a date are compared on the date index's entries (migration 0037). Checked on SQLite's
query plans (structure, not time: tests never assert a time; bench/trash.py, bench/metadata.py
and bench/search.py measure it)."""

from __future__ import annotations

import pytest

from dms.domain.listings import DEFAULT_ORDER, ROW_COLUMNS, FieldSortListing
from dms.domain.metadata.fieldquery import QueryField, parse_field_query
from dms.domain.metadata.orderedquery import ordered_matches
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


# Listings filtered by what documents are about (migration 0022; bench/metadata.py times them).
FIELDS = [QueryField("f-paid", "Paid", "boolean"), QueryField("f-due", "Due", "date")]
PAGE = f"SELECT {ROW_COLUMNS} FROM node WHERE parent_id = ? AND trash_id IS NULL AND {{}} " \
       f"ORDER BY {DEFAULT_ORDER} LIMIT 100 OFFSET 0"


def matched(query: str, scope: str = "parent_id = ?") -> tuple[str, tuple]:
    found = ordered_matches(parse_field_query(query, FIELDS))
    assert found is not None
    return found.sql(scope, ("folder",) if scope else ())


def test_the_unfiltered_listing_still_reads_the_childrens_index_in_order(config, alice):
    assert plan(config, PAGE.format("1 = 1"), alice.home_id) == [
        "SEARCH node USING INDEX node_children (parent_id=?)"]


def test_a_listing_by_correspondent_or_type_reads_its_own_range_in_order(config, alice):
    for name in ("correspondent", "document_type"):
        condition = f"kind = 'document' AND coalesce({name}_id, '') = ?"  # as filters writes it
        for value in ("", "x"):  # none, an id
            assert plan(config, PAGE.format(condition), alice.home_id, value) == [
                f"SEARCH node USING INDEX node_children_{name} (<expr>=? AND parent_id=? "
                "AND kind=?)"]
            owner = (f"SELECT id FROM node WHERE owner_id = ? AND kind = 'document' AND trash_id "
                     f"IS NULL AND {condition} ORDER BY title_sort, id LIMIT 100")
            assert plan(config, owner, "a user", value) == [
                f"SEARCH node USING INDEX node_owner_{name} (<expr>=? AND owner_id=? AND kind=?)"]


def test_a_custom_field_query_reads_its_values_index_in_title_order(config, alice):
    def searches(sql: str, params: tuple) -> list[str]:
        steps = plan(config, sql, *params)
        assert not [step for step in steps if "TEMP B-TREE" in step or step.startswith("SCAN c")]
        return [step for step in steps if step.startswith(("SEARCH", "MERGE"))]

    bool_folder = ("SEARCH custom_field_value USING COVERING INDEX custom_field_value_bool_folder "
                   "(field_id=? AND parent_id=? AND trash_id=? AND value_bool=?)")
    rows, params = matched('["Paid", "exact", true]')
    assert searches(f"SELECT count(*) FROM ({rows}) AS m", params) == [bool_folder]
    rows, params = matched('["Due", "gt", "2024-01-01"]', "")
    assert searches(f"{rows} LIMIT 100 OFFSET 500", params) == [
        "SEARCH custom_field_value USING COVERING INDEX custom_field_value_date_owner "
        "(field_id=? AND trash_id=?)"]
    rows, params = matched('["AND", [["Paid", "exact", true], ["Due", "gt", "2024-01-01"]]]')
    assert searches(f"SELECT count(*) FROM ({rows}) AS m", params) == [
        "MERGE (INTERSECT)", bool_folder,
        "SEARCH custom_field_value USING COVERING INDEX custom_field_value_date_folder "
        "(field_id=? AND parent_id=? AND trash_id=?)"]


def test_a_sort_by_a_field_reads_its_values_in_value_order(config, alice):
    listing = FieldSortListing("parent_id = ? AND trash_id IS NULL", ("folder",),
                               "parent_id = ? AND ", ("folder",), "field", "value_cents", True)
    steps = plan(config, f"SELECT document_id {listing.values} ORDER BY {listing.value_order} "
                         "LIMIT 100 OFFSET 500", *listing.value_params)
    assert steps == ["SEARCH custom_field_value USING COVERING INDEX "
                     "custom_field_value_cents_folder_order (field_id=? AND parent_id=? AND "
                     "trash_id=? AND value_cents>?)"]  # `IS NOT NULL`: the range above NULL


def test_names_and_a_date_are_compared_on_the_date_index(config, alice):
    """Migration 0037: the correspondent and the type are the date index's last columns, so a
    search of names and a date (the document list's conditions) compares them without visiting
    each row of the date's range."""
    [(sql,)] = query_sql(config, "SELECT sql FROM sqlite_master "
                                 "WHERE name = 'node_owner_document_date'")
    assert sql == ("CREATE INDEX node_owner_document_date ON node (owner_id, kind, "
                   "coalesce(document_date, substr(created_at, 1, 10)), id, correspondent_id, "
                   "document_type_id) WHERE trash_id IS NULL")
    names_and_date = (
        f"SELECT {ROW_COLUMNS} FROM node WHERE owner_id = ? AND kind = ? AND trash_id IS NULL "
        "AND ((correspondent_id IN (?)) AND (coalesce(document_date, substr(created_at, 1, 10)) "
        ">= ? AND coalesce(document_date, substr(created_at, 1, 10)) <= ?)) "
        "ORDER BY updated_at DESC, id DESC LIMIT 100")
    assert plan(config, names_and_date, alice.user_id, "document", "c", "2019-01-01",
                "2019-12-31")[0] == ("SEARCH node USING INDEX node_owner_document_date "
                                     "(owner_id=? AND kind=? AND <expr>>? AND <expr><?)")
