"""What dms takes from one e-mail message (dms.mailcheck reads them): its attachments, the
Origin a document keeps (subject, sender, date, Message-ID), and names made safe to show.
Bounded: at most MAX_PARTS MIME parts walked and MAX_ATTACHMENTS attachments per message."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import re
from email.message import EmailMessage

from dms import documents, tree
from dms.textrules import is_refused_character

MAX_PARTS = 500
MAX_ATTACHMENTS = 100
MAX_HEADER_LENGTH = 500


@dataclasses.dataclass(frozen=True)
class Origin:
    """The message a document came by (attributes.mail)."""
    message_id: str
    subject: str
    sender: str
    sent_at: str | None


def attachments(message: EmailMessage) -> tuple[list[EmailMessage], bool]:
    """The parts a person would call attachments: those marked so, and named parts that are not
    pictures inside an HTML body (those carry a Content-ID and are shown inline); and whether
    the message held more than the bounds let through."""
    found = []
    for count, part in enumerate(message.walk()):
        if count >= MAX_PARTS or len(found) >= MAX_ATTACHMENTS:
            return found, True
        if part.is_multipart():
            continue
        disposition = part.get_content_disposition()
        if disposition == "attachment":
            found.append(part)
        elif part.get_filename() and part.get("Content-ID") is None:
            found.append(part)
    return found, False


def origin_of(message: EmailMessage, key: str) -> Origin:
    sent_at = None
    try:  # in UTC, as every time dms answers with; a date without a zone is taken as UTC
        parsed = email.utils.parsedate_to_datetime(_header(message, "Date"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.timezone.utc)
        sent_at = parsed.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, IndexError, OverflowError):
        pass
    return Origin(key, clean(_header(message, "Subject")), clean(_header(message, "From")),
                  sent_at)


def _header(message: EmailMessage, name: str) -> str:
    try:
        return str(message.get(name) or "")
    except Exception:  # a header too broken to decode is shown empty, not fatal
        return ""


def clean(text: str) -> str:
    """A header as one line of at most MAX_HEADER_LENGTH visible characters."""
    text = "".join(" " if is_refused_character(c) else c for c in text)
    return re.sub(r"\s+", " ", text).strip()[:MAX_HEADER_LENGTH]


def sender_folder(sender: str) -> str:
    address = email.utils.parseaddr(sender)[1].lower()
    title = re.sub(r"[/\\]", "_", clean(address))[:tree.MAX_TITLE_LENGTH]
    return title if title.strip(". ") else "unknown sender"


def file_name(part: EmailMessage, index: int) -> str:
    """The attachment's own name, made a valid file name (it is only ever a title and a
    download name, never a path); a nameless one is `attachment-<n>`."""
    try:
        name = part.get_filename() or ""
    except Exception:
        name = ""
    name = clean(name.replace("/", "_").replace("\\", "_")).strip(". ")
    if not name:
        name = f"attachment-{index}"
    return name[:documents.MAX_FILE_NAME_LENGTH]
