"""Mail accounts (docs/api.md, "Mail accounts") against a real IMAP server: Debian's dovecot on
loopback (tests/harness/imapserver.py, started once for the module by tests/intake/conftest.py). A
crash between the import and telling the mailbox imports nothing twice, and a restored backup still
reads the mail accounts (it carries mail.key)."""

from __future__ import annotations

import signal
import socket
import threading

import pytest
import requests

from tests.harness import samples
from tests.harness.appserver import empty_target, served
from tests.harness.client import Client
from tests.harness.mail import SEEN, add_account, check, flags, inbox, message
from tests.harness.processes import Running, config_args, dms

# Sockets (pytest-socket): Dovecot on loopback and restarted servers.
pytestmark = pytest.mark.enable_socket


class StallingProxy:
    """A TCP relay between dms and the IMAP server that stops passing anything on once dms sends
    a STORE (telling the mailbox a message was imported): the moment to kill dms."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stalled = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source, target, from_dms: bool):
        try:
            while not self.stalled.is_set():
                data = source.recv(65536)
                if not data:
                    return
                if from_dms and b" STORE " in data.upper():
                    self.stalled.set()
                    return
                target.sendall(data)
        except OSError:
            return

    def close(self):
        self.listener.close()


def check_until_killed(client, account_id):
    try:
        client.post(f"/api/mail-accounts/{account_id}/check/")
    except requests.ConnectionError:
        pass  # the server was killed in the middle: what the test wants


@pytest.mark.slow
def test_a_crash_before_the_mailbox_is_told_imports_nothing_twice(tmp_path, imap, mailbox, engine,
                                                                  request):
    env = {"DMS_ADMIN_PASSWORD": "crash-admin-pw"}
    if engine == "postgresql":
        env["DMS_DATABASE_URL"] = request.getfixturevalue("postgres").new_database(empty=True)
    data_dir = tmp_path / "data"
    raw, message_id = message("Tax assessment", [
        ("assessment.pdf", samples.pdf(["Assessment 2025"]), "application/pdf"),
        ("appendix.png", samples.png("Appendix"), "image/png")])
    uid = imap.append(*mailbox, raw)
    proxy = StallingProxy(imap.port)
    server = Running(data_dir, **env)
    try:
        admin = Client(server.url).login("admin", "crash-admin-pw")
        account = add_account(admin, mailbox, imap, port=proxy.port)
        checking = threading.Thread(target=check_until_killed,
                                    args=(admin, account["id"]), daemon=True)
        checking.start()
        assert proxy.stalled.wait(60), "dms never told the mailbox"
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    finally:
        if server.process.poll() is None:
            server.process.kill()
        proxy.close()
    assert flags(imap, mailbox) == {uid: set()}  # imported, but the mailbox was never told

    server = Running(data_dir, **env)
    try:
        admin = Client(server.url).login("admin", "crash-admin-pw")
        assert sorted(inbox(admin)) == ["appendix.png", "assessment.pdf"]
        path = f"/api/mail-accounts/{account['id']}/"
        assert admin.patch(path, {"data": {"type": "mail-accounts", "attributes": {
            "port": imap.port}}}).status_code == 200
        after = check(admin, account["id"])["attributes"]
        assert (after["imported_count"], after["last_error"]) == (2, None)
        documents = inbox(admin)
        assert sorted(documents) == ["appendix.png", "assessment.pdf"]
        assert {d["attributes"]["mail"]["message_id"] for d in documents.values()} == {message_id}
        assert flags(imap, mailbox) == {uid: {SEEN}}
    finally:
        server.stop()


@pytest.mark.slow
def test_a_restored_backup_still_reads_the_mail_accounts(alice, server, mailbox, imap, config,
                                                         tmp_path, request):
    """The backup carries mail.key: the restored accounts' passwords still open."""
    imap.append(*mailbox, message("Lease", [("lease.pdf", samples.pdf(["Lease"]),
                                             "application/pdf")])[0])
    account = add_account(alice, mailbox, imap)
    assert check(alice, account["id"])["attributes"]["imported_count"] == 1
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, *config_args(config)).returncode == 0
    target = empty_target(config, request, tmp_path / "restored")
    restored = dms("restore", archive, *config_args(target))
    assert restored.returncode == 0, restored.stderr
    key = target.data_dir / "mail.key"
    assert key.read_bytes() == (config.data_dir / "mail.key").read_bytes()
    assert key.stat().st_mode & 0o777 == 0o600

    imap.append(*mailbox, message("Deposit", [("deposit.pdf", samples.pdf(["Deposit"]),
                                               "application/pdf")])[0])
    server, thread = served(target, replacing=server)
    try:
        again = Client(server.url, alice.token)
        again.inbox_id = alice.inbox_id
        after = check(again, account["id"])["attributes"]
        assert (after["imported_count"], after["last_error"]) == (2, None)
        assert sorted(inbox(again)) == ["deposit.pdf", "lease.pdf"]
        assert inbox(again)["lease.pdf"]["attributes"]["mail"]["subject"] == "Lease"
    finally:
        server.stop()
        thread.join(10)
