"""Hostile JSON: bodies that break naive parsers get a 400 `parse_error` on every JSON route, login
included, change nothing, and leave no traceback in the log."""

from __future__ import annotations

import logging

import pytest

from tests.harness.client import JSON, VND, assert_error
from tests.harness.database import snapshot

NESTED = b'{"username": ' + b"[" * 100_000 + b"]" * 100_000 + b', "password": "x"}'
HUGE_INTEGER = b'{"username": "admin", "password": ' + b"9" * 5_000 + b"}"
NOT_A_NUMBER = b'{"username": "admin", "password": NaN}'
LONE_SURROGATE = b'{"username": "\\ud800", "password": "admin-password-1"}'

CASES = [
    (NESTED, "The request body is nested too deeply."),
    (HUGE_INTEGER, "The request body holds a value dms does not accept: Exceeds the limit (4300 "
                   "digits) for integer string conversion: value has 5000 digits."),
    (NOT_A_NUMBER, "The request body holds a value dms does not accept: NaN is not a JSON number."),
    (LONE_SURROGATE, "The request body holds text that is not valid Unicode (a lone surrogate such "
                     "as \\ud800)."),
]


@pytest.mark.parametrize("body, detail", CASES)
def test_hostile_bodies_on_login_are_400(anon, config, caplog, body, detail):
    caplog.set_level(logging.INFO)
    before = snapshot(config)
    response = anon.post("/api/auth/login/", data=body, headers={"Content-Type": JSON})
    assert_error(response, 400, "parse_error", detail, media=JSON)
    assert snapshot(config) == before
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("body, detail", CASES)
def test_hostile_bodies_on_resource_routes_are_400(alice, config, body, detail):
    before = snapshot(config)
    for method, path, media in (("POST", "/api/nodes/", VND), ("POST", "/api/nodes/move/", JSON),
                                ("POST", "/api/tokens/", JSON),
                                ("PATCH", f"/api/users/{alice.user_id}/", VND),
                                ("POST", f"/api/users/{alice.user_id}/change-password/", JSON)):
        response = alice.request(method, path, data=body, headers={"Content-Type": media})
        assert_error(response, 400, "parse_error", detail,
                     media=JSON if path.endswith(("move/", "change-password/")) else VND)
    assert snapshot(config) == before
