"""bench/hostile.py's attacker: another user looping over hostile uploads and requests while it
holds idle connections open."""

from __future__ import annotations

import json
import socket
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

from bench.hostile3 import Round3
from bench.lib.hostile_http import VND, Tally, connect, create_node, exchange, must, node_body

# The tests' hostile-file generators.
from tests.harness.samples import (
    pdf_claiming_pages,
    pdf_with_page_size,
    tiff,
    tiff_with_large_frame,
)

DONE = ("succeeded", "failed")


# -- the attacker ---------------------------------------------------------------------------------
def nested_login(depth: int) -> bytes:
    return b'{"username": ' + b"[" * depth + b"]" * depth + b', "password": "x"}'


def long_integer_login(digits: int) -> bytes:
    return b'{"username": "attacker", "password": ' + b"7" * digits + b"}"


class Attacker:
    """Another user, one keep-alive connection, looping over hostile uploads and requests; also
    holds `idle` raw TCP connections open, sending nothing."""

    def __init__(self, port: int, user: dict, args, consume_dir: Path, victim_file: Path,
                 victim_user: dict):
        self.port, self.user = port, user
        self.client = connect(port, user["token"])
        self.idle_wanted = args.idle_connections
        self.idle: list[socket.socket] = []
        self.idle_failed: list[str] = []
        self.tally = Tally()
        self.count = 0
        self.scan: str | None = None  # the TIFF scan being read, if any
        self.crash: str | None = None
        self.files = {
            "claims-1000000-pages.pdf": pdf_claiming_pages(1_000_000),
            "page-14400x14400pt.pdf": pdf_with_page_size(14_400, 14_400),
            "page-1x1000pt.pdf": pdf_with_page_size(1, 1000),
            "scan.tif": tiff([f"Scanned page {n + 1}: Invoice {4711 + n} Stadtwerke electricity"
                              for n in range(args.tiff_frames)]),
            "frame-40000x40000.tif": tiff_with_large_frame(1, (40_000, 40_000)),
        }
        self.logins = {"login nested 100,000 deep": nested_login(100_000),
                       "login 5,000-digit integer": long_integer_login(5_000)}
        refused = create_node(self.client, "documents", "refused uploads", user["home"])
        self.refused = must(refused, "create the attacker's document")["data"]["id"]
        self.round3 = Round3(self, consume_dir, victim_file, victim_user)

    def run(self, stop: threading.Event) -> None:
        try:
            self.open_idle_connections()
            quick, slow = self.round3.steps()
            steps = [*quick, lambda: self.upload_new("claims-1000000-pages.pdf"),
                     lambda: self.upload_new("page-14400x14400pt.pdf"),
                     self.thin_page_preview, self.scan_if_free, self.refused_frame,
                     self.hostile_logins, *slow]
            while not stop.is_set():
                for step in steps:
                    if stop.is_set():
                        break
                    step()
        except Exception:  # a bug in the benchmark itself: shown, not hidden
            self.crash = traceback.format_exc()

    def open_idle_connections(self) -> None:
        for _ in range(self.idle_wanted):
            try:
                self.idle.append(socket.create_connection(("127.0.0.1", self.port), timeout=10))
            except OSError as error:
                self.idle_failed.append(f"{type(error).__name__}: {error}")

    def idle_still_open(self) -> int:
        """How many idle connections the server has not closed (a closed one reads b"")."""
        still = 0
        for connection in self.idle:
            connection.setblocking(False)
            try:
                still += connection.recv(1) != b""
            except BlockingIOError:
                still += 1
            except OSError:
                pass
        return still

    def close_idle_connections(self) -> None:
        for connection in self.idle:
            connection.close()

    def call(self, op: str, method: str, path: str, body=None, headers=None) -> tuple[int, bytes]:
        started = time.perf_counter()
        return self.tally.record(op, started, exchange(self.client, method, path, body, headers))

    def upload(self, document: str, name: str) -> tuple[int, bytes]:
        return self.call(f"upload {name}", "PUT", f"/api/documents/{document}/upload/{name}",
                         self.files[name], {"Content-Disposition": f"attachment; filename={name}"})

    def upload_new(self, name: str) -> tuple[str | None, tuple[int, bytes]]:
        """A new document under .home with this file: (its id or None, the upload's answer)."""
        self.count += 1
        status, body = self.call("create document", "POST", "/api/nodes/",
                                 node_body("documents", f"{name} {self.count}", self.user["home"]),
                                 {"Content-Type": VND})
        if status != 201:
            return None, (status, body)
        document = json.loads(body)["data"]["id"]
        return document, self.upload(document, name)

    def thin_page_preview(self) -> None:
        document, (status, body) = self.upload_new("page-1x1000pt.pdf")
        if status == 201:
            page = json.loads(body)["data"]["attributes"]["versions"][-1]["pages"][0]["id"]
            self.call("GET preview of the 1x1000 pt page", "GET", f"/api/pages/{page}/",
                      headers={"Accept": "image/jpeg"})

    def scan_if_free(self) -> None:
        if self.scan is not None:
            status, body = self.call("GET the scan's document", "GET",
                                     f"/api/documents/{self.scan}/")
            if status == 200 and json.loads(body)["data"]["attributes"]["ocr_status"] not in DONE:
                return
        document, (status, _) = self.upload_new("scan.tif")
        self.scan = document if status == 201 else None

    def refused_frame(self) -> None:
        self.upload(self.refused, "frame-40000x40000.tif")

    def hostile_logins(self) -> None:
        for op, body in self.logins.items():
            self.call(op, "POST", "/api/auth/login/", body, {"Content-Type": "application/json"})

    def ocr_states(self) -> dict[str, Counter]:
        """{file name: Counter of ocr_status} of the attacker's documents that have a file, and
        Counter of the failed ones' ocr_error under "failed because"."""
        states: dict[str, Counter] = defaultdict(Counter)
        page = pages = 1
        while page <= pages:
            listing = must(exchange(self.client, "GET",
                                    f"/api/documents/?page[size]=100&page[number]={page}"),
                           "GET /api/documents/")
            pages = listing["meta"]["pagination"]["pages"]
            for document in listing["data"]:
                attributes = document["attributes"]
                if attributes["file_name"]:
                    states[attributes["file_name"]][attributes["ocr_status"]] += 1
                if attributes["ocr_status"] == "failed":
                    states["failed because"][str(attributes["ocr_error"])[:120]] += 1
            page += 1
        return states
