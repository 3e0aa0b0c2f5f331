"""An IMAP connection whose server cannot decide how much dms reads, where, or for how long.

imaplib (under imapclient) reads a literal `{N}` with one `read(N)` into memory, whatever N the
server announces: `{10000000000}` got the server killed by the kernel. Here every read of the
connection goes through a Budget, from the greeting on:
- a literal larger than `literal_limit` (the largest message dms takes) is refused before a
  byte of it is read (LiteralTooLarge: the session cannot go on, its bytes are still on the wire);
- what the server sends in answer to one command counts against `answer_limit`, the largest
  message and a little more (AnswerTooLarge past it, before a literal that would pass it is
  read), and what earlier commands left unclaimed is dropped when the next one starts. One
  `UID FETCH` answered with 15 literals of 24 MiB each held 1.2 GB before;
- a message being fetched (`fetch_message`) never is in memory: its literal is written to a file
  of a Spool as it is read, in pieces, and imaplib keeps a small marker in its place. Four checks
  of 24 MiB messages held 1 GB at once when imaplib kept them, and the parser's copies beside;
- every byte of the session counts against `session_limit` (SessionTooLarge past it);
- a server that stalls is left: nothing for `stall_seconds` (DMS_MAIL_STALL_SECONDS, the socket's
  read timeout), or less than STALL_FLOOR bytes in any `stall_seconds` of one answer (Stalled).
  Reads are taken in pieces as they arrive, so a server sending a byte every few seconds, which
  keeps every read timeout alive, is seen;
- the whole session has a deadline: a watchdog shuts the socket down when it passes, which ends
  any read still waiting.
imaplib already refuses a line longer than 1 MB.

The connection goes through the outbound rule (dms.files.outbound, api.md, "Outbound connections"):
the host is resolved with a time limit, an address the account's owner may not reach is refused
before anything is sent,
and the socket is connected to exactly a checked address (TLS still checks the certificate for
the host name).
"""

from __future__ import annotations

import imaplib
import io
import os
import re
import secrets
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import imapclient
from imapclient import imap4, tls

from dms.files.outbound import Policy

CONNECT_TIMEOUT = 15
# What one answer may hold beyond the largest message: its lines (imaplib refuses a line over
# 1 MB) around the message's literal, and the tagged status line.
ANSWER_SLACK = 2**20
# A server still answering one command must send at least this much in every `stall_seconds`
# (DMS_MAIL_STALL_SECONDS): 16 KiB in 30 s is 0.5 KiB/s, which no working server falls under (a
# message of 25 MiB at that rate would take 14 hours; the check's deadline needs 85 KiB/s), while
# a tarpit sending a byte every few seconds is left after one or two windows.
STALL_FLOOR = 16 * 1024
PIECE = 2**16  # a literal is read (and counted, and written to its file) in pieces of this
MAX_LINE: int = imaplib._MAXLINE  # type: ignore[attr-defined]  # imaplib's own bound on a line
LITERAL_SIZE = re.compile(rb"\{\d+\}$")  # how a line announces the literal after it


class LiteralTooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


class AnswerTooLarge(Exception):
    """The server sent more in answer to one command than any answer dms asks for needs."""


class SessionTooLarge(Exception):
    pass


class Stalled(Exception):
    """The server sent less than STALL_FLOOR bytes in `stall_seconds` of one answer."""


class Budget:
    """What one session may read, and until when; `expire()` ends it at once (the deadline, or
    the server stopping)."""

    def __init__(self, literal_limit: int, session_limit: int, seconds: float,
                 stall_seconds: float = 30):
        self.literal_limit, self.session_limit = literal_limit, session_limit
        self.answer_limit = literal_limit + ANSWER_SLACK
        self.deadline = time.monotonic() + seconds
        self.seconds, self.stall_seconds = seconds, stall_seconds
        self.used = 0
        self.answer = 0  # bytes of the current command's answer
        self._window = (time.monotonic(), 0)  # (since, bytes) of the stall bound
        self.expired = False
        self._on_expire: Callable[[], None] = lambda: None
        self._lock = threading.Lock()

    def when_expired(self, action: Callable[[], None]) -> None:
        with self._lock:
            self._on_expire = action
            if self.expired:
                action()

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            self._on_expire()

    def literal(self, size: int) -> None:
        """Before a literal of `size` bytes is read."""
        if size > self.literal_limit:
            raise LiteralTooLarge(size)
        if self.answer + size > self.answer_limit:
            raise AnswerTooLarge()

    def take(self, size: int) -> None:
        self.used += size
        self.answer += size
        if self.used > self.session_limit:
            raise SessionTooLarge()
        if self.answer > self.answer_limit:
            raise AnswerTooLarge()
        since, received = self._window
        now = time.monotonic()
        if now - since < self.stall_seconds:
            self._window = (since, received + size)
        elif received + size < STALL_FLOOR:
            raise Stalled()
        else:
            self._window = (now, 0)

    def next_command(self) -> None:
        """A command is sent: its answer counts from nothing, and the stall bound's window starts
        (dms's own work between two commands is never the server's stall)."""
        self.answer = 0
        self._window = (time.monotonic(), 0)


class Spool:
    """Where the literals of a message being fetched go: each to a file of its own in `folder`
    (in the data dir's tmp/), as it is read. imaplib keeps a marker of the session in its place,
    which `path_of` turns back into the file."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._marker = b"\0dms-spool-" + secrets.token_hex(8).encode() + b"-%d"
        self._files: dict[bytes, Path] = {}

    def write(self, pieces: Iterable[bytes]) -> bytes:
        """The marker of a new file holding `pieces` (bytes, as they are read)."""
        descriptor, name = tempfile.mkstemp(dir=self.folder, prefix="literal-")
        marker = self._marker % len(self._files)
        self._files[marker] = Path(name)
        with os.fdopen(descriptor, "wb") as target:
            for piece in pieces:
                target.write(piece)
        return marker

    def holds(self, value: object) -> bool:
        return isinstance(value, bytes) and value in self._files

    def path_of(self, value: object) -> Path | None:
        """The file of a fetched item: its literal's, or a file written now for a server that
        answered with a quoted string; None for NIL."""
        if not isinstance(value, bytes):
            return None
        if value not in self._files:
            value = self.write([value])
        return self._files[value]

    def clear(self) -> None:
        """Remove every file of the folder: the literals, and what was made of them there."""
        for path in self.folder.iterdir():
            path.unlink(missing_ok=True)
        self._files.clear()


class _Bounded:
    """imaplib.IMAP4's reads, each through the connection's Budget, in pieces as the bytes
    arrive (BufferedReader's read1 and peek: at most one read of the socket each)."""

    spool: Spool | None = None  # set while a message is fetched
    if TYPE_CHECKING:  # imaplib.IMAP4's, which the classes below mix this into
        host: str
        port: int
        file: io.BufferedReader
        untagged_responses: dict[str, list[Any]]
        error: type[Exception]

    def __init__(self, *args: Any, budget: Budget, policy: Policy, **kwargs: Any):
        self.budget = budget
        self.policy = policy
        budget.when_expired(self._end_reads)  # from the greeting on, which __init__ reads
        super().__init__(*args, **kwargs)

    def _checked_socket(self, timeout: float | None) -> socket.socket:
        sock = self.policy.connect(self.host, self.port, timeout or CONNECT_TIMEOUT)
        self.budget.next_command()  # the greeting is the answer to connecting
        return sock

    def _end_reads(self) -> None:
        """End whatever read is waiting: the plain socket's shutdown (not the TLS layer's, which
        the reading thread is inside) makes it see the end of the stream. `sock` is looked up
        now: STARTTLS replaces it."""
        sock = getattr(self, "sock", None)
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    def _new_tag(self) -> bytes:
        """Every command, imaplib's and imapclient's own (`_raw_command`), starts with a new tag:
        its answer counts from nothing, and what earlier answers left that nobody asked for is
        dropped (imapclient reads what it needs of an answer before it sends the next command)."""
        self.untagged_responses.clear()
        self.budget.next_command()
        return super()._new_tag()  # type: ignore[misc, no-any-return]  # imaplib's, a mixin

    def read(self, size: int) -> bytes:
        """A literal of `size` bytes (imaplib reads nothing else with read): into a file of the
        spool while a message is fetched, else into memory (within the answer's bound)."""
        self.budget.literal(size)
        if self.spool is not None:
            return self.spool.write(self._pieces(size))
        return b"".join(self._pieces(size))

    def _append_untagged(self, typ: str, dat: Any) -> None:
        """A literal kept as a marker is announced with the marker's size (imapclient checks
        that a literal is as long as its `{N}` said)."""
        if isinstance(dat, tuple) and self.spool is not None and self.spool.holds(dat[1]):
            dat = (LITERAL_SIZE.sub(b"{%d}" % len(dat[1]), dat[0]), dat[1])
        super()._append_untagged(typ, dat)  # type: ignore[misc]  # imaplib's, a mixin

    def _pieces(self, size: int) -> Iterator[bytes]:
        left = size
        while left > 0:
            piece = self.file.read1(min(left, PIECE))
            if not piece:
                return  # the end of the stream: imaplib fails at its next line
            self.budget.take(len(piece))
            left -= len(piece)
            yield piece

    def readline(self) -> bytes:
        line = bytearray()
        while len(line) <= MAX_LINE:
            buffered = self.file.peek(1)[:MAX_LINE + 1 - len(line)]
            if not buffered:
                break
            end = buffered.find(b"\n") + 1 or len(buffered)
            line += self.file.read(end)
            self.budget.take(end)
            if line.endswith(b"\n"):
                break
        if len(line) > MAX_LINE:
            raise self.error(f"got more than {MAX_LINE} bytes")
        return bytes(line)


class _BoundedPlain(_Bounded, imap4.IMAP4WithTimeout):
    def _create_socket(self, timeout: float | None = None) -> socket.socket:
        return self._checked_socket(timeout if timeout is not None else self._timeout)


class _BoundedTLS(_Bounded, tls.IMAP4_TLS):
    def _create_socket(self, timeout: float | None = None) -> Any:
        return tls.wrap_socket(self._checked_socket(timeout), self.ssl_context, self.host)


class Unsendable(Exception):
    """The username or password holds a character that no login can carry (NUL, or a lone
    surrogate that is no character at all)."""


def _fits_login(username: str, password: str) -> bool:
    """LOGIN carries printable ASCII: the password quoted, the username as it is (imaplib sends
    it as an atom, which has no spaces, quotes, parentheses, braces or wildcards)."""
    printable = all(" " <= c <= "~" for c in username + password)
    return printable and not any(c in ' "\\(){%*' for c in username)


class BoundedClient(imapclient.IMAPClient):
    """imapclient's client on the bounded imaplib classes, with the session's watchdog."""

    def __init__(self, host: str, port: int, use_ssl: bool, budget: Budget, policy: Policy):
        self.budget = budget
        self.policy = policy
        self._watchdog = threading.Timer(max(0.0, budget.deadline - time.monotonic()),
                                         budget.expire)
        self._watchdog.daemon = True
        self._watchdog.start()
        try:
            super().__init__(host, port=port, ssl=use_ssl, ssl_context=ssl.create_default_context(),
                             timeout=imapclient.SocketTimeout(connect=CONNECT_TIMEOUT,
                                                              read=budget.stall_seconds))
        except BaseException:
            self._watchdog.cancel()
            raise
        # imapclient sets imaplib's debug level to 5: imaplib then formats the repr of every
        # literal it reads for its debug log, logged or not (a message of 23 MB became strings
        # of 100 MB), and would log messages' contents.
        self._imap.debug = 0

    def _create_IMAP4(self) -> _Bounded:
        connect_timeout = getattr(self._timeout, "connect", None)
        if self.ssl:
            return _BoundedTLS(self.host, self.port, self.ssl_context, connect_timeout,
                               budget=self.budget, policy=self.policy)
        return _BoundedPlain(self.host, self.port, connect_timeout, budget=self.budget,
                             policy=self.policy)

    def log_in(self, username: str, password: str) -> None:
        """LOGIN for what it carries (every IMAP server takes it: accounts that worked go on
        working); anything else — a non-ASCII username or password, a username with a space —
        by AUTHENTICATE PLAIN (RFC 4616), which sends UTF-8, instead of failing in imaplib's
        ASCII encoding of LOGIN. LoginError when the server says no, Unsendable when nothing could
        be sent."""
        if _fits_login(username, password):
            self.login(username, password)
            return
        if "\0" in username + password:  # PLAIN's separator
            raise Unsendable()
        try:
            (username + password).encode("utf-8")
        except UnicodeEncodeError:
            raise Unsendable() from None
        self.plain_login(username, password)

    def fetch_message(self, uid: int, spool: Spool) -> Path | None:
        """The whole message `uid` (BODY.PEEK: no flag changes) in a file of `spool`; None when
        the server has no such message (deleted meanwhile)."""
        self._imap.spool = spool
        try:
            value = self.fetch([uid], ["BODY.PEEK[]"]).get(uid, {}).get(b"BODY[]")
        finally:
            self._imap.spool = None
        return spool.path_of(value)

    def close_session(self) -> None:
        """Log out if the session still works, else just close it; stop the watchdog."""
        self._watchdog.cancel()
        try:
            if self.budget.expired:
                raise OSError("expired")
            self.logout()
        except Exception:  # the connection may already be gone; nothing is left to tell it
            try:
                self.shutdown()
            except Exception:
                pass
