"""Mail accounts (docs/api.md, "Mail accounts") against a real IMAP server: Debian's dovecot on
loopback (tests/harness/imapserver.py, started once for the module by tests/intake/conftest.py).
Attachments of accepted types become documents with their message's subject, sender and date; inline
pictures and messages without attachments are left alone; refused attachments are named in
last_error; flag and move; a wrong password and an unreachable server do not stop other accounts;
many checks at once import each attachment once; a certificate that cannot be verified is refused; a
message with too many attachments says what it left."""

from __future__ import annotations

import concurrent.futures

import pytest

from tests.harness import samples
from tests.harness.database import query_sql
from tests.harness.mail import (
    FLAGGED,
    MAIL_PASSWORD,
    SEEN,
    add_account,
    check,
    checked,
    flags,
    inbox,
    message,
    names,
)
from tests.harness.processes import free_port
from tests.harness.waiting import wait_for, wait_indexed


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
        100, "The message 'Many notes' has more than 100 attachments; only the first 100 were "
             "imported.")
    assert sorted(inbox(alice)) == [f"note-{n:03}.txt" for n in range(100)]
