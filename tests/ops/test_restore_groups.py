"""Groups and grants in backups (migrations 0023, 0024): a backup keeps the groups, their members
and what is shared with whom; a restore refuses a group or a grant the API would refuse (a name,
a name_key that is not its name's, a shared special folder, a grant to the node's owner) in one
sentence, the folder left as it was (tests/harness/backups.py)."""

from __future__ import annotations

import sqlite3

import pytest

from tests.harness.backups import backed_up, lines_change, rebuild, refused
from tests.harness.client import JSON
from tests.harness.documents import create_node
from tests.harness.processes import dms
from tests.harness.users import add_user

# Restores into new data dirs; the rows' engine is SQLite.
# Sockets (pytest-socket): the data dir is made by a server.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """A backup of a data dir where the admin made the group Family of alice and bob.
    Returns (archive, {"family", "alice", "bob"}: ids)."""
    def fill(admin):
        alice, bob = add_user(admin, "alice"), add_user(admin, "bob")
        response = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
            "name": "Family", "members": [alice.user_id, bob.user_id]}}})
        assert response.status_code == 201, response.text
        family = response.json()["data"]["id"]
        folder = create_node(alice, "folders", "Insurance", alice.home_id)
        grants = [alice.post(f"/api/nodes/{folder}/access/", grantee, media=JSON).json()[
            "data"]["id"] for grantee in ({"group": family, "role": "viewer"},
                                          {"user": bob.user_id, "role": "editor"})]
        return {"family": family, "alice": alice.user_id, "bob": bob.user_id,
                "folder": folder, "home": alice.home_id, "grants": grants}

    return backed_up(tmp_path_factory.mktemp("grouped"), fill)


def test_groups_and_their_members_come_back(grouped, work):
    archive, ids = grouped
    result = dms("restore", archive, "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(work / "new" / "dms.db") as connection:
        assert connection.execute("SELECT id, name, name_key FROM user_group").fetchall() == [
            (ids["family"], "Family", "family")]
        assert sorted(connection.execute("SELECT group_id, user_id FROM group_member")) == \
            sorted([(ids["family"], ids["alice"]), (ids["family"], ids["bob"])])
        assert sorted(connection.execute(
            "SELECT id, node_id, user_id, group_id, role, granted_by FROM node_grant")) == sorted([
                (ids["grants"][0], ids["folder"], None, ids["family"], "viewer", ids["alice"]),
                (ids["grants"][1], ids["folder"], ids["bob"], None, "editor", ids["alice"])])


@pytest.mark.parametrize(("values", "what"), [
    ({"name": "Fam\u202eily", "name_key": "fam\u202eily"},
     "has a name the API would refuse (A group name may not contain control characters or "
     "invisible formatting characters)"),
    ({"name_key": "friends"}, "has a name_key that is not its name's"),
], ids=["override", "key"])
def test_a_group_the_api_would_refuse_is_refused(grouped, work, values, what):
    archive, ids = grouped
    refused(rebuild(archive, work / "bad.zip",
                    rows={"user_group": lines_change({"id": ids["family"]}, values)}),
            f"The backup's table user_group cannot be restored: row {ids['family']} {what}.")


def test_a_group_name_of_another_type_is_refused_as_it_loads(grouped, work):
    archive, ids = grouped
    refused(rebuild(archive, work / "bad.zip",
                    rows={"user_group": lines_change({"id": ids["family"]}, {"name": 7})}),
            "The backup's table user_group cannot be restored: line 2 has a name of the wrong "
            "type (7).")


@pytest.mark.parametrize(("values", "what"), [
    ({"node_id": "home"}, "shares the special folder .home"),
    ({"user_id": "alice"}, "shares a node with its own owner"),
], ids=["home", "owner"])
def test_a_grant_the_api_would_refuse_is_refused(grouped, work, values, what):
    archive, ids = grouped
    values = {column: ids[value] for column, value in values.items()}
    grant = ids["grants"][1]  # bob's, as an editor
    refused(rebuild(archive, work / "bad.zip",
                    rows={"node_grant": lines_change({"id": grant}, values)}),
            f"The backup's table node_grant cannot be restored: row {grant} {what}.")
