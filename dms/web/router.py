"""Bottle's router, without a reference cycle for each request it refuses.

Bottle's router raises its refusals (404: no route has the path; 405: none takes the method), and
Bottle's request handler keeps the exception it catches in a local of its own frame, which the
exception's traceback holds: a cycle through the request's environ, its body included, that only
Python's cyclic garbage collector frees (28 objects a request, which anyone can send without
logging in). Here a refusal comes back as a route that answers with it; what the client gets is
the same (each application's `default_error_handler` writes it)."""

from __future__ import annotations

from typing import Any, NamedTuple

import bottle


class Refusal(NamedTuple):
    """The router's refusal of a request, as the route that answers it."""
    error: bottle.HTTPError

    def call(self) -> bottle.HTTPError:
        return self.error


class RefusingRouter(bottle.Router):
    def match(self, environ: dict) -> tuple[Any, dict]:
        try:
            return super().match(environ)
        except bottle.HTTPError as refusal:
            refusal.__traceback__ = None  # its frames hold the environ
            return Refusal(refusal), {}


def refuse_without_cycles(app: bottle.Bottle) -> None:
    """Give `app`, before any route is added, the router above. (Bottle's __setattr__ allows an
    attribute to be set once: its guard against plugins that overwrite each other.)"""
    assert not app.routes, "the router is replaced before routes are added"
    vars(app)["router"] = RefusingRouter()
