"""PostgreSQL counts a paged search's matches (api.md §13 `page`, and the Paperless-ngx dialect's
`count`) from the words' index, and finds them without reading the whole table: the planner's
settings that make it do so are set for a search's own statements and end with them, in a
transaction of the caller's too."""

from __future__ import annotations

import pytest

from dms.db import database
from dms.search.postgres import PostgresSearch
from tests.harness.database import add_document
from tests.harness.waiting import wait_indexed

pytestmark = pytest.mark.postgresql_only


def test_a_paged_search_counts_every_match(alice, config):
    made = [add_document(alice.user_id, alice.home_id, f"Brief {number}", "Abrechnung Strom")
            for number in range(30)]
    add_document(alice.user_id, alice.home_id, "Brief", "Abrechnung Wasser")
    wait_indexed(config)
    response = alice.get("/api/search/", params={"q": "strom", "page": "1", "page_size": "10"})
    assert response.status_code == 200, response.text
    page = response.json()
    assert (page["count"], page["pages"], len(page["results"])) == (30, 3, 10)
    assert {hit["id"] for hit in page["results"]} <= set(made)


def test_the_planner_settings_of_a_search_end_with_it(alice, config):
    made = {add_document(alice.user_id, alice.home_id, f"Brief {number}", "Abrechnung Strom")
            for number in range(3)}
    wait_indexed(config)
    settings = "SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan')"
    with database.atomic():  # the caller's transaction: the search runs in a savepoint of it
        total = PostgresSearch().total(alice.user_id, ["strom"])
        after_count = database.execute_sql(settings).fetchone()
        found = PostgresSearch().search(alice.user_id, ["strom"], 10)
        after_search = database.execute_sql(settings).fetchone()
    assert (total, after_count, after_search) == (3, ("on", "on"), ("on", "on"))
    assert {node_id for node_id, _ in found} == made
    assert PostgresSearch().total(alice.user_id, ["abrechnung"]) == 3
    assert database.execute_sql(settings).fetchone() == ("on", "on")
