"""bench/hostile4.py's smaller cases as a hostile_round4 Attack: on raw sockets, a chunk extension
of 5,000 bytes and a chunked body with bare-LF line ends (each expected 400 at once), a resume point
with a space around it on the event stream; and the IPv4-compatible IPv6 address
http://[::127.0.0.1]/ as a webhook URL (expected 400), which nothing ever sends to."""

from __future__ import annotations

import threading
import time
from collections import Counter

from bench.lib.hostile_http import Tally, connect, exchange
from bench.lib.hostile_round4 import Attack, data_of, detail_of, raw_exchange
from bench.lib.hostile_round4_attacks import SECRET


class Smaller(Attack):
    label, title = "7", ("smaller, on raw sockets: a 5,000-byte chunk extension, a chunked body "
                         "with bare-LF line ends, a Last-Event-ID with a space; "
                         "http://[::127.0.0.1]/ as a webhook URL")

    def prepare(self) -> None:
        self.user = self.round.user("smuggler")
        token = self.user["token"].encode()
        head = b"Host: bench\r\nAuthorization: Token %s\r\n" % token
        chunked = b"PUT /api/document/upload/%s HTTP/1.1\r\n" + head + \
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        events = b"GET /api/events/%s HTTP/1.1\r\n" + head + b"Connection: close\r\n%s\r\n"
        # (what is sent, the answer expected)
        self.cases = {
            "chunk extension of 5,000 bytes": (
                chunked % b"extension.txt" + b"5;x=" + b"e" * 5000 + b"\r\nhello\r\n0\r\n\r\n",
                "400 at once"),
            "chunked body with bare-LF line ends": (
                chunked % b"bare-lf.txt" + b"5\nhello\n0\n\n", "400 at once"),
            "Last-Event-ID: ' 5' (HTTP's own space)": (
                events % (b"", b"Last-Event-ID:  5\r\n"),
                "200: waitress drops the space before the app sees it"),
            "Last-Event-ID: '\\xa05' (a no-break space)": (
                events % (b"", b"Last-Event-ID: \xa05\r\n"), "400"),
            "GET events/?since=%205": (events % (b"?since=%205", b""), "400")}

    def attack(self, stop: threading.Event) -> None:
        self.in_threads(stop, len(self.cases), self._case)

    def _case(self, index: int, stop: threading.Event, tally: Tally) -> None:
        name = list(self.cases)[index]
        request, _ = self.cases[name]
        if index == 0:
            self._ipv4_compatible(tally)
        while not stop.is_set():
            started = time.perf_counter()
            tally.record(f"raw: {name}", started, raw_exchange(self.round.port, request))
            stop.wait(0.5)  # a stream answered 200 stops counting within a second

    def _ipv4_compatible(self, tally: Tally) -> None:
        """The webhook is made disabled, by a user that makes no events, and deleted at once if
        it is accepted: nothing is ever sent to it (::127.0.0.1 may route off the machine)."""
        client = connect(self.round.port, self.user["token"])
        status, body = self.json_api(client, tally, "POST webhooks/ http://[::127.0.0.1]/",
                                     "POST", "/api/webhooks/", {"data": {
                                         "type": "webhooks", "attributes": {
                                             "url": "http://[::127.0.0.1]/", "enabled": False,
                                             "events": ["node.renamed"], "secret": SECRET}}})
        data = data_of((status, body))
        if isinstance(data, dict):
            exchange(client, "DELETE", f"/api/webhooks/{data['id']}/")
        self.ipv4_compatible = (status, detail_of(body) if status != 201 else
                                "ACCEPTED (it was disabled and is deleted at once)")

    def report(self) -> None:
        answers = self.answers()
        for name, (_, expected) in self.cases.items():
            statuses = answers.statuses.get(f"raw: {name}", Counter())
            shown = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
            print(f"  {name}: {shown or 'not sent'} (expected {expected})")
        status, detail = getattr(self, "ipv4_compatible", (None, "not sent"))
        print(f"  http://[::127.0.0.1]/ as a webhook URL: {status} {detail} (expected 400 for "
              f"an ordinary user)")
