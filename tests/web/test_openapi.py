"""GET /openapi.json describes every registered route, and nothing else, and stays byte for byte
what tests/web/openapi_snapshot.json holds until it is changed on purpose."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dms
from dms.web.api import ROUTE_TABLES
from dms.web.openapi import OPERATIONS, build, operation_key
from tests.harness.client import JSON
import pytest

pytestmark = pytest.mark.sqlite_only  # no database

# After a deliberate change to the document: .venv/bin/python -m tests.web.test_openapi
SNAPSHOT = Path(__file__).with_name("openapi_snapshot.json")


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


def compact(document: dict) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def differences(old, new, where: str = "") -> list[str]:
    """Where two documents differ (a value, the keys of an object or their order), as
    `["paths"]["/tags/"]["get"]["summary"]: old -> new`."""
    if isinstance(old, dict) and isinstance(new, dict):
        if list(old) != list(new):
            return [f"{where or 'the document'}: keys {list(old)} -> {list(new)}"]
        return [found for key in old
                for found in differences(old[key], new[key], f"{where}[{json.dumps(key)}]")]
    before, after = (compact(value)[:200].decode(errors="replace") for value in (old, new))
    return [] if compact(old) == compact(new) else [f"{where}: {before} -> {after}"]


def expected_document() -> dict:
    """The snapshot, with the version of the package being tested (a release changes only that)."""
    document = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    document["info"]["version"] = dms.__version__
    return document


def test_the_document_is_the_snapshot_byte_for_byte(anon):
    served = anon.get("/openapi.json").content
    expected = expected_document()
    found = differences(expected, json.loads(served))[:10]
    assert served == compact(expected), "GET /openapi.json changed (to change it on purpose: " \
        "`python -m tests.web.test_openapi`, then review the diff):\n" + "\n".join(found)


def write_snapshot() -> None:
    """The document as the app builds it from its routes (dms.web.app), indented for review."""
    document = build([route for table in ROUTE_TABLES for route in table.routes])
    SNAPSHOT.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n",
                        encoding="utf-8")


if __name__ == "__main__":
    write_snapshot()
