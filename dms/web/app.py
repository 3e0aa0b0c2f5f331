"""create_app(config): the Bottle application, wired to its runtime (dms.runtime: the database,
the file store, the processing queue, ...) and its route tables (dms.web.api). Nothing starts
running here: dms.web.server starts the background work."""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any

import bottle

from dms.config import Config, ConfigError
from dms.runtime import Runtime, open_installation
from dms.web.api import ROUTE_TABLES
from dms.web.endpoints import DmsBottle, bottle_rule, endpoint
from dms.web.openapi import build as build_openapi


@contextlib.contextmanager
def compiled_once(router: bottle.Router):
    """Bottle's router compiles a method's combined pattern again after each route added: for
    dms' ~190 routes that was a quarter of a second of every start-up. Within this block each
    method's pattern is compiled once, when the last route is in (an attribute of the instance
    shadows Router._compile meanwhile)."""
    pending: set[str] = set()
    router._compile = pending.add
    try:
        yield
    finally:
        del router._compile
        for method in pending:
            router._compile(method)


class App(DmsBottle):
    """The application: its runtime, and the routes it serves (also what GET /openapi.json
    describes, so no route can be added or removed without the document following)."""

    def __init__(self, runtime: Runtime):
        super().__init__()
        self.runtime = runtime
        self.services = runtime.services
        # The Paperless-ngx dialect (api.md §17) under its prefix, unless switched off.
        self.paperless_prefix = runtime.config.paperless_prefix
        self._dialect: dict[str, Any] = {}  # "app": built by its first request (Bottle refuses
        self._dialect_lock = threading.Lock()  # to set an attribute twice)
        self.api_routes = tuple(route for table in ROUTE_TABLES for route in table.routes)
        _check_prefix(self.paperless_prefix, self.api_routes)
        with compiled_once(self.router):
            for route in self.api_routes:
                callback = endpoint(runtime, route)
                for prefix in route.prefixes:
                    self.route(bottle_rule(route, prefix), route.method, callback)

    def __call__(self, environ: dict, start_response):
        path, prefix = environ.get("PATH_INFO", ""), self.paperless_prefix
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
            environ["PATH_INFO"] = path[len(prefix):]
            return self.dialect()(environ, start_response)
        return super().__call__(environ, start_response)

    def dialect(self) -> Any:
        """The Paperless-ngx dialect's application, built by the first request to it: its 32
        modules (1.7 MiB) cost a server that no Paperless-ngx client talks to nothing (issue 47,
        idle memory)."""
        if not self._dialect:
            with self._dialect_lock:
                if not self._dialect:
                    from dms.web.paperless.app import PaperlessApp
                    self._dialect["app"] = PaperlessApp(self.runtime)
        return self._dialect["app"]

    @functools.cached_property
    def openapi_document(self) -> dict:
        return build_openapi(self.api_routes)


def _check_prefix(prefix: str, routes: tuple) -> None:
    """The dialect's prefix may not hide a path of dms's own (`/api`, `/nodes`, the page)."""
    first = prefix.strip("/").split("/")[0]
    own = {route.path.strip("/").split("/")[0] for route in routes} | {"api", "static", ""}
    if prefix and first in own:
        raise ConfigError(f"DMS_PAPERLESS_PREFIX {prefix!r} would hide dms's own /{first}/; "
                          "choose another path, such as /paperless.")


def create_app(config: Config) -> App:
    """Open (and migrate) the configured database and build the WSGI application."""
    return App(Runtime(config, open_installation(config)))
