"""Mail accounts (docs/api.md, "Mail accounts") against a real IMAP server: Debian's dovecot on
loopback (tests/harness/imapserver.py, started once for the module by tests/intake/conftest.py).
Another user's account is not found, the password is never shown and is stored sealed, a user's
accounts go with them, refused settings change nothing, and internal hosts are refused for users who
are not superusers unless DMS_OUTBOUND_ALLOW lists them (the other tests of this folder run with
127.0.0.1 allowed: tests/intake/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from tests.harness.client import assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.mail import MAIL_PASSWORD, account_body, add_account, check
from tests.harness.processes import free_port


def test_accounts_are_private_and_passwords_never_shown(alice, bob, anon, admin, mailbox, imap,
                                                       config):
    account = add_account(alice, mailbox, imap, mailbox="INBOX")
    assert account["attributes"] == {
        "host": "127.0.0.1", "port": imap.port, "security": "none", "username": mailbox[0],
        "mailbox": "INBOX", "after_import": "mark_seen", "move_to": None,
        "folder_per_sender": False, "enabled": True, "last_checked_at": None, "last_error": None,
        "imported_count": 0, "checking": False}
    path = f"/api/mail-accounts/{account['id']}/"
    for response in (bob.get(path), bob.patch(path, {"data": {"type": "mail-accounts",
                                                              "attributes": {"enabled": False}}}),
                     bob.delete(path), bob.post(path + "check/")):
        assert_error(response, 404, "not_found", "Not found.")
    assert bob.get("/api/mail-accounts/").json()["data"] == []
    anonymous = [anon.get("/api/mail-accounts/"), anon.post("/api/mail-accounts/",
                                                            account_body(mailbox, imap)),
                 anon.get(path), anon.patch(path, {"data": {"type": "mail-accounts",
                                                            "attributes": {"enabled": False}}}),
                 anon.delete(path), anon.post(path + "check/")]
    for response in anonymous:
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    assert len(query_sql(config, "SELECT id FROM mail_account")) == 1
    # Stored sealed: the password is nowhere in the database.
    stored = query_sql(config, "SELECT password FROM mail_account")
    assert len(stored) == 1 and MAIL_PASSWORD not in stored[0][0]
    assert "password" not in alice.get(path).json()["data"]["attributes"]

    changed = alice.patch(path, {"data": {"type": "mail-accounts", "attributes": {
        "after_import": "move", "move_to": "Done", "password": "another-one",
        "imported_count": 99, "colour": "red"}}})  # read-only and unknown: ignored
    assert changed.status_code == 200, changed.text
    assert {key: changed.json()["data"]["attributes"][key] for key in (
        "after_import", "move_to", "imported_count")} == {
        "after_import": "move", "move_to": "Done", "imported_count": 0}
    assert alice.delete(path).status_code == 204
    assert_error(alice.get(path), 404, "not_found", "Not found.")
    # A deleted user's accounts go with them.
    add_account(alice, mailbox, imap)
    assert admin.delete(f"/api/users/{alice.user_id}/").status_code == 204
    assert query_sql(config, "SELECT count(*) FROM mail_account") == [(0,)]


def test_refused_settings_change_nothing(alice, mailbox, imap, config):
    cases = [
        ({"host": "imap.example.org"}, "security", "invalid",
         "security none sends the password unencrypted: it is only allowed for a mail server on "
         "this machine (localhost, 127.0.0.1, ::1). Use ssl or starttls."),
        ({"after_import": "move"}, "move_to", "required",
         "move_to (the mailbox to move imported messages to) is required with after_import move."),
        ({"port": 70000}, "port", "invalid", "port must be a number from 1 to 65535."),
        ({"security": "tls"}, "security", "invalid",
         "security must be one of ssl, starttls, none."),
        ({"password": ""}, "password", "invalid", "password is required."),
        ({"password": None}, "password", "required", "password is required."),
        ({"host": "mail/../../etc"}, "host", "invalid",
         "host must be a host name or an IP address, such as imap.example.org."),
    ]
    for change, field, code, detail in cases:
        response = alice.post("/api/mail-accounts/", account_body(mailbox, imap, **change))
        assert_error(response, 400, code, detail, f"/data/attributes/{field}")
    assert query_sql(config, "SELECT count(*) FROM mail_account") == [(0,)]
    account = add_account(alice, mailbox, imap, security="ssl", host="imap.example.org", port=993)
    assert_error(alice.patch(f"/api/mail-accounts/{account['id']}/", {"data": {
        "type": "mail-accounts", "attributes": {"security": "none"}}}), 400, "invalid",
        cases[0][3], "/data/attributes/security")
    after = alice.get(f"/api/mail-accounts/{account['id']}/").json()["data"]["attributes"]
    assert (after["security"], after["host"]) == ("ssl", "imap.example.org")


def internal(host: str, resolved: str | None = None) -> str:
    shown = "" if resolved is None else f" resolves to {resolved}, which"
    return (f"{host}{shown} is an internal address (loopback, private, link-local or a cloud's "
            "metadata service): dms connects there only for a superuser or when the "
            "administrator allows it (DMS_OUTBOUND_ALLOW).")


@pytest.mark.config(outbound_allow=())  # no DMS_OUTBOUND_ALLOW
def test_internal_hosts_are_refused_for_users_but_not_for_superusers(alice, admin, mailbox, imap,
                                                                    config):
    before = snapshot(config)
    for host in ("127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "[fd00:ec2::254]"):
        response = alice.post("/api/mail-accounts/", account_body(mailbox, imap, host=host,
                                                                  security="ssl"))
        assert_error(response, 400, "invalid", f"host: {internal(host.strip('[]'))}",
                     "/data/attributes/host")
    assert snapshot(config) == before
    # A name is checked on what it resolves to, at the check, before anything is sent: the
    # sentence is the same whether a server listens there or not.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        silent.setblocking(False)
        account = add_account(alice, mailbox, imap, host="localhost",
                              port=silent.getsockname()[1])
        result = check(alice, account["id"])["attributes"]
        assert result["last_error"] == ("The mail server was not contacted: "
                                        f"{internal('localhost', '127.0.0.1')}")
        with pytest.raises(BlockingIOError):
            silent.accept()  # nobody came
    closed = add_account(alice, mailbox, imap, host="localhost", port=free_port())
    assert check(alice, closed["id"])["attributes"]["last_error"] == result["last_error"]
    # The superuser may reach the mail server on this machine.
    own = add_account(admin, mailbox, imap)
    assert check(admin, own["id"])["attributes"]["last_error"] is None
