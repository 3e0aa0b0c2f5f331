"""The query language's names, numbers and dates made conditions (dms.domain.searchquery.resolve),
in the fast tier on both engines: a fixed small library and a table of queries without words with
the exact documents each keeps — each field, each date form, nested tags, folders with what is
below them, custom fields of several types, NOT/AND/OR — and the refusals at a leaf's place (an
unknown custom field, a value that does not fit its field)."""

from __future__ import annotations

import datetime as dt

import pytest

from dms.db.models import Node
from dms.domain import listings, tags
from dms.domain.documents import edit
from dms.domain.metadata import fields, labels
from dms.domain.searchquery import QueryError, condition, has_words, parse, resolve
from tests.harness.domaintier import home_id, new_document, new_folder, new_user

TODAY = dt.date(2026, 11, 25)


@pytest.fixture
def library(services):
    alice = new_user("alice")
    home = home_id(alice)
    taxes = new_folder(services, alice, "Taxes", home)
    year = new_folder(services, alice, "2024", taxes)
    acme = labels.create(labels.CORRESPONDENTS, alice, {"name": "ACME"}).id
    power = labels.create(labels.CORRESPONDENTS, alice, {"name": "Stadtwerke"}).id
    invoice = labels.create(labels.DOCUMENT_TYPES, alice, {"name": "Invoice"}).id
    finance = tags.create_tag(alice, {"name": "Finance"}).id
    tags.create_tag(alice, {"name": "paid", "parent": finance})
    amount = fields.create_field(alice, {"name": "Amount", "data_type": "monetary"}).id
    due = fields.create_field(alice, {"name": "Due", "data_type": "date"}).id
    settled = fields.create_field(alice, {"name": "Settled", "data_type": "boolean"}).id
    memo = fields.create_field(alice, {"name": "Memo", "data_type": "string"}).id
    docs = {}
    for name, parent, about, tag_names in (
            ("acme-2024", year, {"correspondent": acme, "document_type": invoice,
                                 "document_date": "2024-03-15", "archive_serial_number": 7,
                                 "custom_fields": [{"field": amount, "value": "EUR120.00"},
                                                   {"field": due, "value": "2024-04-01"},
                                                   {"field": settled, "value": True}]},
             ["paid"]),
            ("power-2024", taxes, {"correspondent": power, "document_type": invoice,
                                   "document_date": "2024-11-02", "archive_serial_number": 8,
                                   "custom_fields": [{"field": amount, "value": "EUR80.50"},
                                                     {"field": memo, "value": "Meter 4711"}]},
             ["Finance"]),
            ("acme-2023", home, {"correspondent": acme, "document_date": "2023-12-31",
                                 "archive_serial_number": 9}, []),
            ("note", home, {}, [])):
        docs[name] = new_document(services, alice, name, parent)
        edit.change(alice, docs[name], about, tag_names, None)
    return alice, docs


QUERIES = [
    ("correspondent:acme", ["acme-2023", "acme-2024"]),
    ("correspondent:nobody", []),
    ("type:invoice", ["acme-2024", "power-2024"]),
    ("tag:paid", ["acme-2024"]),
    ("tag:finance", ["acme-2024", "power-2024"]),  # a tag brings the tags below it
    ("folder:Taxes", ["acme-2024", "power-2024"]),
    ('folder:"taxes/2024"', ["acme-2024"]),
    ("folder:Nowhere", []),
    ("asn:8", ["power-2024"]),
    ("asn:>=8", ["acme-2023", "power-2024"]),
    ("asn:[7 to 8]", ["acme-2024", "power-2024"]),
    ("created:2024", ["acme-2024", "power-2024"]),
    ("created:2024-03", ["acme-2024"]),
    ("created:<2024", ["acme-2023"]),
    ("created:[2023-12-31 to 2024-03-15]", ["acme-2023", "acme-2024"]),
    ("added:today", ["acme-2023", "acme-2024", "note", "power-2024"]),
    ("added:yesterday", []),
    ("cf.Amount:>100", ["acme-2024"]),
    ("cf.amount:[50 to 100]", ["power-2024"]),
    ("cf.Due:2024-04", ["acme-2024"]),
    ("cf.Due:>2024-04", []),
    ("cf.Settled:true", ["acme-2024"]),
    ("cf.Memo:4711", ["power-2024"]),
    ("correspondent:ACME -tag:paid", ["acme-2023"]),
    ("correspondent:Stadtwerke OR asn:9", ["acme-2023", "power-2024"]),
    ("NOT type:Invoice", ["acme-2023", "note"]),
    ("(tag:paid OR created:2023) type:invoice", ["acme-2024"]),
]


@pytest.mark.parametrize(("text", "expected"), QUERIES, ids=[text for text, _ in QUERIES])
def test_each_query_keeps_its_documents(library, text, expected):
    alice, docs = library
    today = dt.date.today()  # `added` counts from the real day the library was made
    resolved = resolve(alice, parse(text, today), today)
    assert not has_words(resolved)
    listing = listings.of_kind(alice, Node.DOCUMENT, extra=[condition(resolved)])
    found = {row.id for row in listing.fetch(0, 100)}
    assert sorted(name for name, document in docs.items() if document in found) == expected


def test_words_stay_words(library):
    alice, _ = library
    resolved = resolve(alice, parse("invoice tag:paid", TODAY), TODAY)
    assert has_words(resolved)
    with pytest.raises(ValueError):
        condition(resolved)


@pytest.mark.parametrize(("text", "at", "expected"), [
    ("cf.Colour:red", 1, "a custom field of yours, not “Colour”"),
    ("cf.Settled:maybe", 1, "true or false after cf.Settled"),
    ("tag:paid cf.Due:soon", 10, "a date such as 2024, 2024-03 or 2024-03-15, or today, "
                                 "yesterday, this week, this month, this year, previous week, "
                                 "previous month, previous quarter or previous year"),
])
def test_a_leaf_that_cannot_be_used_is_refused_at_its_place(library, text, at, expected):
    alice, _ = library
    with pytest.raises(QueryError) as refused:
        resolve(alice, parse(text, TODAY), TODAY, field="query")
    assert refused.value.message == f"The query cannot be read at position {at}: {expected}."
    assert refused.value.field == "query"


def test_a_value_that_does_not_fit_its_field_names_it(library):
    alice, _ = library
    with pytest.raises(QueryError) as refused:
        resolve(alice, parse("cf.Amount:>lots", TODAY), TODAY)
    assert refused.value.message.startswith(
        "The query cannot be read at position 1: a value that fits Amount: ")
