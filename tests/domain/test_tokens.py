"""The caller's own API tokens (api.md, "Tokens"): create, list by 16-character id, revoke."""

from __future__ import annotations

import datetime as dt
import hashlib
import re

import pytest

from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot

DATETIME = "%Y-%m-%dT%H:%M:%S.%fZ"


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


def test_list_holds_only_the_callers_tokens_newest_first(alice, bob):
    ids = [alice.post("/api/tokens/", {"expiry_hours": 5}, media=JSON).json()["data"]["id"]
           for _ in range(2)]
    listed = alice.get("/api/tokens/").json()
    # The login token of the fixture plus the two new ones; none of bob's.
    assert listed["meta"]["pagination"]["count"] == 3
    assert [t["id"] for t in listed["data"]][:2] == ids[::-1]
    bobs = {t["id"] for t in bob.get("/api/tokens/").json()["data"]}
    assert bobs.isdisjoint(t["id"] for t in listed["data"])


BAD_NAME = ("name must be text of at most 100 characters, without control or invisible "
            "formatting characters.")


@pytest.mark.parametrize("attributes, pointer, detail", [
    ({"expiry_hours": 0}, "/data/attributes/expiry_hours",
     "expiry_hours must be a whole number of hours from 1 to 87600."),
    ({"expiry_hours": 87601}, "/data/attributes/expiry_hours",
     "expiry_hours must be a whole number of hours from 1 to 87600."),
    ({"expiry_hours": "12"}, "/data/attributes/expiry_hours",
     "expiry_hours must be a whole number of hours from 1 to 87600."),
    ({"expiry_hours": True}, "/data/attributes/expiry_hours",
     "expiry_hours must be a whole number of hours from 1 to 87600."),
    ({"name": "x" * 101}, "/data/attributes/name", BAD_NAME),
    ({"name": "scanner\u202e"}, "/data/attributes/name", BAD_NAME),
])
def test_bad_token_requests_change_nothing(alice, config, attributes, pointer, detail):
    before = snapshot(config)
    response = alice.post("/api/tokens/", {"data": {"type": "tokens", "attributes": attributes}})
    assert_error(response, 400, "invalid", detail, pointer)
    assert snapshot(config) == before


def test_revoke_own_token_and_see_the_api_refuse_it(alice):
    created = alice.post("/api/tokens/", {"expiry_hours": 5}, media=JSON).json()["data"]
    client = alice.as_anonymous()
    client.token = created["attributes"]["token"]
    response = alice.delete(f"/api/tokens/{created['id']}/")
    assert response.status_code == 204
    assert client.get("/api/users/me/").status_code == 401
    assert created["id"] not in {t["id"] for t in alice.get("/api/tokens/").json()["data"]}
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
