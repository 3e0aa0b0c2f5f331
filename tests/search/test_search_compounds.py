"""Words inside compound words (api.md §22, "Search"): `bescheid` finds `Steuerbescheid` and
`Gebührenbescheid`, ranked below every document where it is a whole word or the beginning of one;
words shorter than 4 letters are not looked for inside others; the query language's words alike
(not in a field); the total counts both; on both engines."""

from __future__ import annotations

import pytest

from tests.harness.client import JSON
from tests.harness.database import add_document
from tests.harness.waiting import wait_indexed


@pytest.fixture
def letters(alice, server, config):
    home = alice.home_id
    made = {
        "whole": add_document(alice.user_id, home, "Bescheid vom Finanzamt", "Seite 1"),
        "prefix": add_document(alice.user_id, home, "Brief", "Mit Bescheidenheit, Ihr Amt"),
        "compound title": add_document(alice.user_id, home, "Gebührenbescheid", "Seite 2"),
        "compound text": add_document(alice.user_id, home, "Post", "Ihr Steuerbescheid 2024"),
        "unrelated": add_document(alice.user_id, home, "Scheidung", "Beschwerde, Scheid"),
    }
    wait_indexed(config)
    return made


def found(client, q: str, **params) -> list[str]:
    response = client.get("/api/search/", params={"q": q, **params})
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == JSON
    body = response.json()
    return body if isinstance(body, list) else body["results"]


def names(letters, results) -> list[str]:
    by_id = {node_id: name for name, node_id in letters.items()}
    return [by_id[hit["id"]] for hit in results]


def test_a_word_inside_compound_words_ranks_below_whole_words_and_beginnings(alice, letters):
    results = names(letters, found(alice, "bescheid"))
    assert results[:2] == ["whole", "prefix"]
    assert sorted(results[2:]) == ["compound text", "compound title"]
    # Found inside a word, the compound is what is highlighted.
    highlights = {names(letters, [hit])[0]: hit["highlight"] for hit in found(alice, "bescheid")}
    assert highlights["compound text"] == "Ihr <em>Steuerbescheid</em> 2024"
    assert highlights["compound title"] == "<em>Gebührenbescheid</em>"
    # Accents folded inside as everywhere; another word must match too.
    assert names(letters, found(alice, "gebuhren")) == ["compound title"]
    assert names(letters, found(alice, "bescheid 2024")) == ["compound text"]
    assert names(letters, found(alice, "steuer")) == ["compound text"]  # its beginning


def test_only_words_of_four_letters_or_more_are_looked_for_inside(alice, letters):
    # `heid` begins no word but lies inside a word of each (Bescheid, Bescheidenheit,
    # Gebührenbescheid, Steuerbescheid, Scheidung).
    assert sorted(names(letters, found(alice, "heid"))) == sorted(letters)
    assert found(alice, "eid") == []  # inside too many words to be worth looking


def test_the_total_counts_matches_inside_words(alice, letters):
    response = alice.get("/api/search/", params={"q": "bescheid", "page": "1", "page_size": "3"})
    page = response.json()
    assert (page["count"], page["pages"], names(letters, page["results"])[:2]) == (
        4, 2, ["whole", "prefix"])
    last = alice.get("/api/search/", params={"q": "bescheid", "page": "2", "page_size": "3"})
    assert len(last.json()["results"]) == 1


def test_the_query_language_looks_inside_words_without_a_field(alice, letters):
    results = names(letters, found(alice, "bescheid added:today"))
    assert results[:2] == ["whole", "prefix"]
    assert sorted(results[2:]) == ["compound text", "compound title"]
    # A field matches whole words and beginnings only (api.md §20).
    assert names(letters, found(alice, "title:bescheid")) == ["whole"]
    assert names(letters, found(alice, "text:bescheid")) == ["prefix"]
