"""Search in pages with a total (api.md, "Search": `page`, `page_size`): the pages of a ranking in
its order, the total counted by the engine, the last page and a page past the end; the listing
without words and the query language's conditions alike; the array of Papermerge's clients
unchanged without `page`; bad parameters refused, naming the parameter."""

from __future__ import annotations

import pytest

from tests.harness.client import JSON, assert_error
from tests.harness.database import add_document
from tests.harness.waiting import wait_indexed

DOCUMENTS = 105


@pytest.fixture
def ledgers(alice, server, config):
    """105 documents with the word "ledger", one without."""
    made = [add_document(alice.user_id, alice.home_id, f"Ledger {number:03}",
                         f"page {number} of the ledger") for number in range(DOCUMENTS)]
    add_document(alice.user_id, alice.home_id, "Receipt", "a receipt for garden tools")
    wait_indexed(config)
    return made


def answer(client, **params):
    response = client.get("/api/search/", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == JSON
    return response.json()


def ids(results):
    return [result["id"] for result in results]


def pages_of(client, size: int, **params) -> list[str]:
    """Every page of the search in turn, each with the whole total; the found ids in order."""
    seen: list[str] = []
    expected_pages = -(-DOCUMENTS // size)
    for number in range(1, expected_pages + 1):
        page = answer(client, page=number, page_size=size, **params)
        assert {key: page[key] for key in ("count", "page", "pages", "page_size")} == {
            "count": DOCUMENTS, "page": number, "pages": expected_pages, "page_size": size}
        assert len(page["results"]) == min(size, DOCUMENTS - (number - 1) * size)
        seen += ids(page["results"])
    past = answer(client, page=expected_pages + 1, page_size=size, **params)
    assert past == {"results": [], "count": DOCUMENTS, "page": expected_pages + 1,
                    "pages": expected_pages, "page_size": size}
    return seen


def test_pages_follow_the_ranking_with_the_engines_total(alice, ledgers):
    ranked = ids(answer(alice, q="ledger", limit=200))
    assert sorted(ranked) == sorted(ledgers)
    assert pages_of(alice, 50, q="ledger") == ranked
    assert pages_of(alice, 100, q="ledger") == ranked  # the default size
    default = answer(alice, q="ledger", page=2)
    assert (default["page_size"], ids(default["results"])) == (100, ranked[100:])
    assert ids(answer(alice, q="ledger", page=2, limit=60)["results"]) == ranked[60:]
    # Papermerge's clients, without `page`: the array of the best 100, as before.
    assert ids(answer(alice, q="ledger")) == ranked[:100]
    # The query language's words with names and dates: counted by the engine as well.
    assert pages_of(alice, 40, q="ledger added:today") == ids(
        answer(alice, q="ledger added:today", limit=200))
    assert answer(alice, q="ledger added:yesterday", page=1) == {
        "results": [], "count": 0, "page": 1, "pages": 1, "page_size": 100}


def test_pages_without_words_are_the_recent_documents(alice, ledgers):
    """Without words, or with names and dates only: the document list, counted by the
    database."""
    everything = ids(answer(alice, limit=200))
    assert answer(alice, page=1, page_size=1)["count"] == DOCUMENTS + 1
    assert [hit for page in (1, 2, 3) for hit in ids(answer(
        alice, page=page, page_size=50)["results"])] == everything
    conditions = ids(answer(alice, q="added:today", limit=200))
    assert len(conditions) == DOCUMENTS + 1
    counted = answer(alice, q="added:today", page=3, page_size=50)
    assert (counted["count"], counted["pages"], ids(counted["results"])) == (
        DOCUMENTS + 1, 3, conditions[100:])


@pytest.mark.parametrize(("params", "detail", "pointer"), [
    ({"page": "0"}, "page must be a whole number from 1 on.", "/page"),
    ({"page": "two"}, "page must be a whole number from 1 on.", "/page"),
    ({"page": "-1"}, "page must be a whole number from 1 on.", "/page"),
    ({"page": "1", "page_size": "0"}, "page_size must be a whole number from 1 to 500.",
     "/page_size"),
    ({"page": "1", "page_size": "501"}, "page_size must be a whole number from 1 to 500.",
     "/page_size"),
    ({"page": "1", "page_size": "1e2"}, "page_size must be a whole number from 1 to 500.",
     "/page_size"),
    ({"page": "101", "page_size": "100"}, "A search shows its best 10,000 results at most (page "
     "× page_size); search for more words to see others.", "/page"),
])
def test_a_bad_page_is_refused_naming_the_parameter(alice, ledgers, params, detail, pointer):
    before = answer(alice, q="ledger", page=2, page_size=10)
    assert_error(alice.get("/api/search/", params={"q": "ledger", **params}), 400, "invalid",
                 detail, pointer, media=JSON)
    assert answer(alice, q="ledger", page=2, page_size=10) == before
