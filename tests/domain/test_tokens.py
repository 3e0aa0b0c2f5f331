"""The caller's own API tokens (api.md, "Tokens"): create, list by 16-character id, revoke.

The rules (the order and owner of a listing, refused validities and names, what a revocation
leaves) are tested on the fast tier, by the domain's functions (`services`); through the API, what
a client sees: the secret shown once, both body forms, the pointer of a refusal, a revoked
token refused, and another user's token not found."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from functools import partial

from dms.db.models import utcnow
from dms.domain import accounts, credentials, sessions
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.domaintier import assert_refused, new_user

DATETIME = "%Y-%m-%dT%H:%M:%S.%fZ"
MAX_TOKENS = 1000  # DMS_MAX_TOKENS_PER_USER's default, as the route passes it


def parse(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, DATETIME)


def test_create_shows_the_secret_once_with_the_default_validity(alice):
    response = alice.post("/api/tokens/", {"data": {"type": "tokens",
                                                    "attributes": {"name": "scanner"}}})
    assert response.status_code == 201
    assert response.headers["Content-Type"] == VND
    resource = response.json()["data"]
    secret = resource["attributes"]["token"]
    digest = hashlib.sha512(secret.encode()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", secret)
    assert resource["type"] == "tokens" and resource["id"] == digest[:16]
    attributes = resource["attributes"]
    assert set(attributes) == {"digest", "name", "created", "expiry", "token"}
    assert attributes["digest"] == digest[:16] and attributes["name"] == "scanner"
    assert parse(attributes["expiry"]) - parse(attributes["created"]) == dt.timedelta(hours=4464)

    # The secret works, and the list never shows it again.
    client = alice.as_anonymous()
    client.token = secret
    assert client.get("/api/users/me/").json()["data"]["id"] == alice.user_id
    listed = alice.get("/api/tokens/").json()
    mine = [t for t in listed["data"] if t["id"] == digest[:16]]
    assert mine == [{"type": "tokens", "id": digest[:16], "attributes": {
        "digest": digest[:16], "name": "scanner", "created": attributes["created"],
        "expiry": attributes["expiry"]}}]
    assert secret not in str(listed)


def test_plain_json_body_and_custom_validity(alice):
    response = alice.post("/api/tokens/", {"expiry_hours": 2}, media=JSON)
    assert response.status_code == 201
    attributes = response.json()["data"]["attributes"]
    assert parse(attributes["expiry"]) - parse(attributes["created"]) == dt.timedelta(hours=2)
    assert attributes["name"] == ""


def test_list_holds_only_the_callers_tokens_newest_first(services):
    alice, bob = new_user("alice"), new_user("bob")
    login, _ = credentials.issue_token(alice, expiry_hours=None, name="login")
    bobs, _ = credentials.issue_token(bob, expiry_hours=None, name="login")
    made = [credentials.create_token(alice, 5, None, MAX_TOKENS)[0] for _ in range(2)]
    # Alice's login token and the two new ones, newest first; none of bob's.
    assert [token.token_key for token in credentials.tokens_of(alice)] == \
        [made[1].token_key, made[0].token_key, login.token_key]
    assert [token.token_key for token in credentials.tokens_of(bob)] == [bobs.token_key]


BAD_HOURS = "expiry_hours must be a whole number of hours from 1 to 87600."
BAD_NAME = ("name must be text of at most 100 characters, without control or invisible "
            "formatting characters.")


def test_bad_token_requests_change_nothing(services, config):
    """The fast tier: the domain's refusal, its field (the pointer's tail) and code."""
    alice = new_user("alice")
    for hours, name, field, detail in [
        (0, None, "expiry_hours", BAD_HOURS),
        (87601, None, "expiry_hours", BAD_HOURS),
        ("12", None, "expiry_hours", BAD_HOURS),
        (True, None, "expiry_hours", BAD_HOURS),
        (None, "x" * 101, "name", BAD_NAME),
        (None, "scanner\u202e", "name", BAD_NAME),
        (None, 0, "name", BAD_NAME),
        (None, False, "name", BAD_NAME),
        (None, [], "name", BAD_NAME),
        (None, {}, "name", BAD_NAME),
    ]:
        assert_refused(config, partial(credentials.create_token, alice, hours, name, MAX_TOKENS),
                       "invalid", detail, field)


def test_a_bad_token_request_is_answered_with_a_pointer(alice, config):
    """The same refusal through the API, in either body form."""
    before = snapshot(config)
    response = alice.post("/api/tokens/", {"data": {"type": "tokens",
                                                    "attributes": {"expiry_hours": 0}}})
    assert_error(response, 400, "invalid", BAD_HOURS, "/data/attributes/expiry_hours")
    response = alice.post("/api/tokens/", {"name": "x" * 101}, media=JSON)
    assert_error(response, 400, "invalid", BAD_NAME, "/name")
    assert snapshot(config) == before


def test_a_revoked_token_is_gone_and_revoking_it_again_is_not_found(services, config):
    alice = new_user("alice")
    kept, _ = credentials.issue_token(alice, expiry_hours=None, name="login")
    revoked, secret = credentials.create_token(alice, 5, None, MAX_TOKENS)
    credentials.revoke_by_key(alice, revoked.token_key)
    assert sessions.find_token(secret, utcnow()) is None
    assert [token.token_key for token in credentials.tokens_of(alice)] == [kept.token_key]
    assert_refused(config, lambda: credentials.revoke_by_key(alice, revoked.token_key),
                   "not_found", "Not found.", None)


def test_a_token_found_again_is_a_fresh_copy_and_a_changed_user_is_read_again(services):
    """find_token remembers the models' values of the rows it read (sessions.token_and_user):
    what a request does to its models never reaches the next one, and a row that changed (a user
    deactivated, renamed) is never answered from memory."""
    alice = new_user("alice", first_name="Alice")
    _, secret = credentials.create_token(alice, 5, None, MAX_TOKENS)
    sessions.find_token(secret, utcnow())  # read and remembered
    first = sessions.find_token(secret, utcnow())  # from memory
    first.user.first_name = "Mallory"
    first.name = "changed in memory"
    again = sessions.find_token(secret, utcnow())
    assert again is not first and again.user is not first.user
    assert (again.user.first_name, again.name, again.user.username) == ("Alice", "", "alice")
    accounts.update_user_by(new_user("root", is_superuser=True), alice.id,
                            {"first_name": "Alicia"}, None)
    assert sessions.find_token(secret, utcnow()).user.first_name == "Alicia"
    accounts.set_active("alice", False)
    assert sessions.find_token(secret, utcnow()) is None


def test_revoke_own_token_and_see_the_api_refuse_it(alice):
    created = alice.post("/api/tokens/", {"expiry_hours": 5}, media=JSON).json()["data"]
    client = alice.as_anonymous()
    client.token = created["attributes"]["token"]
    response = alice.delete(f"/api/tokens/{created['id']}/")
    assert response.status_code == 204
    assert client.get("/api/users/me/").status_code == 401
    assert alice.delete(f"/api/tokens/{created['id']}/").json() == NOT_FOUND


def test_another_users_token_is_not_found_even_for_an_admin(alice, admin, anon, config):
    created = alice.post("/api/tokens/", {"expiry_hours": 5}, media=JSON).json()["data"]
    before = snapshot(config)
    response = admin.delete(f"/api/tokens/{created['id']}/")
    assert response.status_code == 404 and response.json() == NOT_FOUND
    assert_error(anon.delete(f"/api/tokens/{created['id']}/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")
    assert_error(anon.get("/api/tokens/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")
    assert snapshot(config) == before
