"""A hostile IMAP server for the tests: a real TCP server on loopback that speaks just enough IMAP
for dms's mail check (greeting, CAPABILITY, LOGIN, LIST, SELECT, UID SEARCH, UID FETCH, UID STORE,
LOGOUT), serving scripted messages, and misbehaving on purpose where a test says so: announcing a
literal of 10 GB, answering one fetch with many large literals, trickling bytes, sending more than
it said, holding a fetch until the test lets it go (`Gate`).

Each message is a `Message`: its bytes, the RFC822.SIZE the server claims, and how its body is
sent (`send_body`). The server counts the body fetches of each message, and keeps when each
session began and ended (`sessions`, `most_at_once`)."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Message:
    raw: bytes
    claimed_size: int | None = None  # RFC822.SIZE as announced (default: the real size)
    # How the body fetch is answered: (connection, uid, raw) -> None; default: honestly.
    send_body: Callable | None = None


@dataclass
class HostileImap:
    messages: list[Message] = field(default_factory=list)
    name: str = "hostile"  # in the messages' Message-IDs: <m1@NAME.example>
    fetches: Counter = field(default_factory=Counter)  # uid -> body fetches
    seen: set = field(default_factory=set)  # uids marked \Seen (UNSEEN leaves them out)
    # (accepted, closed) of every connection, in time.monotonic(); closed None while it is open
    sessions: list = field(default_factory=list)

    def start(self) -> HostileImap:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.sessions.append((time.monotonic(), None))  # here, in the one accepting thread
            threading.Thread(target=self._serve, args=(connection, len(self.sessions) - 1),
                             daemon=True).start()

    def most_at_once(self, tolerance: float = 0.5) -> int:
        """The most sessions open at one moment, each counted until `tolerance` seconds before it
        was seen to close: one that a client closes ends here a moment later, while the client
        may already open its next one."""
        now = time.monotonic()
        spans = [(start, (end if end is not None else now) - tolerance)
                 for start, end in list(self.sessions)]
        return max((sum(start <= moment < end for start, end in spans)
                    for moment, _ in spans), default=0)

    def _serve(self, connection: socket.socket, index: int) -> None:
        reader = connection.makefile("rb")
        send = connection.sendall
        try:
            send(b"* OK [CAPABILITY IMAP4rev1 UIDPLUS] hostile ready\r\n")
            while not self.stopped.is_set():
                line = reader.readline()
                if not line:
                    return
                tag, _, command = line.rstrip(b"\r\n").partition(b" ")
                verb = command.split(b" ", 1)[0].upper()
                if verb == b"CAPABILITY":
                    send(b"* CAPABILITY IMAP4rev1 UIDPLUS\r\n" + tag + b" OK done\r\n")
                elif verb == b"LOGIN":
                    send(tag + b" OK logged in\r\n")
                elif verb == b"LIST":
                    send(b'* LIST () "/" INBOX\r\n' + tag + b" OK done\r\n")
                elif verb in (b"SELECT", b"EXAMINE"):
                    send(b"* %d EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n" % len(self.messages)
                         + tag + b" OK [READ-WRITE] selected\r\n")
                elif verb == b"UID":
                    self._uid(connection, tag, command[4:])
                elif verb == b"LOGOUT":
                    send(b"* BYE bye\r\n" + tag + b" OK done\r\n")
                    return
                else:
                    send(tag + b" OK done\r\n")
        except OSError:
            return
        finally:
            self.sessions[index] = (self.sessions[index][0], time.monotonic())
            connection.close()

    def _uid(self, connection: socket.socket, tag: bytes, command: bytes) -> None:
        send = connection.sendall
        verb = command.split(b" ", 1)[0].upper()
        if verb == b"SEARCH":
            unseen = b"UNSEEN" in command.upper()
            uids = b" ".join(b"%d" % uid for uid in range(1, len(self.messages) + 1)
                             if not (unseen and uid in self.seen))
            send(b"* SEARCH " + uids + b"\r\n" + tag + b" OK done\r\n")
        elif verb == b"FETCH":
            _, wanted, items = command.split(b" ", 2)
            for uid in _uids(wanted, len(self.messages)):
                message = self.messages[uid - 1]
                if b"BODY.PEEK[]" in items.upper():
                    self.fetches[uid] += 1
                    (message.send_body or honest)(connection, uid, message.raw)
                else:
                    header = b"Message-ID: <m%d@%s.example>\r\n\r\n" % (uid, self.name.encode())
                    size = message.claimed_size if message.claimed_size is not None \
                        else len(message.raw)
                    send(b"* %d FETCH (UID %d RFC822.SIZE %d BODY[HEADER.FIELDS (MESSAGE-ID)] "
                         b"{%d}\r\n%s)\r\n" % (uid, uid, size, len(header), header))
            send(tag + b" OK done\r\n")
        else:  # STORE, COPY, EXPUNGE
            if verb == b"STORE" and b"\\SEEN" in command.upper():
                self.seen.update(_uids(command.split(b" ")[1], len(self.messages)))
            send(tag + b" OK done\r\n")


def _uids(wanted: bytes, count: int) -> list[int]:
    uids = []
    for part in wanted.split(b","):
        low, _, high = part.partition(b":")
        start = int(low)
        end = count if high == b"*" else int(high or low)
        uids.extend(uid for uid in range(start, end + 1) if 1 <= uid <= count)
    return uids


def honest(connection: socket.socket, uid: int, raw: bytes) -> None:
    """The message as it is (sent in three pieces: a copy of a large message would count in the
    memory that the tests measure, this process')."""
    connection.sendall(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (uid, uid, len(raw)))
    connection.sendall(raw)
    connection.sendall(b")\r\n")


def huge_literal(connection: socket.socket, uid: int, raw: bytes) -> None:
    """Announce 10 GB, then send bytes as long as anyone reads them."""
    connection.sendall(b"* %d FETCH (UID %d BODY[] {10000000000}\r\n" % (uid, uid))
    chunk = b"x" * 65536
    try:
        for _ in range(100_000):
            connection.sendall(chunk)
    except OSError:
        return


def many_literals(connection: socket.socket, uid: int, raw: bytes, count: int = 15,
                  mib: int = 24) -> None:
    """Answer one body fetch with `count` messages of `mib` MiB each, every one of them under the
    default message limit of 25 MiB (imaplib keeps them all until the command's tagged OK)."""
    chunk = b"x" * 2**20
    try:
        for _ in range(count):
            connection.sendall(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (uid, uid, mib * 2**20))
            for _ in range(mib):
                connection.sendall(chunk)
            connection.sendall(b")\r\n")
    except OSError:
        return


def stall(connection: socket.socket, uid: int, raw: bytes) -> None:
    """Announce the message, send none of it, and return as soon as the client hangs up."""
    connection.sendall(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (uid, uid, len(raw)))
    try:
        while connection.recv(4096):
            pass
    except OSError:
        return


def trickle(connection: socket.socket, uid: int, raw: bytes, every: float = 1) -> None:
    """Announce the message and send it one byte `every` seconds."""
    connection.sendall(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (uid, uid, len(raw)))
    try:
        for byte in raw:
            connection.sendall(bytes([byte]))
            time.sleep(every)
    except OSError:
        return


class Gate:
    """A body fetch that waits until the test opens the gate, then answers honestly; it counts
    the fetches waiting or sending at once (`most`), and `entered` is set once one came."""

    def __init__(self):
        self.entered, self.opened = threading.Event(), threading.Event()
        self.inside = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, connection: socket.socket, uid: int, raw: bytes) -> None:
        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        self.entered.set()
        try:
            self.opened.wait(120)  # a test that failed before opening it still ends
            honest(connection, uid, raw)
        finally:
            with self._lock:
                self.inside -= 1


def encoded_word_subject(words: int = 28_000) -> bytes:
    """A message whose Subject is `words` RFC 2047 encoded words (quadratic for policy.default)."""
    subject = " ".join("=?utf-8?q?a?=" for _ in range(words))
    return (f"Subject: {subject}\r\nFrom: someone@example.org\r\n"
            "Message-ID: <bomb@hostile.example>\r\n\r\nhello\r\n").encode()


def nested_mime(levels: int = 5000) -> bytes:
    parts = "".join(f'Content-Type: multipart/mixed; boundary="b{level}"\r\n\r\n--b{level}\r\n'
                    for level in range(levels))
    return ("Subject: nested\r\nFrom: someone@example.org\r\nMIME-Version: 1.0\r\n" + parts
            + "Content-Type: text/plain\r\n\r\nhello\r\n").encode()



def many_headers(fields: int, in_part: bool = False) -> bytes:
    """A message of `fields` tiny header fields (2,000,000 are 9.5 MB), in its own header or in
    that of its one MIME part."""
    headers = b"X: y\r\n" * fields
    if not in_part:
        return b"Subject: headers\r\nFrom: someone@example.org\r\n" + headers + b"\r\nhello\r\n"
    return (b"Subject: part headers\r\nFrom: someone@example.org\r\nMIME-Version: 1.0\r\n"
            b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n' + headers
            + b"\r\nhello\r\n--b--\r\n")


def many_lines(lines: int) -> bytes:
    """A message whose body is `lines` empty lines."""
    return b"Subject: lines\r\nFrom: someone@example.org\r\n\r\n" + b"\r\n" * lines
