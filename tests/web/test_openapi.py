"""GET /openapi.json describes every registered route, and nothing else."""

from __future__ import annotations

import re

from dms.web.api import ROUTE_TABLES
from dms.web.openapi import OPERATIONS, operation_key
from tests.harness.client import JSON
import pytest

pytestmark = pytest.mark.sqlite_only  # no database


def bottle_routes(server) -> set[tuple[str, str]]:
    """(METHOD, canonical path) of every route the running app registered with Bottle."""
    found = set()
    for route in server.app.routes:
        path = re.sub(r"<:re:[^>]*>", "", route.rule).replace("<", "{").replace(">", "}")
        found.add((route.method, path))
    return found


def test_every_registered_route_is_documented_and_nothing_else(server, anon):
    response = anon.get("/openapi.json")
    assert response.status_code == 200 and response.headers["Content-Type"] == JSON
    document = response.json()
    assert document["openapi"] == "3.1.0"
    documented = {(method.upper(), path.rstrip("/") or "/")
                  for path, operations in document["paths"].items() for method in operations}
    registered = {(method, path.rstrip("/") or "/") for method, path in bottle_routes(server)}
    assert documented == registered
    operation_ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(operation_ids) == len(set(operation_ids))


def test_every_route_has_a_description_and_every_description_a_route():
    keys = {operation_key(route) for table in ROUTE_TABLES for route in table.routes}
    assert keys == set(OPERATIONS)


def test_errors_and_security_are_described(anon):
    paths = anon.get("/openapi.json").json()["paths"]
    me = paths["/api/users/me/"]["get"]
    assert me["security"] == [{"token": []}]
    assert set(me["responses"]) == {"200", "401", "500"}
    assert me["responses"]["401"]["content"]["application/vnd.api+json"]["schema"] == {
        "$ref": "#/components/schemas/Error"}
    login = paths["/auth/login/"]["post"]
    assert "security" not in login
    assert set(login["responses"]) == {"200", "400", "413", "415", "429", "500", "503", "507"}
