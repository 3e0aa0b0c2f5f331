"""docs/api.md, the API reference in the repository, stays in step with the code.

- Every route of the live `GET /openapi.json` appears in docs/api.md as `` `METHOD /path` ``
  (in backquotes, e.g. `` `GET /tags/{id}/` ``). Only one form of each route counts: the bare
  path, or the `/api` path for a route that exists only under `/api` (the legacy endpoints).
  Path parameters are normalised: every parameter named `id` or ending in `_id` (`{user_id}`,
  `{node_id}`, `{document_id}`, ...) is written `{id}`; the others keep their names
  (`{file_name}`, `{identifier}`, `{name}`). The trailing slash is written as the route has it.
- Every error code the code can answer with appears in docs/api.md in backquotes
  (`` `not_found` ``): the `code` of each dms.errors class, each `code="..."` given to a domain
  error, each `ApiError(status, "code", ...)` anywhere in dms/, and the router's own codes
  (dms.web.endpoints.FRAMEWORK_ERRORS).
- The other way round: every `` `METHOD /path` `` the document mentions is a route of the
  server (ignoring the /api prefix, a query string and the trailing slash), so a removed or
  renamed route cannot linger in the reference.

Adding a route or an error code without documenting it fails this test.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from dms import errors
from dms.web import endpoints

pytestmark = pytest.mark.sqlite_only  # no database

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "api.md"
SOURCES = ROOT / "dms"

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PARAMETER = re.compile(r"\{(\w+)\}")
MENTION = re.compile(r"`(GET|POST|PUT|PATCH|DELETE|HEAD) (/[^`\s]*)`")
# code="required", code = "invalid" (class attributes and keyword arguments)
CODE_VALUE = re.compile(r"\bcode\s*=\s*\"([a-z_]+)\"")
# ApiError(401, "not_authenticated", ...), ApiError(refuse_status, "unsupported_media_type", ...)
API_ERROR = re.compile(r"ApiError\(\s*[\w.]+\s*,\s*\"([a-z_]+)\"")


def reference() -> str:
    return REFERENCE.read_text(encoding="utf-8")


def normalise(path: str) -> str:
    """`/documents/{document_id}/upload/{file_name}` -> `/documents/{id}/upload/{file_name}`."""
    return PARAMETER.sub(
        lambda m: "{id}" if m.group(1) == "id" or m.group(1).endswith("_id") else m.group(0), path)


def documented_form(paths: dict) -> set[tuple[str, str]]:
    """(METHOD, normalised path) of each route, in the one form the reference must show."""
    routes = set()
    for path, operations in paths.items():
        for method in operations:
            method = method.upper()
            if path.startswith("/api/"):
                bare = path[len("/api"):]
                if method.lower() in paths.get(bare, {}):
                    continue  # the bare form is the one documented
            routes.add((method, normalise(path)))
    return routes


def loose(path: str) -> str:
    """A path without query string, /api prefix and trailing slash, parameters normalised."""
    path = normalise(path.split("?", 1)[0])
    if path.startswith("/api/"):
        path = path[len("/api"):]
    return path.rstrip("/") or "/"


def error_codes() -> set[str]:
    """Every `code` an answer's error envelope can carry, collected from the code."""
    codes = {cls.code for _, cls in inspect.getmembers(errors, inspect.isclass)
             if issubclass(cls, errors.DomainError)}
    codes |= {code for code, _ in endpoints.FRAMEWORK_ERRORS.values()}
    for source in sorted(SOURCES.rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        codes |= set(CODE_VALUE.findall(text)) | set(API_ERROR.findall(text))
    return codes


def test_every_route_is_in_the_reference(anon):
    paths = anon.get("/openapi.json").json()["paths"]
    routes = documented_form(paths)
    assert len(routes) > 50 and ("PUT", "/api/document/upload/{file_name}") in routes
    text = reference()
    missing = sorted(f"`{method} {path}`" for method, path in routes
                     if f"`{method} {path}`" not in text)
    assert not missing, f"routes missing from docs/api.md: {', '.join(missing)}"


def test_every_route_the_reference_names_exists(anon):
    paths = anon.get("/openapi.json").json()["paths"]
    known = {(method.upper(), loose(path)) for path, operations in paths.items()
             for method in operations}
    known |= {("HEAD", path) for method, path in known if method == "GET"}
    mentioned = {(method, path) for method, path in MENTION.findall(reference())}
    unknown = sorted(f"`{method} {path}`" for method, path in mentioned
                     if (method, loose(path)) not in known)
    assert not unknown, f"docs/api.md names routes the server does not have: {', '.join(unknown)}"


def test_every_error_code_is_in_the_reference():
    codes = error_codes()
    # The scan must find the codes of every kind of source, or it is broken.
    assert {"not_authenticated", "authentication_failed", "permission_denied", "not_found",
            "method_not_allowed", "parse_error", "required", "blank", "invalid",
            "does_not_exist", "conflict", "unsupported_media_type", "too_large", "throttled",
            "unavailable", "insufficient_storage", "not_implemented", "server_error"} <= codes
    text = reference()
    missing = sorted(code for code in codes if f"`{code}`" not in text)
    assert not missing, f"error codes missing from docs/api.md: {', '.join(missing)}"


def test_the_readme_links_the_reference():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/api.md)" in readme
