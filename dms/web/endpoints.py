"""The Bottle side of the JSON:API layer: the request context handed to every handler, the wrapper
that authenticates, calls the handler and turns whatever happens into a response — the ONE place
where domain errors (dms.errors) become HTTP statuses and the error envelope — and the
application class whose own errors (404, 405, 413, 500) also come out as the error envelope."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote

import bottle

from dms import errors
from dms.db import is_disk_full, release_connection
from dms.db.models import Token, User, utcnow
from dms.domain.sessions import find_token, idle_limit
from dms.files import spool
from dms.files.fairness import serving
from dms.runtime import Runtime
from dms.web.answers import BODILESS, Answer, AnsweringBottle, answer
from dms.web.jsonapi import (
    JSON,
    VND,
    ApiError,
    Reply,
    Route,
    attributes_of,
    choose_page,
    encode,
    list_body,
    media_type,
    parse_json,
    resource_data,
)
from dms.web.turns import serving_user

log = logging.getLogger("dms.web")

AUTH_HEADERS = {"WWW-Authenticate": "Token"}
FRAMEWORK_ERRORS = {
    400: ("parse_error", "The request could not be understood."),
    404: ("not_found", "Not found: there is no endpoint at this address."),
    413: ("too_large", "The request body is too large."),
    416: ("invalid", "The requested range is not satisfiable."),
    500: ("server_error", "A server error occurred."),
}

STATUS_OF_ERROR = {
    errors.NotFound: 404, errors.Forbidden: 403, errors.Invalid: 400, errors.Conflict: 409,
    errors.Gone: 410, errors.TooLarge: 413, errors.UnsupportedType: 415, errors.Throttled: 429,
    errors.StorageFull: 507, errors.Unavailable: 503,
}
ATTRIBUTES = "/data/attributes/"


def not_authenticated() -> ApiError:
    """The 401 for a caller without credentials, wherever a login is needed."""
    return ApiError(401, "not_authenticated", "Authentication credentials were not provided.",
                    headers=AUTH_HEADERS)


class Context:
    """One request as a handler sees it: who is calling, the query, the body, absolute URLs."""

    def __init__(self, runtime: Runtime, environ: dict, route: Route):
        self.runtime = runtime
        self.services = runtime.services  # what domain functions take
        self.config = runtime.config
        self.environ = environ
        self.app = environ.get("bottle.app")
        self.route = route
        # Who is calling, once authenticate() has run: None for an anonymous caller. Handlers of
        # routes that need a login read `user` and `token`, which refuse an anonymous caller.
        self.user_or_none: User | None = None
        self.token_or_none: Token | None = None
        query = environ.get("QUERY_STRING")
        self.query_items = parse_qsl(query, keep_blank_values=True) if query else []
        self.query = dict(self.query_items)
        # Where the fields named by domain errors live in this request's body (dms.errors).
        self.field_base = "/"

    # -- who is calling -------------------------------------------------------------------------
    def authenticate(self) -> None:
        scheme, _, secret = self.environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "token" or not secret:
            raise not_authenticated()
        token = find_token(secret, utcnow(), idle_limit(self.config))
        if token is None:
            raise ApiError(401, "authentication_failed", "Invalid token.", headers=AUTH_HEADERS)
        self.token_or_none, self.user_or_none = token, token.user

    @property
    def user(self) -> User:
        """The calling user; an anonymous caller gets the 401 a route that needs a login gives."""
        if self.user_or_none is None:
            raise not_authenticated()
        return self.user_or_none

    @property
    def token(self) -> Token:
        """The token the caller authenticated with; an anonymous caller gets the same 401."""
        if self.token_or_none is None:
            raise not_authenticated()
        return self.token_or_none

    @property
    def remote_addr(self) -> str:
        # REMOTE_ADDR only: X-Forwarded-For is client-controlled unless a trusted proxy rewrote it.
        return self.environ.get("REMOTE_ADDR", "")

    # -- the request ----------------------------------------------------------------------------
    def header(self, name: str) -> str | None:
        """A request header; Content-Type and Content-Length are not HTTP_* in WSGI."""
        key = "HTTP_" + name.upper().replace("-", "_")
        if name.lower() in ("content-type", "content-length"):
            key = key[5:]
        return self.environ.get(key)

    def json(self, accept: tuple[str, ...] = (JSON, VND), refuse_status: int = 415) -> dict:
        """The body as a JSON object; its media type must be one of `accept` (else
        `refuse_status`)."""
        given = media_type(self.header("Content-Type"))
        if given not in accept:
            shown = given or "none"
            raise ApiError(refuse_status, "unsupported_media_type",
                           f"Unsupported media type {shown!r} in the request; "
                           f"use {' or '.join(accept)}.")
        length = self.content_length() or 0
        if length > self.config.max_json_bytes:
            raise ApiError(413, "too_large",
                           f"The JSON body is larger than {self.config.max_json_kb} KiB.")
        raw = self.environ["wsgi.input"].read(length) if length > 0 else b""
        self.field_base = "/"
        return parse_json(raw)

    def resource(self, types: str | tuple[str, ...], refuse_status: int = 415,
                 type_optional: bool = False) -> tuple[dict, dict]:
        """A JSON:API body (`application/vnd.api+json`): its `data` object, checked to be one of
        `types`, and its attributes. Fields named by domain errors are then attributes."""
        body = self.json(accept=(VND,), refuse_status=refuse_status)
        data = resource_data(body, types, type_optional)
        attributes = attributes_of(data)
        self.field_base = ATTRIBUTES
        return data, attributes

    def client_gone(self) -> bool:
        """True once the client closed its connection (waitress notices with
        channel_request_lookahead): long work for it can stop."""
        check = self.environ.get("waitress.client_disconnected")
        return bool(check and check())

    def content_length(self) -> int | None:
        """The body's announced length (waitress sets it for chunked bodies too), or None."""
        raw = self.environ.get("CONTENT_LENGTH")
        if not raw:
            return None
        try:
            return int(raw)
        except ValueError:
            raise ApiError(400, "parse_error",
                           "The Content-Length header is not a number.") from None

    # -- building answers -----------------------------------------------------------------------
    def absolute_url(self, path: str | None = None) -> str:
        """The ONE place links are made: `path` (below the URL prefix, e.g. `/api/users/`; default
        this request's) as the absolute URL the client follows — its scheme, host and port
        (public_origin) and the --url-prefix (SCRIPT_NAME)."""
        if path is None:
            path = self.environ.get("PATH_INFO", "")  # Bottle has decoded it to text
        origin = public_origin(self.environ, proxy_port=bool(self.config.trusted_proxy))
        return origin + quote(self.environ.get("SCRIPT_NAME", "") + path)

    def paginate(self, listing, serialize: Callable[[list], list[dict]]) -> dict:
        """One page of a listing as the list shape (api.md, "Pagination"). `listing` is a peewee
        query or anything with count() and fetch(offset, limit); `serialize` turns a page of
        its rows into resources."""
        if not hasattr(listing, "fetch"):
            listing = QueryListing(listing)
        page = choose_page(self.query, listing.count())
        rows = listing.fetch(page.offset, page.size)
        return list_body(serialize(rows), page, self.absolute_url(), self.query_items)


DEFAULT_PORTS = {"http": "80", "https": "443"}


def split_host(host: str) -> tuple[str, str | None]:
    """A Host header as (name, port or None): `h:8443`, `[::1]:8443`, `h`, `[::1]`."""
    name, colon, port = host.rpartition(":")
    digits = port.isascii() and port.isdigit()  # not "³": a digit to isdigit, not to int()
    if not colon or not digits or (":" in name and not name.startswith("[")):
        return host, None  # no port, or an IPv6 literal without brackets (not a valid Host)
    return name, str(int(port))


def public_origin(environ: dict, proxy_port: bool = False) -> str:
    """`scheme://host[:port]` as the client addressed it, from what waitress derived: behind the
    trusted proxy it has already put X-Forwarded-Proto into wsgi.url_scheme and X-Forwarded-Host
    (with X-Forwarded-Port when that is not the scheme's default) into HTTP_HOST; a Host that
    carries a port (Caddy's, on a port other than 443) keeps it. A default port is left out.
    `proxy_port`: a trusted proxy is configured, so an X-Forwarded-Port still in the environ is
    its (waitress removes everyone else's)."""
    scheme = environ.get("wsgi.url_scheme", "http")
    name, port = split_host(environ.get("HTTP_HOST", "").strip())
    if not name:  # HTTP/1.0 without Host: this socket's address
        name, port = environ.get("SERVER_NAME", "localhost"), environ.get("SERVER_PORT")
    elif port is None and proxy_port and environ.get("HTTP_X_FORWARDED_PORT"):
        # X-Forwarded-Port without X-Forwarded-Host: waitress set SERVER_PORT only, not Host.
        port = environ.get("SERVER_PORT")
    if port == DEFAULT_PORTS.get(scheme):
        port = None
    return f"{scheme}://{name}" + (f":{port}" if port else "")


class QueryListing:
    """A peewee query as a listing."""

    def __init__(self, query):
        self.query = query

    def count(self) -> int:
        return self.query.count()

    def fetch(self, offset: int, limit: int) -> list:
        return list(self.query.offset(offset).limit(limit))


def bottle_rule(route: Route, prefix: str) -> str:
    """`/users/{id}/` -> `/api/users/<id><:re:/?>`: the slash is optional (api.md, "Paths") unless
    the route is strict (the legacy `GET /api/documents` must not swallow `/api/documents/`)."""
    rule = prefix + route.path.replace("{", "<").replace("}", ">")
    if route.strict_slash:
        return rule
    return rule.rstrip("/") + "<:re:/?>"


def endpoint(runtime: Runtime, route: Route) -> Callable:
    """Wrap a handler: authenticate, call, and turn the result or any exception into a response."""

    def callback(**params):
        ctx = Context(runtime, bottle.request.environ, route)
        try:
            if route.auth:
                ctx.authenticate()
            # The pools a request may wait for are shared by users' turns, and background work
            # gives way while it is served.
            caller = ctx.user_or_none
            if caller is not None:
                serving_user(caller.id)
            with serving(caller.id if caller is not None else None):
                return render(route.handler(ctx, **params), route.media_type)
        except ApiError as error:
            return error_response(error, route.media_type)
        except errors.DomainError as error:
            return error_response(api_error(error, ctx.field_base), route.media_type)
        except Exception as error:
            if is_disk_full(error):
                return error_response(api_error(errors.StorageFull(), "/"), route.media_type)
            log.exception("unhandled error in %s %s", route.method, route.path)
            return error_response(ApiError(500, "server_error", FRAMEWORK_ERRORS[500][1]),
                                  route.media_type)
        finally:
            release_connection()
            spool.release(ctx.environ.get("wsgi.input"))

    callback.__name__ = route.handler.__name__
    return callback


def api_error(error: errors.DomainError, field_base: str) -> ApiError:
    """A domain error as the HTTP error: its status, code, sentence and JSON pointer."""
    pointer = None
    if error.field is not None:
        pointer = error.field if error.field.startswith("/") else field_base + error.field
    headers = {}
    if isinstance(error, errors.Throttled):
        headers["Retry-After"] = str(error.retry_after)
    status = next((status for cls, status in STATUS_OF_ERROR.items()
                   if isinstance(error, cls)), 400)
    return ApiError(status, error.code, error.message, pointer, headers, error.meta)


def json_answer(status: int, headers: dict[str, str], body: bytes, media: str) -> Answer:
    """An Answer of `media` (`headers` may name another type)."""
    return answer(status, {"Content-Type": media, **headers}, body)


def render(result: Any, default_media: str) -> Answer | bottle.HTTPResponse:
    if isinstance(result, bottle.HTTPResponse):  # a file, a stream, a redirect: Bottle writes it
        return result
    reply = result if isinstance(result, Reply) else Reply(result)
    body = b"" if reply.status in BODILESS else encode(reply.body)
    return json_answer(reply.status, reply.headers, body, reply.media_type or default_media)


def error_response(error: ApiError, media: str = VND) -> Answer:
    return json_answer(error.status, error.headers, encode(error.envelope()), media)


CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type, Content-Disposition, Range"


def with_cors(app: Callable, origins: tuple[str, ...]) -> Callable:
    """CORS for the listed origins only (DMS_CORS_ORIGINS; off when empty, api.md, "CORS"): their
    preflight requests are answered here, their other requests get the Allow-Origin header."""
    allowed = set(origins)

    def cors_app(environ, start_response):
        origin = environ.get("HTTP_ORIGIN")
        if origin not in allowed:
            return app(environ, start_response)
        headers = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        if environ["REQUEST_METHOD"] == "OPTIONS" \
                and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in environ:
            start_response("204 No Content", headers + [
                ("Access-Control-Allow-Methods", CORS_METHODS),
                ("Access-Control-Allow-Headers", CORS_HEADERS), ("Access-Control-Max-Age", "600")])
            return [b""]

        def start_with_cors(status, response_headers, exc_info=None):
            return start_response(status, response_headers + headers, exc_info)

        return app(environ, start_with_cors)

    return cors_app


class DmsBottle(AnsweringBottle):
    """Bottle, with its own errors answered as the JSON:API error envelope."""

    def default_error_handler(self, res: bottle.HTTPError) -> bytes:
        status = res.status_code
        if status == 405:
            method = bottle.request.environ.get("REQUEST_METHOD", "")
            error = ApiError(405, "method_not_allowed",
                             f"Method {method} is not allowed here; allowed: "
                             f"{res.headers.get('Allow', 'none')}.")
        else:
            code, detail = FRAMEWORK_ERRORS.get(status, ("invalid", res.status_line))
            if status == 500:
                log.error("unhandled error: %s", res.traceback or res.exception)
            elif status == 400 and isinstance(res.body, str) and res.body:
                detail = res.body
            error = ApiError(status, code, detail)
        bottle.response.content_type = VND
        if status == 401:
            bottle.response.set_header("WWW-Authenticate", "Token")
        return encode(error.envelope())
