"""The third round of hostile cases (issue 22) for bench/hostile.py's attacker: PDF content bombs,
a page that renders forever, hostile mail servers and messages, request smuggling and bad chunk
sizes on raw sockets, and symbolic links planted in the consume folder. Each step records its
answers and latencies in the attacker's tally; `report()` prints what each case left behind."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

from bench.common import KeepAlive
from tests.harness.hostileimap import (HostileImap, Message, encoded_word_subject, huge_literal,
                                       nested_mime, trickle)
from tests.harness.samples import pdf_content_bomb, pdf_slow_to_render

VND = "application/vnd.api+json"
MAIL_CASES = {"announces 10 GB": lambda: Message(b"x" * 100, claimed_size=100,
                                                 send_body=huge_literal),
              "trickles a byte a second": lambda: Message(b"y" * 2000, send_body=trickle),
              "28,000 encoded words": lambda: Message(encoded_word_subject()),
              "5,000 nested MIME levels": lambda: Message(nested_mime())}


class Round3:
    def __init__(self, attacker, consume_dir: Path, victim_file: Path):
        self.attacker = attacker
        self.consume_dir, self.victim_file = consume_dir, victim_file
        self.victim_bytes = victim_file.read_bytes()
        self.bombs = {"content-bomb-1GiB.pdf": pdf_content_bomb(1024),
                      "shared-300MiB-x200.pdf": pdf_content_bomb(300, pages=200)}
        self.servers = {name: HostileImap([make()], f"server{index}").start()
                        for index, (name, make) in enumerate(MAIL_CASES.items())}
        self.accounts = {name: self._account(server.port)
                         for name, server in self.servers.items()}
        self.slow_page: str | None = None
        self._mail_thread: threading.Thread | None = None
        self._plant_links()

    # -- steps -----------------------------------------------------------------------------------
    def steps(self) -> tuple[list, list]:
        """(steps that take moments, steps that take seconds each)."""
        return [self.mail_checks, self.smuggling], [self.content_bombs, self.slow_preview]

    def content_bombs(self) -> None:
        for name in self.bombs:
            document = self._new_document(name)
            self.attacker.call(f"upload {name}", "PUT",
                               f"/api/documents/{document}/upload/{name}", self.bombs[name],
                               {"Content-Disposition": f"attachment; filename={name}"})

    def slow_preview(self) -> None:
        if self.slow_page is None:
            document = self._new_document("slow-to-render.pdf")
            self.attacker.call("PATCH ocr off", "PATCH", f"/api/documents/{document}/",
                               {"data": {"type": "documents", "id": document,
                                         "attributes": {"ocr": False}}}, {"Content-Type": VND})
            status, body = self.attacker.call(
                "upload slow-to-render.pdf", "PUT",
                f"/api/documents/{document}/upload/slow.pdf", pdf_slow_to_render(),
                {"Content-Disposition": "attachment; filename=slow.pdf"})
            if status != 201:
                return
            self.slow_page = json.loads(body)["data"]["attributes"]["versions"][0]["pages"][0]["id"]
        self.attacker.call("GET preview of the page that renders forever", "GET",
                           f"/api/pages/{self.slow_page}/", headers={"Accept": "image/jpeg"})

    def mail_checks(self) -> None:
        """Once: a thread of its own asks for a check of each account, again after Retry-After
        when the user's two checks under way answer 429, until each was queued once."""
        if self._mail_thread is None:
            self._mail_thread = threading.Thread(target=self._check_each, daemon=True)
            self._mail_thread.start()

    def _check_each(self) -> None:
        client = KeepAlive(self.attacker.port, self.attacker.user["token"])
        client.connection.timeout = 60
        waiting = list(self.accounts.items())
        while waiting:
            name, account = waiting.pop(0)
            started = time.perf_counter()
            try:
                client.connection.request("POST", f"/api/mail-accounts/{account}/check/",
                                          headers=client.headers)
                response = client.connection.getresponse()
                reply = (response.status, response.read())
            except OSError as error:
                reply = (0, str(error).encode())
            self.attacker.tally.record(f"POST check ({name})", started, reply)
            if reply[0] == 429:
                waiting.append((name, account))
                time.sleep(int(response.getheader("Retry-After", "5")))

    def smuggling(self) -> None:
        for op, request in (
                ("raw: Content-Length beside chunked",
                 b"POST /api/nodes/ HTTP/1.1\r\nHost: b\r\nContent-Length: 4\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
                ("raw: chunk size of 20 nines",
                 b"PUT /api/document/upload/x.pdf HTTP/1.1\r\nHost: b\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n" + b"9" * 20 + b"\r\n")):
            started = time.perf_counter()
            self.attacker.tally.record(op, started, self._raw(request))

    # -- what was left behind ----------------------------------------------------------------------
    def report(self) -> None:
        for name, account in self.accounts.items():
            deadline = time.monotonic() + 60  # a check still running ends by its deadline
            while True:
                status, body = self.attacker.call("GET mail account", "GET",
                                                  f"/api/mail-accounts/{account}/")
                attributes = json.loads(body)["data"]["attributes"] if status == 200 else {}
                if not attributes.get("checking") or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            error = attributes.get("last_error", body)
            print(f"  mail server that {name}: body fetches {dict(self.servers[name].fetches)}, "
                  f"last_error {error!r}")
        unchanged = self.victim_file.read_bytes() == self.victim_bytes
        outside = sorted(p.name for p in self.victim_file.parent.iterdir())
        print(f"  consume folder links: the victim file outside is "
              f"{'unchanged' if unchanged else 'CHANGED'}; beside it: {outside}")
        for server in self.servers.values():
            server.stop()

    # -- helpers -----------------------------------------------------------------------------------
    def _new_document(self, title: str) -> str:
        attacker = self.attacker
        status, body = attacker.call("create document", "POST", "/api/nodes/", {"data": {
            "type": "documents", "attributes": {"title": title},
            "relationships": {"parent": {"data": {"type": "folders",
                                                  "id": attacker.user["home"]}}}}},
            {"Content-Type": VND})
        return json.loads(body)["data"]["id"] if status == 201 else "none"

    def _account(self, port: int) -> str:
        status, body = self.attacker.call("create mail account", "POST", "/api/mail-accounts/", {
            "data": {"type": "mail-accounts", "attributes": {
                "host": "127.0.0.1", "port": port, "security": "none", "username": "a",
                "password": "b"}}}, {"Content-Type": VND})
        if status != 201:
            raise RuntimeError(f"could not add a mail account: {status} {body[:200]!r}")
        return json.loads(body)["data"]["id"]

    def _plant_links(self) -> None:
        """Links in the shared folder towards a file outside: as the refused files' folder and
        as a refused file's reason, with a refused file dropped to trigger both."""
        name = self.attacker.user["name"]
        (self.consume_dir / ".failed").mkdir(parents=True, exist_ok=True)
        os.symlink(self.victim_file.parent, self.consume_dir / ".failed" / name)
        (self.consume_dir / name).mkdir(exist_ok=True)
        (self.consume_dir / name / "program.exe").write_bytes(b"MZ" + b"\0" * 100)
        os.symlink(self.victim_file, self.consume_dir / name / "letter.pdf")

    def _raw(self, request: bytes) -> tuple[int, bytes]:
        """(status, what came back) of one raw request; the connection must close after it."""
        try:
            with socket.create_connection(("127.0.0.1", self.attacker.port), timeout=70) as sock:
                sock.sendall(request)
                data = b""
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except OSError as error:
            return 0, f"{type(error).__name__}: {error}".encode()
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        return status, data[-200:]
