"""bench/hostile4.py's mail bomb as a hostile_round4 Attack: attackers' accounts on hostile IMAP
servers of the benchmark (tests/harness/hostileimap.py) that serve messages of 24 MiB announced as
1,000 bytes, built as tests/intake/test_mail_memory.py builds them, checked again and again; the
server's memory watched until the checks have ended."""

from __future__ import annotations

import base64
import os
import threading
import time
from collections import Counter

from bench.lib.hostile_http import connect, exchange
from bench.lib.hostile_round4 import RSS_TARGET_MIB, Attack, data_of, detail_of, timed
from bench.lib.hostile_watch import MemorySampler
from tests.harness.hostileimap import HostileImap, Message

MAIL_BOMB_BYTES = 24 * 2**20  # under DMS_MAIL_MAX_MESSAGE_MB's 25, announced as 1,000 bytes
CLAIMED_SIZE = 1000
MAIL_USERS, ACCOUNTS_EACH = 2, 2  # four checks: DMS_MAIL_CHECKS_PARALLEL's default
SETTLE_SECONDS = 120  # how long the report waits for the checks the phase left under way


def attachment_bomb(data: bytes) -> bytes:
    """A message of 24 MiB whose attachment is `data` in base64 (tests/intake/
    test_mail_memory.py): decoded, received and refused as not a document."""
    head = (b"Subject: bomb\r\nFrom: someone@example.org\r\nMIME-Version: 1.0\r\n"
            b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'
            b"Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n"
            b'Content-Disposition: attachment; filename="blob.bin"\r\n\r\n')
    encoded = data[:(MAIL_BOMB_BYTES - 1024) * 57 // 78]  # 78 bytes of base64 lines per 57
    return head + base64.encodebytes(encoded).replace(b"\n", b"\r\n") + b"--b--\r\n"


def raw_bomb(data: bytes) -> bytes:
    """A message of 24 MiB of raw 8-bit bytes after its header."""
    head = b"Subject: raw\r\nFrom: someone@example.org\r\n\r\n"
    return head + data[:MAIL_BOMB_BYTES - len(head)]


class MailBomb(Attack):
    label, title = "4", (f"the mail bomb: {MAIL_USERS} attackers with {ACCOUNTS_EACH} accounts "
                         f"each on hostile IMAP servers serving 24 MiB messages announced as "
                         f"{CLAIMED_SIZE:,} bytes, checked again and again")

    def prepare(self) -> None:
        junk = os.urandom(MAIL_BOMB_BYTES)
        self.raws = [attachment_bomb(junk), raw_bomb(junk)]  # shared by every message
        self.accounts: list[tuple[object, str, HostileImap]] = []  # (client, id, server)
        self.checks: Counter = Counter()
        tally = self.tally()
        for user_number in range(MAIL_USERS):
            user = self.round.user(f"mailbomber{user_number + 1}")
            client = connect(self.round.port, user["token"])
            for account_number in range(ACCOUNTS_EACH):
                server = HostileImap(self._bombs(), f"bomb{user_number}x{account_number}")
                server.start()
                status, body = self.json_api(client, tally, "POST mail-accounts/", "POST",
                                             "/api/mail-accounts/", {"data": {
                                                 "type": "mail-accounts", "attributes": {
                                                     "host": "127.0.0.1", "port": server.port,
                                                     "security": "none", "username": "a",
                                                     "password": "b"}}})
                data = data_of((status, body))
                if isinstance(data, dict):
                    self.accounts.append((client, data["id"], server))
                else:
                    server.stop()
                    print(f"  a mail account was refused: {status} {detail_of(body)}")

    def _bombs(self) -> list[Message]:
        """Four new messages (new UIDs, so new Message-IDs: fetched, not remembered)."""
        return [Message(self.raws[number % 2], claimed_size=CLAIMED_SIZE) for number in range(4)]

    def attack(self, stop: threading.Event) -> None:
        tally = self.tally()
        while not stop.is_set():
            for client, account, server in self.accounts:
                data = data_of(timed(tally, "GET mail-accounts/{id}/", client, "GET",
                                     f"/api/mail-accounts/{account}/"))
                if isinstance(data, dict) and not data["attributes"]["checking"]:
                    if self.checks[account]:
                        server.messages.extend(self._bombs())  # more for the next check
                    self.checks[account] += 1
                # Asked for again and again, also while one is under way (202 queues nothing
                # more; 429 past the user's checks under way).
                timed(tally, "POST mail-accounts/{id}/check/", client, "POST",
                      f"/api/mail-accounts/{account}/check/")
            stop.wait(0.25)

    def report(self) -> None:
        started = time.monotonic()
        memory = MemorySampler(self.round.server.process.pid)
        results = {}
        while time.monotonic() - started < SETTLE_SECONDS:
            results = {account: data_of(exchange(client, "GET", f"/api/mail-accounts/{account}/"))
                       for client, account, _ in self.accounts}
            if not any(isinstance(data, dict) and data["attributes"]["checking"]
                       for data in results.values()):
                break
            time.sleep(0.5)
        memory.stop()
        print(f"  server RSS while the checks under way ended: peak {memory.server_peak:.0f} MiB "
              f"(target <= {RSS_TARGET_MIB}); once they had ({time.monotonic() - started:.1f} s "
              f"after the phase) {memory.server_last:.0f} MiB (target: the memory given back)")
        for _, account, server in self.accounts:
            data = results.get(account)
            attributes = data["attributes"] if isinstance(data, dict) else {}
            print(f"  account {account[:8]}: {self.checks[account]} checks, "
                  f"{sum(server.fetches.values())} bodies of 24 MiB fetched, checking "
                  f"{attributes.get('checking')}, imported {attributes.get('imported_count')}, "
                  f"last_error {str(attributes.get('last_error'))[:200]!r}")

    def cleanup(self) -> None:
        for client, account, server in self.accounts:
            exchange(client, "DELETE", f"/api/mail-accounts/{account}/")
            server.stop()
