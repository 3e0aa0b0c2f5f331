"""Login, logout, token authentication and login throttling
(api.md, "Authentication and tokens").

The rules (refused logins with their field, tokens refused once expired or their user inactive,
revoking every token of a user, the throttle's window and known addresses) are tested on the fast
tier, by the domain's functions (`services`, `root`); through the API, what a client sees: the
login's answer, statuses, media types and pointers, the Authorization header, logout, and a
throttled login's 429 with Retry-After. The throttle's counts by client address go through
waitress' X-Forwarded-For handling on a real socket."""

from __future__ import annotations

import re
from functools import partial

import pytest

from dms.db.models import utcnow
from dms.domain import accounts, credentials, sessions
from dms.domain.credentials import LoginThrottle, address_key, max_failures
from tests.harness.client import JSON, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.domaintier import assert_refused, new_user
from tests.harness.users import ADMIN_PASSWORD, USER_PASSWORD

LOGIN_FAILED = ("authentication_failed", "Unable to log in with provided credentials.")
NO_CREDENTIALS = ("not_authenticated", "Authentication credentials were not provided.")
# Where the fast tier's logins come from; there, the root's password is new_user's,
# USER_PASSWORD.
ADDRESS = "192.0.2.1"


def login(anon, username, password, media=JSON):
    return anon.post("/api/auth/login/", {"username": username, "password": password}, media=media)


def token_user(secret: str) -> str | None:
    """The id of the user whose token this is, if a request with it is let in."""
    token = sessions.find_token(secret, utcnow())
    return token.user.id if token is not None else None


def test_login_returns_a_token_and_null_expiry(anon):
    response = login(anon, "admin", ADMIN_PASSWORD)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    body = response.json()
    assert list(body) == ["token", "expiry", "kind"] and body["expiry"] is None
    assert body["kind"] == "api"  # a script's login; the page asks for a session (§22)
    assert re.fullmatch(r"[0-9a-f]{64}", body["token"])


def test_login_accepts_the_jsonapi_media_type_and_the_bare_path(anon):
    response = anon.post("/auth/login", {"username": "admin", "password": ADMIN_PASSWORD},
                         media=VND)
    assert response.status_code == 200


def test_wrong_credentials_are_refused_and_issue_no_token(root, services, config):
    for username, password in [("admin", "wrong-password"), ("nobody", USER_PASSWORD),
                               ("ADMIN", USER_PASSWORD)]:
        assert_refused(config, partial(accounts.login, username, password, ADDRESS,
                                       services.throttle), *LOGIN_FAILED, None)


def test_missing_or_blank_login_fields_are_refused_with_their_field(root, services, config):
    for body, code, detail, field in [
        ({"password": "x"}, "required", "A username is required.", "username"),
        ({"username": "admin"}, "required", "A password is required.", "password"),
        ({"username": "", "password": "x"}, "blank", "A username may not be blank.", "username"),
        ({"username": "admin", "password": ""}, "blank", "A password may not be blank.",
         "password"),
        ({"username": 7, "password": "x"}, "invalid", "A username must be text.", "username"),
    ]:
        assert_refused(config, partial(accounts.login, body.get("username"), body.get("password"),
                                       ADDRESS, services.throttle), code, detail, field)


def test_a_refused_login_is_400_with_a_pointer_and_issues_no_token(anon, config):
    before = snapshot(config)
    assert_error(login(anon, "admin", "wrong-password"), 400, *LOGIN_FAILED, media=JSON)
    assert_error(anon.post("/api/auth/login/", {"username": "admin"}, media=JSON), 400,
                 "required", "A password is required.", "/password", media=JSON)
    assert snapshot(config) == before


def test_an_inactive_user_cannot_log_in_and_loses_token_access(root, services, config):
    alice = new_user("alice")
    secret = accounts.login("alice", USER_PASSWORD, ADDRESS, services.throttle)
    accounts.update_user_by(root, alice.id, {"is_active": False}, None)
    assert_refused(config, lambda: accounts.login("alice", USER_PASSWORD, ADDRESS,
                                                  services.throttle), *LOGIN_FAILED, None)
    assert token_user(secret) is None


def test_token_scheme_is_case_insensitive_and_other_schemes_are_refused(admin, anon):
    me = anon.get("/api/users/me/", headers={"Authorization": f"token {admin.token}"})
    assert me.status_code == 200
    for header in (f"Bearer {admin.token}", "Token", "Token ", admin.token):
        response = anon.get("/api/users/me/", headers={"Authorization": header})
        assert_error(response, 401, *NO_CREDENTIALS)
        assert response.headers["WWW-Authenticate"] == "Token"


def test_an_unknown_token_is_401_authentication_failed(anon):
    response = anon.get("/api/users/me/", headers={"Authorization": "Token " + "0" * 64})
    assert_error(response, 401, "authentication_failed", "Invalid token.")
    assert response.headers["WWW-Authenticate"] == "Token"


def test_an_expired_token_is_refused(services, config):
    alice = new_user("alice")
    _, other = credentials.issue_token(alice, expiry_hours=None, name="login")
    token, secret = credentials.create_token(alice, 1, None, 1000)
    assert token_user(secret) == alice.id
    execute_sql(config, "UPDATE token SET expiry = '2000-01-01 00:00:00.000000' "
                        "WHERE token_key = ?", token.token_key)
    assert token_user(secret) is None
    assert token_user(other) == alice.id


def test_logout_revokes_the_calling_token_and_logoutall_every_one(anon):
    first, second, third = (anon.login("admin", ADMIN_PASSWORD) for _ in range(3))
    response = first.post("/api/auth/logout/")
    assert response.status_code == 204 and response.content == b""
    assert_error(first.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    assert second.get("/api/users/me/").status_code == 200
    response = second.post("/api/auth/logoutall/")
    assert response.status_code == 204 and response.content == b""
    for client in (second, third):
        assert_error(client.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")


def test_logoutall_revokes_every_token_of_the_user_only(root, services):
    alice = new_user("alice")
    secrets = [accounts.login("admin", USER_PASSWORD, ADDRESS, services.throttle)
               for _ in range(2)]
    alices = accounts.login("alice", USER_PASSWORD, ADDRESS, services.throttle)
    credentials.revoke_all(root)
    assert [token_user(secret) for secret in secrets] == [None, None]
    assert token_user(alices) == alice.id


def test_logout_needs_a_token(anon):
    assert_error(anon.post("/api/auth/logout/"), 401, *NO_CREDENTIALS, media=JSON)
    assert_error(anon.post("/api/auth/logoutall/"), 401, *NO_CREDENTIALS, media=JSON)


def test_repeated_failures_for_one_username_are_throttled(root, services, config):
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0], max_failures=max_failures(config))
    for _ in range(LoginThrottle.MAX_FAILURES["addr+user"]):
        assert_refused(config, lambda: accounts.login("admin", "wrong-password", ADDRESS,
                                                      throttle), *LOGIN_FAILED, None)
    # Even the right password is refused while the account is throttled, until the oldest
    # failure leaves the window.
    now[0] += 100
    assert_refused(config, lambda: accounts.login("admin", USER_PASSWORD, ADDRESS, throttle),
                   "throttled", "Too many failed logins. Try again in 200 seconds.", None)
    now[0] += 200
    assert token_user(accounts.login("admin", USER_PASSWORD, ADDRESS, throttle)) == root.id


def test_a_throttled_login_is_429_with_retry_after(anon, config):
    for _ in range(LoginThrottle.MAX_FAILURES["addr+user"]):
        assert login(anon, "admin", "wrong-password").status_code == 400
    before = snapshot(config)
    # Even the right password is refused while the account is throttled.
    response = login(anon, "admin", ADMIN_PASSWORD)
    assert response.status_code == 429
    assert response.headers["Content-Type"] == JSON
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= LoginThrottle.WINDOW
    assert response.json() == {"errors": [{
        "detail": f"Too many failed logins. Try again in {retry_after} seconds.",
        "status": "429", "code": "throttled"}]}
    assert snapshot(config) == before


def test_throttle_window_slides_and_success_resets(services):
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    keys = [("addr+user", "10.0.0.9", "admin")]
    for _ in range(LoginThrottle.MAX_FAILURES["addr+user"]):
        assert throttle.retry_after(keys) is None
        throttle.record_failure(keys)
    assert throttle.retry_after(keys) == int(LoginThrottle.WINDOW)
    now[0] += 100
    assert throttle.retry_after(keys) == int(LoginThrottle.WINDOW) - 100
    now[0] += LoginThrottle.WINDOW
    assert throttle.retry_after(keys) is None
    throttle.record_failure(keys)
    throttle.reset(keys)
    assert throttle.retry_after(keys) is None
    assert throttle.retry_after([("addr", "10.0.0.1")]) is None


# Logins from several client addresses: the proxy in front (here the test itself, on 127.0.0.1)
# says who the client is, in X-Forwarded-For.
FROM_PROXY = dict(trusted_proxy="127.0.0.1")


def login_from(client, address: str, username: str, password: str):
    return client.post("/api/auth/login/", {"username": username, "password": password},
                       media=JSON, headers={"X-Forwarded-For": address})


@pytest.mark.config(**FROM_PROXY)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_failures_from_one_address_do_not_lock_the_account_for_others(anon, alice):
    """Regression: the lock was per username, so anyone could keep any account locked out."""
    for _ in range(5):
        assert login_from(anon, "203.0.113.7", "alice", "wrong-password").status_code == 400
    refused = login_from(anon, "203.0.113.7", "alice", USER_PASSWORD)
    assert refused.status_code == 429, refused.text
    assert login_from(anon, "198.51.100.2", "alice", USER_PASSWORD).status_code == 200
    # The attacker's address may still log in as someone else.
    assert login_from(anon, "203.0.113.7", "admin", ADMIN_PASSWORD).status_code == 200


@pytest.mark.config(**FROM_PROXY)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_one_address_trying_many_usernames_is_stopped(anon):
    for number in range(50):
        assert login_from(anon, "203.0.113.8", f"someone{number}", "guess").status_code == 400
    response = login_from(anon, "203.0.113.8", "admin", ADMIN_PASSWORD)
    assert response.status_code == 429, response.text
    assert login_from(anon, "203.0.113.9", "admin", ADMIN_PASSWORD).status_code == 200


@pytest.mark.config(**FROM_PROXY)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_many_addresses_guessing_one_account_meet_a_higher_ceiling(anon, alice, config):
    for number in range(100):
        address = f"198.18.{number // 5}.{number % 5 + 1}"  # 5 tries from each of 20 addresses
        assert login_from(anon, address, "alice", "wrong-password").status_code == 400
    before = snapshot(config)
    response = login_from(anon, "192.0.2.200", "alice", USER_PASSWORD)
    assert response.status_code == 429, response.text
    assert snapshot(config) == before


@pytest.mark.config(**FROM_PROXY, login_failures_per_address_user=2,
                    login_failures_per_address=4, login_failures_per_user=6)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_the_throttles_numbers_are_settings(anon, alice, config):
    for _ in range(2):
        assert login_from(anon, "203.0.113.7", "alice", "wrong-password").status_code == 400
    assert login_from(anon, "203.0.113.7", "alice", USER_PASSWORD).status_code == 429
    for number in range(4):
        assert login_from(anon, "203.0.113.8", f"someone{number}", "guess").status_code == 400
    assert login_from(anon, "203.0.113.8", "admin", ADMIN_PASSWORD).status_code == 429
    for address in ("198.18.0.1", "198.18.0.2"):  # 6 failures for alice: 3 addresses
        for _ in range(2):
            assert login_from(anon, address, "alice", "wrong-password").status_code == 400
    before = snapshot(config)
    assert login_from(anon, "192.0.2.200", "alice", USER_PASSWORD).status_code == 429
    assert snapshot(config) == before
    assert login_from(anon, "192.0.2.200", "admin", ADMIN_PASSWORD).status_code == 200


# -- the owner against a guesser on many addresses --------------------------------------------

@pytest.mark.parametrize("address, key", [
    ("198.51.100.7", "198.51.100.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.7", "198.51.100.7"),  # a dual-stack socket's IPv4 client
    ("::1", "::/64"),
    ("fe80::1%eth0", "fe80::/64"),
    ("", ""),
    ("not an address", "not an address"),
])
def test_addresses_are_counted_by_their_v4_address_or_v6_64(address, key):
    assert address_key(address) == key


def known_address_rows(config, user_id: str) -> list[tuple]:
    return query_sql(config, "SELECT key FROM login_address WHERE user_id = ? ORDER BY key",
                     user_id)


@pytest.mark.config(**FROM_PROXY)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_the_owner_logs_in_from_a_known_address_while_many_addresses_lock_the_username(
        anon, alice, config):
    """100 failures from 20 addresses locked the owner out everywhere, the right password refused;
    from where they logged in before, they are let in."""
    assert login_from(anon, "192.0.2.10", "alice", USER_PASSWORD).status_code == 200
    assert login_from(anon, "2001:db8:aaaa:1::10", "alice", USER_PASSWORD).status_code == 200
    for number in range(100):
        address = f"198.18.{number // 5}.{number % 5 + 1}"  # 5 tries from each of 20 addresses
        assert login_from(anon, address, "alice", "wrong-password").status_code == 400
    before = snapshot(config)
    refused = login_from(anon, "192.0.2.200", "alice", USER_PASSWORD)  # a new address
    assert (refused.status_code, refused.json()["errors"][0]["code"]) == (429, "throttled")
    assert login_from(anon, "2001:db8:aaaa:2::10", "alice", USER_PASSWORD).status_code == 429
    assert snapshot(config) == before
    assert login_from(anon, "192.0.2.10", "alice", USER_PASSWORD).status_code == 200
    # The known network is the /64: another address in it is let in too.
    assert login_from(anon, "2001:db8:aaaa:1::beef", "alice", USER_PASSWORD).status_code == 200
    # Someone else guessing from the owner's network is still stopped by that address's count.
    for _ in range(5):
        assert login_from(anon, "192.0.2.10", "alice", "wrong-password").status_code == 400
    assert login_from(anon, "192.0.2.10", "alice", USER_PASSWORD).status_code == 429
    # The owner's logins did not clear the username's count: new addresses stay refused.
    assert login_from(anon, "192.0.2.201", "alice", USER_PASSWORD).status_code == 429
    # Other users are not touched; the fixture's login (127.0.0.1) made a third known address.
    assert login_from(anon, "192.0.2.200", "admin", ADMIN_PASSWORD).status_code == 200
    keys = [key for (key,) in known_address_rows(config, alice.user_id)]
    assert len(keys) == 3 and all(re.fullmatch(r"[0-9a-f]{64}", key) for key in keys)
    stored = repr(query_sql(config, "SELECT * FROM login_address"))
    assert not any(part in stored for part in ("192.0.2", "2001:db8", "127.0.0.1"))


@pytest.mark.config(**FROM_PROXY)
@pytest.mark.socket  # X-Forwarded-For read by waitress' proxy handling
def test_an_ipv6_guesser_cycling_addresses_in_one_64_is_stopped(anon, alice):
    """An IPv6 client has 2^64 addresses in its /64; each was a new address."""
    for host in range(1, 6):
        assert login_from(anon, f"2001:db8:bad:1::{host}", "alice",
                          "wrong-password").status_code == 400
    assert login_from(anon, "2001:db8:bad:1::6", "alice", USER_PASSWORD).status_code == 429
    assert login_from(anon, "2001:db8:bad:2::1", "alice", USER_PASSWORD).status_code == 200
    for number in range(50):  # spraying usernames, a new address for each
        assert login_from(anon, f"2001:db8:bad:3::{number + 1:x}", f"someone{number}",
                          "guess").status_code == 400
    assert login_from(anon, "2001:db8:bad:3::ffff", "admin", ADMIN_PASSWORD).status_code == 429
    # An IPv4 client seen through a dual-stack socket is its IPv4 address.
    for _ in range(5):
        assert login_from(anon, "[::ffff:203.0.113.50]", "alice",
                          "wrong-password").status_code == 400
    assert login_from(anon, "203.0.113.50", "alice", USER_PASSWORD).status_code == 429


def test_known_addresses_are_bounded_and_forgotten(root, services, config):
    alice, bob = new_user("alice"), new_user("bob")
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    for number in range(LoginThrottle.KNOWN_ADDRESSES + 1):
        throttle.remember(alice.id, f"10.0.0.{number}")
        now[0] += 1
    # The least recently used one went.
    assert [throttle.is_known(alice.id, f"10.0.0.{number}")
            for number in range(LoginThrottle.KNOWN_ADDRESSES + 1)] == \
        [False] + [True] * LoginThrottle.KNOWN_ADDRESSES
    assert len(known_address_rows(config, alice.id)) == LoginThrottle.KNOWN_ADDRESSES
    assert not throttle.is_known(bob.id, "10.0.0.1")  # known to alice, not to bob
    throttle.remember(alice.id, "10.0.0.1")  # used again: its time starts over
    now[0] += LoginThrottle.KNOWN_ADDRESS_SECONDS - 0.5
    assert throttle.is_known(alice.id, "10.0.0.1")
    assert not throttle.is_known(alice.id, "10.0.0.2")  # stale: forgotten
    throttle.remember(alice.id, "10.0.0.99")  # and the stale rows go
    assert len(known_address_rows(config, alice.id)) == 2
    # A deleted user's addresses go with them.
    accounts.delete_user_by(services, root, alice.id)
    assert known_address_rows(config, alice.id) == []
