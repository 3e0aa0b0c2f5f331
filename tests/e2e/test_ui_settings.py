"""The web page's settings end to end, in Debian's headless Chromium, by accessible names: a mail
account added, checked (its error sentence shown), edited and deleted. Tokens and the profile are
in test_ui_tokens.py and test_ui_session.py. The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.harness.processes import free_port
from tests.harness.webpage import log_in_home

# The browser talks to the socket, the API calls beside it too; their mail accounts point at a
# server on loopback, which the outbound rule allows only when listed (DMS_OUTBOUND_ALLOW).
pytestmark = [pytest.mark.socket, pytest.mark.config(outbound_allow=("127.0.0.1",))]


def accounts(client) -> list[dict]:
    response = client.get("/api/mail-accounts/")
    assert response.status_code == 200, response.text
    return [account["attributes"] for account in response.json()["data"]]


def test_add_check_edit_and_delete_a_mail_account(session, server, alice):
    port = free_port()  # nothing listens there: the check fails with a sentence
    page = log_in_home(session)
    session.menu("Mail accounts")
    expect(page.get_by_role("heading", name="Mail accounts", level=1)).to_be_visible()
    expect(page.get_by_text("You have no mail accounts.")).to_be_visible()
    page.get_by_role("button", name="Add mail account").click()
    form = page.get_by_role("form", name="New mail account")
    form.get_by_label("IMAP server").fill("127.0.0.1")
    form.get_by_label("Port", exact=True).fill(str(port))
    form.get_by_label("Security").select_option("none")
    form.get_by_label("Mail username").fill("invoices")
    form.get_by_label("Mail password").fill("mail-secret")
    form.get_by_label("A folder in the Inbox for each sender").check()
    form.get_by_role("button", name="Save mail account").click()
    expect(page.get_by_role("status")).to_have_text("Mail account added.")
    [account] = accounts(alice)
    assert {key: account[key] for key in ("host", "port", "security", "username", "mailbox",
                                          "after_import", "folder_per_sender", "enabled")} == {
        "host": "127.0.0.1", "port": port, "security": "none", "username": "invoices",
        "mailbox": "INBOX", "after_import": "mark_seen", "folder_per_sender": True,
        "enabled": True}
    assert "password" not in account

    name = "invoices on 127.0.0.1"
    page.get_by_role("button", name=f"Check now: {name}").click()
    expect(page.get_by_role("status")).to_contain_text(f"Checked {name}: ", timeout=30_000)
    [account] = accounts(alice)
    assert account["last_error"] and not account["checking"]
    expect(page.get_by_role("row", name=name)).to_contain_text(account["last_error"])

    page.get_by_role("button", name=f"Edit: {name}").click()
    form = page.get_by_role("form", name="Edit mail account")
    expect(form.get_by_label("Mail password")).to_have_value("")
    form.get_by_label("Mailbox", exact=True).fill("Scans")
    form.get_by_role("button", name="Save mail account").click()
    expect(page.get_by_role("status")).to_have_text("Mail account saved.")
    [account] = accounts(alice)
    assert (account["mailbox"], account["username"]) == ("Scans", "invoices")

    page.get_by_role("button", name=f"Delete: {name}").click()
    page.get_by_role("dialog", name="Delete mail account?").get_by_role(
        "button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("Mail account deleted.")
    expect(page.get_by_text("You have no mail accounts.")).to_be_visible()
    assert accounts(alice) == []
    assert session.errors == []
