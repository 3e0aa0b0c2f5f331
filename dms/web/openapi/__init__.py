"""GET /openapi.json: an OpenAPI 3.1 document built from the route table itself, so no route can
be added or removed without the document following. Each route carries its own description, an
Operation passed to its decorator where the handler is declared (`@routes.get(path,
Operation(...))` in dms/web/api/); build() walks the routes and adds what a route tells by itself
(path parameters, security, the error statuses every route of its kind can answer). The schemas
that operations name by `$ref` live in the parts (core, and one module per later capability);
shapes holds the building blocks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dms import __version__
from dms.web.jsonapi import JSON, VND, Route
from dms.web.openapi import access, core, links_and_searches, metadata, pageops, rules, webhooks
from dms.web.openapi.shapes import STRING, ref

PARTS = (core, metadata, pageops, rules, webhooks, access, links_and_searches)
SCHEMAS = {name: schema for part in PARTS for name, schema in part.SCHEMAS.items()}


@dataclass(frozen=True)
class Operation:
    """What GET /openapi.json says of one route, beyond what the route itself tells.

    `answer` is the success body's schema in the route's media type; `media` instead gives it by
    media type, for a route answering other types (files, previews, the event stream). Neither:
    a success without a body (204). `errors` are the error statuses build() cannot infer; `also`
    other successful answers, {status: schema} in the route's media type (a split: 201 or 202)."""
    summary: str
    answer: dict | None = None
    status: int = 200
    request: dict | None = None        # the request body's schema; None: the route takes none
    accepts: tuple[str, ...] = (VND,)  # the request body's media types
    query: tuple[str, ...] = ()        # optional query parameters
    errors: tuple[int, ...] = ()
    media: Mapping[str, dict] | None = None
    also: Mapping[int, dict] | None = None
    # More media types of its errors besides the JSON envelope (a share link's public page
    # answers its refusals as HTML pages).
    error_media: Mapping[str, dict] | None = None

    def __post_init__(self):
        if self.answer is not None and self.media is not None:
            raise ValueError(f"{self.summary!r}: give the answer's schema or its media, not both")

    def content(self, route: Route) -> dict:
        """The success body: media type -> schema ({}: none)."""
        if self.media is not None:
            return dict(self.media)
        return {} if self.answer is None else {route.media_type: self.answer}


def error_response(status: int, more: Mapping[str, dict] | None = None) -> dict:
    return {"description": f"Error {status}", "content": {
        VND: {"schema": ref("Error")}, JSON: {"schema": ref("Error")},
        **{media: {"schema": schema} for media, schema in (more or {}).items()}}}


def declaration(route: Route) -> Operation:
    """The route's Operation; a route without one is refused as the document is built."""
    if not isinstance(route.operation, Operation):
        raise TypeError(f"{route.method} {route.path} ({route.handler.__name__}) has no "
                        f"Operation: pass one to its route decorator")
    return route.operation


def error_statuses(route: Route, operation: Operation, content: dict) -> list[int]:
    """Every route may fail (500); more follow from the route: a login (401), an id in the path
    or a page number (404), a body (400, 413, 415), a write (busy: 503; a full disk: 507)."""
    path_params = re.findall(r"\{(\w+)\}", route.path)
    statuses = {500, *operation.errors}
    if route.auth:
        statuses.add(401)
    if path_params or content.get(VND, {}).get("properties", {}).get("links"):
        statuses.add(404)
    if operation.request is not None:
        statuses |= {400, 413, 415}
    if route.method != "GET":
        statuses |= {503, 507}
    return sorted(statuses)


def describe(route: Route, prefix: str) -> dict:
    """The OpenAPI operation of one route under one prefix."""
    operation = declaration(route)
    content = operation.content(route)
    success: dict[str, Any] = {"description": "Success"}
    if content:
        success["content"] = {m: {"schema": schema} for m, schema in content.items()}
    responses: dict[str, Any] = {str(operation.status): success}
    described = {
        "operationId": f"{route.handler.__name__}{prefix.replace('/', '_')}",
        "summary": operation.summary,
        "parameters": [{"name": p, "in": "path", "required": True, "schema": STRING}
                       for p in re.findall(r"\{(\w+)\}", route.path)]
        + [{"name": q, "in": "query", "required": False, "schema": STRING}
           for q in operation.query],
        "responses": responses,
    }
    for status, schema in (operation.also or {}).items():
        responses[str(status)] = {"description": "Success", "content": {
            route.media_type: {"schema": schema}}}
    responses.update({str(s): error_response(s, operation.error_media)
                      for s in error_statuses(route, operation, content)})
    if route.auth:
        described["security"] = [{"token": []}]
    if operation.request is not None:
        described["requestBody"] = {"required": True, "content": {
            media: {"schema": operation.request} for media in operation.accepts}}
    return described


def build(routes: list[Route]) -> dict:
    paths: dict[str, dict] = {}
    operation_ids: set[str] = set()
    for route in routes:
        for prefix in route.prefixes:
            operation = describe(route, prefix)
            if operation["operationId"] in operation_ids:
                raise ValueError(f"two routes' handlers are named {route.handler.__name__}: "
                                 f"an operationId must be unique")
            operation_ids.add(operation["operationId"])
            paths.setdefault(prefix + route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "dms", "version": __version__,
                 "description": "A self-hosted document management appliance. Every path exists "
                                "bare and under /api; a missing trailing slash is tolerated."},
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"token": {
                "type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <secret>`, from POST /auth/login/ or POST /tokens/"}},
        },
    }
