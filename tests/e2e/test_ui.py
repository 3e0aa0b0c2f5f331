"""The token web page (dms/web/static) end to end, in Debian's headless Chromium driven by
Playwright: log in, create / use / revoke a token, profile and password, logout, headers, phones,
no console errors. Screenshots of every view go to tests/screenshots/ (git-ignored) for a human to
look at."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, expect, sync_playwright

from tests.harness.client import JSON, Client, assert_error
from tests.harness.database import execute_sql
from tests.harness.users import USER_PASSWORD

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

SCREENSHOTS = Path(__file__).parents[1] / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
DATETIME = "%Y-%m-%dT%H:%M:%S.%fZ"
SECRET = re.compile(r"^[0-9a-f]{64}$")
NEW_PASSWORD = "correct-horse-42"


@pytest.fixture(scope="module")
def browser():
    # Debian's chromium, never a downloaded one; the flags keep it off the network.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Session:
    """A fresh browser context and page, with every request, console error and page error seen."""

    def __init__(self, browser, base_url: str, **context_options):
        self.base_url = base_url
        self.context = browser.new_context(**{"viewport": {"width": 1280, "height": 800},
                                              **context_options})
        self.context.set_default_timeout(10_000)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda message: message.type == "error"
                     and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def open(self, path: str = "/") -> Page:
        self.page.goto(self.base_url + path)
        return self.page

    def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / name), full_page=True)

    def session_storage(self) -> dict:
        return self.page.evaluate("() => Object.fromEntries(Object.entries(sessionStorage))")

    def log_in(self, username: str, password: str) -> None:
        page = self.page
        page.get_by_label("Username", exact=True).fill(username)
        page.get_by_label("Password", exact=True).fill(password)
        page.get_by_role("button", name="Log in").click()

    def menu(self, item: str) -> None:
        """Opens the user menu (the button that shows the username) and picks an item."""
        page = self.page
        page.locator("#usermenu-button").click()
        page.get_by_role("menuitem", name=item).click()

    def token_row(self, token_id: str):
        return self.page.locator(f'#tokens-body tr[data-token-id="{token_id}"]')

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def session(browser, server):
    session = Session(browser, server.url)
    yield session
    session.close()


def token_id_of(secret: str) -> str:
    return hashlib.sha512(secret.encode()).hexdigest()[:16]


def parse(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, DATETIME)


def listed_tokens(client: Client) -> list[dict]:
    response = client.get("/api/tokens/?page[size]=100")
    assert response.status_code == 200, response.text
    return response.json()["data"]


def status_of(base_url: str, secret: str) -> int:
    return Client(base_url, secret).get("/api/users/me/").status_code


def log_in_and_open_tokens(session: Session, username: str = "alice",
                           password: str = USER_PASSWORD) -> Page:
    page = session.open("/")
    session.log_in(username, password)
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()
    expect(page.locator("#usermenu-button")).to_have_text(username)
    return page


def test_create_use_and_revoke_a_token(session, server, alice):
    page = session.open("/")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    session.screenshot("01-login.png")
    session.log_in("alice", USER_PASSWORD)
    expect(page.locator("#usermenu-button")).to_have_text("alice")
    session.menu("API Tokens")
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()
    # The fixture's login token and the browser's one, exactly as the API lists them.
    expect(page.locator("#tokens-body tr")).to_have_count(2)
    session.screenshot("03-tokens.png")

    page.get_by_role("button", name="New Token").click()
    hours = page.get_by_label("Validity (hours)")
    expect(hours).to_have_value("4464")
    expect(hours).to_be_focused()
    hours.fill("24")
    page.get_by_label("Name", exact=True).fill("scanner")
    session.screenshot("04-new-token-form.png")
    page.get_by_role("button", name="Create").click()

    secret_box = page.get_by_label("Token secret")
    expect(secret_box).to_have_value(SECRET)
    expect(secret_box).to_have_attribute("readonly", "")
    expect(page.get_by_text("Copy this token now: you will not see it again.")).to_be_visible()
    secret = secret_box.input_value()
    token_id = token_id_of(secret)

    # The list refreshed: the new token on top, as the API lists them.
    row = session.token_row(token_id)
    expect(page.locator("#tokens-body tr")).to_have_count(3)
    api_tokens = listed_tokens(alice)
    assert [t["id"] for t in api_tokens][0] == token_id
    assert page.locator("#tokens-body tr").evaluate_all(
        "rows => rows.map(r => r.dataset.tokenId)") == [t["id"] for t in api_tokens]
    cells = row.locator("td")
    expect(cells.nth(0)).to_have_text(token_id)
    expect(cells.nth(0).locator("code")).to_have_css("font-family", re.compile("monospace"))
    expect(cells.nth(1)).to_have_text("scanner")
    attributes = api_tokens[0]["attributes"]
    expect(cells.nth(2).locator("time")).to_have_attribute("datetime", attributes["created"])
    expect(cells.nth(3).locator("time")).to_have_attribute("datetime", attributes["expiry"])
    assert parse(attributes["expiry"]) - parse(attributes["created"]) == dt.timedelta(hours=24)
    expect(row.locator(".badge")).to_have_count(0)
    session.screenshot("05-token-secret.png")

    # The secret works against the API as alice.
    me = Client(server.url, secret).get("/api/users/me/")
    assert me.status_code == 200
    assert me.json()["data"]["id"] == alice.user_id
    assert me.json()["data"]["attributes"]["username"] == "alice"

    # Revoke it in the page, through the confirmation dialog.
    row.get_by_role("button", name="Revoke").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"Token {token_id} (“scanner”) will stop working at once")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    session.screenshot("06-revoke-confirm.png")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(row).to_have_count(1)
    assert status_of(server.url, secret) == 200

    row.get_by_role("button", name="Revoke").click()
    dialog.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text(f"Token {token_id} revoked.")
    expect(row).to_have_count(0)
    expect(page.locator("#tokens-body tr")).to_have_count(2)
    assert status_of(server.url, secret) == 401
    assert token_id not in [t["id"] for t in listed_tokens(alice)]
    assert session.errors == []


def test_copy_button_puts_the_secret_on_the_clipboard(session, server, alice):
    session.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page = log_in_and_open_tokens(session)
    page.get_by_role("button", name="New Token").click()
    page.get_by_role("button", name="Create").click()
    secret_box = page.get_by_label("Token secret")
    expect(secret_box).to_have_value(SECRET)
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("status")).to_have_text("Token copied to the clipboard.")
    assert page.evaluate("() => navigator.clipboard.readText()") == secret_box.input_value()
    # Default validity, no name.
    token = listed_tokens(alice)[0]
    assert token["id"] == token_id_of(secret_box.input_value())
    assert token["attributes"]["name"] == ""
    assert (parse(token["attributes"]["expiry"]) - parse(token["attributes"]["created"])
            == dt.timedelta(hours=4464))
    expect(session.token_row(token["id"]).locator("td").nth(1)).to_have_text("(no name)")

    # "Done" removes the secret from the page for good.
    page.get_by_role("button", name="Done").click()
    expect(page.locator("#secret-panel")).to_be_hidden()
    assert page.locator("#token-secret").input_value() == ""
    assert session.errors == []


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
    # This browser's own token is marked in the list.
    expect(session.token_row(token_id_of(secret)).locator(".badge")).to_have_text("this session")

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
    assert alice.delete(f"/api/tokens/{token_id_of(secret)}/").status_code == 204
    session.menu("Profile")
    expect(page.get_by_role("alert")).to_have_text(
        "Your session has ended: Invalid token. Please log in again.")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    expect(page.locator("#usermenu")).to_be_hidden()
    expect(page.locator("#profile-home-id")).to_be_empty()
    assert session.session_storage() == {}
    # The only console error is the browser's own note about the refused request.
    assert len(session.errors) == 1 and "401" in session.errors[0]

    # Revoking this browser's own token from its row logs out too.
    session.log_in("alice", USER_PASSWORD)
    # Back on the view the session ended on.
    expect(page.locator("#profile-home-id")).to_have_text(alice.home_id)
    session.menu("API Tokens")
    expect(page.locator("#tokens-body tr")).to_have_count(2)
    secret = session.session_storage()["dms.token"]
    row = session.token_row(token_id_of(secret))
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("dialog")).to_contain_text(
        "is the one this browser uses: you will be logged out.")
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text(
        "You revoked this session's token and have been logged out.")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    assert session.session_storage() == {}
    assert status_of(server.url, secret) == 401


def test_expired_token_is_marked(session, server, config, alice):
    attributes = {"expiry_hours": 1, "name": "old scanner"}
    response = alice.post("/api/tokens/", {"data": {"type": "tokens", "attributes": attributes}})
    assert response.status_code == 201, response.text
    token_id = response.json()["data"]["id"]
    page = log_in_and_open_tokens(session)
    row = session.token_row(token_id)
    expect(row.locator("td").nth(1)).to_have_text("old scanner")
    expect(row.locator(".badge")).to_have_count(0)
    expect(row).not_to_have_class(re.compile("is-expired"))

    execute_sql(config, "UPDATE token SET expiry = '2000-01-01 00:00:00.000000' "
                "WHERE token_key = ?", token_id)
    session.menu("API Tokens")  # reloads the list
    expect(row.locator(".badge")).to_have_text("expired")
    expect(row).to_have_class(re.compile("is-expired"))
    expires = row.locator("td").nth(3)
    expect(expires.locator("time")).to_have_attribute("datetime", "2000-01-01T00:00:00.000000Z")
    # The login tokens never expire and carry no such mark.
    expect(page.locator("#tokens-body tr:not(.is-expired) td:nth-child(4)")).to_have_text(
        ["never", "never"])
    expect(page.locator("#tokens-body tr.is-expired")).to_have_count(1)
    session.screenshot("09-tokens-expired.png")
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
