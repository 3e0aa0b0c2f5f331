"""Groups in backups (migration 0023): a backup keeps the groups and their members; a restore
refuses a group the API would refuse (its name, a name_key that is not its name's) in one
sentence, the folder left as it was (tests/harness/backups.py)."""

from __future__ import annotations

import sqlite3

import pytest

from tests.harness.backups import backed_up, lines_change, rebuild, refused
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
        return {"family": response.json()["data"]["id"], "alice": alice.user_id,
                "bob": bob.user_id}

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
