"""PostgreSQL matches a query word longer than the stored beginnings (a prefix) as the owner's own
words that begin with it, each a whole word (search_owner_word, migration 0041), not by GIN's
`:*` over every owner's words; past PREFIX_EXPANSIONS such words, by `:*` again, so that a
prefix always finds every document that holds a word beginning with it. When the owner has no
longer word that begins with it, the prefix is not looked for after the word itself."""

from __future__ import annotations

import importlib

import pytest

from dms import search
from dms.db import database
from dms.db.models import User
from dms.search.pgwords import PREFIX_EXPANSIONS, owner_prefixes
from dms.search.postgres import PostgresSearch
from tests.harness.database import add_document, query_sql
from tests.harness.statements import logged_statements as statements_of
from tests.harness.waiting import wait_indexed
from tests.search.test_search_parts import OWNER_WORDS, syllables

pytestmark = pytest.mark.postgresql_only


def tiers(statements: list[tuple[str, tuple]]) -> int:
    """How many tiers the search ran: each has one statement of the headings' candidates."""
    return sum("candidates AS MATERIALIZED" in sql for sql, _ in statements)


def test_a_long_prefix_is_the_owners_own_words_that_begin_with_it(alice, bob, server, config):
    mine = {add_document(alice.user_id, alice.home_id, "Brief", f"Rechnung {word}")
            for word in ("Vertrag", "Vertragsende", "Vertraulich")}
    add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Vertrieb")
    theirs = add_document(bob.user_id, bob.home_id, "Brief", "Rechnung Vertragspartner")
    wait_indexed(config)
    assert owner_prefixes(alice.user_id, ["vertra"]) == {
        "vertra": ("vertra", "vertrag", "vertragsende", "vertraulich")}
    assert owner_prefixes(bob.user_id, ["vertra", "rechnu"]) == {
        "vertra": ("vertra", "vertragspartner"), "rechnu": ("rechnu", "rechnung")}

    def found(owner: str, words: list[str]) -> set[str]:
        return {node_id for node_id, _ in PostgresSearch().search(owner, words, 10)}

    statements = statements_of(lambda: found(alice.user_id, ["vertra"]))
    assert found(alice.user_id, ["vertra"]) == found(alice.user_id, ["rechnung", "vertra"]) == mine
    assert found(bob.user_id, ["vertra"]) == {theirs}
    assert PostgresSearch().total(alice.user_id, ["vertra"]) == 3
    # The word itself first, then its owner's words: no `:*` prefix in any statement.
    assert tiers(statements) == 2
    assert not any(":*" in str(params) for _, params in statements)
    user, services = User.get_by_id(alice.user_id), server.app.services
    assert {hit["id"] for hit in search.query(services.search, user, "vertra", limit=10)} == mine
    assert {hit["id"] for hit in search.query(services.search, user, "rechnung vertra",
                                              limit=10)} == mine


def test_a_prefix_of_more_words_than_the_bound_keeps_its_whole_reach(alice, config):
    made = {add_document(alice.user_id, alice.home_id, "Post", f"vertra{syllables(number)}")
            for number in range(PREFIX_EXPANSIONS + 1)}
    wait_indexed(config)
    assert owner_prefixes(alice.user_id, ["vertra"]) == {}
    statements = statements_of(lambda: PostgresSearch().search(alice.user_id, ["vertra"], 500))
    assert {node_id for node_id, _ in
            PostgresSearch().search(alice.user_id, ["vertra"], 500)} == made
    assert PostgresSearch().total(alice.user_id, ["vertra"]) == PREFIX_EXPANSIONS + 1
    assert any("'vertra':*" in str(params) for _, params in statements)


def test_a_word_that_begins_none_of_the_owners_longer_words_is_looked_for_once(alice, config):
    whole = {add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Vertrag")
             for _ in range(2)}
    wait_indexed(config)

    def found() -> list[str]:
        return [node_id for node_id, _ in PostgresSearch().search(alice.user_id, ["vertrag"], 10)]

    # The word whole, not again as a prefix (nor inside others: none of alice's words).
    assert tiers(statements_of(found)) == 1
    assert set(found()) == whole
    longer = add_document(alice.user_id, alice.home_id, "Brief", "Rechnung Vertragsende")
    wait_indexed(config)
    assert tiers(statements_of(found)) == 2
    assert found()[:2] == sorted(whole) and found()[2:] == [longer]


def test_migration_0041_lists_the_owners_words_of_seven_letters(alice, bob, config):
    add_document(alice.user_id, alice.home_id, "Vertrag", "Ihre Zahlung")
    add_document(bob.user_id, bob.home_id, "Brief", "Der Zahlung Steuerbescheid")
    wait_indexed(config)
    expected = {alice.user_id: [("vertrag",), ("zahlung",)],
                bob.user_id: [("steuerbescheid",), ("zahlung",)]}
    assert {owner: query_sql(config, OWNER_WORDS, owner) for owner in expected} == expected
    # As a database before 0041 holds them: no word of 7 letters, some owners without a number.
    database.execute_sql("DELETE FROM search_owner_word WHERE char_length(word) = 7")
    database.execute_sql("DELETE FROM search_owner WHERE owner_id = ?", (alice.user_id,))
    migration = importlib.import_module("dms.db.migrations.0041_search_owner_prefix_words")
    migration.up(None, database.obj)
    assert {owner: query_sql(config, OWNER_WORDS, owner) for owner in expected} == expected


def test_two_prefixes_of_several_words_each_make_one_array_and_one_tsquery(alice, config):
    """GIN scans two arrays of one statement for every pair of their elements: the word of more
    alternatives is the array, the other's alternatives are ORed in the tsquery."""
    made = {add_document(alice.user_id, alice.home_id, "Brief", f"{first} {second}")
            for first in ("Vertrag", "Vertragsende", "Vertraulich")
            for second in ("Rechnung", "Rechnungsbetrag")}
    add_document(alice.user_id, alice.home_id, "Brief", "Vertrag Miete")
    wait_indexed(config)
    statements = statements_of(
        lambda: PostgresSearch().search(alice.user_id, ["vertra", "rechnu"], 10))
    assert {node_id for node_id, _ in
            PostgresSearch().search(alice.user_id, ["vertra", "rechnu"], 10)} == made
    # The prefixes' tier: one statement, whose headed part and body part each scan the one
    # array, the other prefix in their tsquery.
    arrays = [(sql, params) for sql, params in statements
              if "(s.heading || s.body) @@ ANY(" in sql]
    assert len(arrays) == 1
    sql, params = arrays[0]
    assert [part.count("(s.heading || s.body) @@ ANY(")  # candidates, headed, body
            for part in sql.split("AS MATERIALIZED")[1:]] == [1, 0, 1]
    vertra = ["'vertra'", "'vertrag'", "'vertragsende'", "'vertraulich'"]
    assert sum(param == vertra for param in params) == 2
    assert sum(param == "('rechnu' | 'rechnung' | 'rechnungsbetrag')" for param in params) == 2
