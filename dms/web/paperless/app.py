"""The dialect's WSGI application (dms.web.app hands it every request under the prefix): its
routes, and Bottle's own answers (an unknown path, a method a path does not take) in Django REST
framework's shape, with the dialect's headers."""

from __future__ import annotations

from typing import Any

import bottle

from dms import __version__
from dms.runtime import Runtime
from dms.web.answers import AnsweringBottle
from dms.web.paperless import bulk, documents, labels, links, search, system, tasks, views
from dms.web.paperless.protocol import (
    FOLLOWED_RELEASE,
    JSON,
    Call,
    Route,
    Routes,
    endpoint,
    headers,
)

described = Routes()
ROUTE_TABLES = (system.routes, labels.routes, views.routes, links.routes, documents.routes,
                tasks.routes, bulk.routes, search.routes, described)


@described.add("GET", "/api/schema/", auth=False)
def schema(call: Call) -> dict[str, Any]:
    """An OpenAPI document of the dialect: its paths and methods (pypaperless reads it, and the
    version headers, when it starts)."""
    paths: dict[str, dict[str, Any]] = {}
    for table in ROUTE_TABLES:
        for route in table.routes:
            paths.setdefault(route.path, {})[route.method.lower()] = {
                "operationId": route.handler.__name__,
                "responses": {"200": {"description": "as Paperless-ngx answers"}},
                **({"security": [{"tokenAuth": []}, {"basicAuth": []}]} if route.auth else {})}
    return {"openapi": "3.0.3",
            "info": {"title": "dms: the Paperless-ngx dialect", "version": FOLLOWED_RELEASE,
                     "description": f"dms {__version__} speaking Paperless-ngx's REST API"},
            "paths": dict(sorted(paths.items())),
            "components": {"securitySchemes": {
                "tokenAuth": {"type": "apiKey", "in": "header", "name": "Authorization"},
                "basicAuth": {"type": "http", "scheme": "basic"}}}}


def bottle_rule(route: Route) -> str:
    """`/api/tags/{id}/` -> `/api/tags/<id><:re:/?>`: Django's paths end in a slash; one without
    it is served too (a client that drops it gets the same answer, not a redirect)."""
    return route.path.replace("{", "<").replace("}", ">").rstrip("/") + "<:re:/?>"


class PaperlessApp(AnsweringBottle):
    def __init__(self, runtime: Runtime):
        super().__init__()
        # Bottle tries rules in the order they were added: fixed paths first, so that
        # /api/documents/next_asn/ is not taken for a document numbered "next_asn".
        every = [route for table in ROUTE_TABLES for route in table.routes]
        for route in sorted(every, key=lambda route: route.path.count("{")):
            self.route(bottle_rule(route), route.method, endpoint(runtime, route))

    def default_error_handler(self, res: bottle.HTTPError) -> bytes:
        status = res.status_code
        method = bottle.request.environ.get("REQUEST_METHOD", "")
        sentence = {404: "Not found.", 405: f'Method "{method}" not allowed.',
                    413: "The request body is too large."}.get(status, "A server error occurred.")
        bottle.response.content_type = JSON
        for name, value in headers().items():
            bottle.response.set_header(name, value)
        return bottle.json_dumps({"detail": sentence}).encode("utf-8")
