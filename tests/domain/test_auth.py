"""Login, logout, token authentication and login throttling
(api.md, "Authentication and tokens")."""

from __future__ import annotations

import re

import pytest

from dms.domain.credentials import LoginThrottle, address_key
from tests.harness.client import JSON, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.users import ADMIN_PASSWORD, USER_PASSWORD

LOGIN_FAILED = ("authentication_failed", "Unable to log in with provided credentials.")
NO_CREDENTIALS = ("not_authenticated", "Authentication credentials were not provided.")


def login(anon, username, password, media=JSON):
    return anon.post("/api/auth/login/", {"username": username, "password": password}, media=media)


def test_login_returns_a_token_and_null_expiry(anon):
    response = login(anon, "admin", ADMIN_PASSWORD)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    body = response.json()
    assert list(body) == ["token", "expiry"] and body["expiry"] is None
    assert re.fullmatch(r"[0-9a-f]{64}", body["token"])


def test_login_accepts_the_jsonapi_media_type_and_the_bare_path(anon):
    response = anon.post("/auth/login", {"username": "admin", "password": ADMIN_PASSWORD},
                         media=VND)
    assert response.status_code == 200


@pytest.mark.parametrize("username, password", [
    ("admin", "wrong-password"), ("nobody", ADMIN_PASSWORD), ("ADMIN", ADMIN_PASSWORD)])
def test_wrong_credentials_are_400_and_issue_no_token(anon, config, username, password):
    before = snapshot(config)
    assert_error(login(anon, username, password), 400, *LOGIN_FAILED, media=JSON)
    assert snapshot(config) == before


@pytest.mark.parametrize("body, code, detail, pointer", [
    ({"password": "x"}, "required", "A username is required.", "/username"),
    ({"username": "admin"}, "required", "A password is required.", "/password"),
    ({"username": "", "password": "x"}, "blank", "A username may not be blank.", "/username"),
    ({"username": "admin", "password": ""}, "blank", "A password may not be blank.", "/password"),
    ({"username": 7, "password": "x"}, "invalid", "A username must be text.", "/username"),
])
def test_missing_or_blank_login_fields_point_at_the_field(anon, body, code, detail, pointer):
    assert_error(anon.post("/api/auth/login/", body, media=JSON), 400, code, detail, pointer,
                 media=JSON)


def test_an_inactive_user_cannot_log_in_and_loses_token_access(admin, alice, anon):
    body = {"data": {"type": "users", "attributes": {"is_active": False}}}
    assert admin.patch(f"/api/users/{alice.user_id}/", body).status_code == 200
    assert_error(login(anon, "alice", USER_PASSWORD), 400, *LOGIN_FAILED, media=JSON)
    assert_error(alice.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")


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


def test_an_expired_token_is_refused(alice, config):
    created = alice.post("/api/tokens/", {"data": {"type": "tokens",
                                                   "attributes": {"expiry_hours": 1}}})
    token = created.json()["data"]
    execute_sql(config, "UPDATE token SET expiry = '2000-01-01 00:00:00.000000' "
                                "WHERE token_key = ?", token["id"])
    expired = alice.as_anonymous()
    expired.token = token["attributes"]["token"]
    assert_error(expired.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    assert alice.get("/api/users/me/").status_code == 200


def test_logout_revokes_only_the_calling_token(anon):
    first, second = anon.login("admin", ADMIN_PASSWORD), anon.login("admin", ADMIN_PASSWORD)
    response = first.post("/api/auth/logout/")
    assert response.status_code == 204 and response.content == b""
    assert_error(first.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    assert second.get("/api/users/me/").status_code == 200


def test_logoutall_revokes_every_token_of_the_user_only(anon, alice):
    first, second = anon.login("admin", ADMIN_PASSWORD), anon.login("admin", ADMIN_PASSWORD)
    assert first.post("/api/auth/logoutall/").status_code == 204
    for client in (first, second):
        assert_error(client.get("/api/users/me/"), 401, "authentication_failed", "Invalid token.")
    assert alice.get("/api/users/me/").status_code == 200


def test_logout_needs_a_token(anon):
    assert_error(anon.post("/api/auth/logout/"), 401, *NO_CREDENTIALS, media=JSON)
    assert_error(anon.post("/api/auth/logoutall/"), 401, *NO_CREDENTIALS, media=JSON)


def test_repeated_failures_for_one_username_are_throttled(anon, config):
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


def test_throttle_window_slides_and_success_resets(server):
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


def test_known_addresses_are_bounded_and_forgotten(server, config, admin, alice, bob):
    execute_sql(config, "DELETE FROM login_address")  # the fixtures' logins
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    for number in range(LoginThrottle.KNOWN_ADDRESSES + 1):
        throttle.remember(alice.user_id, f"10.0.0.{number}")
        now[0] += 1
    # The least recently used one went.
    assert [throttle.is_known(alice.user_id, f"10.0.0.{number}")
            for number in range(LoginThrottle.KNOWN_ADDRESSES + 1)] == \
        [False] + [True] * LoginThrottle.KNOWN_ADDRESSES
    assert len(known_address_rows(config, alice.user_id)) == LoginThrottle.KNOWN_ADDRESSES
    assert not throttle.is_known(bob.user_id, "10.0.0.1")  # known to alice, not to bob
    throttle.remember(alice.user_id, "10.0.0.1")  # used again: its time starts over
    now[0] += LoginThrottle.KNOWN_ADDRESS_SECONDS - 0.5
    assert throttle.is_known(alice.user_id, "10.0.0.1")
    assert not throttle.is_known(alice.user_id, "10.0.0.2")  # stale: forgotten
    throttle.remember(alice.user_id, "10.0.0.99")  # and the stale rows go
    assert len(known_address_rows(config, alice.user_id)) == 2
    # A deleted user's addresses go with them.
    assert admin.delete(f"/api/users/{alice.user_id}/").status_code == 204
    assert known_address_rows(config, alice.user_id) == []
