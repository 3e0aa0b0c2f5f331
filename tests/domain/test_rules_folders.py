"""A rule whose folder was deleted (docs/api.md, "Rules") is disabled with `last_error` saying
why: in the transaction that puts the folder (or a folder above it) in the trash, or deletes it for
good with DMS_TRASH_DAYS=0; and, as a safety net, when a rule finds its folder gone. Enabling it
again needs a live folder; choosing another one clears the error.

All on the fast tier (the domain's functions, no server): the rule's pointers through the API are
tests/domain/test_rules_crud.py's."""

from __future__ import annotations

import pytest

from dms.db.models import Node
from dms.domain import trash
from dms.domain.rules import store
from tests.harness import samples
from tests.harness.database import execute_sql
from tests.harness.domaintier import (
    assert_refused,
    filed,
    home_id,
    inbox_id,
    new_document,
    new_folder,
    new_user,
    rules_applied,
    upload_file,
    wait_read,
)

LETTER = samples.text("Stadtwerke electricity bill, meter 4711\n")



def gone(title: str) -> str:
    return (f"Disabled: the folder {title!r} this rule moved documents to was deleted. Choose "
            "another folder (or restore it) and enable the rule again.")


def rule(user, name: str, pattern: str, actions: dict) -> str:
    """A rule made as POST /rules/ makes it: its id."""
    return store.create_rule(user, {"name": name, "match": {"pattern": pattern},
                                    "actions": actions}).id


def rule_state(user, rule_id: str) -> tuple[bool, str | None]:
    found = store.owned_rule(user, rule_id)
    return found.enabled, found.last_error


def test_deleting_a_folder_or_a_folder_above_it_disables_its_rules(services):
    alice = new_user("alice")
    bills = new_folder(services, alice, "Bills", home_id(alice))
    year = new_folder(services, alice, "2026", bills)
    into_year = rule(alice, "Into 2026", "x", {"move_to": year})
    into_home = rule(alice, "Into home", "x", {"move_to": home_id(alice)})
    trash.delete(services, alice, bills, Node.FOLDER)
    assert rule_state(alice, into_year) == (False, gone("2026"))
    assert rule_state(alice, into_home) == (True, None)

    # Restoring the folder does not enable the rule; enabling it does, now that it is back.
    trash.restore(services, alice, bills)
    assert rule_state(alice, into_year) == (False, gone("2026"))
    store.update_rule(alice, into_year, {"enabled": True})
    assert rule_state(alice, into_year) == (True, None)


def test_a_disabled_rule_cannot_be_enabled_while_its_folder_is_gone(services, config):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Old", home_id(alice))
    into_old = rule(alice, "Into old", "x", {"move_to": folder})
    trash.delete(services, alice, folder)
    assert_refused(config, lambda: store.update_rule(alice, into_old, {"enabled": True}),
                   "does_not_exist", f"Invalid folder {folder!r}: the folder does not exist.",
                   "actions/move_to")
    other = new_folder(services, alice, "New", home_id(alice))
    store.update_rule(alice, into_old, {"enabled": True, "actions": {"move_to": other}})
    assert rule_state(alice, into_old) == (True, None)


@pytest.mark.config(trash_days=0)
def test_deleting_a_folder_for_good_at_once_disables_its_rules(services):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Gone", home_id(alice))
    into_gone = rule(alice, "Into gone", "x", {"move_to": folder})
    trash.delete(services, alice, folder)
    assert rule_state(alice, into_gone) == (False, gone("Gone"))


def test_a_rule_that_finds_its_folder_gone_is_disabled_and_does_nothing(reading, config):
    """The safety net: the folder left behind the rule's back (here by SQL, as a restore of an
    older backup or a bug could leave it)."""
    alice = new_user("alice")
    folder = new_folder(reading, alice, "Vanishing", home_id(alice))
    vanishing = rule(alice, "Into vanishing", "stadtwerke",
                     {"move_to": folder, "add_tags": ["bill"]})
    rule(alice, "Still runs", "meter", {"add_tags": ["meter"]})
    execute_sql(config, "UPDATE node SET trash_id = id WHERE id = ?", folder)
    document = new_document(reading, alice, "letter")
    upload_file(reading, alice, document, "letter.txt", LETTER)
    assert wait_read(document)[-1] == "succeeded"
    assert rule_state(alice, vanishing) == (False, gone("Vanishing"))
    assert filed(alice, document) == ("letter", inbox_id(alice), ["meter"])
    assert [step["rule"]["name"] for step in rules_applied(alice, document)] == ["Still runs"]
