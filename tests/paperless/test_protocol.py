"""The Paperless-ngx dialect's protocol (api.md §17), on both engines: versions 1-10 by the Accept
header and version 9's shapes without one, 406 for any other, the dialect's headers on every
answer; Token and Basic authentication and POST /api/token/ minting a named dms token; Django
REST framework's errors for unknown paths, methods, bad JSON and bad pages; pages with absolute,
sorted links; the same under a proxy prefix; and the prefix switched off."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from tests.harness.client import Client
from tests.harness.paperless import API, dialect
from tests.harness.processes import dms_command, environment
from tests.harness.users import USER_PASSWORD

HEADERS = {"X-Api-Version": "10", "X-Version": "3.0.0"}


def answer(response) -> tuple[int, object]:
    assert {name: response.headers.get(name) for name in HEADERS} == HEADERS, response.headers
    assert response.headers["Content-Type"] == "application/json"
    return response.status_code, response.json()


def make_tag(client, name: str) -> dict:
    response = client.post(f"{API}/tags/", {"name": name}, media="application/json")
    assert response.status_code == 201, response.text
    return response.json()


def test_versions_by_the_accept_header(alice):
    make_tag(dialect(alice), "Finance")
    page = {"count": 1, "next": None, "previous": None}
    for version in (None, 1, 5, 9):
        status, body = answer(dialect(alice, version).get(f"{API}/tags/"))
        assert (status, {key: body[key] for key in (*page, "all")}) == (200, {**page, "all": [
            body["results"][0]["id"]]}), version
    status, body = answer(dialect(alice, 10).get(f"{API}/tags/"))
    assert (status, sorted(body)) == (200, ["count", "display_count", "next", "previous",
                                           "results"])
    for accept in ("application/json; version=11", "application/json; version=0",
                   "application/json; version=abc", "application/json; version=", "*/*; version=99",
                   "application/json; version=９"):
        assert answer(dialect(alice, Accept=accept).get(f"{API}/tags/")) == (
            406, {"detail": 'Invalid version in "Accept" header.'}), accept
    assert answer(dialect(alice, Accept="*/*").get(f"{API}/tags/"))[0] == 200


@pytest.mark.config(paperless_default_version=10)
def test_the_default_version_is_configurable(alice):
    make_tag(dialect(alice), "Finance")
    assert "all" not in dialect(alice).get(f"{API}/tags/").json()


def test_authentication_and_its_refusals(alice, anon):
    make_tag(dialect(alice), "Finance")
    basic = base64.b64encode(f"alice:{USER_PASSWORD}".encode()).decode()
    assert answer(anon.get(f"{API}/tags/", headers={"Authorization": f"Basic {basic}"}))[0] == 200
    wrong = base64.b64encode(b"alice:not-her-password").decode()
    cases = [
        ({}, 401, "Authentication credentials were not provided.", "Token"),
        ({"Authorization": "Token nope"}, 401, "Invalid token.", "Token"),
        ({"Authorization": f"Basic {wrong}"}, 401, "Invalid username/password.",
         'Basic realm="api"'),
        ({"Authorization": "Basic %%%"}, 401,
         "Invalid basic header. Credentials not correctly base64 encoded.", 'Basic realm="api"'),
    ]
    for headers, status, sentence, challenge in cases:
        response = anon.get(f"{API}/tags/", headers=headers)
        assert answer(response) == (status, {"detail": sentence}), headers
        assert response.headers["WWW-Authenticate"] == challenge


def test_a_token_for_an_app_is_a_named_dms_token(alice, anon):
    response = anon.post(f"{API}/token/", {"username": "alice", "password": USER_PASSWORD},
                         media="application/json", headers={"User-Agent": "Paperless Mobile/3"})
    status, body = answer(response)
    assert (status, sorted(body)) == (200, ["token"])
    app = Client(alice.base_url, body["token"], alice.transport)
    assert app.get("/api/users/me/").json()["data"]["attributes"]["username"] == "alice"
    names = [token["attributes"]["name"] for token in alice.get("/api/tokens/").json()["data"]]
    assert "Paperless-ngx API: Paperless Mobile/3" in names
    # A form, as DRF's token view takes it too.
    form = anon.request("POST", f"{API}/token/", data=f"username=alice&password={USER_PASSWORD}"
                        .encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer(form)[0] == 200
    for body, expected in (
            ({"username": "alice", "password": "wrong"},
             {"non_field_errors": ["Unable to log in with provided credentials."]}),
            ({"username": "alice"}, {"password": ["This field is required."]}),
            ({"password": "x"}, {"username": ["This field is required."]})):
        assert answer(anon.post(f"{API}/token/", body, media="application/json")) == \
            (400, expected), body


def test_drf_errors_for_what_is_not_there(alice):
    client = dialect(alice)
    assert answer(client.get(f"{API}/no_such_endpoint/")) == (404, {"detail": "Not found."})
    assert answer(client.get("/paperless/elsewhere")) == (404, {"detail": "Not found."})
    assert answer(client.delete(f"{API}/statistics/")) == (
        405, {"detail": 'Method "DELETE" not allowed.'})
    assert answer(client.get(f"{API}/tags/abc/")) == (404, {"detail": "Not found."})
    assert answer(client.get(f"{API}/tags/99999/")) == (
        404, {"detail": "No Tag matches the given query."})
    bad = client.request("POST", f"{API}/tags/", data=b"{bad",
                         headers={"Content-Type": "application/json"})
    status, body = answer(bad)
    assert (status, body["detail"].startswith("JSON parse error - ")) == (400, True)
    assert answer(client.post(f"{API}/tags/", {"name": None}, media="application/json")) == \
        (400, {"name": ["This field is required."]})


def test_pages_with_absolute_sorted_links(alice, server):
    client = dialect(alice, 10)
    for name in ("a", "b", "c"):
        make_tag(client, name)
    base = f"{server.url}{API}/tags/"
    status, body = answer(client.get(f"{API}/tags/?page_size=1&ordering=name"))
    assert (status, body["count"], body["next"], body["previous"],
            [tag["name"] for tag in body["results"]]) == (
        200, 3, f"{base}?ordering=name&page=2&page_size=1", None, ["a"])
    second = client.get(body["next"]).json()
    assert (second["next"], second["previous"], [tag["name"] for tag in second["results"]]) == (
        f"{base}?ordering=name&page=3&page_size=1", f"{base}?ordering=name&page_size=1", ["b"])
    last = client.get(f"{API}/tags/?page_size=1&ordering=name&page=last").json()
    assert ([tag["name"] for tag in last["results"]], last["next"]) == (["c"], None)
    assert answer(client.get(f"{API}/tags/?page=99")) == (404, {"detail": "Invalid page."})
    # A page size that is not a positive number is ignored (DRF), the largest is 100,000.
    for size in ("abc", "0", "-1", "100001"):
        assert client.get(f"{API}/tags/?page_size={size}").json()["count"] == 3


@pytest.mark.config(url_prefix="/dms")
def test_behind_a_proxy_prefix(server, alice):
    assert server.url.endswith("/dms")
    client = dialect(alice, 10)
    for name in ("a", "b"):
        make_tag(client, name)
    body = client.get(f"{API}/tags/?page_size=1").json()
    assert body["next"] == f"{server.url}{API}/tags/?page=2&page_size=1"
    assert client.get(f"{API}/").json()["tags"] == f"{server.url}{API}/tags/"


@pytest.mark.config(paperless_prefix="")
def test_the_dialect_switched_off(alice, server):
    response = dialect(alice).get(f"{API}/tags/")
    assert (response.status_code, response.json()["errors"][0]["code"]) == (404, "not_found")


@pytest.mark.sqlite_only  # a server of its own on a new data dir
def test_a_prefix_that_would_hide_dms_own_paths_is_refused(tmp_path):
    for prefix in ("/api", "/nodes", "/static/x"):
        result = subprocess.run(dms_command("serve", "--port", "0", "--data-dir",
                                            str(tmp_path / "data")),
                                env=environment(DMS_PAPERLESS_PREFIX=prefix),
                                capture_output=True, text=True, timeout=60)
        first = prefix.strip("/").split("/")[0]
        assert (result.returncode, result.stderr.splitlines()[-1]) == (
            2, f"dms: DMS_PAPERLESS_PREFIX {prefix!r} would hide dms's own /{first}/; choose "
               "another path, such as /paperless."), result.stderr


LOADED_BY_ITS_FIRST_REQUEST = """
import io, sys
from pathlib import Path
from dms.config import Config
from dms.web.app import create_app
app = create_app(Config(data_dir=Path(sys.argv[1])))
dialect = lambda: sorted(m for m in sys.modules if m.startswith("dms.web.paperless"))
before = dialect()
statuses = []
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/paperless/api/", "QUERY_STRING": "",
           "SERVER_NAME": "x", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
           "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr, "REMOTE_ADDR": "127.0.0.1"}
b"".join(app(environ, lambda status, headers, exc=None: statuses.append(status)))
print(before, statuses, "dms.web.paperless.app" in dialect())
"""


def test_the_dialect_is_loaded_by_its_first_request(tmp_path):
    """Issue 47 (idle memory): a server no Paperless-ngx client talks to never imports the
    dialect's modules (1.7 MiB); its first request does, and is answered."""
    result = subprocess.run([sys.executable, "-c", LOADED_BY_ITS_FIRST_REQUEST,
                             str(tmp_path / "data")], capture_output=True, text=True,
                            env=environment(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[] ['401 Unauthorized'] True"
