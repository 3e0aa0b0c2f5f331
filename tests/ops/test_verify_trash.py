"""`dms verify` and the trash, on both engines: deletions made through the API — nested ones and
restored ones too — are clean, and each way the trash's marks can disagree with the tree, made by
changing the database behind the server's back, is reported by its own sentence with the ids
involved, exit status 1; `--repair` says it leaves them to the owner."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dms.ops.verify._queries import TRASH  # private: the queries under test
from tests.harness.database import execute_sql
from tests.harness.documents import make_folder, new_document
from tests.harness.processes import config_args, environment
from tests.harness.waiting import wait_indexed

(GONE, NOT_MARKED, LIVE_BELOW, NOT_BELOW, OTHER_OWNER, SPECIAL) = TRASH
NOT_REPAIRED = ("Not repaired: trash marks that disagree with the folder tree; the owner restores "
                "the deletion involved (POST /trash/{id}/restore/) or deletes it for good (DELETE "
                "/trash/{id}/), either of which makes it whole again.")


def verify(config, *options: str) -> tuple[int, list[str]]:
    wait_indexed(config)  # a change of a mark reaches the search index through the outbox
    result = subprocess.run([sys.executable, "-m", "dms", "verify", *options,
                             *config_args(config)], env=environment(), capture_output=True,
                            text=True)
    return result.returncode, result.stdout.splitlines()


def expected(*sections: tuple[str, list[str]]) -> list[str]:
    lines = ["Checked 0 stored files."]
    for title, ids in sections:
        lines += [f"{len(ids)} {title}:", *(f"  {node_id}" for node_id in sorted(ids))]
    return lines + ["Problems found."]


@pytest.fixture
def deleted(alice):
    """.home/Bills/2026/letter (a document without a file) and .home/Other; Bills deleted."""
    ids = {"bills": make_folder(alice, "Bills", alice.home_id)}
    ids["year"] = make_folder(alice, "2026", ids["bills"])
    ids["letter"] = new_document(alice, "letter", ids["year"])
    ids["other"] = make_folder(alice, "Other", alice.home_id)
    assert alice.delete(f"/api/folders/{ids['bills']}/").status_code == 204
    return ids


def test_deletions_through_the_api_are_clean(alice, config, deleted):
    assert alice.delete(f"/api/folders/{deleted['other']}/").status_code == 204
    assert verify(config)[0] == 0
    # Nested: a deletion inside another keeps its own mark; restoring the outer one leaves it.
    assert alice.post(f"/api/trash/{deleted['bills']}/restore/").status_code == 200
    assert alice.delete(f"/api/folders/{deleted['year']}/").status_code == 204
    assert alice.delete(f"/api/folders/{deleted['bills']}/").status_code == 204
    assert verify(config)[0] == 0
    assert alice.post(f"/api/trash/{deleted['bills']}/restore/").status_code == 200
    assert verify(config) == (0, ["Checked 0 stored files.", "No problems found."])


def test_a_mark_whose_deletion_is_gone(config, deleted):
    execute_sql(config, "DELETE FROM trash_entry WHERE node_id = ?", deleted["bills"])
    assert verify(config) == (1, expected(
        (GONE, [deleted["bills"], deleted["year"], deleted["letter"]])))


def test_a_deletion_whose_root_is_not_in_the_trash(config, deleted):
    execute_sql(config, "UPDATE node SET trash_id = NULL WHERE id = ?", deleted["bills"])
    assert verify(config) == (1, expected((NOT_MARKED, [deleted["bills"]]),
                                          (NOT_BELOW, [deleted["year"]])))


def test_a_live_node_below_a_node_in_the_trash_and_repair_leaves_it(config, deleted):
    """A half-marked subtree: the letter came back on its own while its folder is in the
    trash."""
    execute_sql(config, "UPDATE node SET trash_id = NULL WHERE id = ?", deleted["letter"])
    assert verify(config) == (1, expected((LIVE_BELOW, [deleted["letter"]])))
    status, lines = verify(config, "--repair")
    assert (status, lines[0]) == (1, NOT_REPAIRED)
    assert lines[1:] == expected((LIVE_BELOW, [deleted["letter"]]))


def test_a_node_in_the_trash_moved_out_of_its_deletion(config, deleted):
    execute_sql(config, "UPDATE node SET parent_id = ? WHERE id = ?", deleted["other"],
                deleted["letter"])
    assert verify(config) == (1, expected((NOT_BELOW, [deleted["letter"]])))


def test_a_deletion_in_another_users_trash(config, deleted, bob):
    execute_sql(config, "UPDATE trash_entry SET owner_id = ? WHERE node_id = ?", bob.user_id,
                deleted["bills"])
    assert verify(config) == (1, expected((OTHER_OWNER, [deleted["bills"]])))


def test_a_special_folder_in_the_trash(alice, config, deleted):
    execute_sql(config, "UPDATE node SET trash_id = id WHERE id = ?", alice.inbox_id)
    execute_sql(config, "INSERT INTO trash_entry (node_id, owner_id, deleted_at, purge_at) "
                        "VALUES (?, ?, '2026-01-01 00:00:00.000000', '2026-01-31 00:00:00.000000')",
                alice.inbox_id, alice.user_id)
    assert verify(config) == (1, expected((SPECIAL, [alice.inbox_id])))


@pytest.mark.sqlite_only  # PostgreSQL enforces the foreign key even behind dms's back
def test_a_trash_entry_whose_node_is_gone(alice, config, deleted):
    execute_sql(config, "INSERT INTO trash_entry (node_id, owner_id, deleted_at, purge_at) "
                        "VALUES ('no-such-node', ?, '2026-01-01 00:00:00.000000', "
                        "'2026-01-31 00:00:00.000000')", alice.user_id)
    assert verify(config) == (1, expected(("trash entries whose node is gone",
                                           ["no-such-node"])))
