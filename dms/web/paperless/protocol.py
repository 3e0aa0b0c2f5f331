"""How the Paperless-ngx dialect speaks (api.md §17), whatever the route: the API version a client
asks for in its Accept header, Token and Basic authentication, Django REST framework's errors and
pages, and the headers every answer carries.

- Versions: `Accept: application/json; version=N`, N from 1 to 10; none: the configured default
  (DMS_PAPERLESS_DEFAULT_VERSION, 9: what the 2.x-era scripts that send none were written for);
  anything else → 406. Every answer carries X-Api-Version (10, the newest served), X-Version (the
  Paperless-ngx release whose API is followed) and X-DMS-Version.
- Errors are DRF's: `{"detail": "..."}` for 401/403/404/405/406/429/5xx, `{"<field>": ["..."]}`
  or `{"non_field_errors": ["..."]}` for 400; dms's domain errors become them here, in the one
  wrapper every route goes through.
- Pages: `?page=` and `?page_size=` (default 25, at most 100,000; a page size that is not a
  positive number is ignored, as DRF does), `{"count", "next", "previous", "results"}` with
  absolute links whose parameters are sorted (DRF's), and `all` (every id) before version 10.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import bottle

from dms import __version__, errors
from dms.domain import accounts
from dms.domain.rows import Token, User
from dms.domain.sessions import idle_limit, live_token
from dms.files import spool
from dms.files.fairness import serving
from dms.runtime import Runtime
from dms.text import is_whole_number
from dms.web.answers import BODILESS, Answer
from dms.web.answers import answer as written
from dms.web.endpoints import is_disk_full, public_origin, release_connection
from dms.web.jsonapi import ApiError, encode, parse_json, raw_json
from dms.web.turns import serving_user

log = logging.getLogger("dms.web.paperless")

NEWEST_VERSION = 10
OLDEST_VERSION = 1
FOLLOWED_RELEASE = "3.0.0"  # the Paperless-ngx release whose API this dialect follows
DEFAULT_PAGE_SIZE = 25
MAX_PAGE_SIZE = 100_000
JSON = "application/json"
VERSION_PARAMETER = re.compile(r";\s*version\s*=\s*([^;,]*)", re.IGNORECASE)
MAX_JSON_BYTES_NOTE = "The JSON body is too large."


class DrfError(Exception):
    """An answer in Django REST framework's error shape."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


def detail(status: int, sentence: str, **headers: str) -> DrfError:
    return DrfError(status, {"detail": sentence}, headers)


def not_found(what: str | None = None) -> DrfError:
    """DRF's 404: `No Tag matches the given query.` for an object's own route, else `Not found.`."""
    return detail(404, f"No {what} matches the given query." if what else "Not found.")


# JSON's one way to write a null character: \u0000 after an even number of backslashes (DRF's
# fields refuse null characters; PostgreSQL's text cannot hold one).
NULL_CHARACTER = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
NON_FIELD = "non_field_errors"  # DRF's name for an error of the whole body
ITEM_LISTS = ("custom_fields",)  # lists whose items' errors DRF writes item by item


def invalid(field_name: str, sentence: str) -> DrfError:
    return DrfError(400, {field_name: [sentence]})


NOT_AUTHENTICATED = "Authentication credentials were not provided."
NO_PERMISSION = "You do not have permission to perform this action."


def version_of(accept: str | None, default: int) -> int:
    """The API version the Accept header asks for (the first media range naming one), or
    `default`; 406 for a version this dialect does not serve."""
    for media_range in (accept or "").split(","):
        found = VERSION_PARAMETER.search(media_range)
        if found is None:
            continue
        given = found.group(1).strip().strip('"')
        if given.isascii() and given.isdigit() and len(given) <= 3 \
                and OLDEST_VERSION <= int(given) <= NEWEST_VERSION:
            return int(given)
        raise detail(406, 'Invalid version in "Accept" header.')
    return default


@dataclass
class Call:
    """One request to the dialect as a handler sees it."""
    runtime: Runtime
    environ: dict
    version: int = NEWEST_VERSION
    user_or_none: User | None = None
    token: Token | None = None  # None when the caller authenticated with a password
    query_items: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.services, self.config = self.runtime.services, self.runtime.config
        self.query_items = parse_qsl(self.environ.get("QUERY_STRING", ""), keep_blank_values=True)

    @property
    def user(self) -> User:
        if self.user_or_none is None:
            raise detail(401, NOT_AUTHENTICATED, **{"WWW-Authenticate": "Token"})
        return self.user_or_none

    # -- the request ----------------------------------------------------------------------------
    def arg(self, name: str, default: str | None = None) -> str | None:
        """A query parameter's last value (Django's QueryDict.get)."""
        found = [value for key, value in self.query_items if key == name]
        return found[-1] if found else default

    def args(self, name: str) -> list[str]:
        return [value for key, value in self.query_items if key == name]

    def header(self, name: str) -> str | None:
        key = "HTTP_" + name.upper().replace("-", "_")
        if name.lower() in ("content-type", "content-length"):
            key = key[5:]
        return self.environ.get(key)

    @property
    def remote_addr(self) -> str:
        return self.environ.get("REMOTE_ADDR", "")

    def body(self) -> dict[str, Any]:
        """The request's fields: a JSON object, or an HTML form (DRF parses both)."""
        media = (self.header("Content-Type") or "").split(";")[0].strip().lower()
        length = _length(self.environ.get("CONTENT_LENGTH"))
        if length > self.config.max_json_bytes:
            raise detail(413, MAX_JSON_BYTES_NOTE)
        raw = self.environ["wsgi.input"].read(length) if length else b""
        if media == "application/x-www-form-urlencoded":
            form = parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)
            refuse_null_characters(form)
            return dict(form)
        if media not in (JSON, ""):
            raise detail(415, f'Unsupported media type "{media}" in request.')
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise detail(400, f"JSON parse error - {error}") from None
        if not isinstance(parsed, dict):
            raise invalid("non_field_errors", "Invalid data. Expected a dictionary, but got "
                                              f"{type(parsed).__name__}.")
        if NULL_CHARACTER.search(raw.decode("utf-8", "replace")):
            raise detail(400, "JSON parse error - Null characters are not allowed.")
        try:  # what dms refuses in any body: NaN, lone surrogates, too deep, ...
            return parse_json(raw)
        except ApiError as error:
            raise detail(400, f"JSON parse error - {error}") from None

    # -- answers --------------------------------------------------------------------------------
    def absolute_url(self, items: list[tuple[str, str]]) -> str:
        """This request's own address with the query `items` (sorted, as DRF writes links)."""
        origin = public_origin(self.environ, proxy_port=bool(self.config.trusted_proxy))
        path = quote(self.environ.get("SCRIPT_NAME", "") + self.environ.get("PATH_INFO", ""))
        query = urlencode(sorted(items))
        return origin + path + (f"?{query}" if query else "")

    def dms_url(self, path: str) -> str:
        """The absolute URL of `path` of dms's own (outside the dialect's prefix)."""
        origin = public_origin(self.environ, proxy_port=bool(self.config.trusted_proxy))
        root = self.environ.get("SCRIPT_NAME", "").removesuffix(self.config.paperless_prefix)
        return origin + quote(root + path)

    def page(self, total: int, fetch: Callable[[int, int], list[dict]],
             all_ids: Callable[[], list[int] | str] | None = None) -> dict[str, Any]:
        """One page of a listing of `total` items: `fetch(offset, limit)` gives its results;
        `all_ids()` every id (a list, or the text "7,3,12" as the database joined them), for
        versions before 10."""
        size = _positive(self.arg("page_size"), DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        last = max(1, -(-total // size))
        given = self.arg("page", "1") or "1"
        number = last if given == "last" else _positive(given, 0, None)
        if not 1 <= number <= last:
            raise detail(404, "Invalid page.")
        others = [(key, value) for key, value in self.query_items if key != "page"]
        body: dict[str, Any] = {
            "count": total,
            "next": self.absolute_url([*others, ("page", str(number + 1))])
            if number < last else None,
            "previous": None if number == 1 else self.absolute_url(
                others if number == 2 else [*others, ("page", str(number - 1))]),
        }
        if self.version < 10 and all_ids is not None:
            ids = all_ids()
            body["all"] = raw_json(f"[{ids}]") if isinstance(ids, str) else ids
        body["results"] = fetch((number - 1) * size, size)
        return body


def _length(raw: str | None) -> int:
    try:
        return max(0, int(raw or 0))
    except ValueError:
        raise detail(400, "The Content-Length header is not a number.") from None


def _positive(raw: str | None, default: int, most: int | None) -> int:
    """A positive whole number from a query parameter; `default` for anything else."""
    if raw is None or not is_whole_number(raw, 12) or int(raw) < 1:
        return default
    return min(int(raw), most) if most is not None else int(raw)


# -- authentication -------------------------------------------------------------------------------
def authenticate(call: Call) -> None:
    """`Authorization: Token <dms token>` or HTTP Basic (username and password, throttled as the
    login is); 401 in DRF's words otherwise."""
    scheme, _, secret = call.environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() == "token" and secret:
        token = live_token(secret, idle_limit(call.config))
        if token is None:
            raise detail(401, "Invalid token.", **{"WWW-Authenticate": "Token"})
        call.token, call.user_or_none = token, token.user
    elif scheme.lower() == "basic" and secret:
        username, password = _basic(secret)
        try:
            call.user_or_none = accounts.authenticate(username, password, call.remote_addr,
                                                      call.services.throttle)
        except errors.Invalid:
            raise detail(401, "Invalid username/password.",
                         **{"WWW-Authenticate": 'Basic realm="api"'}) from None
    else:
        raise detail(401, NOT_AUTHENTICATED, **{"WWW-Authenticate": "Token"})


def _basic(secret: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(secret, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise detail(401, "Invalid basic header. Credentials not correctly base64 encoded.",
                     **{"WWW-Authenticate": 'Basic realm="api"'}) from None
    username, colon, password = decoded.partition(":")
    if not colon:
        raise detail(401, "Invalid basic header. Credentials string should not include spaces.",
                     **{"WWW-Authenticate": 'Basic realm="api"'})
    return username, password


# -- answers ------------------------------------------------------------------------------------
def headers(**more: str) -> dict[str, str]:
    return {"X-Api-Version": str(NEWEST_VERSION), "X-Version": FOLLOWED_RELEASE,
            "X-DMS-Version": __version__, **more}


def answer(body: Any, status: int = 200, **more: str) -> Answer:
    data = b"" if status in BODILESS else encode(body)  # a 204's headers lose their type
    return written(status, headers(**{"Content-Type": JSON}, **more), data)


@dataclass(frozen=True)
class Reply:
    """What a handler may return besides a JSON body: a status other than 200."""
    body: Any
    status: int = 200


DOMAIN_STATUS = {
    errors.NotFound: 404, errors.Forbidden: 403, errors.Gone: 410, errors.Throttled: 429,
    errors.TooLarge: 413,
    errors.UnsupportedType: 415, errors.StorageFull: 507, errors.Unavailable: 503,
}


def from_domain(error: errors.DomainError, fields: dict[str, str]) -> DrfError:
    """A domain error in DRF's shape; `fields` renames dms's attribute names to the dialect's."""
    if isinstance(error, errors.NotFound):
        return not_found()
    status = next((code for cls, code in DOMAIN_STATUS.items() if isinstance(error, cls)), 400)
    if status != 400:
        more = {"Retry-After": str(error.retry_after)} \
            if isinstance(error, errors.Throttled) else {}
        return detail(status, error.message, **more)
    segments = [segment for segment in (error.field or "").split("/") if segment]
    for at, segment in enumerate(segments[:-1]):
        if segment in ITEM_LISTS and segments[at + 1].isascii() and segments[at + 1].isdigit():
            # One item of a list, as DRF writes it: {"custom_fields": [{}, {"field": [...]}]}
            # (a value refused: the item's non_field_errors, as Paperless-ngx's serializer).
            inner = "field" if segments[at + 2:at + 3] == ["field"] else NON_FIELD
            return DrfError(400, {fields.get(segment, segment): [
                *([{}] * int(segments[at + 1])), {inner: [error.message]}]})
    name = segments[-1] if segments else ""
    name = fields.get(name, name) if name else NON_FIELD
    return invalid(name, error.message)


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # `/api/tags/{id}/`
    handler: Callable
    auth: bool = True
    fields: dict[str, str] = field(default_factory=dict)  # dms's attribute: the dialect's


class Routes:
    """A module's routes of the dialect."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(self, method: str, path: str, auth: bool = True,
            fields: dict[str, str] | None = None) -> Callable:
        def register(handler: Callable) -> Callable:
            self.routes.append(Route(method, path, handler, auth, fields or {}))
            return handler
        return register


def refuse_null_characters(items: list[tuple[str, str]]) -> None:
    """A field or query parameter holding a null character: DRF's 400 (no text dms keeps can
    hold one)."""
    for name, value in items:
        if "\x00" in name or "\x00" in value:
            raise invalid(name.replace("\x00", "")[:40] or NON_FIELD,
                          "Null characters are not allowed.")


def endpoint(runtime: Runtime, route: Route) -> Callable:
    """The wrapper of every route: version, authentication, the handler, the answer; every
    error in DRF's shape, never a traceback."""

    def callback(**params: str) -> Answer | bottle.HTTPResponse:
        call = Call(runtime, bottle.request.environ)
        try:
            refuse_null_characters(call.query_items)
            call.version = version_of(call.header("Accept"),
                                      runtime.config.paperless_default_version)
            if route.auth:
                authenticate(call)
            caller = call.user_or_none
            if caller is not None:
                serving_user(caller.id)
            with serving(caller.id if caller is not None else None):
                result = route.handler(call, **params)
            if isinstance(result, bottle.HTTPResponse):
                for name, value in headers().items():
                    result.set_header(name, value)
                return result
            if isinstance(result, Reply):
                return answer(result.body, result.status)
            return answer(result)
        except DrfError as error:
            return answer(error.body, error.status, **error.headers)
        except errors.DomainError as error:
            drf = from_domain(error, route.fields)
            return answer(drf.body, drf.status, **drf.headers)
        except Exception as error:
            if is_disk_full(error):
                return answer({"detail": errors.StorageFull().message}, 507)
            log.exception("unhandled error in the Paperless-ngx dialect: %s %s", route.method,
                          route.path)
            return answer({"detail": "A server error occurred."}, 500)
        finally:
            release_connection()
            spool.release(call.environ.get("wsgi.input"))

    callback.__name__ = route.handler.__name__
    return callback


def number(raw: str) -> int:
    """A path's integer id; an id that is not one is a 404, as Django's URL patterns answer."""
    if not is_whole_number(raw):
        raise not_found()
    return int(raw)
