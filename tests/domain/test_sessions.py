"""Sessions (api.md §22, "Sessions"): the web page's login is a token of kind `session`, which
expires after DMS_SESSION_IDLE_DAYS without use, is recorded as used at most once an hour, is
not listed among the API tokens, and leaves nothing behind once logged out or expired.

Time is moved by passing `now` to the domain's functions (the fast tier) or by ageing a row's
`last_used` (through the API, whose clock is the real one)."""

from __future__ import annotations

import datetime as dt

import pytest

from dms.db.models import Token, utcnow
from dms.domain import accounts, credentials, sessions
from tests.harness.client import JSON, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.domaintier import new_user
from tests.harness.users import USER_PASSWORD

ADDRESS = "192.0.2.1"
DAY, HOUR = dt.timedelta(days=1), dt.timedelta(hours=1)
INVALID_TOKEN = ("authentication_failed", "Invalid token.")


def kinds_of(user_id: str) -> list[tuple[str, str]]:
    """The user's tokens as (kind, name), sessions first, each kind oldest first."""
    return [(t.kind, t.name) for t in Token.select().where(Token.user == user_id)
            .order_by(Token.kind.desc(), Token.created)]


def last_used(secret: str) -> dt.datetime | None:
    return Token.get(Token.digest == credentials.token_digest(secret)).last_used


def test_a_session_expires_after_the_idle_days_without_use_and_an_api_token_does_not(services):
    alice = new_user("alice")
    session = sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle)
    script = accounts.login("alice", USER_PASSWORD, ADDRESS, services.throttle)
    assert kinds_of(alice.id) == [("session", "web page"), ("api", "login")]
    started = last_used(session)
    assert started is not None and abs(utcnow() - started) < dt.timedelta(minutes=1)
    assert last_used(script) is None  # an API token's use is never written

    # Used on day 13: alive, and its idle time starts again then.
    token = sessions.find_token(session, started + 13 * DAY)
    assert token is not None and token.user.id == alice.id and token.kind == "session"
    assert last_used(session) == started + 13 * DAY
    # 14 days after that use, less a second: alive; at 14 days: gone, for the event stream too.
    assert sessions.find_token(session, started + 27 * DAY - dt.timedelta(seconds=1)) is not None
    used = last_used(session)
    assert used == started + 27 * DAY - dt.timedelta(seconds=1)
    assert sessions.token_is_live(credentials.token_digest(session), used + 14 * DAY
                                  - dt.timedelta(seconds=1))
    assert sessions.find_token(session, used + 14 * DAY) is None
    assert not sessions.token_is_live(credentials.token_digest(session), used + 14 * DAY)
    # A script's login token lasts until revoked, however long unused.
    assert sessions.find_token(script, started + 3650 * DAY) is not None
    # The idle time is the caller's setting.
    assert sessions.find_token(session, used + 2 * DAY, session_idle=3 * DAY) is not None
    assert sessions.find_token(session, used + 5 * DAY, session_idle=3 * DAY) is None


def test_a_sessions_use_is_written_at_most_once_an_hour(services, config):
    new_user("alice")
    session = sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle)
    started = last_used(session)
    for minutes in (1, 30, 59):  # requests within the hour write nothing
        before = snapshot(config)
        assert sessions.find_token(session, started + dt.timedelta(minutes=minutes)) is not None
        assert snapshot(config) == before
    assert sessions.find_token(session, started + HOUR) is not None
    assert last_used(session) == started + HOUR
    # Another node that read the row before that write writes nothing over it (the update is
    # conditional on the time it read being stale).
    stale = Token.get(Token.digest == credentials.token_digest(session))
    stale.last_used = started
    sessions.record_use(stale, started + HOUR + dt.timedelta(minutes=5))
    assert last_used(session) == started + HOUR


def test_logging_in_removes_every_expired_session_and_reuses_none(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    old_alice = sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle)
    old_bob = sessions.start("bob", USER_PASSWORD, ADDRESS, services.throttle)
    recent_bob = sessions.start("bob", USER_PASSWORD, ADDRESS, services.throttle)
    script = accounts.login("bob", USER_PASSWORD, ADDRESS, services.throttle)
    for secret, days in ((old_alice, 15), (old_bob, 14), (recent_bob, 13)):
        execute_sql(config, "UPDATE token SET last_used = ? WHERE digest = ?",
                    Token.last_used.db_value(utcnow() - days * DAY),
                    credentials.token_digest(secret))
    execute_sql(config, "UPDATE token SET created = ? WHERE digest = ?",
                Token.created.db_value(utcnow() - 400 * DAY), credentials.token_digest(script))

    new = sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle)
    assert new not in (old_alice, old_bob, recent_bob)
    assert kinds_of(alice.id) == [("session", "web page")]
    assert kinds_of(bob.id) == [("session", "web page"), ("api", "login")]
    assert [sessions.find_token(s, utcnow()) is not None
            for s in (new, old_alice, old_bob, recent_bob, script)] == [
        True, False, False, True, True]


def test_past_the_token_limit_a_login_makes_room_from_the_oldest_sessions_only(services):
    alice = new_user("alice")
    script = accounts.login("alice", USER_PASSWORD, ADDRESS, services.throttle, max_tokens=3)
    first, second = (sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle,
                                    max_tokens=3) for _ in range(2))
    third = sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle, max_tokens=3)
    assert [sessions.find_token(s, utcnow()) is not None
            for s in (script, first, second, third)] == [True, False, True, True]
    assert kinds_of(alice.id) == [("session", "web page")] * 2 + [("api", "login")]


def test_sign_out_everywhere_ends_the_sessions_and_keeps_the_api_tokens(services):
    alice = new_user("alice")
    both = [sessions.start("alice", USER_PASSWORD, ADDRESS, services.throttle) for _ in range(2)]
    token, script = credentials.create_token(alice, 24, "scanner", 1000)
    assert sessions.session_count(alice) == 2
    sessions.end_sessions(alice)
    assert sessions.session_count(alice) == 0
    assert [sessions.find_token(s, utcnow()) for s in both] == [None, None]
    assert sessions.find_token(script, utcnow()).digest == token.digest


# -- through the API ------------------------------------------------------------------------------
def page_login(anon, username: str) -> dict:
    response = anon.post("/api/auth/login/", {"username": username, "password": USER_PASSWORD,
                                              "session": True}, media=JSON)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_pages_login_is_a_session_not_listed_among_the_api_tokens(alice, anon):
    body = page_login(anon, "alice")
    assert list(body) == ["token", "expiry", "kind"]
    assert body["expiry"] is None and body["kind"] == "session"
    page = anon.as_anonymous()
    page.token = body["token"]
    assert page.get("/api/users/me/").json()["data"]["id"] == alice.user_id

    created = page.post("/api/tokens/", {"data": {"type": "tokens",
                                                  "attributes": {"name": "scanner"}}})
    assert created.status_code == 201, created.text
    listed = page.get("/api/tokens/").json()
    # alice's fixture logged in as a script does (an API token named "login"), then "scanner".
    assert [(t["id"], t["attributes"]["name"]) for t in listed["data"]] == [
        (created.json()["data"]["id"], "scanner"), (credentials.token_digest(alice.token)[:16],
                                                    "login")]
    assert listed["meta"]["pagination"]["count"] == 2
    # The session cannot be revoked as an API token (it is not one); it logs out.
    session_id = credentials.token_digest(body["token"])[:16]
    assert_error(page.delete(f"/api/tokens/{session_id}/"), 404, "not_found", "Not found.")
    assert page.post("/api/auth/logout/").status_code == 204
    assert_error(page.get("/api/users/me/"), 401, *INVALID_TOKEN)


def test_a_session_flag_that_is_not_true_or_false_is_refused_and_changes_nothing(alice, anon,
                                                                               config):
    before = snapshot(config)
    for flag in ("yes", 1, None, []):
        response = anon.post("/api/auth/login/", {"username": "alice", "password": USER_PASSWORD,
                                                  "session": flag}, media=JSON)
        assert_error(response, 400, "invalid", "session must be true or false.",
                     pointer="/session", media=JSON)
    assert snapshot(config) == before


def test_five_logins_and_logouts_leave_no_pile(alice, anon, config):
    before = query_sql(config, "SELECT kind, name FROM token ORDER BY kind, name")
    for _ in range(5):
        page = anon.as_anonymous()
        page.token = page_login(anon, "alice")["token"]
        assert page.get("/api/users/me/").status_code == 200
        assert page.post("/api/auth/logout/").status_code == 204
    assert query_sql(config, "SELECT kind, name FROM token ORDER BY kind, name") == before
    assert [t["attributes"]["name"] for t in alice.get("/api/tokens/").json()["data"]] == ["login"]


@pytest.mark.config(session_idle_days=2)
def test_a_session_idle_for_the_setting_is_refused_through_the_api(alice, anon, config):
    page = anon.as_anonymous()
    page.token = page_login(anon, "alice")["token"]
    digest = credentials.token_digest(page.token)
    execute_sql(config, "UPDATE token SET last_used = ? WHERE digest = ?",
                Token.last_used.db_value(utcnow() - 2 * DAY + dt.timedelta(minutes=5)), digest)
    assert page.get("/api/users/me/").status_code == 200  # used: its idle time starts again
    (used,) = query_sql(config, "SELECT last_used FROM token WHERE digest = ?", digest)[0]
    assert abs(Token.last_used.python_value(used) - utcnow()) < dt.timedelta(minutes=1)
    execute_sql(config, "UPDATE token SET last_used = ? WHERE digest = ?",
                Token.last_used.db_value(utcnow() - 2 * DAY), digest)
    assert_error(page.get("/api/users/me/"), 401, *INVALID_TOKEN)
    # The next login removes it.
    page_login(anon, "alice")
    assert query_sql(config, "SELECT count(*) FROM token WHERE digest = ?", digest) == [(0,)]


def test_the_sessions_are_counted_and_ended_everywhere_through_the_api(alice, bob, anon):
    pages = []
    for _ in range(2):
        page = anon.as_anonymous()
        page.token = page_login(anon, "alice")["token"]
        pages.append(page)
    bobs = anon.as_anonymous()
    bobs.token = page_login(anon, "bob")["token"]
    response = pages[0].get("/api/auth/sessions/")
    assert response.status_code == 200 and response.headers["Content-Type"] == JSON
    assert response.json() == {"count": 2}
    assert alice.get("/api/auth/sessions/").json() == {"count": 2}  # from an API token too
    response = alice.delete("/api/auth/sessions/")
    assert response.status_code == 204 and response.content == b""
    for page in pages:
        assert_error(page.get("/api/users/me/"), 401, *INVALID_TOKEN)
    assert alice.get("/api/auth/sessions/").json() == {"count": 0}
    assert bobs.get("/api/auth/sessions/").json() == {"count": 1}  # others' stay
    assert_error(anon.get("/api/auth/sessions/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.", media=JSON)
