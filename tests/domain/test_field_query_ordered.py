"""Custom field queries read in title order from the values alone (dms.domain.metadata.orderedquery,
migration 0022): every query of test_field_query's corpus that takes that way finds, counts and
pages exactly what the general condition finds, in a folder and over all documents, on both
engines; and the copy of a document's listing keys on its values follows it through a rename, a
move, the trash and a restore (it is kept by triggers, whichever code path writes the node)."""

from __future__ import annotations

import json

import pytest

from dms.db import database, owner_scope, write_transaction
from dms.db.models import Node
from dms.domain import listings, trash, tree
from dms.domain.metadata.fieldquery import parse_field_query
from dms.domain.metadata.orderedquery import ordered_matches
from tests.domain.test_field_query import EXPECTED, build_corpus, fields_of, with_ids
from tests.harness.domaintier import inbox_id, new_folder, new_user

PARAMETER = "custom_field_query"


@pytest.fixture
def corpus(services):
    user = new_user("alice")
    return user, build_corpus(services, user)


def ordered_cases(ids, user):
    """EXPECTED's queries that take the ordered way, with their titles."""
    found = []
    for section in EXPECTED.values():
        for query, titles in section:
            raw = json.dumps(with_ids(query, ids))
            if ordered_matches(parse_field_query(raw, fields_of(user))) is not None:
                found.append((raw, titles))
    return found


def listed(listing, offset=0, limit=100) -> list[str]:
    return [row.title for row in listing.fetch(offset, limit)]


def test_the_ordered_way_finds_counts_and_pages_what_the_general_condition_finds(corpus):
    user, ids = corpus
    cases = ordered_cases(ids, user)
    # booleans, integers, floats, dates (and their parts), amounts; one of them and ANDs
    assert len(cases) == 52
    assert sum(raw.startswith('["AND"') for raw, _ in cases) == 2
    for raw, titles in cases:
        for listing in (listings.of_kind(user, Node.DOCUMENT, about={PARAMETER: raw}),
                        listings.listing(user, inbox_id(user), about={PARAMETER: raw})[1],
                        listings.listing(user, inbox_id(user), "title", about={PARAMETER: raw})[1]):
            assert isinstance(listing, listings.OrderedListing), raw
            assert (raw, listing.count(), listed(listing)) == (raw, len(titles), titles)
            assert listed(listing, 1, 1) == titles[1:2]
    # Not the ordered way: another sort, another filter beside it, text, OR, NOT.
    paid = json.dumps(["Paid", "exact", True])
    for listing in (listings.listing(user, inbox_id(user), "-title", about={PARAMETER: paid})[1],
                    listings.of_kind(user, Node.DOCUMENT,
                                     about={PARAMETER: paid, "asn": "1"}),
                    listings.of_kind(user, Node.DOCUMENT,
                                     about={PARAMETER: json.dumps(["Note", "exact", "x"])}),
                    listings.of_kind(user, Node.DOCUMENT, about={
                        PARAMETER: json.dumps(["OR", [["Paid", "exact", True]]])}),
                    listings.of_kind(user, Node.DOCUMENT, about={
                        PARAMETER: json.dumps(["NOT", ["Paid", "exact", True]])})):
        assert type(listing) is listings.NodeListing
    assert listed(listings.listing(user, inbox_id(user), "-title",
                                   about={PARAMETER: paid})[1]) == ["golf", "alpha"]


def keys_out_of_step() -> list[tuple]:
    """Values whose copy of the listing keys differs from their document's."""
    return database.execute_sql(
        "SELECT v.document_id, v.field_id FROM custom_field_value AS v JOIN node AS n "
        "ON n.id = v.document_id WHERE " + " OR ".join(
            f"coalesce(v.{key}, '') <> coalesce(n.{key}, '')"
            for key in ("parent_id", "title_sort", "trash_id"))).fetchall()


def test_a_documents_values_follow_it_through_rename_move_trash_and_restore(services, corpus):
    user, ids = corpus
    paid = json.dumps(["Paid", "exact", True])

    def found(folder_id: str | None = None) -> list[str]:
        listing = listings.of_kind(user, Node.DOCUMENT, about={PARAMETER: paid}) \
            if folder_id is None else listings.listing(user, folder_id, about={PARAMETER: paid})[1]
        assert isinstance(listing, listings.OrderedListing)
        return listed(listing)

    assert keys_out_of_step() == []
    assert found() == ["alpha", "golf"]
    tree.update_node(user, ids["alpha"], Node.DOCUMENT, {"title": "zulu"})
    assert (keys_out_of_step(), found()) == ([], ["golf", "zulu"])
    archive = new_folder(services, user, "Archive", inbox_id(user))
    tree.move_nodes(user, [ids["golf"]], archive)
    assert (keys_out_of_step(), found(), found(inbox_id(user)), found(archive)) == \
        ([], ["golf", "zulu"], ["zulu"], ["golf"])
    trash.delete(services, user, archive)  # the folder: its document goes with it
    assert (keys_out_of_step(), found(), found(inbox_id(user))) == ([], ["zulu"], ["zulu"])
    trash.restore(services, user, archive)
    assert (keys_out_of_step(), found(), found(archive)) == ([], ["golf", "zulu"], ["golf"])
    # A value set now takes its document's keys (the insert's trigger).
    with write_transaction(owner_scope(user.id)):
        database.execute_sql("INSERT INTO custom_field_value (document_id, field_id, "
                             "value_bool) VALUES (?, 'f-paid', ?)", (ids["delta"], True))
    assert (keys_out_of_step(), found()) == ([], ["delta", "golf", "zulu"])


@pytest.mark.parametrize("sort", ["cf_f-count", "-cf_f-count", "cf_42", "-cf_42", "cf_f-due",
                                  "-cf_f-due", "cf_f-amount", "-cf_f-amount"])
def test_a_sort_by_a_field_reads_the_values_in_order_as_the_general_sort_does(services, corpus,
                                                                           sort):
    """sort=cf_<id> of a number, date or amount (listings.FieldSortListing): the documents with a
    value in value order, then the rest by id, reversed by `-` with the empty ones last — the
    same rows as the general ORDER BY, for every page boundary, in a folder (with a sub-folder,
    which has no value) and over all documents."""
    user, ids = corpus
    new_folder(services, user, "Archive", inbox_id(user))
    folder = Node.get_by_id(inbox_id(user))
    order, order_params = listings.order_of(sort, user)
    for listing, general in (
            (listings.listing(user, folder.id, sort)[1],
             listings.NodeListing("parent_id = ? AND trash_id IS NULL", (folder.id,), order,
                                  order_params)),
            (listings.of_kind(user, Node.DOCUMENT, about={"sort": sort}),
             listings.NodeListing("owner_id = ? AND kind = 'document' AND trash_id IS NULL",
                                  (user.id,), order, order_params))):
        assert isinstance(listing, listings.FieldSortListing)
        everything = [row.id for row in general.fetch(0, 100)]
        assert listing.count() == general.count() == len(everything)
        assert [row.id for row in listing.fetch(0, 100)] == everything
        for offset in range(len(everything) + 1):
            assert [row.id for row in listing.fetch(offset, 2)] == everything[offset:offset + 2]
    # With a filter beside it, or a field type the indexes do not order, the general way.
    assert type(listings.of_kind(user, Node.DOCUMENT, about={"sort": sort, "asn": "1"})) is \
        listings.NodeListing
    assert type(listings.of_kind(user, Node.DOCUMENT, about={"sort": "cf_f-note"})) is \
        listings.NodeListing
