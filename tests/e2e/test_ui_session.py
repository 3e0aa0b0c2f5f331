"""The web page (dms/web/static) end to end, in Debian's headless Chromium driven by
Playwright: log in (and a wrong password), the session's token in sessionStorage only, the user
menu from the keyboard, profile and password, logout, a session revoked elsewhere. The browser
and its sessions: tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.harness.client import JSON, assert_error
from tests.harness.users import USER_PASSWORD
from tests.harness.webpage import (
    NEW_PASSWORD,
    SECRET,
    Session,
    listed_tokens,
    log_in_and_open_tokens,
    log_in_home,
    status_of,
    token_id_of,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too


def test_wrong_password_shows_the_api_error(session, alice):
    page = session.open("/")
    session.log_in("alice", "not-the-password")
    expect(page.get_by_role("alert")).to_have_text("Unable to log in with provided credentials.")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#usermenu")).to_be_hidden()
    assert session.session_storage() == {}
    assert page.evaluate("() => sessionStorage.length") == 0
    session.screenshot("02-login-error.png")

    # The next try clears the message and gets in.
    session.log_in("alice", USER_PASSWORD)
    expect(page.locator("#usermenu-button")).to_have_text("alice")
    expect(page.locator("#alert")).to_be_empty()


def test_token_lives_in_session_storage_only_and_logout_revokes_it(session, server, alice):
    page = log_in_and_open_tokens(session)
    stored = session.session_storage()
    assert list(stored) == ["dms.token"] and SECRET.match(stored["dms.token"])
    secret = stored["dms.token"]
    assert page.evaluate("() => document.cookie") == ""
    assert session.context.cookies() == []
    assert secret not in page.url
    assert all(secret not in url for url in session.requests)
    assert status_of(server.url, secret) == 200
    # This browser's token is a session: not listed among the API tokens (api.md §22).
    expect(page.locator("#tokens-body tr")).to_have_count(1)
    expect(session.token_row(token_id_of(secret))).to_have_count(0)

    # A reload in the same tab keeps the session.
    page.reload()
    expect(page.locator("#usermenu-button")).to_have_text("alice")
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()

    # The menu opens from the keyboard and closes with Escape.
    page.locator("#usermenu-button").focus()
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("menu")).to_be_visible()
    expect(page.get_by_role("menuitem", name="API Tokens")).to_be_focused()
    session.screenshot("08-user-menu.png")
    page.keyboard.press("Escape")
    expect(page.get_by_role("menu")).to_be_hidden()
    expect(page.locator("#usermenu-button")).to_be_focused()
    expect(page.locator("#usermenu-button")).to_have_attribute("aria-expanded", "false")

    session.menu("Log out")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    assert page.evaluate("() => sessionStorage.length") == 0
    assert status_of(server.url, secret) == 401
    assert token_id_of(secret) not in [t["id"] for t in listed_tokens(alice)]

    # Nothing brings the session back.
    page.reload()
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#usermenu")).to_be_hidden()
    assert session.errors == []


def test_profile_shows_the_folder_ids_and_changes_the_password(session, server, alice, anon):
    page = log_in_and_open_tokens(session)
    # Through the menu with the keyboard only.
    page.locator("#usermenu-button").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("menuitem", name="API Tokens")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("menuitem", name="Profile")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Profile", level=1)).to_be_focused()
    expect(page.get_by_role("menu")).to_be_hidden()

    expect(page.locator("#profile-username")).to_have_text("alice")
    expect(page.locator("#profile-user-id")).to_have_text(alice.user_id)
    expect(page.locator("#profile-home-id")).to_have_text(alice.home_id)
    expect(page.locator("#profile-inbox-id")).to_have_text(alice.inbox_id)
    expect(page.locator("#profile-home-id")).to_have_css("font-family", re.compile("monospace"))
    expect(page.locator("#profile-home-id")).to_have_css("user-select", "all")
    session.screenshot("07-profile.png")

    new_password = page.get_by_label("New password", exact=True)
    repeat = page.get_by_label("Repeat new password", exact=True)
    change = page.get_by_role("button", name="Change password")
    # Checked in the page: nothing is sent.
    new_password.fill(NEW_PASSWORD)
    repeat.fill(NEW_PASSWORD + "x")
    sent_before = len(session.requests)
    change.click()
    expect(page.get_by_role("alert")).to_have_text("The two passwords do not match.")
    assert len(session.requests) == sent_before
    # Checked by the API: its detail is shown.
    new_password.fill("short")
    repeat.fill("short")
    change.click()
    expect(page.get_by_role("alert")).to_have_text("A password needs at least 8 characters.")
    session.screenshot("07-profile-error.png")

    new_password.fill(NEW_PASSWORD)
    repeat.fill(NEW_PASSWORD)
    change.click()
    expect(page.get_by_role("status")).to_have_text("Your password has been changed.")
    expect(page.locator("#alert")).to_be_empty()
    expect(new_password).to_have_value("")
    expect(repeat).to_have_value("")

    assert anon.login("alice", NEW_PASSWORD).user_id == alice.user_id
    response = anon.post("/api/auth/login/", {"username": "alice", "password": USER_PASSWORD},
                         media=JSON)
    assert_error(response, 400, "authentication_failed",
                 "Unable to log in with provided credentials.", media=JSON)


def test_a_session_revoked_elsewhere_goes_back_to_the_login(session, server, alice):
    page = log_in_and_open_tokens(session)
    secret = session.session_storage()["dms.token"]
    # "Sign out everywhere" from a script with one of alice's API tokens.
    assert alice.delete("/api/auth/sessions/").status_code == 204
    session.menu("Profile")
    expect(page.get_by_role("alert")).to_have_text(
        "Your session has ended: Invalid token. Please log in again.")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#usermenu")).to_be_hidden()
    expect(page.locator("#profile-home-id")).to_have_count(0)
    assert session.session_storage() == {}
    assert status_of(server.url, secret) == 401
    assert alice.get("/api/users/me/").status_code == 200  # API tokens stay
    # The only console errors are the browser's own notes about the refused requests (the view's
    # and the refused-files count's, intake-badge.js).
    assert 1 <= len(session.errors) <= 2 and all("401" in error for error in session.errors)

    # Logging in again: back on the view the session ended on.
    session.log_in("alice", USER_PASSWORD)
    expect(page.locator("#profile-home-id")).to_have_text(alice.home_id)


def test_five_logins_and_logouts_leave_no_pile_of_tokens(session, server, alice):
    """api.md §22: each login is a session of its own, revoked by its logout; none is listed
    among the API tokens."""
    page = session.open("/")
    secrets = []
    for _ in range(5):
        session.log_in("alice", USER_PASSWORD)
        expect(page.locator("#usermenu-button")).to_have_text("alice")
        secrets.append(session.session_storage()["dms.token"])
        session.menu("Log out")
        expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    assert len(set(secrets)) == 5  # nothing reused
    assert [status_of(server.url, secret) for secret in secrets] == [401] * 5
    log_in_and_open_tokens(session)
    # Only the fixture's own login token: no pile of the page's.
    expect(page.locator("#tokens-body tr")).to_have_count(1)
    assert [t["attributes"]["name"] for t in listed_tokens(alice)] == ["login"]
    session.screenshot("13-tokens-after-five-logins.png")
    # A request still on its way at a logout (the refused files' count, the event stream) may be
    # answered 401, which the browser notes; nothing else may be.
    assert all("status of 401" in error for error in session.errors), session.errors


def test_a_request_on_its_way_at_the_logout_ends_quietly(session, server, alice):
    """A view's request sent before the logout and answered after it (401: the session it was
    sent with has ended) shows nothing over "You have been logged out." (dms/web/static/api.js).
    The race made deterministic: the profile's request is held until the logout is done."""
    page = log_in_and_open_tokens(session)
    profile_request = re.compile(r".*/api/users/me/$")
    held = []
    # The first one is held; any later one (the login page's) goes through.
    page.route(profile_request, lambda route: route.continue_() if held else held.append(route))
    session.menu("Profile")
    for _ in range(250):  # route handlers run while this thread waits in a Playwright call
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1
    session.menu("Log out")
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    with page.expect_response(profile_request) as answered:
        held[0].continue_()
    assert answered.value.status == 401
    page.evaluate("() => new Promise((done) => setTimeout(done, 200))")  # the page takes it
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    expect(page.locator("#alert")).to_be_empty()
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#profile-home-id")).to_have_count(0)
    assert all("status of 401" in error for error in session.errors), session.errors


def test_a_first_view_answered_after_the_logout_ends_quietly(session, server, alice):
    """The login's first view still on its way at the logout, its answers given while the
    session was valid (200) but arriving after it: nothing shows over "You have been logged
    out." (app.js endSession: the view belongs to the ended session). Made deterministic: the
    view's list of correspondents is fetched at once and handed to the page after the logout."""
    page = session.open("/")
    names_request = re.compile(r".*/api/correspondents/\?.*")
    held = []
    page.route(names_request, lambda route: route.continue_() if held else held.append(route))
    session.log_in("alice", USER_PASSWORD)
    expect(page.locator("#usermenu-button")).to_have_text("alice")
    for _ in range(250):  # route handlers run while this thread waits in a Playwright call
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1
    answer = held[0].fetch()  # answered now, while the session is valid
    assert answer.status == 200
    session.menu("Log out")
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    held[0].fulfill(response=answer)
    page.evaluate("() => new Promise((done) => setTimeout(done, 200))")  # the page takes it
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")
    expect(page.locator("#alert")).to_be_empty()
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#folder-title")).to_have_count(0)
    assert session.errors == []


def test_profile_counts_the_browsers_signed_in_and_signs_out_everywhere(browser, session, server,
                                                                        alice):
    other = Session(browser, server.url)
    try:
        other.open("/")
        other.log_in("alice", USER_PASSWORD)
        expect(other.page.locator("#usermenu-button")).to_have_text("alice")
        page = log_in_home(session)
        session.menu("Profile")
        expect(page.locator("#sessions-count")).to_contain_text(
            "You are signed in on 2 browsers, this one among them.")
        page.get_by_role("button", name="Sign out everywhere").click()
        dialog = page.get_by_role("dialog", name="Sign out everywhere?")
        expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
        session.screenshot("16-sign-out-everywhere.png", full_page=False)
        dialog.get_by_role("button", name="Sign out everywhere").click()
        expect(page.get_by_role("status")).to_have_text("You signed out everywhere.")
        expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
        # The other browser's next request finds its session gone.
        other.menu("Profile")
        expect(other.page.get_by_role("heading", name="Log in to dms")).to_be_visible()
        assert alice.get("/api/auth/sessions/").json() == {"count": 0}
        assert alice.get("/api/users/me/").status_code == 200  # API tokens keep working
        assert session.errors == []
    finally:
        other.close()
