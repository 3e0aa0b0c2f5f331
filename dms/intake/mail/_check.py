"""Checking one mail account: every attachment of an accepted type in a user's IMAP mailbox becomes
a document in their .inbox (or .inbox/<sender>), titled by its file name, with the message's
subject, sender, date and Message-ID kept on it (`document_mail`). Checks run in the background
(dms.intake.mail.checker); this module is one check.

Never twice, also across a crash: what was taken is remembered as (Message-ID, attachment SHA-256)
in the transaction that adds the document (`mail_import`); only after all of a message's
attachments are in is the mailbox told (the message marked seen, flagged, or moved), so a crash in
between leaves a message that the next check finds again and only tells. A message without an
attachment to take, or refused as a whole (too large, a header or MIME bomb:
dms.intake.mail._message), is left as it is, remembered (SHA-256 ''), and not fetched again.
Messages are read with BODY.PEEK, which changes no flag.

One account is checked by one process at a time (`checking_until`, claimed in the database). A
failed check (wrong password, no IMAP server there, certificate, mailbox) leaves the mailbox
untouched and writes its reason to `last_error`; refused attachments and messages are named there
too. The server decides nothing about the work (dms.intake.mail._client): messages larger than
DMS_MAIL_MAX_MESSAGE_MB are left in the mailbox, a check reads at most CHECK_BYTES_PER_MESSAGE
times that in all, holds at most one message's worth of the server's answer to one command, ends
when the server stalls (DMS_MAIL_STALL_SECONDS) and after DMS_MAIL_CHECK_SECONDS;
MAX_MESSAGES_PER_CHECK messages are fetched (the rest wait for the next check). A message is
fetched into a file in the data dir's tmp/, parsed from there, its attachments decoded into files
of their own (dms.intake.mail._message), and the files removed once it is handled. `last_error`
never quotes what a server said, and does not tell apart why a connection failed: an account must
not be a probe of other hosts' ports.
"""

from __future__ import annotations

import email.utils
import logging
import re
import shutil
import ssl
import time
from collections.abc import Iterator
from email import policy
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import TYPE_CHECKING, cast

import imapclient

from dms.db import database, write_transaction
from dms.db.models import MailAccount, Node, User, utcnow
from dms.domain import refusals, tree, uploads
from dms.domain.accounts import outbound_policy
from dms.domain.tags import IDS_PER_QUERY
from dms.errors import DomainError, StorageFull, Unavailable
from dms.files import sealing
from dms.intake.mail._client import AnswerTooLarge, BoundedClient, Budget, LiteralTooLarge, Spool
from dms.intake.mail._failures import CheckFailed, describe, reason_of
from dms.intake.mail._message import MAX_ATTACHMENTS, MessageLimits, MessageRefused, Origin, clean
from dms.intake.mail.unpacking import unpack_message

if TYPE_CHECKING:
    from dms.config import Config
    from dms.domain.services import Services

log = logging.getLogger("dms.mail")

MAX_MESSAGES_PER_CHECK = 200
# Messages a check looks at, oldest first, by Message-ID and size (no bodies): those it already
# handled are skipped there, so a mailbox full of mails without attachments costs headers only.
MAX_CANDIDATES = 20_000
HEADERS_PER_FETCH = 500
CHECK_BYTES_PER_MESSAGE = 16  # a check reads at most this many times the largest message
CLAIM_SECONDS = 300  # renewed after each message; a check that died leaves it this long
SEARCH_FOR = {"mark_seen": ["UNSEEN"], "flag": ["UNFLAGGED"], "move": ["ALL"]}
NOTHING = ""  # mail_import.sha256 of a message that held no attachment to take
MESSAGE_ID_FIELD = b"BODY[HEADER.FIELDS (MESSAGE-ID)]"


class FromMessage:
    """duplicates.ImportRule for attachments: a duplicate is the same bytes from the same message
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


def _remember_handled(owner_id: str, key: str) -> None:
    with write_transaction():
        _remember(owner_id, key, NOTHING)


def _without_attachments(owner_id: str, keys: list[str]) -> set[str]:
    """Those of `keys` that a check already found to hold no attachment to take."""
    found: set[str] = set()
    for start in range(0, len(keys), IDS_PER_QUERY):
        chunk = keys[start:start + IDS_PER_QUERY]
        found.update(key for (key,) in database.execute_sql(
            "SELECT message_id FROM mail_import WHERE owner_id = ? AND sha256 = ? "
            f"AND message_id IN ({','.join('?' * len(chunk))})", (owner_id, NOTHING, *chunk)))
    return found


def budget_of(config: Config) -> Budget:
    """What one check may read, and for how long."""
    return Budget(config.mail_max_message_bytes,
                  config.mail_max_message_bytes * CHECK_BYTES_PER_MESSAGE,
                  config.mail_check_seconds, config.mail_stall_seconds)


def check(services: Services, account: MailAccount, budget: Budget) -> bool:
    """Check one account within `budget`; False when another process is checking it."""
    if not _claim(account.id):
        return False
    problems: list[str] = []
    error = None
    try:
        _read_mailbox(services, account, problems, budget)
    except CheckFailed as failure:
        error = str(failure)
    except (StorageFull, Unavailable) as failure:
        error = f"The check stopped: {failure.message}"
    except Exception as failure:
        error = describe(failure, account)
    if error:
        log.warning("mail account %s (%s at %s): %s", account.id, account.username, account.host,
                    error)
    if problems:
        error = " ".join(([error] if error else []) + problems[:5]) + (
            f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
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
        return cast(bool, database.execute_sql(
            f"UPDATE mail_account SET checking_until = ? WHERE id = ?{condition}",
            (now + CLAIM_SECONDS, account_id) + (() if renew else (now,))).rowcount == 1)


def _read_mailbox(services: Services, account: MailAccount, problems: list[str],
                  budget: Budget) -> None:
    """Log in, list the messages not handled before and take them one by one, within `budget`.
    A failure is raised as what `reason_of` makes of it (a sentence for `last_error`)."""
    config = services.config
    password = _password(config, account)
    user = User.get_by_id(account.owner_id)
    logged_in, in_flight = False, None  # in_flight: the key of the message being taken
    client = spool = None
    try:
        spool = Spool(services.store.temporary_dir())  # the data dir's tmp/: swept after a crash
        client = BoundedClient(account.host, account.port, account.security == "ssl", budget,
                               outbound_policy(config, user))
        _log_in(client, account, password)
        logged_in = True
        messages = _new_messages(client, account, user.id)
        for uid, key in _within_bounds(messages, budget, problems, config.mail_max_message_mb):
            in_flight = key
            _claim(account.id, renew=True)
            _take_message(services, account, user, client, spool, uid, key, problems)
            in_flight = None
    except Exception as failure:
        if in_flight is not None and isinstance(failure, (LiteralTooLarge, AnswerTooLarge)):
            _remember_handled(user.id, in_flight)  # the server sent too much for it: not again
        reason = reason_of(failure, budget, config.mail_max_message_mb, logged_in,
                             in_flight is not None)
        if reason is None:
            raise
        raise reason from None
    finally:
        if client is not None:
            client.close_session()
        if spool is not None:
            shutil.rmtree(spool.folder, ignore_errors=True)


def _password(config: Config, account: MailAccount) -> str:
    try:
        return sealing.unseal(sealing.load_key(config.data_dir), account.password, account.id)
    except sealing.Unsealable:
        raise CheckFailed("The password cannot be read with this server's key (mail.key in "
                          "its data dir); set the password again.") from None


def _log_in(client: BoundedClient, account: MailAccount, password: str) -> None:
    if account.security == "starttls":
        client.starttls(ssl.create_default_context())
    client.log_in(account.username, password)


def _new_messages(client: BoundedClient, account: MailAccount,
                  owner_id: str) -> list[tuple[int, str, int]]:
    """(uid, key, size) of the mailbox's messages to look at (unseen, unflagged or all, as the
    account tells the mailbox), oldest first, without those handled before."""
    _check_folders(client, account)
    selected = client.select_folder(account.mailbox)
    uids = sorted(client.search(SEARCH_FOR[account.after_import]))[:MAX_CANDIDATES]
    keys, sizes = _message_keys(client, account, selected.get(b"UIDVALIDITY"), uids)
    handled = _without_attachments(owner_id, list(keys.values()))
    return [(uid, keys[uid], sizes.get(uid, 0)) for uid in uids
            if keys.get(uid) is not None and keys[uid] not in handled]


def _within_bounds(messages: list[tuple[int, str, int]], budget: Budget, problems: list[str],
                   max_mb: float) -> Iterator[tuple[int, str]]:
    """(uid, key) of the messages this check fetches: none larger than a message may be (each
    named in `problems`, as it comes), at most MAX_MESSAGES_PER_CHECK, and half the session's
    bytes in all; the rest wait for the next check."""
    fetched, planned = 0, 0
    for uid, key, size in messages:
        if size > budget.literal_limit:
            problems.append(f"A message of {size / 2**20:.0f} MiB is larger than {max_mb} MiB "
                            "(DMS_MAIL_MAX_MESSAGE_MB) and was left in the mailbox.")
            continue
        planned += max(size, 1)
        if fetched >= MAX_MESSAGES_PER_CHECK or planned > budget.session_limit / 2:
            return
        fetched += 1
        yield uid, key


def _take_message(services: Services, account: MailAccount, user: User, client: BoundedClient,
                  spool: Spool, uid: int, key: str, problems: list[str]) -> None:
    """Fetch one message into the spool, import its attachments, then tell the mailbox; one
    with nothing to take is remembered instead. The spool is emptied whatever happens."""
    try:
        path = client.fetch_message(uid, spool)
        if path is None:  # deleted meanwhile
            return
        if _import_message(services, account, user, path, key, problems, client.budget,
                           spool.folder):
            _tell_mailbox(client, account, uid)
        else:
            _remember_handled(user.id, key)
    finally:
        spool.clear()


def _check_folders(client: BoundedClient, account: MailAccount) -> None:
    if not client.folder_exists(account.mailbox):
        raise CheckFailed(f"The mailbox {clean(account.mailbox)!r} does not exist on the server.")
    if account.after_import == "move" and not client.folder_exists(account.move_to):
        # after_import "move" always comes with a move_to (dms.domain.mailaccounts).
        raise CheckFailed(f"The mailbox {clean(account.move_to)!r} (move_to) does not exist on "  # type: ignore[arg-type]
                          "the server.")


def _message_keys(client: BoundedClient, account: MailAccount, uidvalidity: object,
                  uids: list[int]) -> tuple[dict[int, str], dict[int, int]]:
    """{uid: the message's key} (its Message-ID, or for a message without one its place in
    the mailbox) and {uid: size}, read in batches without fetching bodies."""
    keys: dict[int, str] = {}
    sizes: dict[int, int] = {}
    wanted = set(uids)
    for start in range(0, len(uids), HEADERS_PER_FETCH):
        batch = uids[start:start + HEADERS_PER_FETCH]
        for uid, data in client.fetch(batch, ["RFC822.SIZE",
                                              "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]"]).items():
            if uid not in wanted:
                continue  # a server answering for messages it was not asked about
            header = BytesHeaderParser(policy=policy.compat32).parsebytes(
                data.get(MESSAGE_ID_FIELD, b"")[:4096])
            message_id = clean(str(header.get("Message-ID") or ""))
            keys[uid] = message_id or f"uid:{account.id}/{uidvalidity}/{uid}"
            size = data.get(b"RFC822.SIZE", 0)
            sizes[uid] = size if isinstance(size, int) else 0
    return keys, sizes


def _import_message(services: Services, account: MailAccount, user: User, path: Path,
                    key: str, problems: list[str], budget: Budget, folder: Path) -> bool:
    """Import the attachments of the message in the file `path`, each decoded into a file of
    `folder` first (dms.intake.mail.unpacking); False when it has none to take or is
    refused."""
    config = services.config
    limits = MessageLimits(config.mail_max_header_kb, config.mail_max_multiparts)
    try:
        unpacked = unpack_message(path, folder, key, limits, budget, config.mail_max_message_mb)
    except MessageRefused as refused:
        log.warning("mail account %s: the message %r was refused: %s", account.id, key, refused)
        problems.append(f"The message {clean(key)[:100]!r} was refused: {refused}; it is left "
                        "in the mailbox.")
        refusals.record(user.id, "mail", clean(key)[:100],
                        f"The message was refused: {refused}; it is left in the mailbox.")
        return False
    origin = unpacked.origin
    files = [(name[:uploads.MAX_FILE_NAME_LENGTH], saved) for name, saved in unpacked.files]
    if not files:
        return False
    if unpacked.cut:
        problems.append(f"The message {origin.subject!r} has more than {MAX_ATTACHMENTS} "
                        f"attachments; only the first {MAX_ATTACHMENTS} were imported.")
    folder_id = tree.special_folder(user, Node.INBOX).id
    if account.folder_per_sender:
        folder_id = tree.child_folder(user, folder_id, sender_folder(origin.sender),
                                      config.max_tree_depth, source="mail")[0].id
    rule = FromMessage(account, origin)
    for name, saved in files:
        try:
            with open(saved, "rb") as stream:
                documents = uploads.import_into_folder(services, user, folder_id, stream,
                                                         saved.stat().st_size, name, rule,
                                                         source="mail",
                                                         split=config.split_on_barcode)
        except (StorageFull, Unavailable):
            raise
        except DomainError as refused:
            log.warning("mail account %s: %r in the message %r was refused: %s", account.id,
                        name, origin.subject, refused.message)
            problems.append(f"{name!r} in the message {origin.subject!r} was refused: "
                            f"{refused.message}")
            refusals.record(user.id, "mail", name, refused.message, origin.subject)
            continue
        if documents:
            log.info("mail account %s: imported %r from the message %r", account.id, name,
                     origin.subject)
    return True


def sender_folder(sender: str) -> str:
    """The title of the folder of .inbox that a sender's attachments go to."""
    address = email.utils.parseaddr(sender)[1].lower()
    title = re.sub(r"[/\\]", "_", clean(address))[:tree.MAX_TITLE_LENGTH]
    return title if title.strip(". ") else "unknown sender"


def _tell_mailbox(client: BoundedClient, account: MailAccount, uid: int) -> None:
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
