"""An IMAP connection whose server cannot decide how much dms reads, or for how long (issue 22).

imaplib (under imapclient) reads a literal `{N}` with one `read(N)` into memory, whatever N the
server announces: `{10000000000}` got the server killed by the kernel. Here every read of the
connection goes through a Budget, from the greeting on:
- a literal larger than `literal_limit` (the largest message dms takes) is refused before a
  byte of it is read (LiteralTooLarge: the session cannot go on, its bytes are still on the wire);
- every byte of the session counts against `session_limit` (SessionTooLarge past it);
- the whole session has a deadline: a watchdog shuts the socket down when it passes, which ends
  a read that a server trickling one byte every 20 s would otherwise keep alive forever (per-read
  timeouts never fire then).
imaplib already refuses a line longer than 1 MB.

The connection goes through the outbound rule (dms.outbound, api.md §14): the host is resolved with
a time limit, an address the account's owner may not reach is refused before anything is sent,
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

from dms.outbound import Policy

CONNECT_TIMEOUT, READ_TIMEOUT = 15, 60


class LiteralTooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


class SessionTooLarge(Exception):
    pass


class Budget:
    """What one session may read, and until when; `expire()` ends it at once (the deadline, or
    the server stopping)."""

    def __init__(self, literal_limit: int, session_limit: int, seconds: float):
        self.literal_limit, self.session_limit = literal_limit, session_limit
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.used = 0
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
        if size > self.literal_limit:
            raise LiteralTooLarge(size)

    def take(self, size: int) -> None:
        self.used += size
        if self.used > self.session_limit:
            raise SessionTooLarge()


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
