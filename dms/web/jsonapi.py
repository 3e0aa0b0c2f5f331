"""The JSON:API layer (api.md, "Conventions"): the one error type and envelope, request parsing,
responses, pagination and datetimes. Handlers raise ApiError; nothing else decides what an error
looks like."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

VND = "application/vnd.api+json"
JSON = "application/json"

DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 100


class ApiError(Exception):
    """An error answered as the JSON:API envelope: a status, a machine code, a sentence for people,
    and, where a field is at fault, a JSON pointer to it."""

    def __init__(self, status: int, code: str, detail: str, pointer: str | None = None,
                 headers: Mapping[str, str] | None = None, meta: Mapping[str, Any] | None = None):
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.pointer = pointer
        self.headers = dict(headers or {})
        self.meta = dict(meta) if meta else None

    def envelope(self) -> dict:
        error: dict[str, Any] = {"detail": self.detail, "status": str(self.status),
                                 "code": self.code}
        if self.pointer is not None:
            error["source"] = {"pointer": self.pointer}
        if self.meta is not None:
            error["meta"] = self.meta
        return {"errors": [error]}


def not_found() -> ApiError:
    """The exact 404 of the spec: unknown ids and other users' objects look the same."""
    return ApiError(404, "not_found", "Not found.")


def invalid(detail: str, pointer: str | None = None, code: str = "invalid") -> ApiError:
    return ApiError(400, code, detail, pointer)


PERMISSION_DENIED = "You do not have permission to perform this action."


def permission_denied(detail: str = PERMISSION_DENIED) -> ApiError:
    return ApiError(403, "permission_denied", detail)


@dataclass
class Reply:
    """A handler's answer when it is not a plain 200 with the route's content type."""
    body: Any = None
    status: int = 200
    media_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def created(body: Any) -> Reply:
    return Reply(body, status=201)


def no_content() -> Reply:
    return Reply(None, status=204)


def encode(body: Any) -> bytes:
    """`body` as compact UTF-8 JSON. orjson writes the bytes once, 10-17x faster than the
    standard library for a page of 100 (bench/RESULTS.md, issue 47); what it refuses (an integer
    past 64 bits) the standard library writes as before."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def raw_json(text: str) -> Any:
    """JSON text already written (a list of numbers from the database), put into a body as it is."""
    return orjson.Fragment(text)


def format_datetime(value: dt.datetime | str | None) -> str | None:
    """UTC, ISO 8601, always with microseconds and Z: 2026-11-22T08:21:54.624117Z.

    Also takes the stored text form (`2026-11-22 08:21:54.624117`, see models.UTCDateTimeField)
    that listings read without building models."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.replace(" ", "T", 1) + "Z"
    return value.isoformat(timespec="microseconds") + "Z"


def media_type(header: str | None) -> str:
    """`application/json; charset=utf-8` -> `application/json`."""
    return (header or "").split(";", 1)[0].strip().lower()


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_json(raw: bytes) -> dict:
    """Decode a request body that must be one JSON object. Hostile bodies are refused with a 400,
    never a 500: nesting deeper than Python's recursion limit, integers longer than Python
    converts (4,300 digits), NaN/Infinity (not JSON), lone surrogates (\\ud800, which no
    text can be stored with)."""
    if not raw.strip():
        raise ApiError(400, "parse_error", "The request body is empty; a JSON object was expected.")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise ApiError(400, "parse_error", "The request body is not valid UTF-8.") from None
    except json.JSONDecodeError as error:
        raise ApiError(400, "parse_error",
                       f"The request body is not valid JSON: {error.msg} at line {error.lineno}, "
                       f"column {error.colno}.") from None
    except RecursionError:
        raise ApiError(400, "parse_error", "The request body is nested too deeply.") from None
    except ValueError as error:  # an integer too long to convert, NaN, Infinity
        raise ApiError(400, "parse_error", f"The request body holds a value dms does not accept: "
                                           f"{str(error).split(';')[0]}.") from None
    if not isinstance(body, dict):
        raise ApiError(400, "parse_error", "The request body must be a JSON object.")
    try:
        encode(body)
    except UnicodeEncodeError:
        raise ApiError(400, "parse_error", "The request body holds text that is not valid Unicode "
                                           "(a lone surrogate such as \\ud800).") from None
    except RecursionError:
        raise ApiError(400, "parse_error", "The request body is nested too deeply.") from None
    return body


def resource_data(body: dict, resource_type: str | Iterable[str], type_optional: bool = False
                  ) -> dict:
    """The `data` object of a JSON:API request, checked to be of `resource_type` (which it may
    leave out if `type_optional`: api.md's note body is `{"data": {"attributes": ...}}`)."""
    types = (resource_type,) if isinstance(resource_type, str) else tuple(resource_type)
    data = body.get("data")
    if data is None:
        raise ApiError(400, "required", "The request body needs a `data` object.", "/data")
    if not isinstance(data, dict):
        raise invalid("`data` must be an object.", "/data")
    if "type" not in data:
        if type_optional:
            return data
        raise ApiError(400, "required", "`data.type` is required.", "/data/type")
    if data["type"] not in types:
        expected = " or ".join(f"`{t}`" for t in types)
        raise ApiError(409, "conflict",
                       f"The resource type {json.dumps(data['type'])} does not match {expected}.",
                       "/data/type")
    return data


def attributes_of(data: dict) -> dict:
    attributes = data.get("attributes", {})
    if attributes is None:
        attributes = {}
    if not isinstance(attributes, dict):
        raise invalid("`attributes` must be an object.", "/data/attributes")
    return attributes


def _page_int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


@dataclass
class Page:
    number: int
    size: int
    count: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.count / self.size))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


def choose_page(query: Mapping[str, str], count: int) -> Page:
    """Read `page[number]`/`page` and `page[size]`/`page_size` (api.md, "Pagination").

    A bad or too large size falls back to the default or is cut to MAX_PAGE_SIZE; a page number
    that is not a number or lies outside 1..pages is a 404, as in DRF."""
    size = _page_int(query.get("page[size]")) or _page_int(query.get("page_size"))
    size = DEFAULT_PAGE_SIZE if size is None or size < 1 else min(size, MAX_PAGE_SIZE)
    page = Page(1, size, count)
    raw_number = query.get("page[number]") or query.get("page") or "1"
    if raw_number == "last":
        page.number = page.pages
        return page
    number = _page_int(raw_number)
    if number is None or not 1 <= number <= page.pages:
        raise ApiError(404, "not_found", "Invalid page.")
    page.number = number
    return page


def list_body(items: list, page: Page, url: str, query: Iterable[tuple[str, str]]) -> dict:
    """The list shape: links (absolute, other parameters kept), data, meta.pagination."""
    kept = urlencode([(k, v) for k, v in query if k not in ("page[number]", "page")], safe="[]")
    # The other parameters encoded once; each link adds its number (urlencode's own joining).
    start = f"{url}?{kept}&page[number]=" if kept else f"{url}?page[number]="

    def link(number: int | None) -> str | None:
        return None if number is None else start + str(number)

    return {
        "links": {
            "first": link(1),
            "last": link(page.pages),
            "next": link(page.number + 1 if page.number < page.pages else None),
            "prev": link(page.number - 1 if page.number > 1 else None),
        },
        "data": items,
        "meta": {"pagination": {"page": page.number, "pages": page.pages, "count": page.count}},
    }


@dataclass(frozen=True)
class Route:
    """One endpoint: a canonical path such as `/users/{id}/`, its handler and how it is served.

    `prefixes` says where the path exists: ("", "/api") for the API (api.md, "Paths": every path
    twice), ("/api",) for the legacy endpoints. `strict_slash` switches off the trailing-slash
    tolerance.
    `operation`: what GET /openapi.json says of it, a dms.web.openapi.Operation (typed loosely
    here: dms.web.openapi builds on this module)."""
    method: str
    path: str
    handler: Callable
    auth: bool = True
    media_type: str = VND
    prefixes: tuple[str, ...] = ("", "/api")
    strict_slash: bool = False
    operation: object = field(default=None, compare=False)


class RouteTable:
    """Collects a resource module's routes; dms.web.app turns them into Bottle routes. Each route
    is declared with its description: `@routes.get("/things/", Operation(...))`."""

    def __init__(self):
        self.routes: list[Route] = []

    def add(self, method: str, path: str, operation: object, **options) -> Callable:
        def register(handler: Callable) -> Callable:
            self.routes.append(Route(method, path, handler, operation=operation, **options))
            return handler
        return register

    def get(self, path: str, operation: object, **options) -> Callable:
        return self.add("GET", path, operation, **options)

    def post(self, path: str, operation: object, **options) -> Callable:
        return self.add("POST", path, operation, **options)

    def patch(self, path: str, operation: object, **options) -> Callable:
        return self.add("PATCH", path, operation, **options)

    def put(self, path: str, operation: object, **options) -> Callable:
        return self.add("PUT", path, operation, **options)

    def delete(self, path: str, operation: object, **options) -> Callable:
        return self.add("DELETE", path, operation, **options)
