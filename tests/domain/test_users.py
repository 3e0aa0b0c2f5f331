"""Users (api.md, "Permissions", "Users"): every endpoint for its owner, another user, an admin and
an anonymous caller."""

from __future__ import annotations

import re

import pytest

from dms.domain import accounts
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.domaintier import assert_refused
from tests.harness.users import ADMIN_PASSWORD, USER_PASSWORD

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
FORBIDDEN = ("permission_denied", "You do not have permission to perform this action.")


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
        },
    }


def without_date(resource: dict) -> dict:
    attributes = dict(resource["attributes"])
    assert DATETIME.match(attributes.pop("date_joined"))
    return {**resource, "attributes": attributes}


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


def test_admin_creates_a_user_with_status_200_and_both_special_folders(admin, config):
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
    # The password in the body is ignored: the account has none until change-password.
    assert_error(admin.as_anonymous().post("/api/auth/login/",
                                           {"username": "carol", "password": "ignored-never-set"},
                                           media=JSON),
                 400, "authentication_failed", "Unable to log in with provided credentials.",
                 media=JSON)
    titles = {row for row in snapshot(config)["node"] if user["id"] in row}
    assert len(titles) == 2 and any("'.home'" in t for t in titles) and \
        any("'.inbox'" in t for t in titles)


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


def test_admin_lists_users_ordered_by_username(admin, make_user):
    zed, bea = make_user("zed"), make_user("bea")
    response = admin.get("/api/users/")
    assert response.status_code == 200
    body = response.json()
    assert [u["attributes"]["username"] for u in body["data"]] == ["admin", "bea", "zed"]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 1, "count": 3}}
    assert without_date(body["data"][1]) == expected_user(bea)
    assert without_date(body["data"][2]) == expected_user(zed)


def test_get_user_by_id_for_self_admin_other_and_anonymous(alice, bob, admin, anon):
    assert without_date(alice.get(f"/api/users/{alice.user_id}/").json()["data"]) == \
        expected_user(alice)
    assert without_date(admin.get(f"/api/users/{alice.user_id}/").json()["data"]) == \
        expected_user(alice)
    assert_error(bob.get(f"/api/users/{alice.user_id}/"), 403, *FORBIDDEN)
    assert_error(anon.get(f"/api/users/{alice.user_id}/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")


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


def test_a_user_may_change_the_case_of_their_own_name(alice):
    body = {"data": {"type": "users", "id": alice.user_id, "attributes": {"username": "Alice"}}}
    response = alice.patch(f"/api/users/{alice.user_id}/", body)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["attributes"]["username"] == "Alice"


@pytest.mark.parametrize("change, status, code, detail, pointer", [
    ({"attributes": {"is_superuser": True}}, 403, "permission_denied",
     "Only a superuser may grant or remove admin rights.", None),
    ({"attributes": {"is_staff": True}}, 403, "permission_denied",
     "Only a superuser may grant or remove admin rights.", None),
    ({"attributes": {"is_active": False}}, 400, "invalid",
     "You cannot deactivate your own account.", "/data/attributes/is_active"),
    ({"attributes": {"username": "admin"}}, 400, "invalid",
     "A user with that username already exists.", "/data/attributes/username"),
    ({"attributes": {"username": "Admin"}}, 400, "invalid",
     "A user with that username already exists.", "/data/attributes/username"),
    ({"attributes": {"username": "\u0430lice"}}, 400, "invalid", MIXED_SCRIPTS,
     "/data/attributes/username"),
    ({"id": UNKNOWN_ID}, 409, "conflict", "The id in the body does not match the id in the URL.",
     "/data/id"),
    ({"relationships": {"home_folder": {"data": {"type": "folders", "id": UNKNOWN_ID}}}}, 400,
     "invalid", "home_folder cannot be changed.", "/data/relationships/home_folder"),
])
def test_refused_self_changes_change_nothing(alice, config, change, status, code, detail, pointer):
    before = snapshot(config)
    body = {"data": {"type": "users", "id": alice.user_id, **change}}
    assert_error(alice.patch(f"/api/users/{alice.user_id}/", body), status, code, detail, pointer)
    assert snapshot(config) == before


def test_an_admin_cannot_rename_a_user_to_a_name_of_mixed_scripts(admin, bob, config):
    before = snapshot(config)
    body = {"data": {"type": "users", "id": bob.user_id,
                     "attributes": {"username": "b\u043eb"}}}  # a Cyrillic "о"
    assert_error(admin.patch(f"/api/users/{bob.user_id}/", body), 400, "invalid", MIXED_SCRIPTS,
                 "/data/attributes/username")
    assert snapshot(config) == before


def test_other_users_cannot_patch_change_password_or_delete(alice, bob, anon, config):
    before = snapshot(config)
    body = {"data": {"type": "users", "id": alice.user_id, "attributes": {"first_name": "X"}}}
    assert_error(bob.patch(f"/api/users/{alice.user_id}/", body), 403, *FORBIDDEN)
    assert_error(bob.post(f"/api/users/{alice.user_id}/change-password/",
                          {"password": "new-password"}, media=JSON), 403, *FORBIDDEN, media=JSON)
    assert_error(bob.delete(f"/api/users/{alice.user_id}/"), 403, *FORBIDDEN)
    for response in (anon.patch(f"/api/users/{alice.user_id}/", body),
                     anon.delete(f"/api/users/{alice.user_id}/")):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    assert snapshot(config) == before


def test_change_password_for_self_and_by_admin(alice, admin, anon):
    response = alice.post(f"/api/users/{alice.user_id}/change-password/",
                          {"password": "brand-new-pw"}, media=JSON)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    assert response.json() == {"status": "password set"}
    # Existing tokens stay valid; the new password logs in, the old one no longer does.
    assert alice.get("/api/users/me/").status_code == 200
    assert anon.login("alice", "brand-new-pw").user_id == alice.user_id
    assert anon.post("/api/auth/login/", {"username": "alice", "password": USER_PASSWORD},
                     media=JSON).status_code == 400
    response = admin.post(f"/users/{alice.user_id}/change-password/", {"password": "set-by-admin"},
                          media=VND)
    assert response.json() == {"status": "password set"}
    assert anon.login("alice", "set-by-admin").user_id == alice.user_id


@pytest.mark.parametrize("body, code, detail", [
    ({"password": "short"}, "invalid", "A password needs at least 8 characters."),
    ({}, "required", "A password is required."),
    ({"password": 12345678}, "invalid", "A password is required."),
])
def test_bad_passwords_are_refused(alice, config, body, code, detail):
    before = snapshot(config)
    response = alice.post(f"/api/users/{alice.user_id}/change-password/", body, media=JSON)
    assert_error(response, 400, code, detail, "/password", media=JSON)
    assert snapshot(config) == before


def test_admin_deletes_a_user_with_their_tokens_and_folders(admin, alice, config):
    response = admin.delete(f"/api/users/{alice.user_id}/")
    assert response.status_code == 204
    assert response.content == b""
    assert admin.get(f"/api/users/{alice.user_id}/").json() == NOT_FOUND
    assert_error(alice.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    rows = snapshot(config)
    assert not [row for table in ("node", "token", "user") for row in rows[table]
                if alice.user_id in row]


def test_nobody_deletes_themselves(admin, config):
    before = snapshot(config)
    assert_error(admin.delete(f"/api/users/{admin.user_id}/"), 400, "invalid",
                 "You cannot delete your own account.")
    assert snapshot(config) == before


def test_staff_cannot_touch_superusers_or_grant_rights(admin, make_user, config):
    staff = make_user("staffer")
    resource = admin.get(f"/api/users/{staff.user_id}/").json()["data"]
    resource["attributes"]["is_staff"] = True
    assert admin.patch(f"/api/users/{staff.user_id}/", {"data": resource}).status_code == 200
    plain = make_user("plain")
    before = snapshot(config)
    assert_error(staff.delete(f"/api/users/{admin.user_id}/"), 403, "permission_denied",
                 "Only a superuser may change or delete a superuser.")
    assert_error(staff.post(f"/api/users/{admin.user_id}/change-password/",
                            {"password": "hijacked!"}, media=JSON), 403, "permission_denied",
                 "Only a superuser may change or delete a superuser.", media=JSON)
    body = {"data": {"type": "users", "attributes": {"is_superuser": True}}}
    assert_error(staff.patch(f"/api/users/{plain.user_id}/", body), 403, "permission_denied",
                 "Only a superuser may grant or remove admin rights.")
    assert_error(staff.patch(f"/api/users/{staff.user_id}/", body), 403, "permission_denied",
                 "Only a superuser may grant or remove admin rights.")
    new = {"data": {"type": "users", "attributes": {"username": "sneaky", "is_staff": True}}}
    assert_error(staff.post("/api/users/", new), 403, "permission_denied",
                 "Only a superuser may grant or remove admin rights.")
    assert snapshot(config) == before
    # What staff may do: manage an ordinary account.
    body = {"data": {"type": "users", "attributes": {"is_active": False}}}
    deactivated = staff.patch(f"/api/users/{plain.user_id}/", body).json()["data"]
    assert deactivated["attributes"]["is_active"] is False
    assert_error(plain.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    assert staff.delete(f"/api/users/{plain.user_id}/").status_code == 204


def test_the_last_active_superuser_stays(admin, config):
    before = snapshot(config)
    body = {"data": {"type": "users", "attributes": {"is_superuser": False}}}
    assert_error(admin.patch(f"/api/users/{admin.user_id}/", body), 400, "invalid",
                 "The last active superuser must stay an active superuser.",
                 "/data/attributes/is_superuser")
    assert snapshot(config) == before


def test_a_superuser_may_step_down_when_another_remains(admin, make_user, anon):
    other = make_user("root2")
    grant = {"data": {"type": "users", "attributes": {"is_superuser": True, "is_staff": True}}}
    assert admin.patch(f"/api/users/{other.user_id}/", grant).status_code == 200
    step_down = {"data": {"type": "users", "attributes": {"is_superuser": False}}}
    response = admin.patch(f"/api/users/{admin.user_id}/", step_down)
    assert response.status_code == 200
    assert response.json()["data"]["attributes"]["is_superuser"] is False
    # Now `other` is the last one and cannot be deleted by the remaining staff admin either.
    assert_error(admin.delete(f"/api/users/{other.user_id}/"), 403, "permission_denied",
                 "Only a superuser may change or delete a superuser.")
    assert anon.login("admin", ADMIN_PASSWORD).get("/api/users/").status_code == 200


# "ерос" is all Cyrillic and looks like the Latin "epoc": whole-script lookalikes are not refused
# (no confusables data in Python or dms's dependencies; docs/api.md, Users).
@pytest.mark.parametrize("username", ["山田たろう", "ヤマダ太郎", "김철수", "Ελένη", "Сергей",
                                      "Jörg_Müller", "o.neil@example.org",
                                      "\u0435\u0440\u043e\u0441"])
def test_names_in_one_script_are_welcome(root, username):
    assert accounts.create_user_by(root, {"username": username}).username == username
