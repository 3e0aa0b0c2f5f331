"""Groups of users (api.md §21, "Groups") through the API on both engines: a superuser creates,
renames, fills and deletes them; a member sees the groups they are in and no other (404); only a
superuser changes them (403 with a sentence); every refusal names its attribute and changes
nothing; a user's deletion leaves their groups; and two superusers creating one name at once make
one group (the domain's check and insert are one write transaction)."""

from __future__ import annotations

import threading

import pytest

from dms.db.models import Group, GroupMember
from dms.domain.access import groups
from dms.errors import Invalid
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.domaintier import new_user

ONLY_SUPERUSERS = ("permission_denied",
                   "Only a superuser creates, changes or deletes groups.")


def body(**attributes):
    return {"data": {"type": "groups", "attributes": attributes}}


def made(admin, **attributes) -> dict:
    response = admin.post("/api/groups/", body(**attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def assert_not_found(response) -> None:
    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def names(client) -> list[str]:
    response = client.get("/api/groups/")
    assert response.status_code == 200, response.text
    return [item["attributes"]["name"] for item in response.json()["data"]]


def test_a_superuser_makes_renames_fills_and_deletes_a_group(admin, alice, bob):
    family = made(admin, name="Family", members=[bob.user_id, alice.user_id, bob.user_id])
    assert family == {"type": "groups", "id": family["id"], "attributes": {
        "name": "Family", "members": [alice.user_id, bob.user_id],  # by username, once each
        "created_at": family["attributes"]["created_at"]}}
    made(admin, name="Accountants")
    assert names(admin) == ["Accountants", "Family"]
    assert names(alice) == names(bob) == ["Family"]
    assert alice.get(f"/api/groups/{family['id']}/").json()["data"] == family

    changed = admin.patch(f"/api/groups/{family['id']}/", body(name="Household",
                                                               members=[bob.user_id]))
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["attributes"]["members"] == [bob.user_id]
    assert (names(alice), names(bob)) == ([], ["Household"])
    assert_not_found(alice.get(f"/api/groups/{family['id']}/"))

    assert admin.delete(f"/api/groups/{family['id']}/").status_code == 204
    assert (names(admin), names(bob)) == (["Accountants"], [])
    assert_not_found(admin.get(f"/api/groups/{family['id']}/"))
    assert bob.get("/api/users/me/").status_code == 200  # members stay


def test_only_a_superuser_changes_groups_and_a_refusal_changes_nothing(admin, alice, config):
    family = made(admin, name="Family", members=[alice.user_id])
    before = snapshot(config)
    path = f"/api/groups/{family['id']}/"
    assert_error(alice.post("/api/groups/", body(name="Mine")), 403, *ONLY_SUPERUSERS)
    assert_error(alice.patch(path, body(members=[])), 403, *ONLY_SUPERUSERS)
    assert_error(alice.delete(path), 403, *ONLY_SUPERUSERS)
    assert snapshot(config) == before


@pytest.mark.parametrize(("attributes", "detail", "field"), [
    ({"name": "FAMILY"}, "A group with this name already exists.", "name"),
    ({"name": "ｆａｍｉｌｙ"}, "A group with this name already exists.", "name"),  # width
    ({}, "A group name is required.", "name"),
    ({"name": "  "}, "A group name may not be blank.", "name"),
    ({"name": "x" * 151}, "A group name has at most 150 characters.", "name"),
    ({"name": "Fam\u202eily"}, "A group name may not contain control characters or invisible "
                               "formatting characters.", "name"),
    ({"name": "Other", "members": "everyone"}, "members is a list of user ids.", "members"),
    ({"name": "Other", "members": [1]}, "members is a list of user ids.", "members"),
    ({"name": "Other", "members": ["x"] * 1001}, "A group has at most 1,000 members.",
     "members"),
    ({"name": "Other", "members": ["nobody"]}, "members: there is no user with the id "
                                               "'nobody'.", "members"),
], ids=["duplicate", "duplicate-width", "missing", "blank", "long", "override", "members-text",
        "members-numbers", "members-many", "members-unknown"])
def test_a_refused_group_names_its_attribute_and_changes_nothing(admin, config, attributes,
                                                                   detail, field):
    made(admin, name="Family")
    before = snapshot(config)
    codes = {"A group name is required.": "required", "A group name may not be blank.": "blank"}
    assert_error(admin.post("/api/groups/", body(**attributes)), 400,
                 codes.get(detail, "invalid"), detail, f"/data/attributes/{field}")
    assert snapshot(config) == before


def test_a_rename_onto_another_groups_name_is_refused(admin, config):
    made(admin, name="Family")
    other = made(admin, name="Friends")
    before = snapshot(config)
    assert_error(admin.patch(f"/api/groups/{other['id']}/", body(name="family ")), 400,
                 "invalid", "A group with this name already exists.", "/data/attributes/name")
    assert snapshot(config) == before
    same = admin.patch(f"/api/groups/{other['id']}/", body(name="FRIENDS"))  # its own name
    assert same.json()["data"]["attributes"]["name"] == "FRIENDS"


def test_a_users_deletion_takes_them_out_of_their_groups(admin, alice, bob):
    family = made(admin, name="Family", members=[alice.user_id, bob.user_id])
    assert admin.delete(f"/api/users/{alice.user_id}/").status_code == 204
    assert admin.get(f"/api/groups/{family['id']}/").json()["data"]["attributes"][
        "members"] == [bob.user_id]


def test_an_anonymous_caller_gets_401(anon):
    for response in (anon.get("/api/groups/"), anon.post("/api/groups/", body(name="x"))):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")


def test_superusers_creating_one_name_at_once_make_one_group(services):
    root = new_user("root", is_superuser=True)
    alice = new_user("alice")
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def create() -> None:
        start.wait()
        try:
            groups.create(root, {"name": "Family", "members": [alice.id]})
            outcomes.append("made")
        except Invalid as refused:
            outcomes.append(refused.message)

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["A group with this name already exists."] * 7 + ["made"]
    assert [group.name for group in Group.select()] == ["Family"]
    assert [member.user_id for member in GroupMember.select()] == [alice.id]
