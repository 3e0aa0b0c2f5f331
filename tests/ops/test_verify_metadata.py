"""`dms verify` and what documents are about, on both engines: metadata made through the API —
documentlinks both ways, names, custom fields, notes — is clean; a link whose mirror is gone and a
document carrying another user's correspondent, document type or custom field, made by changing
the database behind the server's back, are reported with the ids involved, exit status 1;
`--repair` says it leaves them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dms.ops.verify import DOCUMENT_TITLES, METADATA_TITLES
from tests.harness.backups import describe
from tests.harness.database import execute_sql, query_sql
from tests.harness.documents import new_document
from tests.harness.processes import config_args, environment
from tests.harness.waiting import wait_indexed

MIRRORS, ANOTHER_USERS = (METADATA_TITLES[key] for key in ("mirrors", "another_users"))
VALUES = DOCUMENT_TITLES["values"]
NOT_REPAIRED = ("Not repaired: documentlinks without their mirror, and documents with another "
                "user's correspondent, document type or custom field: which end or owner is "
                "right cannot be told.")


def verify(config, *options: str) -> tuple[int, list[str]]:
    wait_indexed(config)  # a change of a document's names reaches the search index (outbox)
    result = subprocess.run([sys.executable, "-m", "dms", "verify", *options,
                             *config_args(config)], env=environment(), capture_output=True,
                            text=True)
    return result.returncode, result.stdout.splitlines()


def expected(*sections: tuple[str, list[str]]) -> list[str]:
    lines = ["Checked 0 stored files."]
    for title, items in sections:
        lines += [f"{len(items)} {title}:", *(f"  {item}" for item in items)]
    return lines + ["Problems found."]


@pytest.fixture
def described(alice):
    """Alice's three documents described through the API (tests.harness.backups.describe): the
    first links to the other two, they back to it. Returns the ids."""
    documents = [new_document(alice, f"doc {index}") for index in range(3)]
    return {**describe(alice, documents),
            **dict(zip(("first", "second", "third"), documents, strict=True))}


def test_metadata_made_through_the_api_is_clean(config, described):
    assert verify(config) == (0, ["Checked 0 stored files.", "No problems found."])


def test_a_link_without_its_mirror_is_reported_and_left(config, described):
    ids = described
    execute_sql(config, "DELETE FROM custom_field_link WHERE document_id = ? AND target_id = ?",
                ids["second"], ids["first"])
    found = expected((MIRRORS, [f"{ids['first']} -> {ids['second']} (custom field "
                                f"{ids['related']})"]))
    assert verify(config) == (1, found)
    assert verify(config, "--repair") == (1, [NOT_REPAIRED, *found])


def test_another_users_names_and_fields_are_reported(config, described, bob):
    ids = described
    made = {}
    for kind, attributes in (("correspondents", {"name": "Finanzamt"}),
                             ("document-types", {"name": "Bescheid"}),
                             ("custom-fields", {"name": "Amount", "data_type": "documentlink"})):
        response = bob.post(f"/api/{kind}/", {"data": {"type": kind, "attributes": attributes}})
        assert response.status_code == 201, response.text
        made[kind] = response.json()["data"]["id"]
    execute_sql(config, "UPDATE node SET correspondent_id = ?, document_type_id = ? WHERE id = ?",
                made["correspondents"], made["document-types"], ids["third"])
    # The first document's links, both ways, moved to bob's field.
    execute_sql(config, "UPDATE custom_field_value SET field_id = ? WHERE field_id = ?",
                made["custom-fields"], ids["related"])
    execute_sql(config, "UPDATE custom_field_link SET field_id = ? WHERE field_id = ?",
                made["custom-fields"], ids["related"])
    field = made["custom-fields"]
    items = sorted([
        f"document {ids['third']} (correspondent {made['correspondents']})",
        f"document {ids['third']} (document type {made['document-types']})",
        *(f"document {document} (custom field {field})"
          for document in (ids["first"], ids["second"], ids["third"])),
        f"document {ids['first']} (custom field {field}, link to {ids['second']})",
        f"document {ids['first']} (custom field {field}, link to {ids['third']})",
        f"document {ids['second']} (custom field {field}, link to {ids['first']})",
        f"document {ids['third']} (custom field {field}, link to {ids['first']})"])
    assert verify(config) == (1, expected((ANOTHER_USERS, items)))


def test_values_out_of_step_with_their_document_are_reported_and_copied_again(config, described):
    """The copy of a document's listing keys on its values (migration 0022), changed behind the
    triggers' back, is reported per value and copied again by --repair."""
    ids = described
    execute_sql(config, "UPDATE custom_field_value SET title_sort = 'elsewhere', parent_id = NULL "
                        "WHERE document_id = ?", ids["second"])
    fields = sorted(row[0] for row in query_sql(
        config, "SELECT field_id FROM custom_field_value WHERE document_id = ?", ids["second"]))
    assert fields  # described gives every document values
    assert verify(config) == (1, expected((VALUES, [
        f"document {ids['second']} (custom field {field})" for field in fields])))
    assert verify(config, "--repair") == (0, [
        f"Copied their document's folder, title and trash mark to {len(fields)} custom field "
        "values again.", "Checked 0 stored files.", "No problems found."])
    assert query_sql(config, "SELECT DISTINCT v.title_sort, v.parent_id FROM custom_field_value "
                             "AS v WHERE v.document_id = ?", ids["second"]) == \
        query_sql(config, "SELECT title_sort, parent_id FROM node WHERE id = ?", ids["second"])
