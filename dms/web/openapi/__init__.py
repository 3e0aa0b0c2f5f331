"""GET /openapi.json: an OpenAPI 3.1 document built from the route table itself, so no route can
be added or removed without the document following. Each route's body and answers are described
in an OPERATIONS table of one of the parts (core, and one module per later capability), keyed by
handler name; a test checks that every route has an entry."""

from __future__ import annotations

import re

from dms import __version__
from dms.web.jsonapi import JSON, VND, Route
from dms.web.openapi import core, pageops, rules, webhooks
from dms.web.openapi.shapes import STRING, ref

PARTS = (core, pageops, rules, webhooks)
SCHEMAS = {name: schema for part in PARTS for name, schema in part.SCHEMAS.items()}
OPERATIONS = {name: entry for part in PARTS for name, entry in part.OPERATIONS.items()}


def operation_key(route: Route) -> str:
    """The OPERATIONS entry of a route: its handler's name, unique among the routes."""
    return route.handler.__name__


def error_response(status: int) -> dict:
    return {"description": f"Error {status}", "content": {
        VND: {"schema": ref("Error")}, JSON: {"schema": ref("Error")}}}


def build(routes: list[Route]) -> dict:
    paths: dict[str, dict] = {}
    for route in routes:
        # An entry may end with other successful answers: {status: media} (a split: 201 or 202).
        request, status, media, query, errors, summary, *more = OPERATIONS[operation_key(route)]
        path_params = re.findall(r"\{(\w+)\}", route.path)
        statuses = {500, *errors}
        if route.auth:
            statuses.add(401)
        if path_params or media.get(VND, {}).get("properties", {}).get("links"):
            statuses.add(404)
        if request is not None:
            statuses |= {400, 413, 415}
        if route.method != "GET":  # every write: busy (503) or a full disk (507)
            statuses |= {503, 507}
        for prefix in route.prefixes:
            operation = {
                "operationId": f"{operation_key(route)}{prefix.replace('/', '_')}",
                "summary": summary,
                "parameters": [{"name": p, "in": "path", "required": True, "schema": STRING}
                               for p in path_params]
                + [{"name": q, "in": "query", "required": False, "schema": STRING} for q in query],
                "responses": {str(status): {"description": "Success", **(
                    {"content": {m: {"schema": s} for m, s in media.items()}} if media else {})}},
            }
            for other, other_media in (more[0] if more else {}).items():
                operation["responses"][str(other)] = {"description": "Success", "content": {
                    m: {"schema": schema} for m, schema in other_media.items()}}
            operation["responses"].update({str(s): error_response(s) for s in sorted(statuses)})
            if route.auth:
                operation["security"] = [{"token": []}]
            if request is not None:
                types, schema = request
                content = types if isinstance(types, dict) else \
                    {t: {"schema": schema} for t in types}
                content = {t: (v if isinstance(v, dict) and "schema" in v else {"schema": v})
                           for t, v in content.items()}
                operation["requestBody"] = {"required": True, "content": content}
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
