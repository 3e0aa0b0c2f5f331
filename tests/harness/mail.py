"""Mail for the mail-account tests: a message with attachments, a mail account added through the
API, a check asked for and waited for, a user's inbox by title; the IMAP users' names and
password, and the flags of a mailbox's messages."""

from __future__ import annotations

import itertools
from email.message import EmailMessage
from email.utils import make_msgid

from tests.harness import samples
from tests.harness.waiting import wait_for

SEEN, FLAGGED = b"\\Seen", b"\\Flagged"
MAIL_PASSWORD = "imap-secret-1"
names = itertools.count(1)


def message(subject: str, attachments=(), sender="Stadtwerke Billing <billing@stadtwerke.example>",
            inline_picture: bool = False,
            date="Tue, 03 Nov 2026 10:15:00 +0100") -> tuple[bytes, str]:
    """A message with `attachments` [(file name, bytes, maintype/subtype)]; its Message-ID."""
    mail = EmailMessage()
    mail["Subject"], mail["From"], mail["To"] = subject, sender, "papers@example.org"
    mail["Date"] = date
    mail["Message-ID"] = message_id = make_msgid(domain="example.org")
    mail.set_content("Please find the documents attached.\n")
    if inline_picture:
        mail.add_alternative('<p>Hello <img src="cid:logo"></p>', subtype="html")
        mail.get_payload()[1].add_related(samples.png("Company logo"), "image", "png", cid="<logo>")
    for name, data, mime in attachments:
        maintype, subtype = mime.split("/")
        mail.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return bytes(mail), message_id


def account_body(box, imap, **attributes) -> dict:
    name, password = box
    return {"data": {"type": "mail-accounts", "attributes": {
        "host": "127.0.0.1", "port": imap.port, "security": "none", "username": name,
        "password": password, **attributes}}}


def add_account(client, box, imap, **attributes) -> dict:
    response = client.post("/api/mail-accounts/", account_body(box, imap, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def check(client, account_id, timeout: float = 60) -> dict:
    """Ask for a check (202 at once: it runs in the background) and wait for its result."""
    path = f"/api/mail-accounts/{account_id}/"
    before = client.get(path).json()["data"]["attributes"]["last_checked_at"]
    response = client.post(path + "check/")
    assert response.status_code == 202, response.text
    assert response.json()["data"]["id"] == account_id
    return checked(client, account_id, before, timeout)


def checked(client, account_id, before, timeout: float = 60) -> dict:
    """The account once a check that started after `before` (its last_checked_at) is over."""
    result = {}

    def done():
        result["data"] = client.get(f"/api/mail-accounts/{account_id}/").json()["data"]
        attributes = result["data"]["attributes"]
        return not attributes["checking"] and attributes["last_checked_at"] != before

    wait_for(done, timeout)
    return result["data"]


def inbox(client, folder_id=None) -> dict[str, dict]:
    data = client.get(f"/api/nodes/{folder_id or client.inbox_id}/?page[size]=100").json()["data"]
    return {item["attributes"]["title"]: item for item in data}


def flags(imap, mailbox, folder="INBOX") -> dict[int, set[bytes]]:
    return {uid: set(found) for uid, found in imap.messages(*mailbox, mailbox=folder).items()}
