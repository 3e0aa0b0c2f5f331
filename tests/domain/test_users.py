"""Users (api.md, "Permissions", "Users"): every endpoint for its owner, another user, an admin and
an anonymous caller.

Who may do what, the refusals with their field, what a change leaves (folders, passwords, tokens)
and the order users are listed in are tested on the fast tier, by the domain's functions
(`services`, `root`); through the API, what a client sees: the resources, statuses, media types,
pointers (one case of each refusal's kind), 401 for anonymous callers and the documented 404."""

from __future__ import annotations

import re
from functools import partial

import pytest

from dms.db.models import User, utcnow
from dms.domain import accounts, credentials, sessions
from dms.errors import DomainError
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.domaintier import assert_refused, new_user
from tests.harness.users import USER_PASSWORD

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
FORBIDDEN = ("permission_denied", "You do not have permission to perform this action.")
SUPERUSERS_ONLY = ("permission_denied", "Only a superuser may change or delete a superuser.")
RIGHTS = ("permission_denied", "Only a superuser may grant or remove admin rights.")
ADDRESS = "192.0.2.1"  # where the fast tier's logins come from


def expected_user(client, **attributes) -> dict:
    """The whole user resource we expect for a logged-in test client."""
    return {
        "type": "users",
        "id": client.user_id,
        "attributes": {
            "username": client.username, "first_name": "", "last_name": "", "email": "",
            "is_active": True, "is_staff": False, "is_superuser": False,
            **attributes,
        },
        "relationships": {
            "inbox_folder": {"data": {"type": "folders", "id": client.inbox_id}},
            "home_folder": {"data": {"type": "folders", "id": client.home_id}},
            "shared_folder": {"data": {"type": "folders", "id": client.shared_id}},
        },
    }


def without_date(resource: dict) -> dict:
    attributes = dict(resource["attributes"])
    assert DATETIME.match(attributes.pop("date_joined"))
    return {**resource, "attributes": attributes}


# -- the fast tier's helpers ----------------------------------------------------------------------

def flags(user_id: str) -> tuple:
    """(username, is_active, is_staff, is_superuser) as stored."""
    user = User.get_by_id(user_id)
    return user.username, user.is_active, user.is_staff, user.is_superuser


def logs_in(services, username: str, password: str) -> str:
    """The id of the user a login (POST /auth/login/) with these credentials is for."""
    secret = accounts.login(username, password, ADDRESS, services.throttle)
    return sessions.find_token(secret, utcnow()).user.id


def assert_login_refused(services, username: str, password: str) -> None:
    with pytest.raises(DomainError) as refused:
        accounts.login(username, password, ADDRESS, services.throttle)
    assert (refused.value.code, str(refused.value)) == \
           ("authentication_failed", "Unable to log in with provided credentials.")


def token_user(secret: str) -> str | None:
    """The id of the user whose token this is, if the token is still accepted."""
    token = sessions.find_token(secret, utcnow())
    return token.user.id if token is not None else None


# -- me and creating ------------------------------------------------------------------------------

def test_me_returns_the_callers_resource_with_folder_ids(alice):
    response = alice.get("/api/users/me/")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == VND
    assert without_date(response.json()["data"]) == expected_user(alice)
    assert UUID.match(alice.user_id) and UUID.match(alice.home_id) and UUID.match(alice.inbox_id)
    assert alice.home_id != alice.inbox_id


def test_me_without_a_token_is_401(anon):
    assert_error(anon.get("/api/users/me/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")


def test_admin_creates_a_user_with_status_200_and_both_special_folders(admin):
    body = {"data": {"type": "users", "attributes": {
        "username": "carol", "first_name": "Carol", "last_name": "Example",
        "email": "carol@example.org", "password": "ignored-never-set"}}}
    response = admin.post("/users/", body)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == VND
    user = response.json()["data"]
    assert UUID.match(user["id"])
    assert without_date(user)["attributes"] == {
        "username": "carol", "first_name": "Carol", "last_name": "Example",
        "email": "carol@example.org", "is_active": True, "is_staff": False, "is_superuser": False}
    home = user["relationships"]["home_folder"]["data"]
    inbox = user["relationships"]["inbox_folder"]["data"]
    assert home["type"] == inbox["type"] == "folders" and home["id"] != inbox["id"]


def test_a_new_user_has_both_special_folders_and_no_password(root, services, config):
    user = accounts.create_user_by(root, {
        "username": "carol", "first_name": "Carol", "last_name": "Example",
        "email": "carol@example.org", "password": "ignored-never-set"})
    stored = User.get_by_id(user.id)
    assert (stored.username, stored.first_name, stored.last_name, stored.email, stored.is_active,
            stored.is_staff, stored.is_superuser, stored.password_hash) == \
           ("carol", "Carol", "Example", "carol@example.org", True, False, False, None)
    # The password in the body is ignored: the account has none until change-password.
    assert_login_refused(services, "carol", "ignored-never-set")
    assert query_sql(config, "SELECT special, title, kind, parent_id FROM node WHERE owner_id = ? "
                             "ORDER BY special", user.id) == \
        [("home", ".home", "folder", None), ("inbox", ".inbox", "folder", None)]


MIXED_SCRIPTS = ("A username may not mix letters of different scripts (such as Latin and "
                 "Cyrillic, whose letters can look alike).")


@pytest.mark.parametrize("attributes, code, detail, field", [
    ({}, "required", "A username is required.", "username"),
    ({"username": ""}, "blank", "A username may not be blank.", "username"),
    ({"username": 7}, "invalid", "A username must be text.", "username"),
    ({"username": "no spaces"}, "invalid",
     "A username may contain only letters, digits and @ . + - _ characters.", "username"),
    ({"username": "x" * 151}, "invalid", "A username has at most 150 characters.", "username"),
    ({"username": "admin"}, "invalid", "A user with that username already exists.", "username"),
    ({"username": "ADMIN"}, "invalid", "A user with that username already exists.", "username"),
    # a full-width "a": the same name once normalised (NFKC)
    ({"username": "\uff41dmin"}, "invalid", "A user with that username already exists.",
     "username"),
    ({"username": "ad\u202emin"}, "invalid",
     "A username may contain only letters, digits and @ . + - _ characters.", "username"),
    # A Cyrillic "а" in a Latin name: it would look exactly like "admin".
    ({"username": "\u0430dmin"}, "invalid", MIXED_SCRIPTS, "username"),
    ({"username": "\u0430lic\u0435"}, "invalid", MIXED_SCRIPTS, "username"),
    ({"username": "dave", "email": "not-an-address"}, "invalid",
     "email must be an e-mail address such as name@example.org.", "email"),
    ({"username": "dave", "is_staff": "yes"}, "invalid", "is_staff must be true or false.",
     "is_staff"),
])
def test_creating_a_user_with_bad_attributes_changes_nothing(root, config, attributes, code,
                                                              detail, field):
    """The fast tier (no server): the domain's refusal, its field and code."""
    assert_refused(config, lambda: accounts.create_user_by(root, attributes), code, detail, field)


def test_a_refused_user_is_answered_with_a_pointer_to_the_attribute(admin, config):
    """The same refusal through the API: the JSON:API envelope, the field as a pointer."""
    before = snapshot(config)
    response = admin.post("/api/users/", {"data": {"type": "users", "attributes": {
        "username": "dave", "email": "not-an-address"}}})
    assert_error(response, 400, "invalid",
                 "email must be an e-mail address such as name@example.org.",
                 "/data/attributes/email")
    assert snapshot(config) == before


def test_creating_a_user_needs_the_jsonapi_media_type(admin, config):
    before = snapshot(config)
    response = admin.post("/api/users/", {"data": {"type": "users",
                                                   "attributes": {"username": "x"}}},
                          media=JSON)
    assert_error(response, 415, "unsupported_media_type",
                 "Unsupported media type 'application/json' in the request; "
                 "use application/vnd.api+json.")
    assert snapshot(config) == before


def test_creating_a_user_with_the_wrong_type_is_a_conflict(admin, config):
    before = snapshot(config)
    response = admin.post("/api/users/", {"data": {"type": "folders",
                                                   "attributes": {"username": "x"}}})
    assert_error(response, 409, "conflict", 'The resource type "folders" does not match `users`.',
                 "/data/type")
    assert snapshot(config) == before


# -- listing and reading --------------------------------------------------------------------------

def test_only_admins_list_and_create_users(alice, anon, config):
    before = snapshot(config)
    assert_error(alice.get("/api/users/"), 403, *FORBIDDEN)
    assert_error(alice.post("/api/users/", {"data": {"type": "users",
                                                     "attributes": {"username": "z"}}}),
                 403, *FORBIDDEN)
    assert_error(anon.get("/api/users/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")
    assert_error(anon.post("/api/users/", {"data": {"type": "users",
                                                    "attributes": {"username": "z"}}}),
                 401, "not_authenticated", "Authentication credentials were not provided.")
    assert snapshot(config) == before


def test_users_are_listed_ordered_by_username(root):
    new_user("zed")
    new_user("bea")
    assert [user.username for user in accounts.all_users()] == ["admin", "bea", "zed"]


def test_admin_lists_users_as_resources_with_their_pagination(admin, alice):
    response = admin.get("/api/users/")
    assert response.status_code == 200
    body = response.json()
    assert [without_date(user) for user in body["data"]] == [
        expected_user(admin, is_staff=True, is_superuser=True), expected_user(alice)]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 1, "count": 2}}


def test_a_user_by_id_for_self_admin_other_and_anonymous(alice, bob, admin, anon, config):
    assert without_date(alice.get(f"/api/users/{alice.user_id}/").json()["data"]) == \
        expected_user(alice)
    assert without_date(admin.get(f"/api/users/{alice.user_id}/").json()["data"]) == \
        expected_user(alice)
    before = snapshot(config)
    assert_error(bob.get(f"/api/users/{alice.user_id}/"), 403, *FORBIDDEN)
    body = {"data": {"type": "users", "id": alice.user_id, "attributes": {"first_name": "X"}}}
    for response in (anon.get(f"/api/users/{alice.user_id}/"),
                     anon.patch(f"/api/users/{alice.user_id}/", body),
                     anon.delete(f"/api/users/{alice.user_id}/")):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    assert snapshot(config) == before


@pytest.mark.parametrize("user_id", [UNKNOWN_ID, "not-a-uuid"])
def test_unknown_user_is_exactly_the_documented_404(admin, user_id):
    response = admin.get(f"/api/users/{user_id}/")
    assert response.status_code == 404
    assert response.headers["Content-Type"] == VND
    assert response.json() == NOT_FOUND
    empty_patch = {"data": {"type": "users", "attributes": {}}}
    assert admin.patch(f"/api/users/{user_id}/", empty_patch).json() == NOT_FOUND
    assert admin.post(f"/api/users/{user_id}/change-password/", {"password": "long-enough"},
                      media=JSON).json() == NOT_FOUND
    assert admin.delete(f"/api/users/{user_id}/").json() == NOT_FOUND


# -- changing -------------------------------------------------------------------------------------

def test_user_patches_own_names_with_the_full_resource_sent_back(alice):
    resource = alice.get("/api/users/me/").json()["data"]
    resource["attributes"].update(first_name="Alice", last_name="Liddell", email="a@example.org")
    response = alice.patch(f"/api/users/{alice.user_id}/", {"data": resource})
    assert response.status_code == 200
    assert without_date(response.json()["data"]) == expected_user(
        alice, first_name="Alice", last_name="Liddell", email="a@example.org")
    # The spec's reference form: the bare resource, without `data`.
    resource["attributes"]["first_name"] = "Al"
    response = alice.patch(f"/users/{alice.user_id}/", resource)
    assert response.status_code == 200
    assert response.json()["data"]["attributes"]["first_name"] == "Al"


def test_a_user_may_change_the_case_of_their_own_name(services):
    alice = new_user("alice")
    assert accounts.update_user_by(alice, alice.id, {"username": "Alice"}, None).username == \
        "Alice"
    assert flags(alice.id) == ("Alice", True, False, False)


def test_refused_self_changes_change_nothing(root, config):
    """The fast tier: the domain's refusal, its field (a relationship's is a whole pointer)."""
    alice = new_user("alice")
    for attributes, relationships, code, detail, field in [
        ({"is_superuser": True}, None, *RIGHTS, None),
        ({"is_staff": True}, None, *RIGHTS, None),
        ({"is_active": False}, None, "invalid", "You cannot deactivate your own account.",
         "is_active"),
        ({"username": "admin"}, None, "invalid", "A user with that username already exists.",
         "username"),
        ({"username": "Admin"}, None, "invalid", "A user with that username already exists.",
         "username"),
        ({"username": "\u0430lice"}, None, "invalid", MIXED_SCRIPTS, "username"),
        ({}, {"home_folder": {"data": {"type": "folders", "id": UNKNOWN_ID}}}, "invalid",
         "home_folder cannot be changed.", "/data/relationships/home_folder"),
        ({}, {"shared_folder": {"data": {"type": "folders", "id": UNKNOWN_ID}}}, "invalid",
         "shared_folder cannot be changed.", "/data/relationships/shared_folder"),
    ]:
        assert_refused(config, partial(accounts.update_user_by, alice, alice.id, attributes,
                                       relationships), code, detail, field)


def test_a_refused_self_change_is_answered_with_its_status_and_pointer(alice, config):
    """Through the API: one case of each kind (a right withheld, an attribute, a relationship)
    and the id the route compares itself."""
    before = snapshot(config)
    for change, status, code, detail, pointer in [
        ({"attributes": {"is_superuser": True}}, 403, *RIGHTS, None),
        ({"attributes": {"username": "Admin"}}, 400, "invalid",
         "A user with that username already exists.", "/data/attributes/username"),
        ({"relationships": {"home_folder": {"data": {"type": "folders", "id": UNKNOWN_ID}}}},
         400, "invalid", "home_folder cannot be changed.", "/data/relationships/home_folder"),
        ({"id": UNKNOWN_ID}, 409, "conflict",
         "The id in the body does not match the id in the URL.", "/data/id"),
    ]:
        body = {"data": {"type": "users", "id": alice.user_id, **change}}
        assert_error(alice.patch(f"/api/users/{alice.user_id}/", body), status, code, detail,
                     pointer)
    assert snapshot(config) == before


def test_an_admin_cannot_rename_a_user_to_a_name_of_mixed_scripts(root, config):
    bob = new_user("bob")
    assert_refused(config, lambda: accounts.update_user_by(
        root, bob.id, {"username": "b\u043eb"}, None),  # a Cyrillic "о"
        "invalid", MIXED_SCRIPTS, "username")


def test_other_users_cannot_read_patch_change_password_or_delete(root, services, config):
    alice, bob = new_user("alice"), new_user("bob")
    for call in (lambda: accounts.visible_user(bob, alice.id),
                 lambda: accounts.update_user_by(bob, alice.id, {"first_name": "X"}, None),
                 lambda: accounts.change_password_by(bob, alice.id, "new-password"),
                 lambda: accounts.delete_user_by(services, bob, alice.id)):
        assert_refused(config, call, *FORBIDDEN, None)


# -- passwords ------------------------------------------------------------------------------------

def test_change_password_for_self_and_by_admin(root, services):
    alice = new_user("alice")
    _, secret = credentials.issue_token(alice, expiry_hours=None, name="login")
    accounts.change_password_by(alice, alice.id, "brand-new-pw")
    # Existing tokens stay valid; the new password logs in, the old one no longer does.
    assert token_user(secret) == alice.id
    assert logs_in(services, "alice", "brand-new-pw") == alice.id
    assert_login_refused(services, "alice", USER_PASSWORD)
    accounts.change_password_by(root, alice.id, "set-by-admin")
    assert logs_in(services, "alice", "set-by-admin") == alice.id


def test_change_password_answers_password_set_or_points_at_a_bad_one(alice, admin, anon,
                                                                      config):
    response = alice.post(f"/api/users/{alice.user_id}/change-password/",
                          {"password": "brand-new-pw"}, media=JSON)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    assert response.json() == {"status": "password set"}
    assert anon.login("alice", "brand-new-pw").user_id == alice.user_id
    response = admin.post(f"/users/{alice.user_id}/change-password/", {"password": "set-by-admin"},
                          media=VND)
    assert response.json() == {"status": "password set"}
    assert anon.login("alice", "set-by-admin").user_id == alice.user_id
    # A refused one: the pointer, and a body without the key is a missing password.
    before = snapshot(config)
    for body, code, detail in [({"password": "short"}, "invalid",
                                "A password needs at least 8 characters."),
                               ({}, "required", "A password is required.")]:
        response = alice.post(f"/api/users/{alice.user_id}/change-password/", body, media=JSON)
        assert_error(response, 400, code, detail, "/password", media=JSON)
    assert snapshot(config) == before


def test_bad_passwords_are_refused(services, config):
    alice = new_user("alice")
    for password, code, detail in [
        ("short", "invalid", "A password needs at least 8 characters."),
        (None, "required", "A password is required."),
        (12345678, "invalid", "A password is required."),
    ]:
        assert_refused(config, partial(accounts.change_password_by, alice, alice.id, password),
                       code, detail, "password")


# -- deleting -------------------------------------------------------------------------------------

def test_admin_deletes_a_user_with_their_tokens_and_folders(root, services, config):
    alice, bob = new_user("alice"), new_user("bob")
    _, secret = credentials.issue_token(alice, expiry_hours=None, name="login")
    _, bobs = credentials.issue_token(bob, expiry_hours=None, name="login")
    accounts.delete_user_by(services, root, alice.id)
    assert_refused(config, lambda: accounts.visible_user(root, alice.id), "not_found", "Not found.",
                   None)
    assert token_user(secret) is None
    rows = snapshot(config)
    assert not [row for table in ("node", "token", "user") for row in rows[table]
                if alice.id in row]
    assert (token_user(bobs), len([row for row in rows["node"] if bob.id in row])) == (bob.id, 2)


def test_deleting_a_user_is_204_and_deleting_oneself_400(admin, alice, config):
    response = admin.delete(f"/api/users/{alice.user_id}/")
    assert response.status_code == 204
    assert response.content == b""
    assert admin.get(f"/api/users/{alice.user_id}/").json() == NOT_FOUND
    assert_error(alice.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    before = snapshot(config)
    assert_error(admin.delete(f"/api/users/{admin.user_id}/"), 400, "invalid",
                 "You cannot delete your own account.")
    assert snapshot(config) == before


def test_nobody_deletes_themselves(root, services, config):
    assert_refused(config, lambda: accounts.delete_user_by(services, root, root.id), "invalid",
                   "You cannot delete your own account.", None)


# -- admins, staff and superusers -----------------------------------------------------------------

def test_staff_cannot_touch_superusers_or_grant_rights(root, services, config):
    staff = new_user("staffer")
    assert flags(accounts.update_user_by(root, staff.id, {"is_staff": True}, None).id) == \
        ("staffer", True, True, False)
    staff = User.get_by_id(staff.id)
    plain = new_user("plain")
    _, secret = credentials.issue_token(plain, expiry_hours=None, name="login")
    for call, refusal in [
        (lambda: accounts.delete_user_by(services, staff, root.id), SUPERUSERS_ONLY),
        (lambda: accounts.change_password_by(staff, root.id, "hijacked!"), SUPERUSERS_ONLY),
        (lambda: accounts.update_user_by(staff, plain.id, {"is_superuser": True}, None), RIGHTS),
        (lambda: accounts.update_user_by(staff, staff.id, {"is_superuser": True}, None), RIGHTS),
        (lambda: accounts.create_user_by(staff, {"username": "sneaky", "is_staff": True}),
         RIGHTS),
    ]:
        assert_refused(config, call, *refusal, None)
    # What staff may do: manage an ordinary account.
    accounts.update_user_by(staff, plain.id, {"is_active": False}, None)
    assert flags(plain.id) == ("plain", False, False, False)
    assert token_user(secret) is None
    accounts.delete_user_by(services, staff, plain.id)
    assert User.get_or_none(User.id == plain.id) is None


def test_the_last_active_superuser_stays(root, config):
    assert_refused(config, lambda: accounts.update_user_by(
        root, root.id, {"is_superuser": False}, None), "invalid",
        "The last active superuser must stay an active superuser.", "is_superuser")


def test_a_superuser_may_step_down_when_another_remains(root, services, config):
    other = new_user("root2")
    accounts.update_user_by(root, other.id, {"is_superuser": True, "is_staff": True}, None)
    stepped_down = accounts.update_user_by(root, root.id, {"is_superuser": False}, None)
    assert flags(stepped_down.id) == ("admin", True, True, False)
    # Now `other` is the last one and cannot be deleted by the remaining staff admin either.
    assert_refused(config, lambda: accounts.delete_user_by(
        services, stepped_down, other.id), *SUPERUSERS_ONLY, None)
    assert logs_in(services, "admin", USER_PASSWORD) == root.id
    assert [user.username for user in accounts.all_users()] == ["admin", "root2"]
    accounts.require_admin(User.get_by_id(root.id))  # still an admin: may list users


# "ерос" is all Cyrillic and looks like the Latin "epoc": whole-script lookalikes are not refused
# (no confusables data in Python or dms's dependencies; docs/api.md, Users).
@pytest.mark.parametrize("username", ["山田たろう", "ヤマダ太郎", "김철수", "Ελένη", "Сергей",
                                      "Jörg_Müller", "o.neil@example.org",
                                      "\u0435\u0440\u043e\u0441"])
def test_names_in_one_script_are_welcome(root, username):
    assert accounts.create_user_by(root, {"username": username}).username == username
