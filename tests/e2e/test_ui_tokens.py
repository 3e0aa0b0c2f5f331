"""The web page's tokens (dms/web/static) end to end, in Debian's headless Chromium driven by
Playwright: create / use / revoke a token, copy its secret, an expired token marked. The browser
and its sessions: tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from playwright.sync_api import expect

from tests.harness.client import Client
from tests.harness.database import execute_sql
from tests.harness.users import USER_PASSWORD
from tests.harness.webpage import (
    SECRET,
    listed_tokens,
    log_in_and_open_tokens,
    status_of,
    token_id_of,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

DATETIME = "%Y-%m-%dT%H:%M:%S.%fZ"


def parse(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, DATETIME)


def test_create_use_and_revoke_a_token(session, server, alice):
    page = session.open("/")
    expect(page.get_by_role("heading", name="Log in to dms")).to_be_visible()
    session.screenshot("01-login.png")
    session.log_in("alice", USER_PASSWORD)
    expect(page.locator("#usermenu-button")).to_have_text("alice")
    session.menu("API Tokens")
    expect(page.get_by_role("heading", name="API Tokens", level=1)).to_be_visible()
    # The fixture's login token, as the API lists it; the browser's session is not among them.
    expect(page.locator("#tokens-body tr")).to_have_count(1)
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
    expect(page.locator("#tokens-body tr")).to_have_count(2)
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
    expect(page.locator("#tokens-body tr")).to_have_count(1)
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
    # The fixture's login token never expires and carries no such mark.
    expect(page.locator("#tokens-body tr:not(.is-expired) td:nth-child(4)")).to_have_text(
        ["never"])
    expect(page.locator("#tokens-body tr.is-expired")).to_have_count(1)
    session.screenshot("09-tokens-expired.png")
    assert session.errors == []


def test_a_revoked_tokens_secret_leaves_the_screen(session, server, alice):
    """api.md §22: the secret shown once goes when its token is revoked; at 1280 px every Revoke
    button is whole on the screen."""
    # A name as an app's login gives it (its User-Agent): long, with few places to break.
    app = "Paperless-ngx API: Mozilla/5.0_(X11;_Linux_x86_64)_AppleWebKit/537.36"
    for name in ("backup script", app):
        alice.post("/api/tokens/", {"data": {"type": "tokens", "attributes": {"name": name}}})
    page = log_in_and_open_tokens(session)
    page.get_by_role("button", name="New Token").click()
    page.get_by_label("Name", exact=True).fill("scanner")
    page.get_by_role("button", name="Create").click()
    secret_box = page.get_by_label("Token secret")
    expect(secret_box).to_have_value(SECRET)
    token_id = token_id_of(secret_box.input_value())
    expect(page.locator("#tokens-body tr")).to_have_count(4)
    width = page.evaluate("() => document.documentElement.clientWidth")
    assert page.evaluate("() => innerWidth") == 1280
    for button in page.get_by_role("button", name="Revoke").all():
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    session.screenshot("14-tokens-1280.png", full_page=False)

    # Revoking another token leaves the secret; revoking its own token takes it away.
    other = next(t["id"] for t in listed_tokens(alice)
                 if t["attributes"]["name"] == "backup script")
    session.token_row(other).get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text(f"Token {other} revoked.")
    expect(secret_box).to_have_value(SECRET)
    session.token_row(token_id).get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text(f"Token {token_id} revoked.")
    expect(page.locator("#secret-panel")).to_be_hidden()
    assert page.locator("#token-secret").input_value() == ""
    expect(page.get_by_text("Copy this token now")).to_be_hidden()
    session.screenshot("15-token-revoked-secret-gone.png", full_page=False)
    assert session.errors == []
