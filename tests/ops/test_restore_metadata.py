"""A restore refuses what a document is about (api.md §11b) where the API would have refused it,
by the domain's own checks (dms.ops.backup._rowchecks): a correspondent's or document type's name,
algorithm or pattern, a custom field's type or extra_data, a value that does not fit its field's
type or sits in columns its type does not use, a link through a field that is not a documentlink
or to another user's document, a note too long, a document's date, serial number or another
user's correspondent. One bad row each, in a backup made by `dms backup` of a data dir described
through the API; refused in one sentence, the folder left exactly as it was
(tests/harness/backups.py)."""

from __future__ import annotations

import collections
import sqlite3

import pytest

from tests.harness.backups import backed_up, describe, lines_change, rebuild, refused
from tests.harness.documents import new_document
from tests.harness.processes import dms
from tests.harness.users import add_user

# Restores into new data dirs; the rows' engine is SQLite.
# Sockets (pytest-socket): the described data dir is made by a server.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


@pytest.fixture(scope="module")
def described(tmp_path_factory):
    """A backup (format 2) of alice's three described documents (tests.harness.backups.describe)
    beside bob's document, correspondent and custom field. Returns (archive, ids)."""
    def fill(admin):
        alice, bob = add_user(admin, "alice"), add_user(admin, "bob")
        documents = [new_document(alice, f"doc {index}") for index in range(3)]
        ids = {**describe(alice, documents), **dict(zip(("first", "second", "third"), documents,
                                                         strict=True))}
        ids["bobs_document"] = new_document(bob, "Bob's")
        for name, kind, attributes in (
                ("bobs_sender", "correspondents", {"name": "Finanzamt"}),
                ("bobs_field", "custom-fields", {"name": "Amount", "data_type": "monetary"})):
            response = bob.post(f"/api/{kind}/", {"data": {"type": kind,
                                                           "attributes": attributes}})
            assert response.status_code == 201, response.text
            ids[name] = response.json()["data"]["id"]
        return ids

    return backed_up(tmp_path_factory.mktemp("described"), fill)


def cases(ids: dict) -> dict[str, tuple]:
    """{name: (table, the row {column: value}, its new values, the row as told, what is said)}."""
    first, second, third = ids["first"], ids["second"], ids["third"]
    value = lambda field: {"document_id": first, "field_id": ids[field]}  # noqa: E731
    shown = lambda field: f"({first}, {ids[field]})"  # noqa: E731
    link = {"field_id": ids["related"], "document_id": first}
    return {
        "a name with a right-to-left override": (
            "correspondent", {"id": ids["sender"]}, {"name": "Stadtwerke\u202eKöln"},
            ids["sender"], "is a correspondent the API would refuse (A correspondent name may "
                           "not contain control characters or invisible formatting characters)"),
        "a name_key not the name's": (
            "correspondent", {"id": ids["sender"]}, {"name_key": "finanzamt"}, ids["sender"],
            "has a name_key that does not match its name"),
        "an unknown algorithm": (
            "document_type", {"id": ids["kind"]}, {"matching_algorithm": "learned"}, ids["kind"],
            "is a document type the API would refuse (matching_algorithm must be one of none, "
            "any, all, exact, regex, fuzzy, auto)"),
        "a pattern RE2 refuses": (
            "document_type", {"id": ids["kind"]}, {"match": "(a"}, ids["kind"],
            "is a document type the API would refuse (The regular expression is not valid for "
            "RE2: missing ): (a. (RE2 has no backreferences or lookaround; see the guide.))"),
        "an unknown data_type": (
            "custom_field", {"id": ids["amount"]}, {"data_type": "money"}, ids["amount"],
            "has an unknown data_type ('money')"),
        "a currency in small letters": (
            "custom_field", {"id": ids["amount"]}, {"extra_data": '{"default_currency":"eur"}'},
            ids["amount"], "has extra_data the API would refuse (extra_data.default_currency "
                           "must be a currency code of three capital letters, such as EUR)"),
        "options without ids": (
            "custom_field", {"id": ids["status"]},
            {"extra_data": '{"select_options":[{"label":"Offen"}]}'}, ids["status"],
            "has extra_data that is not what dms keeps for a select field"),
        "extra_data not JSON": (
            "custom_field", {"id": ids["due"]}, {"extra_data": "{"}, ids["due"],
            "has extra_data that is not a JSON object"),
        "an integer of 32 bits and one": (
            "custom_field_value", value("count"), {"value_int": 2 ** 31}, shown("count"),
            "has a value the API would refuse (A value of the integer field 'Count' is a whole "
            "number from -2,147,483,648 to 2,147,483,647)"),
        "a day that does not exist": (
            "custom_field_value", value("due"), {"value_date": "2024-02-30"}, shown("due"),
            "has a value the API would refuse (A value of the date field 'Due' must be a real "
            "date written YYYY-MM-DD; '2024-02-30' is not)"),
        "a currency in small letters, in a value": (
            "custom_field_value", value("amount"), {"value_currency": "eur"}, shown("amount"),
            "has a value_currency that is not three capital letters or '' ('eur')"),
        "a select option that is none": (
            "custom_field_value", value("status"), {"value_text": "paid"}, shown("status"),
            "has a value the API would refuse ('paid' is not an option of the select field "
            "'Status')"),
        "a second column": (
            "custom_field_value", value("memo"), {"value_int": 7}, shown("memo"),
            "has value_int set beside its value in value_text"),
        "a column beside a null": (
            "custom_field_value", value("contract"), {"value_date": "2024-01-01"},
            shown("contract"), "has value_date set, but no value in value_text"),
        "a value_key not the value's": (
            "custom_field_value", value("memo"), {"value_key": "zeile"}, shown("memo"),
            "has a value_key that does not match its value ('zeile')"),
        "another user's field": (
            "custom_field_value", value("amount"), {"field_id": ids["bobs_field"]},
            f"({first}, {ids['bobs_field']})",
            "is on a document of another user than its field's owner"),
        "a link through a string field": (
            "custom_field_link", {**link, "target_id": second}, {"field_id": ids["contract"]},
            f"{first} -> {second}", f"links through the field {ids['contract']}, a string "
                                    "field, not a documentlink field"),
        "a link to another user's document": (
            "custom_field_link", {**link, "target_id": third},
            {"target_id": ids["bobs_document"]}, f"{first} -> {ids['bobs_document']}",
            f"links a document of another user than the owner of its field {ids['related']}"),
        "a note too long": (
            "note", {"id": ids["notes"][0]}, {"note": "x" * 65_537}, ids["notes"][0],
            "has a note the API would refuse (A note has at most 65,536 characters)"),
        "a document_date that does not exist": (
            "node", {"id": first}, {"document_date": "2024-02-30"}, first,
            "has a document_date the API would refuse (document_date must be a real date "
            "written YYYY-MM-DD; '2024-02-30' is not)"),
        "a serial number of 33 bits": (
            "node", {"id": third}, {"asn": 2 ** 32}, third,
            "has an asn the API would refuse (archive_serial_number is a whole number from 0 "
            "to 4,294,967,295, or null)"),
        "another user's correspondent": (
            "node", {"id": second}, {"correspondent_id": ids["bobs_sender"]}, second,
            f"has the correspondent {ids['bobs_sender']}, which belongs to another user"),
    }


NAMES = list(cases(collections.defaultdict(lambda: "id")))  # the names: any ids will do


@pytest.mark.parametrize("name", NAMES)
def test_metadata_the_api_would_refuse_is_refused(described, work, name):
    archive, ids = described
    table, match, values, row, what = cases(ids)[name]
    refused(rebuild(archive, work / "bad.zip", rows={table: lines_change(match, values)}),
            f"The backup's table {table} cannot be restored: row {row} {what}.")


def test_the_described_backup_itself_restores(described, work):
    archive, _ = described
    result = dms("restore", archive, "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    assert dms("verify", "--data-dir", work / "new").returncode == 0


def test_a_backups_copy_of_the_listing_keys_is_copied_again(described, work):
    """Custom field values carry a copy of their document's folder, title and trash mark
    (migration 0022); a backup's copy is not trusted: the restore copies it again."""
    archive, ids = described
    changed = rebuild(archive, work / "keys.zip", rows={"custom_field_value": lines_change(
        {"document_id": ids["first"]}, {"parent_id": None, "title_sort": "zzz"})})
    result = dms("restore", changed, "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    assert dms("verify", "--data-dir", work / "new").returncode == 0
    with sqlite3.connect(work / "new" / "dms.db") as connection:
        assert connection.execute(
            "SELECT DISTINCT v.parent_id, v.title_sort FROM custom_field_value AS v WHERE "
            "v.document_id = ?", (ids["first"],)).fetchall() == connection.execute(
            "SELECT parent_id, title_sort FROM node WHERE id = ?", (ids["first"],)).fetchall()
