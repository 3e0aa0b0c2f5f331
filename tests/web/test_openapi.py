"""GET /openapi.json describes every registered route, and nothing else; each route declares its
own description (an Operation on its decorator), and the document stays byte for byte what
tests/web/openapi_snapshot.json holds until it is changed on purpose."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

import dms
from dms.web import api
from dms.web.api import ROUTE_TABLES
from dms.web.jsonapi import Route
from dms.web.openapi import Operation, build
from tests.harness.client import JSON

pytestmark = pytest.mark.sqlite_only  # no database

# After a deliberate change to the document: .venv/bin/python -m tests.web.test_openapi
SNAPSHOT = Path(__file__).with_name("openapi_snapshot.json")
HANDLER_MODULES = sorted(path.stem for path in Path(api.__file__).parent.glob("*.py")
                         if path.stem != "__init__")
SOURCES = Path(dms.__file__).parent
IMPORTS_OPERATION = re.compile(r"^from dms\.web\.openapi import .*\bOperation\b", re.MULTILINE)


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


def test_every_route_declares_its_operation():
    undeclared = [f"{route.method} {route.path}" for table in ROUTE_TABLES
                  for route in table.routes if not isinstance(route.operation, Operation)]
    assert not undeclared


def operations_on_decorators(source: str) -> tuple[int, int]:
    """(Operation calls in a module, those that are a `routes.<method>(path, Operation(...))`)."""
    tree = ast.parse(source)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id == "Operation"]
    declared = [decorator.args[1] for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                for decorator in node.decorator_list if isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Attribute)
                and isinstance(decorator.func.value, ast.Name)
                and decorator.func.value.id == "routes" and len(decorator.args) > 1]
    return len(calls), sum(1 for call in calls if any(call is arg for arg in declared))


@pytest.mark.parametrize("name", HANDLER_MODULES)
def test_no_operation_without_a_route(name):
    """Each Operation of a handler module sits on a route decorator, one per route of its table,
    and the table is one the app serves (listed in ROUTE_TABLES)."""
    module = importlib.import_module(f"dms.web.api.{name}")
    assert any(module.routes is table for table in ROUTE_TABLES)
    calls, on_decorators = operations_on_decorators(Path(module.__file__).read_text())
    assert calls == on_decorators == len(module.routes.routes)


def test_no_operation_elsewhere():
    """An Operation is made on a route decorator of a handler module, nowhere else in dms (the
    page operations' own `Operation`, dms.domain.pages.operations, is another class)."""
    importers = [path for path in sorted(SOURCES.rglob("*.py"))
                 if IMPORTS_OPERATION.search(path.read_text(encoding="utf-8"))]
    assert importers and {path.parent for path in importers} == {Path(api.__file__).parent}


def test_the_builder_refuses_a_route_without_an_operation_or_a_second_name():
    def handler(ctx):
        return None

    with pytest.raises(TypeError, match="GET /things/ .handler. has no Operation"):
        build([Route("GET", "/things/", handler)])
    twice = Route("GET", "/things/", handler, operation=Operation("Things"))
    with pytest.raises(ValueError, match="operationId must be unique"):
        build([twice, Route("POST", "/things/", handler, operation=Operation("More"))])


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
