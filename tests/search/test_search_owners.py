"""The tantivy query leaves out the owner clause when the index holds one person's documents only
(intersecting with it was most of a common word's or a prefix's time at a million documents). Same
matches, same order; and as soon as anyone else's document is in the index, even one deleted but not
yet merged away, every query is filtered by its owner again."""

from __future__ import annotations

import pytest

from dms.search.index import Entry, SearchIndex, Snapshot

pytestmark = pytest.mark.sqlite_only  # the tantivy index of the SQLite mode

ALICE, BOB = "owner-alice", "owner-bob"
TEXTS = [  # varied lengths and frequencies, so that BM25 orders them and ties are rare
    ("Invoice March", "invoice for the repair of the roof, invoice number 12, insurance"),
    ("Insurance", "insurance policy renewal, the invoice follows"),
    ("Letter", "a letter about the invoice and the insurance of the house"),
    ("Tax 2025", "tax return with invoices attached"),
    ("Receipts", "receipts: bakery, hardware store, invoice copy"),
    ("Notes", "notes on the inventory of the cellar"),
    ("Contract", "rental contract of the flat, invoice of the deposit"),
    ("Invitation", "invitation to the meeting of the owners"),
]
QUERIES = [["invoice"], ["the"], ["inv"], ["ins"], ["invoice", "the"], ["in"], ["tax"],
           ["insurance", "inv"], ["nothing"]]


class WithOwnerClause(Snapshot):
    """The query as it is built for an index of several owners."""

    def holds_only(self, owner_id: str) -> bool:
        return False


def write(index: SearchIndex, entries: dict[str, Entry | None]) -> None:
    writer = index.writer()
    for node_id, entry in entries.items():
        index.put(writer, node_id, entry)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()


def entries_of(owner: str, prefix: str) -> dict[str, Entry]:
    return {f"{prefix}{number}": Entry(f"{prefix}{number}", owner, title, body, [], [])
            for number, (title, body) in enumerate(TEXTS)}


def ids(hits) -> list[str]:
    return [node_id for node_id, _ in hits]


@pytest.fixture
def index(tmp_path):
    index = SearchIndex(tmp_path / "search")
    index.create_empty()
    write(index, entries_of(ALICE, "a"))
    return index


def test_one_owner_index_answers_as_the_filtered_query_does(index):
    snapshot = index.snapshot()
    assert snapshot.holds_only(ALICE) is True
    assert snapshot.holds_only(BOB) is False
    filtered = WithOwnerClause(snapshot.searcher, snapshot.schema)
    expected = {
        ("invoice",): {"a0", "a1", "a2", "a3", "a4", "a6"},  # "invoices" too: every word a prefix
        ("tax",): {"a3"},
        ("nothing",): set(),
    }
    for words in QUERIES:
        alone = ids(snapshot.search(ALICE, words, 100))
        assert alone == ids(filtered.search(ALICE, words, 100)), words
        if tuple(words) in expected:
            assert set(alone) == expected[tuple(words)]
        assert ids(snapshot.search(BOB, words, 100)) == []
    # The best first: the title that holds the word outweighs bodies that only mention it.
    assert ids(snapshot.search(ALICE, ["insurance"], 100))[0] == "a1"
    assert ids(snapshot.search(ALICE, ["the"], 3)) == ids(filtered.search(ALICE, ["the"], 3))


def test_another_owners_document_brings_the_owner_clause_back(index):
    write(index, {"b0": Entry("b0", BOB, "Invoice of Bob", "invoice invoice invoice", [], [])})
    snapshot = index.snapshot()
    assert snapshot.holds_only(ALICE) is False
    assert snapshot.holds_only(BOB) is False
    assert ids(snapshot.search(BOB, ["invoice"], 100)) == ["b0"]
    alice = ids(snapshot.search(ALICE, ["invoice"], 100))
    assert set(alice) == {"a0", "a1", "a2", "a3", "a4", "a6"}

    # Bob's document deleted: until a merge drops it, its owner term stays in the term
    # dictionary, so the index does not count as Alice's alone; either way Bob's document is
    # never found again and Alice's answers stay whole.
    write(index, {"b0": None})
    snapshot = index.snapshot()
    assert ids(snapshot.search(BOB, ["invoice"], 100)) == []
    assert ids(snapshot.search(ALICE, ["invoice"], 100)) == alice
    filtered = WithOwnerClause(snapshot.searcher, snapshot.schema)
    for words in QUERIES:
        assert ids(snapshot.search(ALICE, words, 100)) == ids(filtered.search(ALICE, words, 100))
