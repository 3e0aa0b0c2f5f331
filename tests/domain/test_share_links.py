"""Share links, the owner's side (api.md, "Share links"), on both engines: made, listed, read and
revoked through the API with their whole resources; every refusal names its field and makes
nothing; only the owner shares (an editor 403, anyone else 404); the node's history holds each
link made and revoked."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.documents import make_folder, new_document, upload_accepted

POINTER = "/data/attributes/"


def ahead(days: float = 7) -> str:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def link_body(**attributes) -> dict:
    return {"data": {"type": "share-links", "attributes": attributes}}


def make_link(client, **attributes) -> dict:
    response = client.post("/api/share-links/", link_body(**attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


@pytest.fixture
def letter(alice) -> str:
    document = new_document(alice, "Letter to the landlord")
    upload_accepted(alice, document, "letter.txt", b"Dear landlord, the heating is broken.")
    return document


def test_a_link_is_made_listed_read_and_revoked(alice, bob, letter):
    expires = ahead(7)
    made = make_link(alice, node=letter, expires_at=expires, password="open sesame",
                     max_downloads=2)
    attributes = made["attributes"]
    slug = attributes["url"].rsplit("/", 1)[1]
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", slug)  # 192 random bits
    assert attributes["url"] == f"{alice.base_url}/s/{slug}"
    assert attributes == {
        "node": letter, "expires_at": expires.replace("Z", ".000000Z"), "has_password": True,
        "max_downloads": 2, "file_version": "original", "downloads": 0,
        "url": attributes["url"], "created_at": attributes["created_at"],
        "last_accessed_at": None}
    assert made["type"] == "share-links"
    listed = alice.get("/api/share-links/").json()
    assert [item["id"] for item in listed["data"]] == [made["id"]]
    assert listed["data"][0] == made  # the URL again, for the owner to copy
    assert alice.get(f"/api/share-links/?node={letter}").json()["data"] == [made]
    assert alice.get(f"/api/share-links/{made['id']}/").json()["data"] == made
    # Nobody else sees or revokes it.
    assert bob.get(f"/api/share-links/{made['id']}/").json() == NOT_FOUND
    assert bob.delete(f"/api/share-links/{made['id']}/").json() == NOT_FOUND
    assert bob.get("/api/share-links/").json()["data"] == []
    assert alice.get(f"/api/share-links/{made['id']}/").status_code == 200
    assert alice.delete(f"/api/share-links/{made['id']}/").status_code == 204
    assert alice.get(f"/api/share-links/{made['id']}/").json() == NOT_FOUND
    assert alice.get("/api/share-links/").json()["data"] == []
    assert alice.delete(f"/api/share-links/{made['id']}/").json() == NOT_FOUND
    # Without credentials: 401 for each route, nothing made.
    anonymous = alice.as_anonymous()
    for method, path in (("GET", "/api/share-links/"), ("POST", "/api/share-links/"),
                         ("GET", f"/api/share-links/{made['id']}/"),
                         ("DELETE", f"/api/share-links/{made['id']}/")):
        assert_error(anonymous.request(method, path, json_body=link_body(
            node=letter, expires_at=expires) if method == "POST" else None), 401,
            "not_authenticated", "Authentication credentials were not provided.")
    assert alice.get("/api/share-links/").json()["data"] == []
    history = [event for event in alice.get(f"/api/nodes/{letter}/history/").json()["data"]
               if event["attributes"]["action"].startswith("share_")]
    assert [event["attributes"]["action"] for event in history] == ["share_revoked",
                                                                    "share_created"]
    assert history[1]["attributes"]["details"] == {
        "link": made["id"], "expires_at": expires, "password": True, "max_downloads": 2}
    assert history[0]["attributes"]["details"] == {"link": made["id"]}


def test_refusals_name_the_field_and_make_nothing(alice, bob, make_user, letter):
    checks = [
        ({"expires_at": ahead()}, 400, "required",
         "node is required: the id of a document or folder of yours.", "node"),
        ({"node": letter}, 400, "required",
         "expires_at is required: a link must stop working by itself.", "expires_at"),
        ({"node": letter, "expires_at": "next week"}, 400, "invalid",
         "expires_at must be a date and time such as 2026-12-31T18:00:00Z.", "expires_at"),
        ({"node": letter, "expires_at": "2030-01-01T10:00:00"}, 400, "invalid",
         "expires_at needs a time zone, such as 2026-12-31T18:00:00Z.", "expires_at"),
        ({"node": letter, "expires_at": ahead(-1)}, 400, "invalid",
         "A share link must expire in the future.", "expires_at"),
        ({"node": letter, "expires_at": ahead(91)}, 400, "invalid",
         "A share link expires at most 90 days after it is made.", "expires_at"),
        ({"node": letter, "expires_at": ahead(), "password": "short"}, 400, "invalid",
         "password must be 8 to 1024 characters without control characters, or left out.",
         "password"),
        ({"node": letter, "expires_at": ahead(), "max_downloads": 0}, 400, "invalid",
         "max_downloads must be a whole number from 1 to 1,000,000, or null for no limit.",
         "max_downloads"),
        ({"node": letter, "expires_at": ahead(), "max_downloads": True}, 400, "invalid",
         "max_downloads must be a whole number from 1 to 1,000,000, or null for no limit.",
         "max_downloads"),
        ({"node": letter, "expires_at": ahead(), "file_version": "archive"}, 400, "invalid",
         "file_version must be original or searchable.", "file_version"),
        ({"node": alice.home_id, "expires_at": ahead()}, 400, "invalid",
         "Only a document or a folder you made can be shared with a link, not .home.", "node"),
    ]
    for attributes, status, code, detail, field in checks:
        assert_error(alice.post("/api/share-links/", link_body(**attributes)), status, code,
                     detail, POINTER + field)
    # Another user's document is unknown; an editor it is shared with may not share it on.
    assert bob.post("/api/share-links/", link_body(node=letter, expires_at=ahead())).json() \
        == NOT_FOUND
    family = make_folder(alice, "Family", alice.home_id)
    inside = new_document(alice, "Insurance", family)
    assert alice.post(f"/api/nodes/{family}/access/",
                      {"username": bob.username, "role": "editor"}).status_code == 201
    assert_error(bob.post("/api/share-links/", link_body(node=inside, expires_at=ahead())),
                 403, "permission_denied",
                 "Only the owner of a document or folder can share it with a link.")
    for client in (alice, bob):
        assert client.get("/api/share-links/").json()["data"] == []
    actions = [event["attributes"]["action"] for event in
               alice.get(f"/api/nodes/{letter}/history/").json()["data"]]
    assert "share_created" not in actions


@pytest.mark.config(share_max_days=3)
def test_the_longest_expiry_is_the_administrators(alice, letter):
    assert_error(alice.post("/api/share-links/", link_body(node=letter, expires_at=ahead(4))),
                 400, "invalid", "A share link expires at most 3 days after it is made.",
                 POINTER + "expires_at")
    made = make_link(alice, node=letter, expires_at=ahead(2.9), file_version="searchable")
    assert made["attributes"]["file_version"] == "searchable"
    assert made["attributes"]["has_password"] is False
