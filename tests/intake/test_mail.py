"""Mail accounts (issue 16, api.md §8c) against a real IMAP server: Debian's dovecot on loopback
(tests/harness/imapserver.py). Attachments of accepted types become documents with their
message's subject, sender and date; inline pictures and messages without attachments are left alone;
refused attachments are named in last_error; flag and move; a wrong password and an unreachable
server do not stop other accounts; a certificate that cannot be verified is refused; a crash between
the import and telling the mailbox imports nothing twice; another user's account is not found."""

from __future__ import annotations

import concurrent.futures
import itertools
import signal
import socket
import threading

import pytest
import requests

from tests.harness import samples
from tests.harness.appserver import empty_target, served
from tests.harness.client import Client, assert_error
from tests.harness.database import query_sql
from tests.harness.imapserver import ImapServer
from tests.harness.mail import account_body, add_account, check, checked, inbox, message
from tests.harness.processes import free_port, config_args, dms, Running
from tests.harness.waiting import wait_for, wait_indexed

SEEN, FLAGGED = b"\\Seen", b"\\Flagged"
MAIL_PASSWORD = "imap-secret-1"
names = itertools.count(1)


@pytest.fixture(scope="module")
def imap():
    server = ImapServer().start()
    yield server
    server.stop()


@pytest.fixture
def mailbox(imap):
    """A new IMAP user of its own: (name, password)."""
    name = f"mailuser{next(names)}"
    imap.add_user(name, MAIL_PASSWORD)
    return name, MAIL_PASSWORD


def flags(imap, mailbox, folder="INBOX") -> dict[int, set[bytes]]:
    return {uid: set(found) for uid, found in imap.messages(*mailbox, mailbox=folder).items()}


def downloaded(client, document_id) -> bytes:
    return client.get(f"/api/documents/{document_id}/download/").content


def test_accepted_attachments_become_documents_with_their_message(alice, mailbox, imap, config):
    pdf, png, note = samples.pdf(["Invoice 4711 total 93.20"]), samples.png("Meter 2026"), \
        samples.text("Reading: 4711 kWh\n")
    raw, message_id = message("Your invoice November", [
        ("invoice.pdf", pdf, "application/pdf"), ("meter.png", png, "image/png"),
        ("reading.txt", note, "text/plain"),
        ("setup.exe", b"MZ\x90\x00" + bytes(200), "application/octet-stream")],
        inline_picture=True)
    with_picture_only, _ = message("Newsletter", inline_picture=True)
    plain, _ = message("Just saying hello")
    first = imap.append(*mailbox, raw)
    second = imap.append(*mailbox, with_picture_only)
    third = imap.append(*mailbox, plain)
    account = add_account(alice, mailbox, imap)
    assert account["attributes"]["last_checked_at"] is None

    checked = check(alice, account["id"])["attributes"]
    assert checked["imported_count"] == 3
    assert checked["last_error"] == (
        "'setup.exe' in the message 'Your invoice November' was refused: This type of file is "
        "not supported; upload a PDF, PNG, JPEG, TIFF or plain text file.")
    assert checked["last_checked_at"] is not None
    refusals = alice.get("/api/intake/refusals/").json()["data"]
    assert [refusal["attributes"] | {"refused_at": None} for refusal in refusals] == [
        {"source": "mail", "name": "setup.exe", "origin": "Your invoice November",
         "reason": "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain "
                   "text file.", "refused_at": None}]
    documents = inbox(alice)
    assert sorted(documents) == ["invoice.pdf", "meter.png", "reading.txt"]
    history = alice.get(f"/api/nodes/{documents['invoice.pdf']['id']}/history/").json()["data"]
    assert [(event["attributes"]["actor"], event["attributes"]["details"]) for event in history
            if event["attributes"]["action"] == "imported"] == [(None, {
                "source": "mail", "title": "invoice.pdf", "file_name": "invoice.pdf",
                "size": len(pdf), "parent": {"id": alice.inbox_id, "title": ".inbox"}})]
    origin = {"subject": "Your invoice November",
              "from": "Stadtwerke Billing <billing@stadtwerke.example>",
              "date": "2026-11-03T09:15:00Z", "message_id": message_id}
    for title, content in (("invoice.pdf", pdf), ("meter.png", png), ("reading.txt", note)):
        attributes = documents[title]["attributes"]
        assert attributes["mail"] == origin
        assert downloaded(alice, documents[title]["id"]) == content
        one = alice.get(f"/api/documents/{documents[title]['id']}/").json()["data"]
        assert one["attributes"]["mail"] == origin
    # Told only about the message it took from; the others are left as they were.
    assert flags(imap, mailbox) == {first: {SEEN}, second: set(), third: set()}

    # Subject and sender are searchable.
    wait_indexed(config)
    found = alice.get("/api/search/", params={"q": "november stadtwerke"}).json()
    assert sorted(result["title"] for result in found) == sorted(documents)

    again = check(alice, account["id"])["attributes"]
    assert (again["imported_count"], again["last_error"]) == (3, None)
    assert sorted(inbox(alice)) == sorted(documents)
    assert flags(imap, mailbox) == {first: {SEEN}, second: set(), third: set()}


def test_flag_move_and_a_folder_per_sender(alice, make_user, imap):
    flagged_box, moved_box = ("flagger" + str(next(names)), MAIL_PASSWORD), \
        ("mover" + str(next(names)), MAIL_PASSWORD)
    for box in (flagged_box, moved_box):
        imap.add_user(*box)
    imap.create_mailbox(*moved_box, "Archive")
    contract, _ = message("Contract",
                          [("contract.pdf", samples.pdf(["Contract"]), "application/pdf")],
                          sender="Notary Office <Office@Notary.example>")
    receipt, _ = message("Receipt", [("receipt.png", samples.png("Receipt"), "image/png")])
    flagged_uid = imap.append(*flagged_box, contract)
    imap.append(*moved_box, receipt)

    flagging = add_account(alice, flagged_box, imap, after_import="flag", folder_per_sender=True)
    assert check(alice, flagging["id"])["attributes"]["imported_count"] == 1
    assert flags(imap, flagged_box) == {flagged_uid: {FLAGGED}}
    sender_folder = inbox(alice)["office@notary.example"]
    assert sender_folder["type"] == "folders"
    assert list(inbox(alice, sender_folder["id"])) == ["contract.pdf"]

    carol = make_user("carol")
    moving = add_account(carol, moved_box, imap, after_import="move", move_to="Archive")
    assert check(carol, moving["id"])["attributes"]["imported_count"] == 1
    assert flags(imap, moved_box) == {}
    assert len(flags(imap, moved_box, "Archive")) == 1
    assert list(inbox(carol)) == ["receipt.png"]
    assert "receipt.png" not in inbox(alice)


# The periodic check every 1.2 s (a heartbeat every 0.5 s claims it).
@pytest.mark.config(mail_check_minutes=0.02, lease_seconds=1.5)
def test_the_periodic_check_goes_on_past_failing_accounts(alice, bob, make_user, admin, mailbox,
                                                          imap, config):
    good, _ = message("Insurance", [("policy.pdf", samples.pdf(["Policy 12"]), "application/pdf")])
    uid = imap.append(*mailbox, good)
    closed_port = free_port()  # nothing listens there
    wrong = add_account(alice, mailbox, imap, password="not-the-password")
    unreachable = add_account(alice, mailbox, imap, port=closed_port)
    disabled = add_account(bob, mailbox, imap, enabled=False)
    working = add_account(bob, mailbox, imap)
    carol = make_user("carol")
    deactivated = add_account(carol, mailbox, imap)
    assert admin.patch(f"/api/users/{carol.user_id}/", {"data": {
        "type": "users", "id": carol.user_id,
        "attributes": {"is_active": False}}}).status_code == 200

    def accounts(client):
        return {a["id"]: a["attributes"] for a in client.get("/api/mail-accounts/").json()["data"]}

    wait_for(lambda: all(a["last_checked_at"] for a in accounts(alice).values())
               and accounts(bob)[working["id"]]["last_checked_at"])
    mine = accounts(alice)
    assert mine[wrong["id"]]["last_error"] == "The mail server refused the username or password."
    assert mine[unreachable["id"]]["last_error"] == (
        f"No IMAP server could be reached at 127.0.0.1:{closed_port} (nothing answered, the "
        "connection was refused or cut, or what answered was not an IMAP server).")
    assert (mine[wrong["id"]]["imported_count"],
            mine[unreachable["id"]]["imported_count"]) == (0, 0)
    theirs = accounts(bob)
    assert (theirs[working["id"]]["imported_count"],
            theirs[working["id"]]["last_error"]) == (1, None)
    assert theirs[disabled["id"]]["last_checked_at"] is None
    assert query_sql(config, "SELECT last_checked_at FROM mail_account WHERE id = ?",
                     deactivated["id"]) == [(None,)]
    assert list(inbox(bob)) == ["policy.pdf"]
    assert inbox(alice) == {}
    assert flags(imap, mailbox) == {uid: {SEEN}}


@pytest.mark.socket  # concurrent requests on real threads
def test_many_checks_at_once_import_each_attachment_once(alice, mailbox, imap):
    for n in range(5):
        imap.append(*mailbox, message(f"Statement {n}", [
            (f"statement-{n}.pdf", samples.pdf([f"Statement {n}"]), "application/pdf")])[0])
    account = add_account(alice, mailbox, imap)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: alice.post(f"/api/mail-accounts/{account['id']}/check/"),
                                range(8)))
    # One check is queued; asking again while it is queued or running queues nothing more.
    assert [a.status_code for a in answers] == [202] * 8
    final = checked(alice, account["id"], None)["attributes"]
    assert final["imported_count"] == 5
    assert sorted(inbox(alice)) == [f"statement-{n}.pdf" for n in range(5)]


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
def test_a_restored_backup_still_reads_the_mail_accounts(alice, mailbox, imap, config, tmp_path,
                                                         request):
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
    server, thread = served(target)
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


def test_a_certificate_that_cannot_be_verified_is_refused(alice, mailbox, imap):
    """Dovecot's certificate here is self-signed: over IMAPS and over STARTTLS dms refuses it,
    logs nothing in and takes nothing."""
    uid = imap.append(*mailbox, message("Secret", [("secret.pdf", samples.pdf(["Secret"]),
                                                    "application/pdf")])[0])
    for security, port in (("ssl", imap.ssl_port), ("starttls", imap.port)):
        account = add_account(alice, mailbox, imap, host="localhost", security=security, port=port)
        checked = check(alice, account["id"])["attributes"]
        assert (checked["last_error"], checked["imported_count"]) == (
            "The mail server's certificate could not be verified: self-signed certificate.", 0)
    assert inbox(alice) == {}
    assert flags(imap, mailbox) == {uid: set()}


def test_a_message_with_too_many_attachments_says_what_it_left(alice, mailbox, imap):
    notes = [(f"note-{n:03}.txt", samples.text(f"Note {n}\n"), "text/plain") for n in range(101)]
    imap.append(*mailbox, message("Many notes", notes)[0])
    account = add_account(alice, mailbox, imap)
    checked = check(alice, account["id"])["attributes"]
    assert (checked["imported_count"], checked["last_error"]) == (
        100, "The message 'Many notes' has more than 100 attachments (or 500 parts); only the "
             "first were imported.")
    assert sorted(inbox(alice)) == [f"note-{n:03}.txt" for n in range(100)]
