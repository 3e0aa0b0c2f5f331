"""A rule whose folder was deleted (docs/api.md, "Rules") is disabled with `last_error` saying
why: in the transaction that puts the folder (or a folder above it) in the trash, or deletes it for
good with DMS_TRASH_DAYS=0; and, as a safety net, when a rule finds its folder gone. Enabling it
again needs a live folder; choosing another one clears the error."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.database import execute_sql, snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.rules import add_rule, applied, filed
from tests.harness.waiting import wait_processed

LETTER = samples.text("Stadtwerke electricity bill, meter 4711\n")


def gone(title: str) -> str:
    return (f"Disabled: the folder {title!r} this rule moved documents to was deleted. Choose "
            "another folder (or restore it) and enable the rule again.")


def rule_state(client, rule_id: str) -> tuple[bool, str | None]:
    attributes = client.get(f"/api/rules/{rule_id}/").json()["data"]["attributes"]
    return attributes["enabled"], attributes["last_error"]


def test_deleting_a_folder_or_a_folder_above_it_disables_its_rules(alice):
    bills = make_folder(alice, "Bills", alice.home_id)
    year = make_folder(alice, "2026", bills)
    into_year = add_rule(alice, "Into 2026", "x", actions={"move_to": year})
    into_home = add_rule(alice, "Into home", "x", actions={"move_to": alice.home_id})
    assert alice.delete(f"/api/folders/{bills}/").status_code == 204
    assert rule_state(alice, into_year["id"]) == (False, gone("2026"))
    assert rule_state(alice, into_home["id"]) == (True, None)

    # Restoring the folder does not enable the rule; enabling it does, now that it is back.
    assert alice.post(f"/api/trash/{bills}/restore/").status_code == 200
    assert rule_state(alice, into_year["id"]) == (False, gone("2026"))
    response = alice.patch(f"/api/rules/{into_year['id']}/",
                           {"data": {"type": "rules", "attributes": {"enabled": True}}})
    assert response.status_code == 200, response.text
    assert rule_state(alice, into_year["id"]) == (True, None)


def test_a_disabled_rule_cannot_be_enabled_while_its_folder_is_gone(alice, config):
    folder = make_folder(alice, "Old", alice.home_id)
    rule = add_rule(alice, "Into old", "x", actions={"move_to": folder})
    assert alice.delete(f"/api/nodes/{folder}/").status_code == 204
    before = snapshot(config)
    response = alice.patch(f"/api/rules/{rule['id']}/",
                           {"data": {"type": "rules", "attributes": {"enabled": True}}})
    assert_error(response, 400, "does_not_exist",
                 f"Invalid folder {folder!r}: the folder does not exist.",
                 "/data/attributes/actions/move_to")
    assert snapshot(config) == before
    other = make_folder(alice, "New", alice.home_id)
    response = alice.patch(f"/api/rules/{rule['id']}/", {"data": {"type": "rules", "attributes": {
        "enabled": True, "actions": {"move_to": other}}}})
    assert response.status_code == 200, response.text
    assert rule_state(alice, rule["id"]) == (True, None)


@pytest.mark.config(trash_days=0)
def test_deleting_a_folder_for_good_at_once_disables_its_rules(alice):
    folder = make_folder(alice, "Gone", alice.home_id)
    rule = add_rule(alice, "Into gone", "x", actions={"move_to": folder})
    assert alice.delete(f"/api/nodes/{folder}/").status_code == 204
    assert rule_state(alice, rule["id"]) == (False, gone("Gone"))


def test_a_rule_that_finds_its_folder_gone_is_disabled_and_does_nothing(alice, config):
    """The safety net: the folder left behind the rule's back (here by SQL, as a restore of an
    older backup or a bug could leave it)."""
    folder = make_folder(alice, "Vanishing", alice.home_id)
    rule = add_rule(alice, "Into vanishing", "stadtwerke",
                    actions={"move_to": folder, "add_tags": ["bill"]})
    add_rule(alice, "Still runs", "meter", actions={"add_tags": ["meter"]})
    execute_sql(config, "UPDATE node SET trash_id = id WHERE id = ?", folder)
    document = new_document(alice, "letter", alice.inbox_id)
    assert upload(alice, document, "letter.txt", LETTER).status_code == 201
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert rule_state(alice, rule["id"]) == (False, gone("Vanishing"))
    assert filed(alice, document) == ("letter", alice.inbox_id, ["meter"])
    assert [step["rule"]["name"] for step in applied(alice, document)] == ["Still runs"]
