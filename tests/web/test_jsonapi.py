"""The JSON:API core (api.md, "Conventions"): one error envelope everywhere, prefixes and slashes,
content types, pagination and datetimes."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from dms import __version__
from tests.harness.client import JSON, NOT_FOUND, VND, Client, error
from tests.harness.database import execute_sql, snapshot

NO_CREDENTIALS = error(401, "not_authenticated", "Authentication credentials were not provided.")


def test_many_error_cases_share_one_envelope(admin, alice, anon, config, caplog):
    """Walk the kinds of error a client can meet; every one is the envelope with its content
    type."""
    user_body = {"data": {"type": "users", "attributes": {"username": "x"}}}
    raw = requests.request
    cases = [
        # (response, status, content type, expected body)
        (anon.get("/api/no-such-route/"), 404, VND,
         error(404, "not_found", "Not found: there is no endpoint at this address.")),
        (anon.delete("/api/version/"), 405, VND,
         error(405, "method_not_allowed", "Method DELETE is not allowed here; allowed: GET.")),
        (raw("POST", admin.base_url + "/api/users/", data=b"{not json",
             headers={"Authorization": f"Token {admin.token}", "Content-Type": VND}), 400, VND,
         error(400, "parse_error",
               "The request body is not valid JSON: Expecting property name enclosed in double "
               "quotes at line 1, column 2.")),
        (raw("POST", admin.base_url + "/api/users/", data=b"",
             headers={"Authorization": f"Token {admin.token}", "Content-Type": VND}), 400, VND,
         error(400, "parse_error", "The request body is empty; a JSON object was expected.")),
        (raw("POST", admin.base_url + "/api/users/", data=b"[1, 2]",
             headers={"Authorization": f"Token {admin.token}", "Content-Type": VND}), 400, VND,
         error(400, "parse_error", "The request body must be a JSON object.")),
        (admin.post("/api/users/", {"type": "users"}), 400, VND,
         error(400, "required", "The request body needs a `data` object.", "/data")),
        (admin.post("/api/users/", {"data": {"attributes": {}}}), 400, VND,
         error(400, "required", "`data.type` is required.", "/data/type")),
        (admin.post("/api/users/", {"data": {"type": "nodes"}}), 409, VND,
         error(409, "conflict", 'The resource type "nodes" does not match `users`.', "/data/type")),
        (admin.get("/api/users/00000000-0000-4000-8000-000000000000/"), 404, VND, NOT_FOUND),
        (anon.get("/api/users/me/"), 401, VND, NO_CREDENTIALS),
        (anon.post("/api/auth/logout/"), 401, JSON, NO_CREDENTIALS),
        (alice.get("/api/users/"), 403, VND,
         error(403, "permission_denied", "You do not have permission to perform this action.")),
        (alice.post("/api/users/", user_body, media="text/plain"), 403, VND,
         error(403, "permission_denied", "You do not have permission to perform this action.")),
        (admin.post("/api/users/", user_body, media="text/plain"), 415, VND,
         error(415, "unsupported_media_type",
               "Unsupported media type 'text/plain' in the request; "
               "use application/vnd.api+json.")),
        (admin.get("/api/users/?page[number]=9"), 404, VND,
         error(404, "not_found", "Invalid page.")),
    ]
    for response, status, media, body in cases:
        assert (response.status_code, response.headers["Content-Type"], response.json()) == \
               (status, media, body), response.request.url

    # An unexpected exception: break a table behind the server's back.
    execute_sql(config, "ALTER TABLE token RENAME TO token_gone")
    with caplog.at_level(logging.ERROR, logger="dms"):
        response = admin.get("/api/users/me/")
    assert response.status_code == 500
    assert response.headers["Content-Type"] == VND
    assert response.json() == error(500, "server_error", "A server error occurred.")
    assert "Traceback" not in response.text and "token" not in response.text
    logged = [r for r in caplog.records if r.name == "dms.web"]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert ("no such table: token" in caplog.text  # SQLite's words, PostgreSQL's below
            or 'relation "token" does not exist' in caplog.text)


@pytest.mark.socket  # a body limit
def test_a_json_body_over_the_limit_is_413(admin, config):
    before = snapshot(config)
    padding = "x" * (config.max_json_bytes + 1)
    response = admin.post("/api/users/", {"data": {"type": "users",
                                                   "attributes": {"username": padding}}})
    assert response.status_code == 413
    assert response.json() == error(413, "too_large", "The JSON body is larger than 1024 KiB.")
    assert snapshot(config) == before


@pytest.mark.parametrize("path", ["/users/me/", "/users/me", "/api/users/me/", "/api/users/me"])
def test_every_route_answers_bare_and_under_api_with_or_without_slash(admin, path):
    response = admin.get(path)
    assert response.status_code == 200
    assert response.history == []  # answered, not redirected
    assert response.headers["Content-Type"] == VND
    assert response.json()["data"]["id"] == admin.user_id


def test_version_and_health_need_no_token(anon):
    for path in ("/version/", "/api/version"):
        response = anon.get(path)
        assert (response.status_code, response.headers["Content-Type"], response.json()) == \
               (200, JSON, {"version": __version__})
    for path in ("/health", "/api/health", "/health/"):
        response = anon.get(path)
        assert (response.status_code, response.headers["Content-Type"], response.json()) == \
               (200, JSON, {"status": "ok"})


def test_pagination_links_meta_aliases_and_last(admin, make_user):
    for name in ("u01", "u02", "u03", "u04", "u05"):
        make_user(name)
    response = admin.get("/api/users/?page[size]=2&page[number]=2&filter=kept")
    body = response.json()
    assert list(body) == ["links", "data", "meta"]
    assert [u["attributes"]["username"] for u in body["data"]] == ["u02", "u03"]
    assert body["meta"] == {"pagination": {"page": 2, "pages": 3, "count": 6}}
    base = admin.base_url + "/api/users/"
    assert body["links"] == {
        "first": base + "?page[size]=2&filter=kept&page[number]=1",
        "last": base + "?page[size]=2&filter=kept&page[number]=3",
        "next": base + "?page[size]=2&filter=kept&page[number]=3",
        "prev": base + "?page[size]=2&filter=kept&page[number]=1",
    }
    # The links work as they are.
    following = admin.get(body["links"]["next"]).json()
    assert [u["attributes"]["username"] for u in following["data"]] == ["u04", "u05"]
    assert following["links"]["next"] is None
    # Aliases and `last`.
    aliased = admin.get("/api/users/?page=3&page_size=2").json()
    assert aliased["data"] == following["data"] and aliased["meta"] == following["meta"]
    last = admin.get("/api/users/?page[number]=last&page[size]=4").json()
    assert last["meta"]["pagination"] == {"page": 2, "pages": 2, "count": 6}
    assert parse_qs(urlsplit(last["links"]["prev"]).query)["page[number]"] == ["1"]


def test_page_size_default_cap_and_invalid_values(admin, make_user):
    for index in range(11):
        make_user(f"p{index:02d}")
    assert len(admin.get("/api/users/").json()["data"]) == 10
    assert len(admin.get("/api/users/?page[size]=1000").json()["data"]) == 12
    assert len(admin.get("/api/users/?page[size]=abc").json()["data"]) == 10
    for number in ("0", "-1", "abc", "3"):
        response = admin.get(f"/api/users/?page[number]={number}")
        assert (response.status_code, response.json()) == \
               (404, error(404, "not_found", "Invalid page."))


def test_an_empty_list_has_one_page(alice):
    # A user's token list is never empty (the login token), so revoke it via logoutall first.
    token = alice.post("/api/tokens/", {"expiry_hours": 1}, media=JSON).json()["data"]
    alice.post("/api/auth/logoutall/")
    alice.token = token["attributes"]["token"]
    assert alice.get("/api/tokens/").status_code == 401
    body = alice.as_anonymous().login("alice", "user-password-1").get(
        "/api/tokens/?page[size]=5").json()
    assert body["meta"] == {"pagination": {"page": 1, "pages": 1, "count": 1}}
    assert body["links"]["next"] is None and body["links"]["prev"] is None


@pytest.mark.config(cors_origins=("https://app.example.org",))
def test_cors_only_for_configured_origins(admin):
    preflight = admin.as_anonymous().request(
        "OPTIONS", "/api/users/me/", headers={"Origin": "https://app.example.org",
                                              "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://app.example.org"
    assert preflight.headers["Access-Control-Allow-Headers"] == \
        "Authorization, Content-Type, Content-Disposition, Range"
    allowed = admin.get("/api/users/me/", headers={"Origin": "https://app.example.org"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example.org"
    other = admin.get("/api/users/me/", headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers
    refused = admin.as_anonymous().request("OPTIONS", "/api/users/me/", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "GET"})
    assert refused.status_code == 405 and "Access-Control-Allow-Origin" not in refused.headers


def test_cors_is_off_by_default(admin):
    response = admin.get("/api/users/me/", headers={"Origin": "https://app.example.org"})
    assert "Access-Control-Allow-Origin" not in response.headers


@pytest.mark.config(trusted_proxy="127.0.0.1", url_prefix="/dms")
@pytest.mark.socket  # waitress' proxy handling and url_prefix
def test_behind_a_trusted_proxy_under_a_prefix(server, config):
    base = server.url  # http://127.0.0.1:PORT/dms
    assert base.endswith("/dms")
    admin = Client(base).login("admin", "admin-password-1")
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "docs.example.org",
                 "X-Forwarded-For": "203.0.113.9"}
    links = admin.get("/api/users/", headers=forwarded).json()["links"]
    assert links["first"] == "https://docs.example.org/dms/api/users/?page[number]=1"
    plain = admin.get("/api/users/").json()["links"]
    assert plain["first"] == f"{base}/api/users/?page[number]=1"


@pytest.mark.socket  # proxy headers through waitress
def test_forwarded_headers_are_ignored_without_a_trusted_proxy(admin):
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    links = admin.get("/api/users/", headers=forwarded).json()["links"]
    assert links["first"] == f"{admin.base_url}/api/users/?page[number]=1"


def test_a_host_whose_port_is_not_ascii_digits_is_no_error(admin):
    """A fuzz find: `³` is a digit to str.isdigit but not to int()."""
    response = admin.get("/api/users/", headers={"Host": "docs.example.org:³"})
    assert (response.status_code, response.json()["links"]["first"].split("/api/")[1]) == (
        200, "users/?page[number]=1")

