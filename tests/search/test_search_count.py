"""PostgreSQL counts a paged search's matches (api.md §13 `page`, and the Paperless-ngx dialect's
`count`) from the words' index, and finds them without reading the whole table: the planner's
settings that make it do so are set for a search's own statements and end with them, in a
transaction of the caller's too. A word that the statistics count in most rows is looked for in
the owner's first rows (a walk), any other by its bitmap: the same matches either way."""

from __future__ import annotations

import pytest

from dms import search
from dms.db import database
from dms.db.models import User, utcnow
from dms.search import postgres
from dms.search.postgres import PostgresSearch
from tests.harness.database import add_document
from tests.harness.statements import logged_statements
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


def statements_of(search) -> list[str]:
    """The statements a search ran (peewee's debug log)."""
    return [sql for sql, _ in logged_statements(search)]


def test_a_word_in_most_bodies_is_walked_to_any_other_by_its_bitmap(alice, server, config,
                                                                    monkeypatch):
    common = {add_document(alice.user_id, alice.home_id, f"Brief {number}",
                           f"Abrechnung Strom {number}") for number in range(40)}
    rare = {add_document(alice.user_id, alice.home_id, "Brief", "Abrechnung Wasser")}
    database.execute_sql("ANALYZE search_entry")
    monkeypatch.setattr(postgres, "_statistics", (-postgres.STATISTICS_SECONDS, {}))
    assert (postgres.common("'strom'"), postgres.common("'wasser'"), postgres.common("'strom':*"),
            postgres.common("'strom' & 'abrechnung'")) == (True, False, False, False)

    def found(word: str, limit: int) -> set[str]:
        return {node_id for node_id, _ in PostgresSearch().search(alice.user_id, [word], limit)}

    # 40 of 41 bodies hold `strom`: 10 of them from the walk; all 40 from the bitmap after a
    # walk that found fewer than the 100 wanted; `wasser` by its bitmap alone.
    walked = statements_of(lambda: found("strom", 10))
    assert len(found("strom", 10)) == 10 and found("strom", 10) <= common
    assert found("strom", 100) == common and found("wasser", 100) == rare
    walk = "(SELECT * FROM search_entry"
    assert sum(walk in sql for sql in walked) == 1
    assert sum(walk in sql for sql in statements_of(lambda: found("wasser", 10))) == 0
    # Through the node's row too: the query language's date, one word to rank.
    year = utcnow().year
    user, services = User.get_by_id(alice.user_id), server.app.services

    def ids(text: str) -> set[str]:
        return {hit["id"] for hit in search.query(services.search, user, text, limit=10)}

    by_date = statements_of(lambda: ids(f"strom created:{year}"))
    assert len(ids(f"strom created:{year}")) == 10 and ids(f"strom created:{year}") <= common
    assert sum(walk in sql for sql in by_date) == 1
    assert ids(f"strom created:{year - 1}") == set()
    settings = "SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan')"
    assert database.execute_sql(settings).fetchone() == ("on", "on")


def test_the_planner_knows_the_dates_on_the_papers(alice):
    """The query language's dates compare an expression that only a partial index holds, of
    which PostgreSQL keeps no statistics: migration 0040's statistics of the expression tell
    the planner how many nodes a range of dates holds (no guess of 0.5 %), so that the narrower
    side of a search leads."""
    for number in range(30):
        add_document(alice.user_id, alice.home_id, f"Brief {number}", "Abrechnung")
    database.execute_sql("ANALYZE node")
    year = utcnow().year
    nodes = database.execute_sql("SELECT count(*) FROM node").fetchone()[0]

    def estimate(first: int, last: int) -> int:
        plan = database.execute_sql(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM node WHERE "
            "coalesce(document_date, substr(created_at, 1, 10)) >= ? "
            "AND coalesce(document_date, substr(created_at, 1, 10)) <= ?",
            (f"{first}-01-01", f"{last}-12-31")).fetchone()[0]
        return plan[0]["Plan"]["Plan Rows"]

    assert (estimate(year, year), estimate(year - 8, year - 1), estimate(year - 8, year)) \
        == (nodes, 1, nodes)


def test_words_held_whole_come_before_longer_words_that_begin_with_them(alice, server):
    """A word longer than the stored beginnings is a prefix; the rows that hold it whole are
    looked for first (their own postings, not every word that begins with it) and rank first;
    the other matches follow while the page has room, and the count is of them all. Under a
    NOT the prefix keeps its whole reach."""
    # Body-only matches come in the order of their ids: four longer ones, so that the whole
    # one would be first by chance once in five.
    longer = sorted(add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Vertragsende")
                    for _ in range(4))
    whole = add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Vertrag")
    neither = add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Miete")

    def found(words: list[str], limit: int) -> list[str]:
        return [node_id for node_id, _ in PostgresSearch().search(alice.user_id, words, limit)]

    assert (found(["vertrag"], 1), found(["vertrag"], 10)) == ([whole], [whole, *longer])
    assert found(["rechnung", "vertrag"], 10) == [whole, *longer]
    assert PostgresSearch().total(alice.user_id, ["vertrag"]) == 5
    user, services = User.get_by_id(alice.user_id), server.app.services

    def ids(text: str) -> list[str]:
        return [hit["id"] for hit in search.query(services.search, user, text, limit=10)]

    assert ids("rechnung vertrag") == [whole, *longer]
    assert ids("rechnung NOT vertrag") == [neither]


def test_a_search_run_again_and_again_is_planned_for_its_words_each_time(alice):
    """psycopg prepares a statement run five times on a connection, and PostgreSQL may then
    keep one generic plan, made without the tsqueries (at a million documents, for a 3-letter
    prefix, one that read the bodies: 17 → 100 ms); a search's statements are planned for their
    own values every time (inside words too, where the heading's index gets an array)."""
    made = {add_document(alice.user_id, alice.home_id, f"Vertrag {number}", "Abrechnung")
            for number in range(3)}
    inside = add_document(alice.user_id, alice.home_id, "Mietvertrag", "Seite 1")
    for _ in range(15):
        assert {node_id for node_id, _ in
                PostgresSearch().search(alice.user_id, ["ver"], 10)} == made
        assert [node_id for node_id, _ in
                PostgresSearch().search(alice.user_id, ["rtrag"], 10)] == [inside]
    generic, custom = database.execute_sql(
        "SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements "
        "WHERE statement LIKE '%candidates%'").fetchone()
    assert (generic, custom >= 10) == (0, True)
