"""The query language executed by the search engines (api.md §20, "The query language"), in the
fast tier with the workers and the indexer, on both engines: a fixed small library read for real
(text files, one scan read by Tesseract) and a table of queries with the exact documents each
must find — plain words as before, phrases, every field, every date form, custom fields,
NOT/AND/OR mixed with names — another user's look-alike never among them; the index kept in step
with a move, a new date on the paper and a new serial number; a query that cannot be read refused
at its place."""

from __future__ import annotations

import datetime as dt

import pytest

from dms import search
from dms.domain import tags, tree
from dms.domain.documents import edit
from dms.domain.metadata import fields, labels, notes
from dms.domain.searchquery import QueryError
from tests.harness import samples
from tests.harness.domaintier import home_id, new_folder, new_user, read_document
from tests.harness.waiting import wait_indexed

TODAY = dt.datetime.now(dt.UTC).date()


@pytest.fixture
def library(reading):
    alice, bob = new_user("alice"), new_user("bob")
    home = home_id(alice)
    taxes = new_folder(reading, alice, "Taxes", home)
    year = new_folder(reading, alice, "2024", taxes)
    acme = labels.create(labels.CORRESPONDENTS, alice, {"name": "ACME"}).id
    power = labels.create(labels.CORRESPONDENTS, alice, {"name": "Stadtwerke"}).id
    invoice = labels.create(labels.DOCUMENT_TYPES, alice, {"name": "Invoice"}).id
    letter = labels.create(labels.DOCUMENT_TYPES, alice, {"name": "Letter"}).id
    finance = tags.create_tag(alice, {"name": "Finance"}).id
    tags.create_tag(alice, {"name": "paid", "parent": finance})
    amount = fields.create_field(alice, {"name": "Amount", "data_type": "monetary"}).id
    library = {}
    for title, text, parent, about, tag_names, note in (
            ("acme-2024", "Invoice number 4711 for garden tools. Total amount due.", year,
             {"correspondent": acme, "document_type": invoice, "document_date": "2024-03-15",
              "archive_serial_number": 7,
              "custom_fields": [{"field": amount, "value": "EUR120.00"}]}, ["paid"],
             "Call back on Monday"),
            ("power-2024", "Electricity bill for the flat. Amount due in March.", taxes,
             {"correspondent": power, "document_type": invoice, "document_date": "2024-11-02",
              "archive_serial_number": 8,
              "custom_fields": [{"field": amount, "value": "EUR80.50"}]}, ["Finance"], None),
            ("acme-2023", "A letter about the delivery of garden tools.", home,
             {"correspondent": acme, "document_type": letter, "document_date": "2023-12-31",
              "archive_serial_number": 9}, [], None),
            ("recipe", "Käse, Brötchen and fresh garden herbs.", home, {}, [],
             "Grandma's recipe, the best")):
        document = read_document(reading, alice, title, "letter.txt", samples.text(text), parent)
        edit.change(alice, document, about, tag_names, None)
        if note:
            notes.add_note(alice, document, note)
        library[title] = document
    library["receipt"] = read_document(reading, alice, "receipt", "scan.png",
                                       samples.png("Scanned Receipt"), home)
    # Bob's look-alike of everything: never found by Alice.
    bob_acme = labels.create(labels.CORRESPONDENTS, bob, {"name": "ACME"}).id
    look_alike = read_document(reading, bob, "acme-2024", "letter.txt", samples.text(
        "Invoice for garden tools, electricity, Käse and herbs. Amount due."))
    edit.change(bob, look_alike, {"correspondent": bob_acme, "document_date": "2024-03-15",
                                  "archive_serial_number": 7}, [], None)
    return reading, alice, library


QUERIES = {
    # plain words mean what they meant
    "garden": ["acme-2023", "acme-2024", "recipe"],
    "gard tool": ["acme-2023", "acme-2024"],
    "kase": ["recipe"],
    # phrases: these words next to each other, in this order
    '"garden tools"': ["acme-2023", "acme-2024"],
    '"tools garden"': [],
    '"garden herbs"': ["recipe"],
    '"Amount due"': ["acme-2024", "power-2024"],
    # phrases with common words (their pairs narrow the search first: dms.search.pairs)
    '"for the"': ["power-2024"],
    '"the for"': [],
    '"for the flat"': ["power-2024"],
    '"the delivery of garden"': ["acme-2023"],
    '"delivery of tools"': [],
    '"due in"': ["power-2024"],
    'notes:"back on monday"': ["acme-2024"],
    'title:"for the"': [],
    '"bill for"': ["power-2024"],  # two words with a common one: their pair
    '"for bill"': [],
    'notes:"the best"': ["recipe"],
    'text:"the best"': [],
    # words in one field
    "title:acme": ["acme-2023", "acme-2024"],
    "title:electricity": [],
    "text:electricity": ["power-2024"],
    "text:acme": [],
    "notes:monday": ["acme-2024"],
    'notes:"grandma\'s recipe"': ["recipe"],
    "notes:garden": [],
    # NOT, -, AND, OR, parentheses
    "garden -tools": ["recipe"],
    "garden NOT tools": ["recipe"],
    "tools OR electricity": ["acme-2023", "acme-2024", "power-2024"],
    "(tools OR electricity) AND due": ["acme-2024", "power-2024"],
    "NOT garden tag:finance": ["power-2024"],
    "correspondent:stadtwerke OR herbs": ["power-2024", "recipe"],
    # names
    "garden correspondent:acme": ["acme-2023", "acme-2024"],
    "garden -correspondent:acme": ["recipe"],
    "due type:invoice": ["acme-2024", "power-2024"],
    "garden type:letter": ["acme-2023"],
    "due tag:paid": ["acme-2024"],
    "due tag:finance": ["acme-2024", "power-2024"],  # with the tags below it
    "garden tag:nothing": [],
    "garden folder:Taxes": ["acme-2024"],
    'due folder:"taxes/2024"': ["acme-2024"],
    "garden folder:home": ["acme-2023", "acme-2024", "recipe"],
    "garden mime:txt": ["acme-2023", "acme-2024", "recipe"],
    "receipt mime:image": ["receipt"],
    "receipt mime:image/png": ["receipt"],
    "receipt mime:pdf": [],
    # numbers and dates
    "garden asn:7": ["acme-2024"],
    "garden asn:>=8": ["acme-2023"],
    "due asn:[7 to 8]": ["acme-2024", "power-2024"],
    "garden created:2024": ["acme-2024"],
    "garden created:2023-12": ["acme-2023"],
    "garden created:2023-12-31": ["acme-2023"],
    "garden created:<2024": ["acme-2023"],
    "garden created:[2023-12-31 to 2024-03-15]": ["acme-2023", "acme-2024"],
    # (a closed range is the terms of its years, months and days: dms.search.days)
    "garden created:[2023-12-01 to 2024-12-31]": ["acme-2023", "acme-2024"],
    "garden created:[2024-01-01 to 2024-03-14]": [],
    "garden created:[2024-03-15 to 2024-03-15]": ["acme-2024"],
    "due created:[2024-03-16 to 2024-11-02]": ["power-2024"],
    "garden created:[1900-01-02 to 2099-12-30]": ["acme-2023", "acme-2024", "recipe"],
    "garden created:today": ["recipe"],
    'garden created:"this year"': ["recipe"],
    "garden added:today": ["acme-2023", "acme-2024", "recipe"],
    "garden added:yesterday": [],
    'garden added:"previous month"': [],
    # custom fields
    "due cf.Amount:>100": ["acme-2024"],
    "due cf.amount:[50 to 100]": ["power-2024"],
    "due -cf.Amount:>100": ["power-2024"],
    # names and dates only: the document list's conditions
    "correspondent:acme": ["acme-2023", "acme-2024"],
    "created:2024 type:invoice": ["acme-2024", "power-2024"],
}


def found(services, user, text: str) -> list[str]:
    wait_indexed(services.config)
    return sorted(hit["title"] for hit in search.query(services.search, user, text))


def test_each_query_finds_exactly_its_documents(library):
    services, alice, _ = library
    assert {text: found(services, alice, text) for text in QUERIES} == QUERIES


def test_the_index_follows_a_move_a_date_and_a_serial_number(library):
    services, alice, library = library
    taxes = tree.owned_node(alice, library["power-2024"], "document").parent_id
    tree.move_nodes(alice, [library["recipe"]], taxes)
    edit.change(alice, library["recipe"], {"document_date": "2022-05-01",
                                           "archive_serial_number": 42}, None, None)
    assert found(services, alice, "herbs folder:Taxes") == ["recipe"]
    assert found(services, alice, "herbs created:2022-05") == ["recipe"]
    assert found(services, alice, "herbs asn:42") == ["recipe"]
    assert found(services, alice, "herbs created:today") == []


def test_a_folder_with_many_folders_below_it(library):
    """More than treequery.MAX_TERMS folders: a term set instead of a union of terms."""
    services, alice, library = library
    many = new_folder(services, alice, "Many", home_id(alice))
    below = [new_folder(services, alice, f"Sub {number}", many) for number in range(120)]
    tree.move_nodes(alice, [library["recipe"]], below[-1])
    assert found(services, alice, "herbs folder:Many") == ["recipe"]
    assert found(services, alice, "garden -folder:Many") == ["acme-2023", "acme-2024"]
    assert found(services, alice, "garden (folder:Many OR folder:Taxes)") == ["acme-2024", "recipe"]


@pytest.mark.parametrize(("text", "detail"), [
    ("garden created:2024-13", "The query cannot be read at position 16: a date such as 2024, "
     "2024-03 or 2024-03-15, or today, yesterday, this week, this month, this year, previous "
     "week, previous month, previous quarter or previous year."),
    ("due cf.Colour:red", "The query cannot be read at position 5: a custom field of yours, not "
     "“Colour”."),
])
def test_a_query_that_cannot_be_read_names_its_place(library, text, detail):
    services, alice, _ = library
    with pytest.raises(QueryError) as refused:
        search.query(services.search, alice, text)
    assert refused.value.message == detail
