"""The token web page (dms/web/static) end to end, in Debian's headless Chromium driven by
Playwright, and what is served for it: the page talks only to its own server, security headers,
the /ui/ address, a URL prefix, phones, no console errors in the main flow. The browser and its
sessions: tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import pytest
import requests
from playwright.sync_api import expect

from tests.harness.users import USER_PASSWORD
from tests.harness.webpage import (NEW_PASSWORD, SECRET, Session, log_in_and_open_tokens,
                                   token_id_of)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


def test_the_page_talks_only_to_its_own_server(session, server, alice):
    page = log_in_and_open_tokens(session)
    page.get_by_role("button", name="New Token").click()
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_label("Token secret")).to_have_value(SECRET)
    session.menu("Profile")
    expect(page.locator("#profile-home-id")).to_have_text(alice.home_id)
    session.menu("Log out")
    expect(page.get_by_role("status")).to_have_text("You have been logged out.")

    paths = [url[len(server.url):] for url in session.requests if url.startswith(server.url + "/")]
    assert [url for url in session.requests if not url.startswith(server.url + "/")] == []
    # And the session really went through the API.
    for path in ("/", "/static/app.js", "/static/style.css", "/api/auth/login/", "/api/users/me/",
                 "/api/tokens/?page%5Bsize%5D=100", "/api/tokens/", "/api/auth/logout/"):
        assert path in paths
    assert session.errors == []


@pytest.mark.parametrize("path", ["/", "/ui/", "/static/app.js", "/static/style.css"])
def test_security_headers(server, path):
    response = requests.get(server.url + path, timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CSP
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    media = {"/static/app.js": "text/javascript",
             "/static/style.css": "text/css"}.get(path, "text/html")
    assert response.headers["Content-Type"] == f"{media}; charset=utf-8"


def test_ui_address_sends_the_browser_to_the_page(server):
    response = requests.get(server.url + "/ui/", allow_redirects=False, timeout=10)
    assert (response.status_code, response.headers["Location"]) == (302, server.url + "/")


@pytest.mark.config(url_prefix="/dms")
def test_the_page_works_under_a_url_prefix(browser, server, alice):
    """Behind a proxy at /dms/: the page, its files and its API calls all stay under the prefix."""
    assert server.url.endswith("/dms")
    session = Session(browser, server.url)
    try:
        page = session.open("/")
        session.log_in("alice", USER_PASSWORD)
        expect(page.get_by_role("heading", name="API Tokens")).to_be_visible()
        assert all(url.startswith(server.url + "/") for url in session.requests)
        assert session.errors == []
    finally:
        session.close()


def test_phone_sized_screen_has_no_horizontal_overflow(browser, server, alice):
    alice.post("/api/tokens/", {"data": {"type": "tokens",
                                         "attributes": {"name": "a rather long name for "
                                                                "the scanner in the hallway"}}})
    phone = Session(browser, server.url, viewport={"width": 375, "height": 667},
                    device_scale_factor=2, is_mobile=True, has_touch=True)
    try:
        page = phone.open("/")
        width = "() => document.documentElement.scrollWidth"
        expect(page.get_by_label("Username", exact=True)).to_be_visible()
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
        assert page.evaluate(width) <= 376
        phone.screenshot("10-phone-login.png")

        phone.log_in("alice", USER_PASSWORD)
        expect(page.locator("#tokens-body tr")).to_have_count(3)
        page.get_by_role("button", name="New Token").click()
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_label("Token secret")).to_have_value(SECRET)
        expect(page.locator("#tokens-body tr")).to_have_count(4)
        assert page.evaluate(width) <= 376
        # Each row is still readable: every Revoke button fits on the screen.
        for box in [b.bounding_box() for b in page.get_by_role("button", name="Revoke").all()]:
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
        phone.screenshot("11-phone-tokens.png")

        phone.menu("Profile")
        expect(page.locator("#profile-inbox-id")).to_have_text(alice.inbox_id)
        assert page.evaluate(width) <= 376
        phone.screenshot("12-phone-profile.png")
        assert phone.errors == []
    finally:
        phone.close()


def test_main_flow_has_no_console_errors(session, server, alice):
    """CSP violations, failed scripts and uncaught exceptions all show up as console errors."""
    page = log_in_and_open_tokens(session)
    page.get_by_role("button", name="New Token").click()
    page.get_by_label("Name", exact=True).fill("ci")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_label("Token secret")).to_have_value(SECRET)
    secret = page.get_by_label("Token secret").input_value()
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("status")).not_to_have_text("")
    page.get_by_role("button", name="Done").click()
    session.token_row(token_id_of(secret)).get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(session.token_row(token_id_of(secret))).to_have_count(0)
    session.menu("Profile")
    expect(page.locator("#profile-username")).to_have_text("alice")
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("Repeat new password", exact=True).fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_have_text("Your password has been changed.")
    page.go_back()
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()
    session.menu("Log out")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    assert session.errors == []
    assert page.evaluate("() => sessionStorage.length") == 0
