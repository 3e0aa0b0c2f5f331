"""A search's hits get their node ids from two fast fields (dms.search.index.id_halves) instead of
the stored documents: every UUID comes back exactly, the halves' extremes included (past 2**63, as
a keyword argument, tantivy would take a number for a float); an id that is not a canonical UUID
is read from the store, so nothing depends on how an id was made."""

from __future__ import annotations

import uuid

import pytest

from dms.search.index import Entry, SearchIndex, id_halves
from dms.search.snapshot import uuid_text
from tests.search.test_search_owners import write

pytestmark = pytest.mark.sqlite_only  # the tantivy index of the SQLite mode

OWNER = "owner-alice"
IDS = [
    "00000000-0000-4000-8000-000000000001",
    "ffffffff-ffff-4fff-bfff-ffffffffffff",  # both halves past 2**63
    "80000000-0000-4000-8000-000000000000",
    str(uuid.UUID(int=(1 << 64) - 1)),  # the high half 0
    str(uuid.uuid4()),
    "5B0A4D1E-3C1F-4F5E-9D61-0C1E5A2D7A11",  # upper case: not canonical, read from the store
    "lost0000-0000-4000-8000-000000000000",  # not a UUID at all
    "00000000-0000-0000-0000-000000000000",  # the nil UUID: (0, 0) means "read the store"
]


def test_the_halves_make_the_id_again_or_say_read_the_store():
    assert id_halves("ffffffff-ffff-4fff-bfff-ffffffffffff") == (
        0xFFFFFFFFFFFF4FFF, 0xBFFFFFFFFFFFFFFF)
    assert id_halves("00000000-0000-4000-8000-000000000001") == (0x4000, 0x8000000000000001)
    for node_id in IDS[5:]:
        assert id_halves(node_id) == (0, 0)
    for node_id in [*IDS[:5], *(str(uuid.uuid4()) for _ in range(1000))]:  # and back
        assert uuid_text(*id_halves(node_id)) == node_id


def test_every_hit_has_its_exact_id(tmp_path):
    index = SearchIndex(tmp_path / "search")
    index.create_empty()
    write(index, {node_id: Entry(node_id, OWNER, f"Invoice {number}", "invoice " * (number + 1),
                                 [], []) for number, node_id in enumerate(IDS)})
    snapshot = index.snapshot()
    hits = snapshot.search(OWNER, ["invoice"], 100)
    assert sorted(node_id for node_id, _ in hits) == sorted(IDS)
    # The most mentions first (BM25 on the body; the titles tie): the same order as the ids.
    assert [node_id for node_id, _ in hits] == IDS[::-1]
    # A small limit: the best two.
    assert [node_id for node_id, _ in snapshot.search(OWNER, ["invoice"], 2)] == IDS[:-3:-1]
