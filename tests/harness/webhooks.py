"""Webhooks and the event stream in tests and benchmarks: a real HTTP receiver on loopback that
records every POST (headers, exact body bytes, when it came) and answers as told, or holds it
open until released (counting how many it holds at once), the signature check a receiver makes,
a webhook made through the API, and a reader of a Server-Sent Events stream over a real
socket."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import requests

from tests.harness.waiting import wait_for

SECRET = "a-webhook-secret-of-the-tests"


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    path: str
    at: float  # time.monotonic() when it arrived

    @property
    def event(self) -> dict:
        return json.loads(self.body)


def signed(body: bytes, secret: str = SECRET) -> str:
    """The X-DMS-Signature a delivery of `body` must carry."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


HOLD_SECONDS = 60  # a held POST is answered after this at the latest (a test that forgot it)


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 (on `bind_port`, default any free one) that records POSTs.
    `answer(delivery)` says what to do: a status, or (seconds to wait first, status). Default
    200. After `hold()`, every POST is recorded and then left unanswered until `release()`;
    `held` is how many wait now, `most_held` the most that waited at once."""
    answer: Callable[[Delivery], int | tuple[float, int]] = lambda delivery: 200
    deliveries: list[Delivery] = field(default_factory=list)
    bind_port: int = 0
    held: int = 0
    most_held: int = 0

    def __post_init__(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                delivery = Delivery(dict(self.headers), body, self.path, time.monotonic())
                with receiver.lock:
                    receiver.deliveries.append(delivery)
                    holding = not receiver.released.is_set()
                    if holding:
                        receiver.held += 1
                        receiver.most_held = max(receiver.most_held, receiver.held)
                if holding:
                    receiver.released.wait(HOLD_SECONDS)
                    with receiver.lock:
                        receiver.held -= 1
                what = receiver.answer(delivery)
                wait, status = what if isinstance(what, tuple) else (0, what)
                if wait:
                    time.sleep(wait)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:  # dms gave up waiting and closed the connection
                    pass

            def log_message(self, *args):
                pass

        self.lock = threading.Lock()
        self.released = threading.Event()
        self.released.set()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.bind_port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def events(self) -> list[dict]:
        with self.lock:
            return [delivery.event for delivery in self.deliveries]

    def wait_for_count(self, count: int, timeout: float = 30) -> list[Delivery]:
        wait_for(lambda: len(self.deliveries) >= count, timeout=timeout, interval=0.02,
                 message=lambda: f"{len(self.deliveries)} deliveries, not {count}: "
                                 f"{self.events()}")
        with self.lock:
            return list(self.deliveries)

    def hold(self) -> None:
        """Leave the POSTs from now on unanswered until release()."""
        self.released.clear()

    def release(self) -> None:
        self.released.set()

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


def add_webhook(client, url: str, events: list[str], secret: str = SECRET) -> str:
    """A webhook of the client's user through the API; its id."""
    answer = client.post("/api/webhooks/", {"data": {"type": "webhooks", "attributes": {
        "url": url, "events": events, "secret": secret}}})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["id"]


def webhook(client, webhook_id: str) -> dict:
    answer = client.get(f"/api/webhooks/{webhook_id}/")
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]["attributes"]


class EventStream:
    """GET /events/ over a real socket, read line by line: `next_event()` the next event (its
    id and data), `comments` the comment lines seen."""

    def __init__(self, base_url: str, token: str, last_event_id: str | None = None,
                 query: str = "", timeout: float = 30):
        headers = {"Authorization": f"Token {token}"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.response = requests.get(f"{base_url}/api/events/{query}", headers=headers,
                                     stream=True, timeout=timeout)
        self.lines = self.response.iter_lines() if self.response.status_code == 200 else None
        self.comments: list[str] = []
        self.fields: list[str] = []  # other fields than id and data (retry:)

    def next_event(self) -> tuple[str, dict] | None:
        """The next event, or None when the stream ended."""
        event_id, data = None, None
        for raw in self.lines:
            line = raw.decode("utf-8")
            if line == "":
                if data is not None:
                    return event_id, json.loads(data)
                continue
            if line.startswith(":"):
                self.comments.append(line)
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data = line[6:]
            else:
                self.fields.append(line)
        return None

    def events(self, count: int) -> list[tuple[str, dict]]:
        found = []
        while len(found) < count:
            event = self.next_event()
            assert event is not None, f"the stream ended after {found}"
            found.append(event)
        return found

    def close(self) -> None:
        self.response.close()

