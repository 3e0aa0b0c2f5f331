"""Endpoints about the service itself (api.md §10): version and health, both without login."""

from __future__ import annotations

import logging

from peewee import PeeweeException

from dms import __version__
from dms.db import database
from dms.jsonapi import JSON, ApiError, RouteTable
from dms.web import Context

log = logging.getLogger("dms.api.system")

routes = RouteTable()


@routes.get("/version/", auth=False, media_type=JSON)
def version(ctx: Context):
    return {"version": __version__}


@routes.get("/health", auth=False, media_type=JSON)
def health(ctx: Context):
    try:
        database.execute_sql("SELECT 1").fetchone()
    except PeeweeException:
        log.exception("health check: the database is not reachable")
        raise ApiError(503, "server_error", "The database is not reachable.") from None
    return {"status": "ok"}
