"""What dms takes from one e-mail message (dms.intake.mail._check reads them): its attachments, the
Origin a document keeps (subject, sender, date, Message-ID), and names made safe to show.

A message is read from the file it was fetched into (dms.intake.mail._client's Spool), never from
memory, and each attachment is decoded into a file of its own in pieces (`save_payload`), for the
upload path to take from there.

A message is hostile input from anyone who can send mail, so its parsing is bounded:
- it is parsed with `compat32`, which keeps header values as they came: `policy.default`'s
  structured header parser is quadratic in the encoded words of one header (a 381 KB Subject of
  encoded words took 3 GB). A header longer than DMS_MAIL_MAX_HEADER_KB refuses the message.
- before parsing, the message's own header section is measured: more than
  MAX_HEADER_SECTION_BYTES, or more than MAX_HEADER_FIELDS fields, refuses it (a 9.5 MB message
  of 2,000,000 tiny headers took 18.6 s and 328 MiB to parse); its lines are counted, more than
  MAX_LINES refuses it (the parser keeps an object of some 60 bytes per line: 23 MB of empty
  lines took 1 GB); while parsing, the fields of all its MIME parts together are counted, more
  than MAX_FIELDS_IN_ALL refuses it.
- multipart containers are counted as the parser reads their headers, before it descends into
  them (it recurses once per level: 5,000 levels raised RecursionError and failed every check of
  the account); more than DMS_MAIL_MAX_MULTIPARTS refuse the message (a nesting the count misses
  still ends in RecursionError, which refuses it too).
- the few headers dms shows are decoded from at most MAX_DECODED characters of their value;
- a message of more than MAX_PARTS MIME parts is refused whole (the parts past it were once
  skipped, and an attachment among them was lost without a word); of the rest, at most
  MAX_ATTACHMENTS attachments are taken and the message is named when it has more.
A refused message is named in the account's last_error and remembered, never fetched again.
"""

from __future__ import annotations

import binascii
import dataclasses
import datetime as dt
import email.utils
import itertools
import re
from collections.abc import Iterator
from email.feedparser import BytesFeedParser
from email.header import decode_header, make_header
from email.message import Message
from email.policy import Compat32
from pathlib import Path
from typing import Any, BinaryIO

from dms.config import Config
from dms.files.fairness import yield_to_requests
from dms.text import is_refused_character

MAX_PARTS = 500
MAX_ATTACHMENTS = 100
MAX_HEADER_LENGTH = 500  # characters of a subject, sender or name that are kept
MAX_HEADER_SECTION_BYTES = 256 * 1024  # the message's own header section, before parsing
MAX_HEADER_FIELDS = 1000  # fields of the message's own header section, before parsing
MAX_FIELDS_IN_ALL = 10_000  # header fields of the message and its MIME parts, while parsing
MAX_LINES = 1_000_000  # lines of the whole message (a 25 MiB message of base64 has 340,000)
MAX_DECODED = 4 * 1024  # characters of a header value decoded for display
HEADER_END = re.compile(rb"\r?\n\r?\n")  # the blank line after the header section
FIELD_START = re.compile(rb"(?m)^[^ \t\r\n]")  # a line that is not a folded continuation
NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/=]")  # what a base64 decoder skips
PIECE = 2**20  # the characters of a payload decoded at a time, and the bytes of a file read
FEED_BYTES = 64 * 1024  # the bytes of a message given to the parser at a time
UUENCODE = ("x-uuencode", "uuencode", "uue", "x-uue")  # the email package's names for it


class MessageRefused(Exception):
    """The message cannot be taken safely; the message says why, for last_error."""


@dataclasses.dataclass(frozen=True)
class MessageLimits:
    """The bounds a setting changes: one header's length, folded lines together
    (DMS_MAIL_MAX_HEADER_KB), and multipart containers (DMS_MAIL_MAX_MULTIPARTS); the defaults are
    the settings'."""
    max_header_kb: int = Config.mail_max_header_kb
    max_multiparts: int = Config.mail_max_multiparts


class _BoundedPolicy(Compat32):
    """compat32, refusing a header longer than `max_header_kb`, more than MAX_FIELDS_IN_ALL
    headers in all, and more than `max_multiparts` multipart containers, as they are read. One
    for each parse (`fields` and `multiparts` count that parse's)."""

    fields: Any = None  # itertools.count, given to each parse's own policy
    multiparts: Any = None  # the same
    max_header_kb = MessageLimits.max_header_kb
    max_multiparts = MessageLimits.max_multiparts

    def header_source_parse(self, sourcelines: list[str]) -> tuple[str, str]:
        if next(self.fields) > MAX_FIELDS_IN_ALL:
            raise MessageRefused(f"it has more than {MAX_FIELDS_IN_ALL:,} header fields in all "
                                 "its parts")
        if sum(len(line) for line in sourcelines) > self.max_header_kb * 1024:
            raise MessageRefused(f"one of its headers is longer than {self.max_header_kb} KiB "
                                 "(DMS_MAIL_MAX_HEADER_KB)")
        name, value = super().header_source_parse(sourcelines)
        if name.lower() == "content-type" and _is_multipart(value) \
                and next(self.multiparts) > self.max_multiparts:
            raise MessageRefused(f"it has more than {self.max_multiparts} nested MIME parts "
                                 "(DMS_MAIL_MAX_MULTIPARTS)")
        return name, value


def _is_multipart(content_type: str) -> bool:
    """Whether the parser takes a part of this Content-Type for a container (as
    Message.get_content_maintype reads it)."""
    ctype = content_type.partition(";")[0].strip().lower()
    return ctype.count("/") == 1 and ctype.split("/")[0] == "multipart"


@dataclasses.dataclass(frozen=True)
class Origin:
    """The message a document came by (attributes.mail)."""
    message_id: str
    subject: str
    sender: str
    sent_at: str | None


def parse(path: Path, limits: MessageLimits = MessageLimits()) -> Message:
    """The message in the file `path`, parsed with bounded work, or MessageRefused."""
    # A Policy takes its class's attributes as keywords (its stubs know only email's own).
    policy = _BoundedPolicy(fields=itertools.count(1), multiparts=itertools.count(1),  # type: ignore[call-arg]
                            max_header_kb=limits.max_header_kb,
                            max_multiparts=limits.max_multiparts)
    with open(path, "rb") as stream:
        _check_shape(stream)
        stream.seek(0)
        parser = BytesFeedParser(policy=policy)
        try:
            # Fed a piece at a time, giving way to requests between pieces: parsing 25 MiB in Python
            # takes seconds of the interpreter that requests share.
            while piece := stream.read(FEED_BYTES):
                yield_to_requests()
                parser.feed(piece)
            return parser.close()
        except RecursionError:  # a nesting that the count did not see: still refused
            raise MessageRefused("its MIME parts are nested too deeply") from None


def _check_shape(stream: BinaryIO) -> None:
    """Refuse, before the parser sees it, a message whose header section or number of lines
    would make its parsing costly. Lines end as the parser splits them: at CR, LF or CRLF (a
    CRLF cut between two pieces of the file is one line end)."""
    head = stream.read(MAX_HEADER_SECTION_BYTES + 4)
    end = HEADER_END.search(head)
    if end is None and len(head) > MAX_HEADER_SECTION_BYTES:
        raise MessageRefused(f"its header is larger than {MAX_HEADER_SECTION_BYTES // 1024} KiB")
    section = head[:end.start()] if end else head
    if len(FIELD_START.findall(section)) > MAX_HEADER_FIELDS:
        raise MessageRefused(f"it has more than {MAX_HEADER_FIELDS:,} header fields")
    lines, after_cr, piece = 0, False, head
    while piece:
        lines += piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n")
        if after_cr and piece.startswith(b"\n"):
            lines -= 1
        after_cr = piece.endswith(b"\r")
        if lines > MAX_LINES:
            raise MessageRefused(f"it has more than {MAX_LINES:,} lines")
        piece = stream.read(PIECE)


def attachments(message: Message) -> tuple[list[Message], bool]:
    """The parts a person would call attachments: those marked so, and named parts that are not
    pictures inside an HTML body (those carry a Content-ID and are shown inline), at most
    MAX_ATTACHMENTS; and whether the message held more. MessageRefused for more than MAX_PARTS
    parts: an attachment past them would be lost unseen."""
    found: list[Message] = []
    for count, part in enumerate(message.walk(), 1):
        if count > MAX_PARTS:
            raise MessageRefused(f"it has more than {MAX_PARTS} MIME parts")
        if part.is_multipart() or len(found) > MAX_ATTACHMENTS:
            continue
        disposition = part.get_content_disposition()
        if disposition == "attachment" or (part.get_filename()
                                           and part.get("Content-ID") is None):
            found.append(part)
    return found[:MAX_ATTACHMENTS], len(found) > MAX_ATTACHMENTS


def save_payload(part: Message, target: BinaryIO) -> None:
    """Write the part's content, decoded, to `target`: what `part.get_payload(decode=True)`
    returns, decoded a piece at a time (that call holds the payload three times over: its bytes,
    their lines, the result). Base64 and quoted-printable are decoded here; any other transfer
    encoding but uuencode (7bit, 8bit, binary, unknown names) is the content as it is."""
    # The text as the parser kept it (its bytes as surrogate escapes): get_payload() would
    # replace those by its charset's reading.
    payload = part._payload  # type: ignore[attr-defined]
    if not isinstance(payload, str):
        return
    encoding = str(part.get("content-transfer-encoding", "")).lower()
    if encoding in UUENCODE:  # rare, and decoded by the email package alone
        decoded = part.get_payload(decode=True)
        target.write(decoded if isinstance(decoded, bytes) else b"")
        return
    if encoding == "base64":
        _save_base64(payload, target)
        return
    for piece in _line_pieces(payload):
        yield_to_requests()
        try:
            raw = piece.encode("ascii", "surrogateescape")  # the bytes the parser read
        except UnicodeEncodeError:  # never from the parser's own reading: as get_payload does
            raw = piece.encode("raw-unicode-escape")
        target.write(binascii.a2b_qp(raw) if encoding == "quoted-printable" else raw)


def _save_base64(payload: str, target: BinaryIO) -> None:
    """Whole groups of four base64 characters a piece at a time, skipping what is not base64,
    up to the first padding `=` (the end of the data, as Python's decoder reads it); missing
    padding is added at the end, a last lone character (no whole byte) dropped."""
    rest = ""
    for start in range(0, len(payload), PIECE):
        yield_to_requests()
        characters = rest + NOT_BASE64.sub("", payload[start:start + PIECE])
        padding = characters.find("=")
        if padding >= 0:
            characters = characters[:padding]
        whole = len(characters) - len(characters) % 4
        target.write(binascii.a2b_base64(characters[:whole]))
        rest = characters[whole:]
        if padding >= 0:
            break
    if len(rest) > 1:
        target.write(binascii.a2b_base64(rest + "=" * (4 - len(rest))))


def _line_pieces(text: str) -> Iterator[str]:
    """`text` in pieces of about PIECE characters, each ending at a line end (quoted-printable
    decodes line by line)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + PIECE) + 1 or len(text)
        yield text[start:end]
        start = end


def origin_of(message: Message, key: str) -> Origin:
    sent_at = None
    try:  # in UTC, as every time dms answers with; a date without a zone is taken as UTC
        parsed = email.utils.parsedate_to_datetime(_raw(message, "Date")[:200])
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        sent_at = parsed.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, IndexError, OverflowError):
        pass
    return Origin(key, clean(decoded(_raw(message, "Subject"))),
                  clean(decoded(_raw(message, "From"))), sent_at)


def _raw(message: Message, name: str) -> str:
    value = message.get(name)
    return value if isinstance(value, str) else ""


def decoded(value: str) -> str:
    """A header value with its RFC 2047 encoded words decoded, from at most MAX_DECODED
    characters; a value too broken to decode is shown as it came."""
    value = value[:MAX_DECODED]
    try:
        return str(make_header(decode_header(value)))
    except Exception:  # unknown charsets, broken encodings: shown raw, never fatal
        return value


def clean(text: str) -> str:
    """A header as one line of at most MAX_HEADER_LENGTH visible characters."""
    text = "".join(" " if is_refused_character(c) else c for c in text[:MAX_DECODED])
    return re.sub(r"\s+", " ", text).strip()[:MAX_HEADER_LENGTH]


def file_name(part: Message, index: int) -> str:
    """The attachment's own name, made a valid file name (it is only ever a title and a
    download name, never a path; the importer cuts it to a file name's length); a nameless one
    is `attachment-<n>`."""
    try:
        name = decoded(part.get_filename() or "")
    except Exception:
        name = ""
    name = clean(name.replace("/", "_").replace("\\", "_")).strip(". ")
    return name or f"attachment-{index}"


@dataclasses.dataclass(frozen=True)
class Unpacked:
    """What dms takes from one message: where it came from, its attachments as (file name, the
    file holding its decoded content), and whether it held more than MAX_ATTACHMENTS."""
    origin: Origin
    files: list[tuple[str, Path]]
    cut: bool


def unpack(path: Path, folder: Path, key: str, limits: MessageLimits = MessageLimits()) -> Unpacked:
    """The message in the file `path` (its key `key`), each attachment decoded into a file
    `attachment-<n>` of `folder`; MessageRefused when it cannot be taken safely."""
    message = parse(path, limits)
    parts, cut = attachments(message)
    files = []
    for index, part in enumerate(parts, 1):
        saved = folder / f"attachment-{index}"
        with open(saved, "wb") as target:
            save_payload(part, target)
        files.append((file_name(part, index), saved))
    return Unpacked(origin_of(message, key), files, cut)
