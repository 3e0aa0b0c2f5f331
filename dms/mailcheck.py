"""Checking mail accounts (issue 16, api.md §8c): every attachment of an accepted type in a
user's IMAP mailbox becomes a document in their .inbox (or .inbox/<sender>), titled by its file
name, with the message's subject, sender, date and Message-ID kept on it (`document_mail`).

Never twice, also across a crash: what was taken is remembered as (Message-ID, attachment SHA-256)
in the transaction that adds the document (`mail_import`); only after all of a message's
attachments are in is the mailbox told (the message marked seen, flagged, or moved), so a crash in
between leaves a message that the next check finds again and only tells. A message without an
attachment to take is left as it is, remembered (SHA-256 ''), and not fetched again. Messages
are read with BODY.PEEK, which changes no flag.

One account is checked by one process at a time (`checking_until`, claimed in the database);
accounts are checked side by side, so a slow or unreachable server delays only its own. A failed
check (wrong password, no such host, certificate, mailbox) leaves the mailbox untouched and
writes its reason to `last_error`; refused attachments (wrong type, too big, damaged) are named
there too and in the log. Bounded: MAX_MESSAGES_PER_CHECK messages fetched per check (the rest
next time), messages over the upload limit (plus MIME's overhead) left in the mailbox, socket
timeouts on every exchange; dms.mailmessage bounds the parts of one message."""

from __future__ import annotations

import concurrent.futures
import io
import logging
import socket
import ssl
import time
from email import policy
from email.parser import BytesHeaderParser, BytesParser
from typing import TYPE_CHECKING

import imapclient
from imapclient.exceptions import IMAPClientError, LoginError

from dms import documents, sealing, tree
from dms.db import database, write_transaction
from dms.errors import Conflict, DomainError, StorageFull, Unavailable
from dms.mailaccounts import owned_account
from dms.mailmessage import (MAX_ATTACHMENTS, MAX_PARTS, Origin, attachments, clean,
                             file_name, origin_of, sender_folder)
from dms.models import MailAccount, Node, User, utcnow
from dms.tags import IDS_PER_QUERY

if TYPE_CHECKING:
    from dms.services import Services

log = logging.getLogger("dms.mail")

MAX_MESSAGES_PER_CHECK = 200
# Messages a check looks at, oldest first, by Message-ID and size (no bodies): those it already
# handled are skipped there, so a mailbox full of mails without attachments costs headers only.
MAX_CANDIDATES = 20_000
HEADERS_PER_FETCH = 500
CONNECT_TIMEOUT, READ_TIMEOUT = 15, 60
CLAIM_SECONDS = 300  # renewed after each message; a check that died leaves it this long
PARALLEL_CHECKS = 4
SEARCH_FOR = {"mark_seen": ["UNSEEN"], "flag": ["UNFLAGGED"], "move": ["ALL"]}
NOTHING = ""  # mail_import.sha256 of a message that held no attachment to take
MESSAGE_ID_FIELD = b"BODY[HEADER.FIELDS (MESSAGE-ID)]"


class CheckFailed(Exception):
    """The account could not be read; the message is the sentence for `last_error`."""


class FromMessage:
    """documents.ImportRule for attachments: a duplicate is the same bytes from the same message
    (also from another of the user's accounts); a new document gets its Origin."""

    def __init__(self, account: MailAccount, origin: Origin):
        self.account, self.origin = account, origin

    def holds(self, user: User, folder_id: str, sha256: str) -> bool:
        return _taken(user.id, self.origin.message_id, sha256)

    def added(self, user: User, document: Node, sha256: str) -> None:
        origin = self.origin
        _remember(user.id, origin.message_id, sha256)
        database.execute_sql(
            "INSERT INTO document_mail (document_id, subject, sender, sent_at, message_id) "
            "VALUES (?, ?, ?, ?, ?)",
            (document.id, origin.subject, origin.sender, origin.sent_at, origin.message_id))
        database.execute_sql("UPDATE mail_account SET imported_count = imported_count + 1 "
                             "WHERE id = ?", (self.account.id,))


def _taken(owner_id: str, message_id: str, sha256: str) -> bool:
    return database.execute_sql(
        "SELECT 1 FROM mail_import WHERE owner_id = ? AND message_id = ? AND sha256 = ?",
        (owner_id, message_id, sha256)).fetchone() is not None


def _remember(owner_id: str, message_id: str, sha256: str) -> None:
    database.execute_sql("INSERT INTO mail_import (owner_id, message_id, sha256) VALUES (?, ?, ?) "
                         "ON CONFLICT DO NOTHING", (owner_id, message_id, sha256))


def _without_attachments(owner_id: str, keys: list[str]) -> set[str]:
    """Those of `keys` that a check already found to hold no attachment to take."""
    found = set()
    for start in range(0, len(keys), IDS_PER_QUERY):
        chunk = keys[start:start + IDS_PER_QUERY]
        found.update(key for (key,) in database.execute_sql(
            "SELECT message_id FROM mail_import WHERE owner_id = ? AND sha256 = ? "
            f"AND message_id IN ({','.join('?' * len(chunk))})", (owner_id, NOTHING, *chunk)))
    return found


def mail_of(document_ids: list[str]) -> dict[str, dict]:
    """{document id: attributes.mail} of those documents that came by mail."""
    result = {}
    for start in range(0, len(document_ids), IDS_PER_QUERY):
        chunk = document_ids[start:start + IDS_PER_QUERY]
        rows = database.execute_sql(
            "SELECT document_id, subject, sender, sent_at, message_id FROM document_mail "
            f"WHERE document_id IN ({','.join('?' * len(chunk))})", chunk)
        for document_id, subject, sender, sent_at, message_id in rows:
            result[document_id] = {"subject": subject, "from": sender, "date": sent_at,
                                   "message_id": message_id}
    return result


# -- checking -----------------------------------------------------------------------------------

def check_now(services: Services, user: User, account_id: str) -> MailAccount:
    """POST /mail-accounts/{id}/check/: check the caller's account now (also when disabled)."""
    account = owned_account(user, account_id)
    if not check(services, account):
        raise Conflict("This mail account is being checked right now; its result will show in "
                       "last_checked_at and last_error in a moment.")
    return MailAccount.get_by_id(account.id)


def check_all(services: Services) -> None:
    """The periodic job: every enabled account of an active user, PARALLEL_CHECKS at a time."""
    accounts = list(MailAccount.select().join(User).where(
        MailAccount.enabled == True, User.is_active == True))  # noqa: E712
    if not accounts:
        return

    def one(account: MailAccount) -> None:
        try:
            check(services, account)
        except Exception:  # one account's trouble never stops the others
            log.exception("mail account %s: the check failed", account.id)
        finally:
            database.close()

    with concurrent.futures.ThreadPoolExecutor(PARALLEL_CHECKS, "dms-mail") as pool:
        list(pool.map(one, accounts))


def check(services: Services, account: MailAccount) -> bool:
    """Check one account; False when another process is checking it."""
    if not _claim(account.id):
        return False
    problems: list[str] = []
    error = None
    try:
        _read_mailbox(services, account, problems)
    except CheckFailed as failure:
        error = str(failure)
    except (StorageFull, Unavailable) as failure:
        error = f"The check stopped: {failure.message}"
    except Exception as failure:
        error = _describe(failure, account)
    if error:
        log.warning("mail account %s (%s at %s): %s", account.id, account.username, account.host,
                    error)
    elif problems:
        error = " ".join(problems[:5]) + (f" (and {len(problems) - 5} more)"
                                          if len(problems) > 5 else "")
    with write_transaction():
        database.execute_sql(
            "UPDATE mail_account SET checking_until = NULL, last_checked_at = ?, last_error = ? "
            "WHERE id = ?", (MailAccount.last_checked_at.db_value(utcnow()), error, account.id))
    return True


def _claim(account_id: str, renew: bool = False) -> bool:
    """Claim the account for a check (False: another process checks it), or renew our claim."""
    now = time.time()
    condition = "" if renew else " AND (checking_until IS NULL OR checking_until < ?)"
    with write_transaction():
        return database.execute_sql(
            f"UPDATE mail_account SET checking_until = ? WHERE id = ?{condition}",
            (now + CLAIM_SECONDS, account_id) + (() if renew else (now,))).rowcount == 1


def release_claims() -> None:
    """At the start of a process that is the only one (the embedded queue): claims left are its
    own last run's, cut short by a crash."""
    with write_transaction():
        database.execute_sql("UPDATE mail_account SET checking_until = NULL "
                             "WHERE checking_until IS NOT NULL")


def _describe(failure: Exception, account: MailAccount) -> str:
    """A sentence for what went wrong talking to the server."""
    where = f"{account.host}:{account.port}"
    if isinstance(failure, LoginError):
        return "The mail server refused the username or password."
    if isinstance(failure, socket.gaierror):
        return f"The mail server {account.host} was not found (no such host name)."
    if isinstance(failure, ConnectionRefusedError):
        return f"The mail server at {where} refused the connection."
    if isinstance(failure, (socket.timeout, TimeoutError)):
        return f"The mail server at {where} did not answer in time."
    if isinstance(failure, ssl.SSLCertVerificationError):
        return f"The mail server's certificate could not be verified: {failure.verify_message}."
    if isinstance(failure, ssl.SSLError):
        return f"A secure connection to {where} failed ({failure.reason or failure})."
    if isinstance(failure, OSError):
        return f"The mail server at {where} could not be reached ({failure.strerror or failure})."
    if isinstance(failure, IMAPClientError):
        return f"The mail server answered with an error: {clean(str(failure))}"
    log.exception("mail account %s: unexpected failure", account.id)
    return f"The check failed unexpectedly ({type(failure).__name__}); see the server's log."


def _connect(account: MailAccount) -> imapclient.IMAPClient:
    context = ssl.create_default_context()
    client = imapclient.IMAPClient(
        account.host, port=account.port, ssl=account.security == "ssl", ssl_context=context,
        timeout=imapclient.SocketTimeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT))
    if account.security == "starttls":
        client.starttls(context)
    return client


def _read_mailbox(services: Services, account: MailAccount, problems: list[str]) -> None:
    try:
        password = sealing.unseal(sealing.load_key(services.config.data_dir), account.password,
                                  account.id)
    except sealing.Unsealable:
        raise CheckFailed("The password cannot be read with this server's key (mail.key in "
                          "its data dir); set the password again.") from None
    user = User.get_by_id(account.owner_id)
    client = _connect(account)
    try:
        client.login(account.username, password)
        if not client.folder_exists(account.mailbox):
            raise CheckFailed(f"The mailbox {account.mailbox!r} does not exist on the server.")
        if account.after_import == "move" and not client.folder_exists(account.move_to):
            raise CheckFailed(f"The mailbox {account.move_to!r} (move_to) does not exist on "
                              "the server.")
        selected = client.select_folder(account.mailbox)
        uids = sorted(client.search(SEARCH_FOR[account.after_import]))[:MAX_CANDIDATES]
        keys, sizes = _message_keys(client, account, selected.get(b"UIDVALIDITY"), uids)
        limit = services.config.max_upload_bytes * 4 // 3 + 1024 * 1024  # base64 and headers
        handled = _without_attachments(user.id, list(keys.values()))
        fetched = 0
        for uid in uids:
            key = keys.get(uid)
            if key is None or key in handled:
                continue
            if sizes.get(uid, 0) > limit:
                problems.append(f"A message of {sizes[uid] // (1024 * 1024)} MiB is larger than "
                                f"the upload limit and was left in the mailbox.")
                continue
            if fetched >= MAX_MESSAGES_PER_CHECK:
                break
            fetched += 1
            _claim(account.id, renew=True)
            raw = client.fetch([uid], ["BODY.PEEK[]"]).get(uid, {}).get(b"BODY[]")
            if raw is None:  # deleted meanwhile
                continue
            if _import_message(services, account, user, raw, key, problems):
                _tell_mailbox(client, account, uid)
            else:
                with write_transaction():
                    _remember(user.id, key, NOTHING)
    finally:
        try:
            client.logout()
        except Exception:  # the connection may already be gone; nothing is left to tell it
            client.shutdown()


def _message_keys(client, account: MailAccount, uidvalidity, uids: list[int]):
    """{uid: the message's key} (its Message-ID, or for a message without one its place in
    the mailbox) and {uid: size}, read in batches without fetching bodies."""
    keys, sizes = {}, {}
    for start in range(0, len(uids), HEADERS_PER_FETCH):
        batch = uids[start:start + HEADERS_PER_FETCH]
        for uid, data in client.fetch(batch, ["RFC822.SIZE",
                                              "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]"]).items():
            header = BytesHeaderParser(policy=policy.compat32).parsebytes(
                data.get(MESSAGE_ID_FIELD, b""))
            message_id = clean(str(header.get("Message-ID") or ""))
            keys[uid] = message_id or f"uid:{account.id}/{uidvalidity}/{uid}"
            sizes[uid] = data.get(b"RFC822.SIZE", 0)
    return keys, sizes


def _import_message(services: Services, account: MailAccount, user: User, raw: bytes,
                    key: str, problems: list[str]) -> bool:
    """Import the message's attachments; False when it has none to take."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    parts, cut = attachments(message)
    if not parts:
        return False
    origin = origin_of(message, key)
    if cut:
        problems.append(f"The message {origin.subject!r} has more than {MAX_ATTACHMENTS} "
                        f"attachments (or {MAX_PARTS} parts); only the first were imported.")
    folder_id = tree.special_folder(user, Node.INBOX).id
    if account.folder_per_sender:
        folder_id = tree.child_folder(user, folder_id, sender_folder(origin.sender),
                                      services.config.max_tree_depth)[0].id
    rule = FromMessage(account, origin)
    for index, part in enumerate(parts, 1):
        name = file_name(part, index)
        payload = part.get_payload(decode=True) or b""
        try:
            document = documents.import_into_folder(services, user, folder_id,
                                                    io.BytesIO(payload), len(payload), name, rule)
        except (StorageFull, Unavailable):
            raise
        except DomainError as refused:
            log.warning("mail account %s: %r in the message %r was refused: %s", account.id,
                        name, origin.subject, refused.message)
            problems.append(f"{name!r} in the message {origin.subject!r} was refused: "
                            f"{refused.message}")
            continue
        if document is not None:
            log.info("mail account %s: imported %r from the message %r", account.id, name,
                     origin.subject)
    return True


def _tell_mailbox(client, account: MailAccount, uid: int) -> None:
    if account.after_import == "mark_seen":
        client.add_flags([uid], [imapclient.SEEN], silent=True)
    elif account.after_import == "flag":
        client.add_flags([uid], [imapclient.FLAGGED], silent=True)
    elif client.has_capability("MOVE"):
        client.move([uid], account.move_to)
    else:
        client.copy([uid], account.move_to)
        client.add_flags([uid], [imapclient.DELETED], silent=True)
        client.uid_expunge([uid]) if client.has_capability("UIDPLUS") else client.expunge()
