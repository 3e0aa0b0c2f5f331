"""Fixtures: an isolated config on a tmp data dir, a real waitress server on an ephemeral port,
and logged-in clients for the admin and for ordinary users made through the API."""

from __future__ import annotations

import itertools
import threading

import pytest

from dms import auth
from dms.config import Config
from dms.server import Server
from support import JSON, Client

# Tests only: a cheap scrypt cost (each hash stores its own cost, so checks still work). The
# servers started as subprocesses (test_cli, test_dist) keep the real cost.
auth.SCRYPT_N = 2 ** 8

ADMIN_PASSWORD = "admin-password-1"
USER_PASSWORD = "user-password-1"


@pytest.fixture
def config(tmp_path, request) -> Config:
    """A config on a fresh data dir; `@pytest.mark.config(name=value)` changes a setting."""
    marker = request.node.get_closest_marker("config")
    overrides = marker.kwargs if marker else {}
    settings = dict(host="127.0.0.1", port=0, data_dir=tmp_path / "data", threads=4,
                    admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)
    return Config(**{**settings, **overrides})


@pytest.fixture
def server(config):
    server = Server(config)
    thread = threading.Thread(target=server.run, name="test-server", daemon=True)
    thread.start()
    yield server
    server.stop()
    thread.join(timeout=15)
    assert not thread.is_alive(), "the server did not stop"


@pytest.fixture
def anon(server) -> Client:
    return Client(server.url)


@pytest.fixture
def admin(anon) -> Client:
    return anon.login("admin", ADMIN_PASSWORD)


@pytest.fixture
def make_user(admin):
    """make_user(**attributes) -> a logged-in Client for a new user with USER_PASSWORD."""
    counter = itertools.count(1)

    def make(username: str | None = None, **attributes) -> Client:
        username = username or f"user{next(counter)}"
        body = {"data": {"type": "users", "attributes": {"username": username, **attributes}}}
        response = admin.post("/api/users/", body)
        assert response.status_code == 200, response.text
        user_id = response.json()["data"]["id"]
        response = admin.post(f"/api/users/{user_id}/change-password/",
                              {"password": USER_PASSWORD}, media=JSON)
        assert response.status_code == 200, response.text
        return admin.login(username, USER_PASSWORD)

    return make


@pytest.fixture
def alice(make_user) -> Client:
    return make_user("alice")


@pytest.fixture
def bob(make_user) -> Client:
    return make_user("bob")
