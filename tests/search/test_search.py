"""Search (api.md, "Search"): titles and text, prefixes, without accents or case, the caller's nodes
only, kept in step with renames, moves and deletes, safe against any query."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from tests.harness import samples
from tests.harness.client import JSON, assert_error
from tests.harness.database import add_document
from tests.harness.documents import new_document, upload
from tests.harness.processes import config_args
from tests.harness.waiting import wait_indexed, wait_processed

DB = {}


@pytest.fixture(autouse=True)
def database_path(config):
    """Where this test's server keeps its database: search() waits for the index to catch up."""
    DB["path"] = config


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


def search(client, q, **params):
    wait_indexed(DB["path"])
    response = client.get("/api/search/", params={"q": q, **params})
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == JSON
    return response.json()


def ids(results):
    return [result["id"] for result in results]


@pytest.fixture
def library(alice):
    """A scanned invoice in Finances/2024, a text note with accents, a folder named Gärten."""
    finances = folder(alice, "Finances", alice.home_id)
    year = folder(alice, "2024", finances)
    invoice = new_document(alice, "Stadtwerke", year)
    upload(alice, invoice, "scan.png", samples.png("Electricity Invoice"))
    note = new_document(alice, "Einkaufsliste")
    upload(alice, note, "note.txt", samples.text("Käse, Brötchen und Äpfel kaufen\n"))
    garden = folder(alice, "Gärten", alice.home_id)
    for document_id in (invoice, note):
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    return {"finances": finances, "year": year, "invoice": invoice, "note": note, "garden": garden}


def test_finds_words_from_scans_with_breadcrumb_and_highlight(alice, library):
    assert search(alice, "electricity") == [{
        "id": library["invoice"], "title": "Stadtwerke", "node_type": "document",
        "breadcrumb": [".home", "Finances", "2024", "Stadtwerke"], "tags": [],
        "highlight": "<em>Electricity</em> Invoice", "text": None, "user_id": None,
        "owner": "alice", "access": "owner"}]


def test_prefix_accents_and_case(alice, library):
    assert ids(search(alice, "INVOI")) == [library["invoice"]]
    assert ids(search(alice, "kase")) == [library["note"]]
    assert ids(search(alice, "brot")) == [library["note"]]
    assert search(alice, "apfel")[0]["highlight"] == "Käse, Brötchen und <em>Äpfel</em> kaufen\n"
    garden = search(alice, "garten")
    assert garden == [{"id": library["garden"], "title": "Gärten", "node_type": "folder",
                       "breadcrumb": [".home", "Gärten"], "tags": [],
                       "highlight": "<em>Gärten</em>", "text": None, "user_id": None,
                       "owner": "alice", "access": "owner"}]
    # Every word must match: both words of the note, not one of each document.
    assert ids(search(alice, "käse äpfel")) == [library["note"]]
    assert search(alice, "käse electricity") == []


def test_titles_rank_above_text(alice, library):
    titled = new_document(alice, "Invoice archive")
    assert ids(search(alice, "invoice")) == [titled, library["invoice"]]


def test_each_word_is_found_in_the_title_or_the_text(alice):
    """Every word must match, each in the title or in the text (on PostgreSQL the rows whose
    title holds a word are tested title first, then title and text: pgquery.HEADING_FIRST)."""
    both = add_document(alice.user_id, alice.home_id, "Stromrechnung Januar", "bis Februar")
    title = add_document(alice.user_id, alice.home_id, "Stromrechnung Februar", "bezahlt")
    one = add_document(alice.user_id, alice.home_id, "Stromrechnung März", "bezahlt")
    text = add_document(alice.user_id, alice.home_id, "Post", "Stromrechnung Februar")
    assert set(ids(search(alice, "stromrechnung februar"))) == {both, title, text}
    assert set(ids(search(alice, "stromrechnung"))) == {both, title, one, text}
    assert set(ids(search(alice, "stromrechnung bezahlt"))) == {title, one}
    # Inside words too: `rechnung` lies inside `stromrechnung`.
    assert set(ids(search(alice, "rechnung februar"))) == {both, title, text}
    assert ids(search(alice, "rechnung januar")) == [both]


def test_never_another_users_nodes(alice, bob, admin, library):
    upload(bob, new_document(bob, "Bob's Electricity"), "b.txt", samples.text("electricity bill\n"))
    for stranger in (bob, admin):
        found = search(stranger, "electricity")
        assert library["invoice"] not in ids(found)
    assert [r["title"] for r in search(bob, "electricity")] == ["Bob's Electricity"]
    assert ids(search(alice, "electricity")) == [library["invoice"]]


@pytest.mark.parametrize("query", ["*", "NEAR(a b)", "title:x", "{body}: x",
                                   "'; DROP TABLE node; --", "a" * 10_000, "\x00\x01", "", "   "])
def test_hostile_queries_never_fail(alice, library, query):
    results = search(alice, query)
    assert isinstance(results, list)
    assert all(r["id"] in library.values() for r in results)


@pytest.mark.parametrize(("query", "detail"), [
    ('"', "The query cannot be read at position 2: a closing quote for the one at position 1."),
    ("AND (", "The query cannot be read at position 1: a word, a phrase in quotes, a field such "
     "as tag:paid, or “(” before the AND."),
    ("^ - + ( ) :", "The query cannot be read at position 9: a word, a phrase in quotes, a field "
     "such as tag:paid, or “(” between “(” and “)”."),
])
def test_a_query_that_cannot_be_read_is_refused_at_its_place(alice, library, query, detail):
    """The query language (api.md §20): never silently another meaning, never a 500."""
    response = alice.get("/api/search/", params={"q": query})
    assert_error(response, 400, "invalid", detail, "/q", media=JSON)


def test_index_follows_rename_move_and_delete(alice, library):
    renamed = alice.patch(f"/api/nodes/{library['note']}/",
                          {"data": {"type": "documents", "attributes": {"title": "Wochenmarkt"}}})
    assert renamed.status_code == 200
    assert ids(search(alice, "wochen")) == [library["note"]]
    assert search(alice, "einkauf") == []
    alice.post("/api/nodes/move/", {"nodes": [{"id": library["year"]}],
                                    "target_parent": {"id": library["garden"]}}, media=JSON)
    assert search(alice, "electricity")[0]["breadcrumb"] == \
        [".home", "Gärten", "2024", "Stadtwerke"]
    alice.delete(f"/api/nodes/{library['garden']}/")
    assert search(alice, "electricity") == [] and search(alice, "garten") == []


def test_limit_and_bad_limits(alice, library):
    for index in range(5):
        new_document(alice, f"Report {index}")
    assert len(search(alice, "report", limit=3)) == 3
    assert len(search(alice, "report")) == 5
    assert_error(alice.get("/api/search/?q=report&limit=0"), 400, "invalid",
                 "limit must be a whole number from 1 to 500.", media=JSON)
    assert_error(alice.as_anonymous().get("/api/search/?q=x"), 401, "not_authenticated",
                 "Authentication credentials were not provided.", media=JSON)


def test_reindex_rebuilds_the_same_results(alice, library, config):
    before = {q: search(alice, q) for q in ("electricity", "kase", "finances", "garten")}
    result = subprocess.run([sys.executable, "-m", "dms", "reindex", *config_args(config)],
                            capture_output=True, text=True)
    if config.database_url:  # the index is in the database: rebuilt by the command itself
        # two users' special folders too
        expected = "Search index rebuilt: 9 folders and documents.\n"
    else:
        expected = ("The running dms server rebuilds the search index now; searches answer 503 "
                    "until it is done.\n")
    assert (result.returncode, result.stdout) == (0, expected)
    assert {q: search(alice, q) for q in before} == before


@pytest.mark.slow
def test_a_very_long_text_is_searchable_from_its_start(alice):
    """Almost 4 MiB of distinct words: tantivy indexes them all; PostgreSQL's tsvector holds at most
    1 MiB, so there the first million bytes of distinct words are indexed (README). Reading the
    text never fails because of it."""
    middle = " ".join(f"w{number:07d}" for number in range(460_000))
    text = f"aardvark {middle} zebra\n"
    assert 4_100_000 < len(text) <= 4 * 1024 * 1024  # DMS reads at most 4 MiB of a text file
    document = new_document(alice, "Long text")
    upload(alice, document, "long.txt", samples.text(text))
    assert wait_processed(alice, document, timeout=300)[-1] == "succeeded"
    assert ids(search(alice, "aardvark")) == [document]
    assert ids(search(alice, "w0000001")) == [document]
    assert ids(search(alice, "zebra")) == ([] if DB["path"].database_url else [document])


def test_whole_words_find_exactly_the_documents_holding_them(alice, config):
    """The same corpus, the same answers on both engines: each word finds the documents whose
    title or text holds it, whatever separates words and however they are accented or cased."""
    rnd = random.Random(14)
    special = ["Käse", "Straße", "Œuvre", "naïve", "FAÇADE", "2024", "x9z", "Ärger"]
    vocabulary = special + ["".join(rnd.choice("bcdfghklmnprstvz") + rnd.choice("aeiou")
                                    for _ in range(3)) for _ in range(30)]
    folded = [fold(word) for word in vocabulary]
    assert not any(a != b and b.startswith(a) for a in folded for b in folded)  # whole words
    holding: dict[str, set[str]] = {word: set() for word in vocabulary}
    for _ in range(40):
        title_words = rnd.sample(vocabulary, rnd.randint(1, 2))
        text_words = rnd.sample(vocabulary, rnd.randint(3, 12))
        text = "".join(word + rnd.choice([" ", ", ", "_", "-", "\n", ". ", "/"])
                       for word in text_words)
        node_id = add_document(alice.user_id, alice.home_id, " ".join(title_words), text)
        for word in {*title_words, *text_words}:
            holding[word].add(node_id)
    for word in vocabulary:
        assert set(ids(search(alice, word))) == holding[word], word
        assert set(ids(search(alice, word.lower()))) == holding[word], word


def fold(word: str) -> str:
    """Lower case without accents, as both engines fold (only what this test's words need)."""
    import unicodedata

    word = word.lower().replace("ß", "ss").replace("œ", "oe")
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
