"""The web page (dms/web/static) end to end, in Debian's headless Chromium driven by Playwright,
and what is served for it: the page talks only to its own server, security headers, its files
kept under the page's version and index.html revalidated, a tab left open across an upgrade,
file names that cannot leave the folder, the page's size, the /ui/ address, a URL prefix, phones,
no console errors in the main flow. The browser and its sessions: tests/e2e/conftest.py,
tests/harness/webpage.py."""

from __future__ import annotations

import re

import pytest
import requests
from playwright.sync_api import expect

from dms.web.api.ui import page_version, static_dir
from tests.harness.users import USER_PASSWORD
from tests.harness.webpage import (
    NEW_PASSWORD,
    PHONE,
    SECRET,
    Session,
    log_in_and_open_tokens,
    log_in_home,
    sideways_scroll,
    token_id_of,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

# The whole page, uncompressed, and each of its modules.
MAX_PAGE_BYTES = 250 * 1024
MAX_MODULE_LINES = 400
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
    assert session.elsewhere() == []
    assert session.foreign == []
    # And the session really went through the API.
    for path in ("/", static("app.js"), static("api.js"), static("style.css"),
                 static("views.css"), "/api/auth/login/", "/api/users/me/", "/api/nodes/",
                 f"/api/folders/{alice.home_id}/", "/api/nodes/inboxcount/",
                 "/api/tokens/?page[size]=100", "/api/tokens/", "/api/auth/logout/"):
        assert path in paths
    assert session.errors == []


def static(name: str) -> str:
    """A file's address as index.html names it: under the page's version (dms.web.api.ui)."""
    return f"/static/{page_version()}/{name}"


@pytest.mark.parametrize("path", ["/", "/ui/", "app.js", "view-folder.js", "style.css"])
def test_security_headers(server, path):
    path = path if path.startswith("/") else static(path)
    response = requests.get(server.url + path, timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CSP
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    media = {".js": "text/javascript", ".css": "text/css"}.get(path[path.rfind("."):], "text/html")
    assert response.headers["Content-Type"] == f"{media}; charset=utf-8"


def test_the_page_is_revalidated_and_names_its_files_under_its_version(server):
    """Decision (dms/web/api/ui.py): index.html is no-cache with a strong ETag (an unchanged page
    costs a 304 without a body) and no Last-Modified (it changes with any of its files); every
    file it names is under the version, which is a hash of all the files."""
    first = requests.get(server.url + "/", timeout=10)
    assert (first.status_code, first.headers["Cache-Control"]) == (200, "no-cache")
    assert "Last-Modified" not in first.headers
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) == 34
    version = page_version()
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    original = (static_dir() / "index.html").read_text(encoding="utf-8")
    assert first.text == original.replace('"static/', f'"static/{version}/')
    named = re.findall(r'(?:href|src)="(static/[^"]+)"', first.text)
    assert len(named) == 33 and all(name.startswith(f"static/{version}/") for name in named)
    again = requests.get(server.url + "/", headers={"If-None-Match": etag}, timeout=10)
    assert (again.status_code, again.content, again.headers["ETag"]) == (304, b"", etag)
    other = requests.get(server.url + "/", headers={"If-None-Match": '"0"'}, timeout=10)
    assert (other.status_code, other.content) == (200, first.content)


@pytest.mark.parametrize("name", ["app.js", "style.css", "favicon.svg", "share.css"])
def test_files_are_kept_by_the_browser_for_good(server, name):
    """Under the page's version a file never changes: `immutable`, a year; the next version has
    other addresses. Another version's address (an old tab after an upgrade, or a made-up one)
    and the old address without a version answer 404 with a sentence."""
    response = requests.get(server.url + static(name), timeout=10)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.content == (static_dir() / name).read_bytes()
    for path in (f"/static/{'0' * 16}/{name}", f"/static/{name}"):
        refused = requests.get(server.url + path, timeout=10)
        [error] = refused.json()["errors"]
        assert (refused.status_code, error["code"]) == (404, "not_found")
        assert error["detail"] in (
            "This file belongs to another version of the page: dms was updated. Reload the "
            "page.", "Not found: there is no endpoint at this address.")
    assert requests.get(server.url + f"/static/{'0' * 16}/{name}", timeout=10).json()[
        "errors"][0]["detail"].startswith("This file belongs to another version")


@pytest.mark.parametrize("name", ["..%2Fapi%2Fui.py", "%2e%2e%2Fapi%2Fui.py", "..%5Cui.py",
                                  "ui.py", "__init__.py", ".gitignore", "app.js%00.css",
                                  "missing.js", "%2Fetc%2Fpasswd", "app.JS"])
def test_no_client_chosen_name_reaches_another_file(server, name):
    response = requests.get(server.url + static(name), timeout=10)
    assert response.status_code == 404
    # "Not found." from the page's handler, or no route at all where the server decoded a "/".
    [error] = response.json()["errors"]
    assert (error["status"], error["code"]) == ("404", "not_found")
    assert error["detail"] in ("Not found.", "Not found: there is no endpoint at this address.")
    # Nor a sub-folder, encoded or not, nor a version that walks up.
    version = page_version()
    for path in (f"/static/{version}/../api/ui.py", f"/static/{version}/sub/app.js",
                 f"/static/{version}/%2E%2E/__init__.py", "/static/../api/ui.py",
                 "/static/%2E%2E/app.js"):
        assert requests.get(server.url + path, timeout=10).status_code == 404


# Fetched when a section of Settings is first opened (view-settings.js), not with the page, and
# what is fetched when first used (WHEN_USED): the page viewer, the bulk actions, a document's
# "Read again…" (view-document.js), the list of refused files (intake-badge.js); and the
# stylesheet of a share link's public page (dms.web.api.sharepage), which is not this page.
WHEN_USED = {"rules-form.js", "rules-run.js", "share.css", "viewer.js", "bulk.js", "read-again.js",
             "refusals.js"}
LATER = {"settings-account.js", "settings-fields.js", "settings-labels.js", "settings-mail.js",
         "settings-reading.js", "settings-rules.js", "settings-tokens.js", "settings-users.js",
         "settings-webhooks.js", "settings-tags.js", *WHEN_USED}


def test_the_page_is_small_and_its_modules_short():
    files = sorted(path for path in static_dir().iterdir() if path.is_file())
    first = [path for path in files if path.name not in LATER]
    total = sum(path.stat().st_size for path in first)
    later = sum(path.stat().st_size for path in files if path.name in LATER)
    print(f"\nweb page: {len(first)} files, {total} bytes ({total / 1024:.1f} KiB) uncompressed; "
          f"{len(files) - len(first)} more files, {later} bytes, when Settings are opened")
    assert total < MAX_PAGE_BYTES
    long = {path.name: lines for path in files if path.suffix in (".js", ".css")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}
    # Every module the first view needs is preloaded by the page, so that none waits for the one
    # that imports it; the settings' sections are imported when opened, by view-settings.js.
    html = (static_dir() / "index.html").read_text(encoding="utf-8")
    preloaded = set(re.findall(r'<link rel="modulepreload" href="static/([^"]+)">', html))
    modules = {path.name for path in first if path.suffix == ".js"} - {"app.js"}
    assert preloaded == modules
    lazy = set(re.findall(r'import\("\./([^"]+)"\)',
                          (static_dir() / "view-settings.js").read_text(encoding="utf-8")))
    assert lazy | WHEN_USED == LATER


def test_ui_address_sends_the_browser_to_the_page(server):
    response = requests.get(server.url + "/ui/", allow_redirects=False, timeout=10)
    assert (response.status_code, response.headers["Location"]) == (302, server.url + "/")


def test_a_tab_left_open_across_an_upgrade_is_told_to_reload(browser, server, alice):
    """The server was upgraded while the tab stayed open: the modules the tab has not loaded yet
    are asked for under its old version, which the server answers 404 (here: the real server,
    asked for a version it does not have). The page says what to do instead of a browser's
    error, and changes nothing."""
    session = Session(browser, server.url)
    try:
        page = log_in_home(session)
        gone = f"/static/{'0' * 16}/"
        answers = []
        page.on("response", lambda response: "settings-tokens" in response.url
                and answers.append(response.status))
        page.route("**/settings-tokens.js", lambda route: route.continue_(
            url=route.request.url.replace(f"/static/{page_version()}/", gone)))
        session.menu("API Tokens")
        expect(page.get_by_role("alert")).to_have_text(
            "dms was updated since this page was opened: reload the page to go on.")
        expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
        assert answers == [404]
        page.unroute("**/settings-tokens.js")
        page.reload()
        session.menu("API Tokens")
        expect(page.get_by_role("heading", name="API Tokens")).to_be_visible()
    finally:
        session.close()


@pytest.mark.config(url_prefix="/dms")
def test_the_page_works_under_a_url_prefix(browser, server, alice):
    """Behind a proxy at /dms/: the page, its files and its API calls all stay under the prefix."""
    assert server.url.endswith("/dms")
    session = Session(browser, server.url)
    try:
        page = session.open("/")
        session.log_in("alice", USER_PASSWORD)
        expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
        session.menu("API Tokens")
        expect(page.get_by_role("heading", name="API Tokens")).to_be_visible()
        assert all(url.startswith(server.url + "/") for url in session.requests)
        assert f"{server.url}/api/folders/{alice.home_id}/" in session.requests
        assert session.errors == []
    finally:
        session.close()


def test_phone_sized_screen_has_no_horizontal_overflow(browser, server, alice):
    alice.post("/api/tokens/", {"data": {"type": "tokens",
                                         "attributes": {"name": "a rather long name for "
                                                                "the scanner in the hallway"}}})
    phone = Session(browser, server.url, **PHONE)
    try:
        page = phone.open("/")
        expect(page.get_by_label("Username", exact=True)).to_be_visible()
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
        assert sideways_scroll(page) == 0
        phone.screenshot("10-phone-login.png")

        phone.log_in("alice", USER_PASSWORD)
        expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
        phone.menu("API Tokens")
        # The fixture's login token and the long-named one; the page's session is not listed.
        expect(page.locator("#tokens-body tr")).to_have_count(2)
        page.get_by_role("button", name="New Token").click()
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_label("Token secret")).to_have_value(SECRET)
        expect(page.locator("#tokens-body tr")).to_have_count(3)
        assert sideways_scroll(page) == 0
        # Each row is still readable: every Revoke button fits on the screen.
        for box in [b.bounding_box() for b in page.get_by_role("button", name="Revoke").all()]:
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        phone.screenshot("11-phone-tokens.png")

        phone.menu("Profile")
        expect(page.locator("#profile-inbox-id")).to_have_text(alice.inbox_id)
        assert sideways_scroll(page) == 0
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
