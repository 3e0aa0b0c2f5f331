"""Sharing a node (api.md §21), on both engines: the one rule (dms.domain.access.rule) over a
household's tree — a folder's grant covers what is below it now and later, the highest of a
person's own and their groups' grants wins, a revocation or a group change counts at once, the
trash ends it — and the access routes: the owner (or a superuser) shares and takes back, each
change in the node's history, every refusal with its sentence and pointer and nothing changed,
and two grants to one person at once make one grant."""

from __future__ import annotations

import threading

import pytest

from dms.db.models import NodeGrant
from dms.domain import trash
from dms.domain.access import grants, groups
from dms.domain.access.rule import EDITOR, OWNER, VIEWER, reach, role_of
from dms.errors import Forbidden, Invalid, NotFound
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document as post_document
from tests.harness.domaintier import events_of, home_id, new_document, new_folder, new_user

ONLY_THE_OWNER = ("permission_denied",
                  "Only its owner (or a superuser) sees and changes who it is shared with.")


def role(user, node_id) -> str | None:
    reached = role_of(user, node_id)
    return reached.role if reached else None


@pytest.fixture
def household(services):
    """alice's tree (Family/Insurance/policy, Private/diary), the group Household of bob and
    carol, and dave who is in nothing."""
    root = new_user("root", is_superuser=True)
    people = {name: new_user(name) for name in ("alice", "bob", "carol", "dave")}
    alice = people["alice"]
    family = new_folder(services, alice, "Family", home_id(alice))
    insurance = new_folder(services, alice, "Insurance", family)
    private = new_folder(services, alice, "Private", home_id(alice))
    nodes = {"family": family, "insurance": insurance, "private": private,
             "policy": new_document(services, alice, "policy", insurance),
             "diary": new_document(services, alice, "diary", private)}
    group = groups.create(root, {"name": "Household",
                                 "members": [people["bob"].id, people["carol"].id]})
    return {**people, "root": root, "group": group.id, **nodes}


def test_a_folders_grant_covers_what_is_below_it_and_the_highest_role_wins(services, household):
    h = household
    alice, bob, carol, dave = h["alice"], h["bob"], h["carol"], h["dave"]
    grants.grant(alice, h["family"], {"group": h["group"], "role": VIEWER})
    grants.grant(alice, h["insurance"], {"user": bob.id, "role": EDITOR})
    table = {who.username: [role(who, h[node]) for node in ("family", "insurance", "policy",
                                                           "private", "diary")]
             for who in (alice, bob, carol, dave)}
    assert table == {"alice": [OWNER] * 5,
                     "bob": [VIEWER, EDITOR, EDITOR, None, None],
                     "carol": [VIEWER, VIEWER, VIEWER, None, None],
                     "dave": [None] * 5}
    later = new_document(services, alice, "claim", h["insurance"])  # made after the grants
    assert (role(bob, later), role(carol, later)) == (EDITOR, VIEWER)
    with pytest.raises(Forbidden) as refused:
        reach(carol, h["policy"], EDITOR)
    assert refused.value.message == \
        "It is shared with you to read; changing it needs the editor role."
    with pytest.raises(NotFound):
        reach(dave, h["policy"])
    with pytest.raises(NotFound):  # not of the kind asked for
        reach(bob, h["policy"], kind="folder")


def test_a_revocation_a_group_change_and_the_trash_count_at_once(services, household):
    h = household
    alice, bob, carol = h["alice"], h["bob"], h["carol"]
    grants.grant(alice, h["family"], {"group": h["group"], "role": VIEWER})
    made, _ = grants.grant(alice, h["insurance"], {"user": bob.id, "role": EDITOR})
    grants.revoke(alice, h["insurance"], made.id)
    assert role(bob, h["policy"]) == VIEWER  # the group's grant on Family still covers it
    groups.update(h["root"], h["group"], {"members": [bob.id]})
    assert (role(bob, h["policy"]), role(carol, h["policy"])) == (VIEWER, None)
    trash.delete(services, alice, h["family"])
    assert (role(bob, h["policy"]), role(alice, h["policy"])) == (None, None)
    trash.restore(services, alice, h["family"])
    assert role(bob, h["policy"]) == VIEWER


def test_grants_and_revocations_are_in_the_history(household):
    h = household
    alice, bob = h["alice"], h["bob"]
    made, new = grants.grant(alice, h["family"], {"user": bob.id, "role": VIEWER})
    again, new_again = grants.grant(alice, h["family"], {"user": bob.id, "role": EDITOR})
    same, _ = grants.grant(alice, h["family"], {"user": bob.id, "role": EDITOR})  # no change
    grants.grant(h["root"], h["family"], {"group": h["group"], "role": VIEWER})
    grants.revoke(alice, h["family"], made.id)
    assert (new, new_again, again.id, same.id, again.role) == (True, False, made.id, made.id,
                                                               EDITOR)
    assert events_of(alice, h["family"])[1:] == [
        ("access_granted", {"user": "bob", "role": "viewer"}),
        ("access_granted", {"user": "bob", "role": "editor", "was": "viewer"}),
        ("access_granted", {"group": "Household", "role": "viewer"}),
        ("access_revoked", {"user": "bob", "role": "editor"}),
    ]


def test_two_grants_to_one_person_at_once_make_one_grant(household):
    h = household
    start = threading.Barrier(8)
    results: list[bool] = []

    def share(role_name: str) -> None:
        start.wait()
        results.append(grants.grant(h["alice"], h["family"],
                                    {"user": h["bob"].id, "role": role_name})[1])

    threads = [threading.Thread(target=share, args=((VIEWER, EDITOR)[n % 2],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]
    assert NodeGrant.select().where(NodeGrant.node == h["family"]).count() == 1


# -- the routes ---------------------------------------------------------------------------------

def test_the_owner_shares_changes_the_role_and_takes_it_back(alice, bob, admin):
    folder = alice.post("/api/folders/", {"data": {"type": "folders", "attributes": {
        "title": "Family"}, "relationships": {"parent": {"data": {
            "type": "folders", "id": alice.home_id}}}}}).json()["data"]["id"]
    path = f"/api/nodes/{folder}/access/"
    shared = alice.post(path, {"user": bob.user_id, "role": "viewer"})
    assert shared.status_code == 201, shared.text
    grant = shared.json()["data"]
    assert grant == {"id": grant["id"], "node": folder,
                     "user": {"id": bob.user_id, "username": "bob"}, "group": None,
                     "role": "viewer", "granted_by": "alice",
                     "created_at": grant["created_at"]}
    changed = alice.post(path, {"user": bob.user_id, "role": "editor"})
    assert (changed.status_code, changed.json()["data"]) == (200, {**grant, "role": "editor"})
    access = alice.get(path).json()["data"]
    assert access == {"type": "access", "id": folder, "attributes": {
        "owner": {"id": alice.user_id, "username": "alice"},
        "grants": [{**grant, "role": "editor"}]}}
    assert admin.get(path).json() == {"data": access}  # a superuser sees it too
    assert alice.delete(f"{path}{grant['id']}/").status_code == 204
    assert alice.get(path).json()["data"]["attributes"]["grants"] == []
    history = alice.get(f"/api/nodes/{folder}/history/").json()["data"]
    assert [e["attributes"]["action"] for e in history[:3]] == [
        "access_revoked", "access_granted", "access_granted"]


NAME_ONE = ('Name either a user or a group to share with: {"user": id}, {"username": name} or '
            '{"group": id}.')


def test_refused_shares_say_why_and_change_nothing(alice, bob, admin, config):
    document = post_document(alice, "policy")
    path = f"/api/nodes/{document}/access/"
    group = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Household"}}}).json()["data"]["id"]
    grant = alice.post(path, {"group": group, "role": "viewer"}).json()["data"]
    before = snapshot(config)
    for sent, status, code, detail, pointer in [
        ({"user": alice.user_id, "role": "viewer"}, 400, "invalid",
         "That is its owner, who may do everything with it already.", "/user"),
        ({"user": "nobody", "role": "viewer"}, 400, "invalid",
         "There is no user with the id 'nobody'.", "/user"),
        ({"group": "nothing", "role": "viewer"}, 400, "invalid",
         "There is no group with the id 'nothing'.", "/group"),
        ({"user": bob.user_id, "group": group, "role": "viewer"}, 400, "invalid", NAME_ONE,
         "/group"),
        ({"user": bob.user_id, "username": "bob", "role": "viewer"}, 400, "invalid", NAME_ONE,
         "/username"),
        ({"role": "viewer"}, 400, "required", NAME_ONE, "/user"),
        ({"user": 7, "role": "viewer"}, 400, "invalid", "user is the id of a user.", "/user"),
        ({"username": ["bob"], "role": "viewer"}, 400, "invalid",
         "username is the name of a user.", "/username"),
        ({"username": "nobody", "role": "viewer"}, 400, "invalid",
         "There is no user with the name 'nobody'.", "/username"),
        ({"username": "BOB", "role": "viewer"}, 400, "invalid",
         "There is no user with the name 'BOB'.", "/username"),  # exact, as at login
        ({"username": "alice", "role": "viewer"}, 400, "invalid",
         "That is its owner, who may do everything with it already.", "/username"),
        ({"user": bob.user_id, "role": "owner"}, 400, "invalid",
         "role is one of viewer, editor.", "/role"),
    ]:
        assert_error(alice.post(path, sent), status, code, detail, pointer)
    assert_error(alice.post(f"/api/nodes/{alice.home_id}/access/",
                            {"user": bob.user_id, "role": "viewer"}), 400, "invalid",
                 "The special folders .home and .inbox are not shared; share a folder or "
                 "document inside them.")
    # Not theirs: unknown; shared with them: not theirs to manage.
    assert bob.get(path).json() == NOT_FOUND
    assert bob.post(path, {"user": bob.user_id, "role": "editor"}).json() == NOT_FOUND
    assert alice.delete(f"{path}nothing/").json() == NOT_FOUND
    assert alice.delete(f"/api/nodes/{alice.home_id}/access/{grant['id']}/").json() == \
        NOT_FOUND  # a grant of another node
    assert snapshot(config) == before
    alice.post(path, {"user": bob.user_id, "role": "viewer"})
    before = snapshot(config)
    assert_error(bob.get(path), 403, *ONLY_THE_OWNER)
    assert_error(bob.delete(f"{path}{grant['id']}/"), 403, *ONLY_THE_OWNER)
    assert snapshot(config) == before


def test_an_anonymous_caller_gets_401(alice, anon):
    path = f"/api/nodes/{alice.home_id}/access/"
    for response in (anon.get(path), anon.post(path, {"user": alice.user_id, "role": "viewer"}),
                     anon.delete(f"{path}some-grant/")):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")


def test_a_grant_to_a_group_deleted_meanwhile_is_made_or_refused_never_broken(services,
                                                                               household):
    """Grants take the USERS write scope that deletions of users and groups take: a grant to a
    group being deleted either lands before (and goes with the group) or is refused in words."""
    h = household
    folders = [new_folder(services, h["alice"], f"F{n}", home_id(h["alice"])) for n in range(8)]
    start = threading.Barrier(9)
    outcomes: list[str] = []

    def share(folder: str) -> None:
        start.wait()
        try:
            grants.grant(h["alice"], folder, {"group": h["group"], "role": VIEWER})
            outcomes.append("made")
        except Invalid as refused:
            outcomes.append(refused.message)

    def remove() -> None:
        start.wait()
        groups.delete(h["root"], h["group"])

    threads = [threading.Thread(target=share, args=(f,)) for f in folders]
    threads.append(threading.Thread(target=remove))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 8
    assert set(outcomes) <= {"made", f"There is no group with the id {h['group']!r}."}
    assert NodeGrant.select().count() == 0  # whatever was made went with the group
