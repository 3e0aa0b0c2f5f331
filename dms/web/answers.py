"""Answers written to WSGI as they are: a route returns an `Answer` (status, header lines, body)
and the application writes it without Bottle's request and response objects, whose making,
casting and header handling were a quarter of GET /users/me/'s time in the application (issue 47;
bench/RESULTS.md). Files, streams, redirects and the router's own refusals (404, 405) still go
through Bottle's response object. Both applications use it: dms's own API and the Paperless-ngx
dialect."""

from __future__ import annotations

import http.client
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

import bottle

from dms.web.router import refuse_without_cycles

# "200 OK", "404 Not Found", ...: the status lines Bottle writes (Python's reason phrases).
STATUS_LINES = {status: f"{status} {reason}" for status, reason in http.client.responses.items()}
# Answers whose status forbids a body (RFC 9110 §15.3.5, §15.4.5): no content headers either.
BODILESS = frozenset({204, 304})
CONTENT_HEADERS = frozenset({"content-type", "content-length"})


class Answer(NamedTuple):
    """An answer as WSGI writes it: its status, its header lines and its body."""
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def answer(status: int, headers: dict[str, Any], body: bytes) -> Answer:
    """An Answer with its Content-Length; a bodiless status gets no body and no content
    headers (as Bottle leaves them out)."""
    if status in BODILESS:
        return Answer(status, header_lines({name: value for name, value in headers.items()
                                            if name.lower() not in CONTENT_HEADERS}), b"")
    lines = header_lines(headers)
    lines.append(("Content-Length", str(len(body))))
    return Answer(status, lines, body)


def header_lines(headers: dict[str, Any]) -> list[tuple[str, str]]:
    """Header fields as WSGI's lines; a value that would end its line is refused (as Bottle does:
    a value holding a client's text must never add a header of its own)."""
    lines = []
    for name, value in headers.items():
        text = str(value)
        if "\n" in text or "\r" in text or "\0" in text:
            raise ValueError(f"the {name} header's value holds a line break or a NUL")
        lines.append((name, text))
    return lines


class AnsweringBottle(bottle.Bottle):
    """Bottle, whose routes' Answers are written as they are. Unlike Bottle: no hooks and no
    plugins (no route of dms returns what Bottle's JSON and template plugins take), and a route's
    callback must not raise (each application's endpoint wrapper answers every exception)."""

    def __init__(self) -> None:
        super().__init__()
        self.uninstall(True)
        refuse_without_cycles(self)

    def wsgi(self, environ: dict, start_response: Callable) -> Any:
        raw_path = environ["bottle.raw_path"] = environ["PATH_INFO"]
        environ["PATH_INFO"] = raw_path.encode("latin1").decode("utf8", "ignore")  # as Bottle
        environ["bottle.app"] = self
        bottle.request.bind(environ)  # what bottle.static_file and the downloads read
        target, args = self.router.match(environ)
        out = target.call(**args)
        if isinstance(out, Answer):
            start_response(STATUS_LINES.get(out.status) or f"{out.status} Unknown", out.headers)
            return [] if environ["REQUEST_METHOD"] == "HEAD" else [out.body]
        response = bottle.response
        response.bind()
        try:
            body = self._cast(out)
        except Exception as error:  # the application's own 500 (its default_error_handler)
            response.bind()
            body = self._cast(bottle.HTTPError(500, "Internal Server Error", error,
                                               traceback.format_exc()))
        if response.status_code in BODILESS or environ["REQUEST_METHOD"] == "HEAD":
            if hasattr(body, "close"):
                body.close()
            body = []
        start_response(response._wsgi_status_line(), response.headerlist)
        return body
