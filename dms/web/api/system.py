"""Endpoints about the service itself (api.md, "Service routes and the web page"): version and
health, both without login."""

from __future__ import annotations

from dms import __version__
from dms.ops import health as dms_health
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, ApiError, RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.core import HEALTH
from dms.web.openapi.shapes import STRING, obj

routes = RouteTable()


@routes.get("/openapi.json", Operation(
    "This document", {"type": "object"}), auth=False, media_type=JSON, strict_slash=True)
def openapi(ctx: Context):
    return ctx.app.openapi_document  # built from the app's own route list (dms.web.app)


@routes.get("/version/", Operation(
    "The server's version", obj({"version": STRING})), auth=False, media_type=JSON)
def version(ctx: Context):
    return {"version": __version__}


@routes.get("/health", Operation(
    "Health (503 with the reason when the database or the queue cannot be reached); for admins "
    "the last verify, search, queue and workers", HEALTH, errors=(503,)),
    auth=False, media_type=JSON)
def health(ctx: Context):
    """No login needed: 503 with the reason when this node cannot reach its database or its
    queue (for load balancers). An admin's token adds the details (dms.ops.health)."""
    dms_health.check(ctx.runtime.processor)
    body: dict = {"status": "ok"}
    if ctx.environ.get("HTTP_AUTHORIZATION"):
        try:
            ctx.authenticate()
        except ApiError:
            return body
        if ctx.user.is_admin:
            body.update(dms_health.details(ctx.services, ctx.runtime.processor))
    return body
