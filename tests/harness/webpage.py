"""The web page (dms/web/static) in a browser, for the browser tests (tests/e2e/test_ui_*):
a Session (a browser context and page that sees every request, console error and page error),
logging in, the page's token secrets and ids, what the API says of a user's tokens, axe-core's
verdict, controls without a name, sideways scrolling, and the first-view time. Screenshots of
every view go to tests/screenshots/ (git-ignored) for a human to look at."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.harness.client import Client
from tests.harness.users import USER_PASSWORD

# Playwright's assertions wait 5 s by default; on CI's two cores, shared by both lanes, Chromium
# and the readers of uploads, a page operation's answer has taken longer (a merge: 5.7 s). An
# assertion that holds still passes at once.
expect.set_options(timeout=15_000)

SCREENSHOTS = Path(__file__).parents[1] / "screenshots"
# axe-core from the npm registry, installed by scripts/setup.sh --test (never at run time).
AXE = Path(__file__).parents[2] / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}
SECRET = re.compile(r"^[0-9a-f]{64}$")
NEW_PASSWORD = "correct-horse-42"
# What the browser's console says of a refused request (the page shows the API's sentence).
REFUSED = "Failed to load resource: the server responded with a status of 400 (Bad Request)"


class Session:
    """A fresh browser context and page, with every request, console error and page error seen."""

    def __init__(self, browser, base_url: str, guarded: bool = True, **context_options):
        """`guarded=False`: requests to other origins are not stopped (only noted in `requests`):
        Playwright's routing, which stops them, also turns the browser's HTTP cache off, and a
        measurement of what the browser keeps needs it on."""
        self.base_url = base_url
        self.context = browser.new_context(**{"viewport": {"width": 1280, "height": 800},
                                              **context_options})
        self.context.set_default_timeout(10_000)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.refused: list[str] = []  # "404 http://…": which load the console's error was about
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.context.on("response", lambda response: response.status >= 400
                        and self.refused.append(f"{response.status} {response.url}"))
        # Anything for another origin is stopped and noted; the tests expect none.
        origin = base_url.split("/", 3)[:3]
        own = "/".join(origin) + "/"
        if guarded:
            self.context.route(lambda url: not url.startswith(own), self._refuse)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda message: message.type == "error"
                     and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def elsewhere(self) -> list[str]:
        """The requests for anything outside the server's own addresses (the tests expect none)."""
        return [url for url in self.requests if not url.startswith(self.base_url + "/")]

    def _refuse(self, route) -> None:
        self.foreign.append(route.request.url)
        route.abort()

    def open(self, path: str = "/") -> Page:
        self.page.goto(self.base_url + path)
        return self.page

    def screenshot(self, name: str, full_page: bool = True) -> None:
        """The whole page; `full_page=False`: what the window shows (a dialog's backdrop covers
        only that much, and a sticky top bar would sit in the middle of a scrolled whole page)."""
        SCREENSHOTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)

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


def token_id_of(secret: str) -> str:
    return hashlib.sha512(secret.encode()).hexdigest()[:16]


def listed_tokens(client: Client) -> list[dict]:
    response = client.get("/api/tokens/?page[size]=100")
    assert response.status_code == 200, response.text
    return response.json()["data"]


def status_of(base_url: str, secret: str) -> int:
    return Client(base_url, secret).get("/api/users/me/").status_code


def log_in_home(session: Session, username: str = "alice", password: str = USER_PASSWORD,
                path: str = "/") -> Page:
    """Logs in on the page at `path`; with "/" the page opens the user's Home."""
    page = session.open(path)
    session.log_in(username, password)
    expect(page.locator("#usermenu-button")).to_have_text(username)
    if path == "/":
        expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
    return page


def log_in_and_open_tokens(session: Session, username: str = "alice",
                           password: str = USER_PASSWORD) -> Page:
    page = log_in_home(session, username, password)
    session.menu("API Tokens")
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()
    return page


def upload_by_picker(page: Page, path: Path, timeout_ms: float):
    """Uploads `path` through the open folder's Upload button and the upload dialog's file
    picker, and waits until the Uploads panel says its text was read (Done); its item in that
    panel."""
    choose_upload(page, path)
    item = page.get_by_role("complementary", name="Uploads").get_by_role("listitem").filter(
        has_text=path.name)
    expect(item).to_contain_text("Done", timeout=timeout_ms)
    return item


def choose_upload(page: Page, path: Path):
    """Opens the open folder's upload dialog, chooses `path` with the dialog's file picker and
    sends it, read in the languages the dialog offers at first (the caller's default)."""
    page.get_by_role("button", name="Upload").click()
    dialog = page.get_by_role("dialog", name="Upload files")
    with page.expect_file_chooser() as chooser:
        dialog.get_by_label("Files").click()
    chooser.value.set_files(str(path))
    dialog.get_by_role("button", name="Upload").click()
    expect(dialog).to_be_hidden()


def fetched_again(page: Page, address_part: str) -> int:
    """How many of the page's resources whose address holds `address_part` came over the network
    rather than from the browser's cache (Resource Timing: a cached one transfers 0 bytes)."""
    return page.evaluate("(part) => performance.getEntriesByType('resource').filter(r => "
                         "r.name.includes(part) && r.transferSize > 0).length", address_part)


def sideways_scroll(page: Page) -> int:
    """How far the page scrolls sideways (0: not at all)."""
    return page.evaluate("() => document.documentElement.scrollWidth"
                         " - document.documentElement.clientWidth")


UNNAMED = re.compile(r"^\s*- (button|link|checkbox|radio|textbox|searchbox|combobox|img)\b(?! \")")


def unnamed_controls(page: Page) -> list[str]:
    """Visible controls and images without an accessible name, as Chromium's accessibility tree
    has them (the ARIA snapshot lists only what is shown, each role with its name in quotes)."""
    return [line.strip() for line in page.locator("body").aria_snapshot().splitlines()
            if UNNAMED.match(line)]


def axe_violations(page: Page) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is. The page's CSP keeps
    out any script it did not serve, so the session needs bypass_csp=True (that test only)."""
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in ("serious", "critical")]
