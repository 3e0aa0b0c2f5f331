"""PostgreSQL's words inside compound words come from tables of their own (migrations 0038 and
0039): the inner parts of a word stored once, however many documents and owners hold it, and
each owner's words once; the search rows keep whole words and their beginnings only; what one
owner's search looks inside depends on their own words alone, bounded by INNER_EXPANSIONS; a
deleted owner's words go with them; 0038's table is carried over on upgrade."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from dms.search.pgwords import INNER_EXPANSIONS
from dms.search.postgres import PostgresSearch
from tests.harness.database import add_document, query_sql
from tests.harness.waiting import wait_indexed

pytestmark = pytest.mark.postgresql_only

ROOT = Path(__file__).resolve().parents[2]
OWNER_WORDS = ("SELECT word FROM search_owner_word AS w JOIN search_owner AS o "
               "ON o.number = w.owner_number WHERE o.owner_id = ? ORDER BY word")

# Endings of two letters in before them (INNER_START), 4 letters or longer (MIN_INNER).
STEUERBESCHEID_PARTS = ["bescheid", "cheid", "erbescheid", "escheid", "euerbescheid", "heid",
                        "rbescheid", "scheid", "uerbescheid"]


def ids(client, q: str) -> set[str]:
    response = client.get("/api/search/", params={"q": q, "limit": "500"})
    assert response.status_code == 200, response.text
    return {hit["id"] for hit in response.json()}


def syllables(number: int) -> str:
    """A word of letters for `number` (`ba`, `be`, ...): distinct, sorted as the numbers are."""
    letters = "bdfgklmnprstvz"
    first, second = divmod(number, len(letters))
    return "a" + letters[first] + "e" + letters[second]


def test_a_word_parts_are_stored_once_for_all_the_documents_and_owners_that_hold_it(
        alice, bob, config):
    made = [add_document(alice.user_id, alice.home_id, f"Brief {n}", "Ihr Steuerbescheid")
            for n in range(3)]
    theirs = add_document(bob.user_id, bob.home_id, "Brief", "Der Steuerbescheid")
    wait_indexed(config)
    assert query_sql(config, "SELECT part FROM search_part WHERE word = 'steuerbescheid' "
                     "ORDER BY part") == [(part,) for part in STEUERBESCHEID_PARTS]
    assert query_sql(config, OWNER_WORDS, alice.user_id) == [("steuerbescheid",)]
    assert query_sql(config, OWNER_WORDS, bob.user_id) == [("steuerbescheid",)]
    # The rows hold the words and their beginnings, no inner part.
    body = query_sql(config, "SELECT tsvector_to_array(body) FROM search_entry WHERE node_id = ?",
                     made[0])[0][0]
    assert sorted(body) == ["ihr", "steuerbescheid", "~ihr", "~ste", "~steu", "~steue"]
    assert ids(alice, "bescheid") == set(made)
    assert ids(bob, "bescheid") == {theirs}


def test_another_owners_words_do_not_crowd_out_ones_own(alice, bob, config):
    # bob's words that hold `bescheid` come first in the parts' order and are more than the
    # bound; alice's one word still is looked up, being hers.
    for number in range(INNER_EXPANSIONS + 5):
        add_document(bob.user_id, bob.home_id, "Post", f"{syllables(number)}bescheid")
    letter = add_document(alice.user_id, alice.home_id, "Post", "Ihr Steuerbescheid")
    wait_indexed(config)
    assert ids(alice, "bescheid") == {letter}
    assert len(ids(bob, "bescheid")) == INNER_EXPANSIONS


def test_a_piece_inside_more_words_than_the_bound_finds_the_first_of_them(alice, config):
    made = {number: add_document(alice.user_id, alice.home_id, "Post",
                                 f"{syllables(number)}bescheid")
            for number in range(INNER_EXPANSIONS + 2)}
    wait_indexed(config)
    # The words' parts that begin with `bescheid` are all `bescheid`: in the order of the words.
    assert ids(alice, "bescheid") == {made[number] for number in range(INNER_EXPANSIONS)}
    # A longer piece (a word's first part: from its third letter) finds the last one too.
    piece = syllables(INNER_EXPANSIONS + 1)[2:] + "bescheid"
    assert ids(alice, piece) == {node_id for number, node_id in made.items()
                                 if syllables(number)[2:] + "bescheid" == piece}
    assert made[INNER_EXPANSIONS + 1] in ids(alice, piece)


def test_a_deleted_owners_words_go_with_them(admin, bob, config):
    add_document(bob.user_id, bob.home_id, "Post", "Ihr Steuerbescheid")
    wait_indexed(config)
    assert query_sql(config, OWNER_WORDS, bob.user_id) == [("steuerbescheid",)]
    assert admin.delete(f"/api/users/{bob.user_id}/").status_code == 204
    assert query_sql(config, "SELECT count(*) FROM search_owner WHERE owner_id = ?",
                     bob.user_id) == [(0,)]
    assert query_sql(config, OWNER_WORDS, bob.user_id) == []


def test_a_rebuild_keeps_only_the_words_documents_still_hold(alice, config):
    kept = add_document(alice.user_id, alice.home_id, "Brief", "Ihr Steuerbescheid")
    gone = add_document(alice.user_id, alice.home_id, "Brief", "Die Hausratversicherung")
    wait_indexed(config)
    assert query_sql(config, OWNER_WORDS, alice.user_id) == [("hausratversicherung",),
                                                            ("steuerbescheid",)]
    assert alice.delete(f"/api/nodes/{gone}/").status_code in (200, 204)
    wait_indexed(config)
    assert query_sql(config, OWNER_WORDS, alice.user_id) == [("hausratversicherung",),
                                                            ("steuerbescheid",)]
    assert PostgresSearch().rebuild_now() == len(query_sql(config, "SELECT id FROM node"))
    assert query_sql(config, OWNER_WORDS, alice.user_id) == [("steuerbescheid",)]
    assert query_sql(config, "SELECT DISTINCT word FROM search_part") == [("steuerbescheid",)]
    assert ids(alice, "bescheid") == {kept}
    assert ids(alice, "versicherung") == set()


def test_writers_adding_the_same_new_word_at_once_neither_wait_nor_fail(alice, config):
    """The check (is the word known?) and the insert are not atomic, by design: no unique index,
    so that writers never wait for each other's parts; a word added twice only repeats rows, and
    a search still finds every document once."""
    barrier = threading.Barrier(8)
    made, failures = [], []

    def add(number: int) -> None:
        try:
            barrier.wait(timeout=30)
            made.append(add_document(alice.user_id, alice.home_id, f"Brief {number}",
                                     "Ihr Grundsteuerbescheid"))
        except Exception as error:  # noqa: BLE001 - a failure is the finding
            failures.append(error)

    threads = [threading.Thread(target=add, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    wait_indexed(config)
    assert failures == [] and len(made) == 8
    words = query_sql(config, OWNER_WORDS, alice.user_id)
    assert set(words) == {("grundsteuerbescheid",)} and 1 <= len(words) <= 8
    stored = query_sql(config, "SELECT count(*), count(DISTINCT part) FROM search_part "
                       "WHERE word = 'grundsteuerbescheid'")[0]
    assert stored[1] == len("grundsteuerbescheid") - 5 and stored[0] % stored[1] == 0
    assert 1 <= stored[0] // stored[1] <= 8
    assert ids(alice, "bescheid") == set(made)


def test_the_parts_migration_0038_stored_per_owner_are_carried_over_once(postgres, tmp_path):
    """A database as 0038 left it (its search_inner: each owner's parts, one of them stored twice
    by two writers at once) upgrades to the shared parts and the owners' words."""
    url = postgres.new_database(empty=True)

    def migrate() -> None:
        done = subprocess.run([sys.executable, "-m", "dms", "migrate", "--data-dir",
                               str(tmp_path / "data"), "--database-url", url],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr

    migrate()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DROP TABLE search_owner_word, search_part, search_owner")
        connection.execute("""
            CREATE TABLE search_inner (
                owner_id TEXT COLLATE "C" NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
                part TEXT COLLATE "C" NOT NULL, word TEXT COLLATE "C" NOT NULL)""")
        connection.execute("DELETE FROM schema_migrations WHERE name = '0039_search_parts_shared'")
        for owner in ("u1", "u2"):
            connection.execute("INSERT INTO \"user\" (id, username, username_key, date_joined) "
                               "VALUES (%s, %s, %s, '2026-11-30T00:00:00Z')", (owner, owner, owner))
        rows = [(owner, part, "steuerbescheid") for owner in ("u1", "u2", "u2")
                for part in STEUERBESCHEID_PARTS]
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO search_inner VALUES (%s, %s, %s)", rows)
    migrate()
    with psycopg.connect(url) as connection:
        assert connection.execute(
            "SELECT o.owner_id, w.word FROM search_owner_word AS w JOIN search_owner AS o "
            "ON o.number = w.owner_number ORDER BY o.owner_id").fetchall() == [
            ("u1", "steuerbescheid"), ("u2", "steuerbescheid")]
        assert connection.execute("SELECT part FROM search_part WHERE word = 'steuerbescheid' "
                                  "ORDER BY part").fetchall() == [
            (part,) for part in STEUERBESCHEID_PARTS]
        assert connection.execute("SELECT to_regclass('search_inner')").fetchone() == (None,)
        assert connection.execute("SELECT count(*) FROM schema_migrations "
                                  "WHERE name = '0039_search_parts_shared'").fetchone() == (1,)
