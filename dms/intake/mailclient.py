"""An IMAP connection whose server cannot decide how much dms reads, or for how long (issue 22).

imaplib (under imapclient) reads a literal `{N}` with one `read(N)` into memory, whatever N the
server announces: `{10000000000}` got the server killed by the kernel. Here every read of the
connection goes through a Budget, from the greeting on:
- a literal larger than `literal_limit` (the largest message dms takes) is refused before a
  byte of it is read (LiteralTooLarge: the session cannot go on, its bytes are still on the wire);
- what the server sends in answer to one command is held in memory until the command ends
  (imaplib keeps every untagged response): it counts against `answer_limit`, the largest message
  and a little more (AnswerTooLarge past it, before a literal that would pass it is read), and
  what earlier commands left unclaimed is dropped when the next one starts. One `UID FETCH`
  answered with 15 literals of 24 MiB each (each under the message limit) held 1.2 GB before;
- every byte of the session counts against `session_limit` (SessionTooLarge past it);
- the whole session has a deadline: a watchdog shuts the socket down when it passes, which ends
  a read that a server trickling one byte every 20 s would otherwise keep alive forever (per-read
  timeouts never fire then).
imaplib already refuses a line longer than 1 MB.

The connection goes through the outbound rule (dms.files.outbound, api.md §14): the host is
resolved with a time limit, an address the account's owner may not reach is refused before
anything is sent,
and the socket is connected to exactly a checked address (TLS still checks the certificate for
the host name).
"""

from __future__ import annotations

import socket
import ssl
import threading
import time

import imapclient
from imapclient import imap4, tls

from dms.files.outbound import Policy

CONNECT_TIMEOUT, READ_TIMEOUT = 15, 60
# What one answer may hold beyond the largest message: its lines (imaplib refuses a line over
# 1 MB) around the message's literal, and the tagged status line.
ANSWER_SLACK = 2**20


class LiteralTooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


class AnswerTooLarge(Exception):
    """The server sent more in answer to one command than any answer dms asks for needs."""


class SessionTooLarge(Exception):
    pass


class Budget:
    """What one session may read, and until when; `expire()` ends it at once (the deadline, or
    the server stopping)."""

    def __init__(self, literal_limit: int, session_limit: int, seconds: float):
        self.literal_limit, self.session_limit = literal_limit, session_limit
        self.answer_limit = literal_limit + ANSWER_SLACK
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.used = 0
        self.answer = 0  # bytes of the current command's answer
        self.expired = False
        self._on_expire = lambda: None
        self._lock = threading.Lock()

    def when_expired(self, action) -> None:
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

    def next_command(self) -> None:
        self.answer = 0


class _Bounded:
    """imaplib.IMAP4's reads, each through the connection's Budget."""

    def __init__(self, *args, budget: Budget, policy: Policy, **kwargs):
        self.budget = budget
        self.policy = policy
        budget.when_expired(self._end_reads)  # from the greeting on, which __init__ reads
        super().__init__(*args, **kwargs)

    def _checked_socket(self, timeout: float | None) -> socket.socket:
        return self.policy.connect(self.host, self.port, timeout or CONNECT_TIMEOUT)

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

    def _new_tag(self):
        """Every command, imaplib's and imapclient's own (`_raw_command`), starts with a new tag:
        its answer counts from nothing, and what earlier answers left that nobody asked for is
        dropped (imapclient reads what it needs of an answer before it sends the next command)."""
        self.untagged_responses.clear()
        self.budget.next_command()
        return super()._new_tag()

    def read(self, size):
        self.budget.literal(size)
        data = super().read(size)
        self.budget.take(len(data))
        return data

    def readline(self):
        line = super().readline()
        self.budget.take(len(line))
        return line


class _BoundedPlain(_Bounded, imap4.IMAP4WithTimeout):
    def _create_socket(self, timeout=None):
        return self._checked_socket(timeout if timeout is not None else self._timeout)


class _BoundedTLS(_Bounded, tls.IMAP4_TLS):
    def _create_socket(self, timeout=None):
        return tls.wrap_socket(self._checked_socket(timeout), self.ssl_context, self.host)


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
                                                              read=READ_TIMEOUT))
        except BaseException:
            self._watchdog.cancel()
            raise
        # imapclient sets imaplib's debug level to 5: imaplib then formats the repr of every
        # literal it reads for its debug log, logged or not (a message of 23 MB became strings
        # of 100 MB), and would log messages' contents.
        self._imap.debug = 0

    def _create_IMAP4(self):
        connect_timeout = getattr(self._timeout, "connect", None)
        if self.ssl:
            return _BoundedTLS(self.host, self.port, self.ssl_context, connect_timeout,
                               budget=self.budget, policy=self.policy)
        return _BoundedPlain(self.host, self.port, connect_timeout, budget=self.budget,
                             policy=self.policy)

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
