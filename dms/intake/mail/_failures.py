"""What a failed check of a mail account is told as: the sentence for the account's `last_error`.
The sentences never quote what a server said, and before a login was answered every failure to
reach an IMAP server reads the same: an account must not be a probe of other hosts' ports."""

from __future__ import annotations

import logging
import socket
import ssl

from imapclient.exceptions import IMAPClientError, LoginError

from dms.db import is_disk_full
from dms.db.models import MailAccount
from dms.errors import StorageFull
from dms.files.outbound import Refused
from dms.files.outbound.policy import ResolveTimeout
from dms.intake.mail._client import (
    STALL_FLOOR,
    AnswerTooLarge,
    Budget,
    LiteralTooLarge,
    SessionTooLarge,
    Stalled,
    Unsendable,
)

log = logging.getLogger("dms.mail")


class CheckFailed(Exception):
    """The account could not be read; the message is the sentence for `last_error`."""


def reason_of(failure: Exception, budget: Budget, max_mb: float, logged_in: bool,
              in_flight: bool) -> Exception | None:
    """What a check's failure is raised as: CheckFailed with the sentence for `last_error`,
    StorageFull, or a ConnectionError that `describe` words as any unreachable port; None when
    it stays itself (`describe` words it). `in_flight`: a message was being taken."""
    if isinstance(failure, LiteralTooLarge):
        # The server announced more than any message may have: the session cannot go on (those
        # bytes are on the wire); the message it was sending is not asked for again.
        return CheckFailed(f"The mail server sent a message of {failure.size / 2**20:.0f} MiB, "
                           f"more than {max_mb} MiB (DMS_MAIL_MAX_MESSAGE_MB); the check was "
                           "stopped and that message is left in the mailbox.")
    if isinstance(failure, AnswerTooLarge):
        # More in answer to one command than the message it asked for (literals of other
        # messages, endless untagged lines): imaplib would hold all of it until the command ends.
        return CheckFailed(f"The mail server sent more than {budget.answer_limit / 2**20:.0f} MiB "
                           f"in answer to one request, more than a message of {max_mb} MiB "
                           "(DMS_MAIL_MAX_MESSAGE_MB) needs; the check was stopped"
                           + (" and that message is left in the mailbox." if in_flight
                              else "."))
    if isinstance(failure, SessionTooLarge):
        return CheckFailed(f"The mail server sent more than {budget.session_limit / 2**20:.0f} "
                           "MiB in one check; the check was stopped and goes on at the next "
                           "one.")
    if is_disk_full(failure):
        return StorageFull()
    if logged_in and (budget.expired or isinstance(failure, (Stalled, TimeoutError))):
        return CheckFailed(_stopped(failure, budget))
    if budget.expired or isinstance(failure, Stalled):
        # a silent or trickling port reads as any other unreachable one
        return ConnectionError("the session ended before the server answered")
    return None


def describe(failure: Exception, account: MailAccount) -> str:
    """A sentence for what went wrong talking to the server. Before a login was answered, every
    failure to reach an IMAP server reads the same: which of refused, silent, reset or another
    protocol it was would tell a user which ports of which hosts are open."""
    where = f"{account.host}:{account.port}"
    if isinstance(failure, LoginError):
        return "The mail server refused the username or password."
    if isinstance(failure, Unsendable):
        return ("The username or password holds a character that cannot be sent to a mail "
                "server; set it again.")
    if isinstance(failure, Refused):  # decided before any connection: tells nothing of ports
        return f"The mail server was not contacted: {failure}"
    if isinstance(failure, (socket.gaierror, ResolveTimeout)):
        return f"The mail server {account.host} was not found (no such host name)."
    if isinstance(failure, ssl.SSLCertVerificationError):
        return f"The mail server's certificate could not be verified: {failure.verify_message}."
    if isinstance(failure, (OSError, IMAPClientError, EOFError)):
        return (f"No IMAP server could be reached at {where} (nothing answered, the connection "
                "was refused or cut, or what answered was not an IMAP server).")
    log.exception("mail account %s: unexpected failure", account.id)
    return f"The check failed unexpectedly ({type(failure).__name__}); see the server's log."


def _stopped(failure: Exception, budget: Budget) -> str:
    """Why a session that had logged in was ended by its time bounds."""
    if isinstance(failure, Stalled):
        return (f"The mail server sent less than {STALL_FLOOR // 1024} KiB in "
                f"{budget.stall_seconds:g} s (DMS_MAIL_STALL_SECONDS); the check was stopped "
                "and goes on at the next one.")
    if isinstance(failure, TimeoutError):
        return (f"The mail server sent nothing for {budget.stall_seconds:g} s "
                "(DMS_MAIL_STALL_SECONDS); the check was stopped and goes on at the next one.")
    return (f"The check took longer than {budget.seconds:g} s (DMS_MAIL_CHECK_SECONDS) and was "
            "stopped; it goes on at the next one.")
