"""The caller's token, found on every request, and sessions (api.md §22, "Sessions"): the web
page's login is a token of kind SESSION that expires after DMS_SESSION_IDLE_DAYS without use.
Its use is recorded at most once an hour (record_use), so requests do not write; expired
sessions are removed at each login (remove_expired_sessions) and never accepted before."""

from __future__ import annotations

import contextlib
import datetime as dt
import hmac
import logging
from typing import Any

from dms.config import Config
from dms.db import database, with_space_reserve, write_transaction
from dms.db.models import Token, User, columns_of, from_row, utcnow
from dms.domain.accounts import authenticate
from dms.domain.credentials import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_SESSION_IDLE,
    SESSION,
    SESSION_NAME,
    TOKEN_KEY_LENGTH,
    LoginThrottle,
    issue_token,
    token_digest,
)
from dms.errors import StorageFull, Unavailable

log = logging.getLogger("dms.auth")

# A session's use is written at most this often: a request does not write, except the first one
# of a session each hour (so idle expiry is counted to the hour, a session a little early).
USE_RECORD_INTERVAL = dt.timedelta(hours=1)


def idle_limit(config: Config) -> dt.timedelta:
    """How long a session may go unused (DMS_SESSION_IDLE_DAYS)."""
    return dt.timedelta(days=config.session_idle_days)


# The path every request takes: one query for the token and its user, rows made models directly
# (dms.db.models.from_row; Model.raw() was 3/4 of GET /users/me/ in-process).
TOKEN_COLUMNS = columns_of(Token)
USER_COLUMNS = columns_of(User)
TOKEN_AND_USER = (
    "SELECT " + ", ".join(f"t.{name}" for name in TOKEN_COLUMNS) + ", "
    + ", ".join(f"u.{name}" for name in USER_COLUMNS)
    + ' FROM token AS t JOIN "user" AS u ON u.id = t.user_id WHERE t.token_key = ?')


def live_token(secret: str, session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> Token | None:
    """The live token of this secret now, or None (find_token at this moment)."""
    return find_token(secret, utcnow(), session_idle)


def find_token(secret: str, now: dt.datetime,
               session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> Token | None:
    """The live token for `secret` with its user loaded, or None (unknown, expired, a session
    idle for `session_idle`, or an inactive user). A session's use is recorded (record_use)."""
    digest = token_digest(secret)
    row = database.execute_sql(TOKEN_AND_USER, (digest[:TOKEN_KEY_LENGTH],)).fetchone()
    if row is None:
        return None
    token, user = token_and_user(row)
    if not hmac.compare_digest(token.digest, digest) or token.is_expired(now, session_idle):
        return None
    if not user.is_active:
        return None
    token.user = user
    record_use(token, now)
    return token


# The models' values of the token-and-user rows read last, keyed by the row itself: a client's
# next request reads the same row again, and its 20 values are not turned into the models' again.
# Nothing here can be stale: the query runs on every request, an equal row gives equal values, a
# revoked token has no row, a changed user or session is another row.
_values_of_rows: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
MAX_REMEMBERED_ROWS = 1024


def token_and_user(row: tuple[Any, ...]) -> tuple[Token, User]:
    """A row of TOKEN_AND_USER as the token's and its user's models (each their own copies)."""
    try:
        values = _values_of_rows.get(row)
    except TypeError:  # a value that cannot be a key: turned every time
        values = None
    if values is None:
        token = from_row(Token, TOKEN_COLUMNS, row[:len(TOKEN_COLUMNS)])
        user = from_row(User, USER_COLUMNS, row[len(TOKEN_COLUMNS):])
        if len(_values_of_rows) >= MAX_REMEMBERED_ROWS:
            _values_of_rows.clear()
        with contextlib.suppress(TypeError):
            _values_of_rows[row] = (dict(token.__data__), dict(user.__data__))
        return token, user
    token, user = Token(__no_default__=True), User(__no_default__=True)
    token.__data__, user.__data__ = dict(values[0]), dict(values[1])
    return token, user


def record_use(token: Token, now: dt.datetime) -> None:
    """A session was used `now`: written when its recorded use is USE_RECORD_INTERVAL old, so
    that requests do not write (SQLite has one writer). The update is conditional: several nodes
    (or threads) seeing the same stale time write it once, the others change no row. A write
    that fails (a full disk) loses nothing but an hour of idle time."""
    if token.kind != SESSION or (token.last_used is not None
                                 and now - token.last_used < USE_RECORD_INTERVAL):
        return
    stale = Token.last_used.db_value(now - USE_RECORD_INTERVAL)
    try:
        with write_transaction():
            database.execute_sql(
                "UPDATE token SET last_used = ? WHERE digest = ? "
                "AND (last_used IS NULL OR last_used <= ?)",
                (Token.last_used.db_value(now), token.digest, stale))
    except (StorageFull, Unavailable) as error:
        log.warning("could not record a session's use: %s", error.message)
        return
    token.last_used = now


def token_is_live(digest: str, now: dt.datetime,
                  session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> bool:
    """Is the token with this digest still there, unexpired (a session: not idle too long), of an
    active user? (A long-lived response, the event stream, asks again now and then: a revoked
    token's stream ends.)"""
    return database.execute_sql(
        'SELECT 1 FROM token AS t JOIN "user" AS u ON u.id = t.user_id WHERE t.digest = ? '
        "AND u.is_active = ? AND (t.expiry IS NULL OR t.expiry > ?) "
        "AND (t.kind <> ? OR t.last_used IS NULL OR t.last_used > ?)",
        (digest, True, Token.expiry.db_value(now), SESSION,
         Token.last_used.db_value(now - session_idle))).fetchone() is not None


def start(username: object, password: object, address: str, throttle: LoginThrottle,
          max_tokens: int = DEFAULT_MAX_TOKENS,
          session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> str:
    """POST /auth/login/ with `"session": true` (the web page): a new session's secret for
    correct credentials (accounts.authenticate, throttled as every login). Nothing is reused:
    each login is its own session, revoked by its logout; sessions past their idle time go now
    (anyone's), and past DMS_MAX_TOKENS_PER_USER the user's oldest sessions make room."""
    user = authenticate(username, password, address, throttle)

    def open_session() -> str:
        remove_expired_sessions(utcnow(), session_idle)
        return issue_token(user, expiry_hours=None, name=SESSION_NAME, max_tokens=max_tokens,
                           make_room=True, kind=SESSION)[1]
    return with_space_reserve(open_session)


def remove_expired_sessions(now: dt.datetime,
                            session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> int:
    """Delete every session (anyone's) unused for `session_idle`; how many went. Run at each
    login, so that sessions left open in browsers no longer used do not pile up (one indexed
    statement; find_token refuses them before that anyway)."""
    with write_transaction():
        removed: int = (Token.delete()
                         .where(Token.kind == SESSION, Token.last_used <= now - session_idle)
                         .execute())
    return removed


def session_count(user: User, session_idle: dt.timedelta = DEFAULT_SESSION_IDLE) -> int:
    """GET /auth/sessions/: the user's live sessions, the browsers they are signed in on."""
    return (Token.select()
            .where(Token.user == user.id, Token.kind == SESSION,
                   Token.last_used > utcnow() - session_idle)
            .count())


def end_sessions(user: User) -> None:
    """DELETE /auth/sessions/: sign the user out everywhere; their API tokens stay."""
    with write_transaction():
        Token.delete().where(Token.user == user.id, Token.kind == SESSION).execute()
