"""Nodes on one database need one sealing key (mail.key): a server started with a key that does
not open the mail passwords and webhook secrets in its database, or with no key at all, says so
at start, in one line that names the file and what to do; with the right key it says nothing."""

from __future__ import annotations

import logging
import secrets

import pytest

from dms.files.sealing import KEY_BYTES, KEY_FILE
from tests.harness.appserver import running
from tests.harness.client import Client
from tests.harness.users import ADMIN_PASSWORD

# Sockets (pytest-socket): servers started on a data dir of their own.
pytestmark = pytest.mark.enable_socket

ADVICE = ("copy the key file of the node where they were set to every node, or set the "
          "passwords and secrets again")


def add_secrets(client: Client) -> None:
    account = client.post("/api/mail-accounts/", {"data": {"type": "mail-accounts", "attributes": {
        "host": "127.0.0.1", "port": 143, "security": "none", "username": "scans",
        "password": "imap-password-1"}}})
    assert account.status_code == 201, account.text
    webhook = client.post("/api/webhooks/", {"data": {"type": "webhooks", "attributes": {
        "url": "https://hooks.example.org/dms", "events": ["node.created"],
        "secret": "a-webhook-secret-of-32-characters"}}})
    assert webhook.status_code == 201, webhook.text


def key_errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dms.app" and
            r.levelno == logging.ERROR]


def restart(config, caplog) -> list[str]:
    caplog.clear()
    with running(config) as server:
        assert Client(server.url).get("/api/version/").status_code == 200
    return key_errors(caplog)


def test_a_key_that_does_not_open_the_secrets_is_named_at_start(config, caplog):
    caplog.set_level(logging.INFO)
    with running(config) as server:
        add_secrets(Client(server.url).login("admin", ADMIN_PASSWORD))
    key = config.data_dir / KEY_FILE
    assert restart(config, caplog) == []  # the key they were sealed with

    original = key.read_bytes()
    key.write_bytes(secrets.token_bytes(KEY_BYTES))  # another node's key
    assert restart(config, caplog) == [
        f"2 of the 2 newest mail passwords and webhook secrets do not open with this node's key "
        f"({key}): it differs from the key they were sealed with; {ADVICE}"]

    key.unlink()  # a node set up without copying it
    assert restart(config, caplog) == [
        f"the database holds mail passwords or webhook secrets, but this data dir has no key to "
        f"open them ({key}); {ADVICE}"]
    assert not key.exists()  # the check makes no key: the one that opens them may still come

    key.write_bytes(original)
    assert restart(config, caplog) == []
