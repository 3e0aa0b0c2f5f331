"""Endpoints about the service itself (api.md §10): version and health, both without login."""

from __future__ import annotations

import functools
import logging

from peewee import PeeweeException

from dms import __version__, verify
from dms.db import database
from dms.jsonapi import JSON, ApiError, RouteTable
from dms.openapi import build as build_openapi
from dms.web import Context

log = logging.getLogger("dms.api.system")

routes = RouteTable()


@routes.get("/openapi.json", auth=False, media_type=JSON, strict_slash=True)
def openapi(ctx: Context):
    return openapi_document()


@functools.lru_cache(maxsize=1)
def openapi_document() -> dict:
    from dms.api import ROUTE_TABLES  # the package imports this module: look it up when asked

    return build_openapi([route for table in ROUTE_TABLES for route in table.routes])


@routes.get("/version/", auth=False, media_type=JSON)
def version(ctx: Context):
    return {"version": __version__}


@routes.get("/health", auth=False, media_type=JSON)
def health(ctx: Context):
    """No login needed. An admin's token adds the last `dms verify` result (weekly in the server)
    and the search index's state (ready, or being built; changes not yet in the index)."""
    try:
        database.execute_sql("SELECT 1").fetchone()
    except PeeweeException:
        log.exception("health check: the database is not reachable")
        raise ApiError(503, "server_error", "The database is not reachable.") from None
    body: dict = {"status": "ok"}
    if ctx.environ.get("HTTP_AUTHORIZATION"):
        try:
            ctx.authenticate()
        except ApiError:
            return body
        if ctx.user.is_admin:
            body["verify"] = verify.last_result(ctx.config.data_dir)
            body["search"] = ctx.services.search.status()
    return body
