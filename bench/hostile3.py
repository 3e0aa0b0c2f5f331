"""The third round of hostile cases for bench/hostile.py's attacker: PDF content bombs, a page that
renders forever, hostile mail servers and messages, request smuggling and bad chunk sizes on raw
sockets, symbolic links planted in the consume folder, a 990-level folder tree in the attacker's
consume folder (how long until the victim's file dropped beside it is imported), and an attempt to
lock the victim out of password login from many addresses (past the documented ceiling a new address
is refused, while the owner still logs in from the address it logged in from before). Each step
records its answers and latencies in the attacker's tally; `report()` prints what each case left
behind. `pool_of_two()` is a phase of its own: a server on PostgreSQL with DMS_DB_POOL_SIZE=2 under
16 clients."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

from bench.common import KeepAlive, ServerProcess
from bench.lib.hostile_http import (
    USER_PASSWORD,
    Victim,
    connect,
    create_node,
    create_user,
    exchange,
    must,
    print_latencies,
    run_phase,
)
from tests.harness.consume import deep_chain, remove_chain
from tests.harness.hostileimap import (
    HostileImap,
    Message,
    encoded_word_subject,
    huge_literal,
    nested_mime,
    trickle,
)
from tests.harness.samples import pdf_content_bomb, pdf_slow_to_render, png, text

VND = "application/vnd.api+json"
MAIL_CASES = {"announces 10 GB": lambda: Message(b"x" * 100, claimed_size=100,
                                                 send_body=huge_literal),
              "trickles a byte a second": lambda: Message(b"y" * 2000, send_body=trickle),
              "28,000 encoded words": lambda: Message(encoded_word_subject()),
              "5,000 nested MIME levels": lambda: Message(nested_mime())}
DEEP_LEVELS = 990  # deeper than any path the file system takes whole
# The login lockout: wrong passwords from each address (DMS_LOGIN_FAILURES_PER_ADDRESS_USER), from
# one address fewer than locking the account takes, then from as many as it takes
# (DMS_LOGIN_FAILURES_PER_USER / DMS_LOGIN_FAILURES_PER_ADDRESS_USER).
TRIES_PER_ADDRESS, LOCKING_ADDRESSES = 5, 20
OWNER_ADDRESS = "192.0.2.10"  # where the owner logged in before: known to the throttle
NEW_ADDRESS = "192.0.2.11"  # where the owner never logged in


class Round3:
    def __init__(self, attacker, consume_dir: Path, victim_file: Path, victim_user: dict):
        self.attacker, self.victim_user = attacker, victim_user
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
        self._once: dict[str, threading.Thread] = {}
        self.imported_after: dict[str, float | None] = {}  # file: seconds until imported
        # (what was tried, the owner's address, status, detail, the status expected)
        self.lockout: list[tuple[str, str, int, str, int]] = []

    # -- steps -----------------------------------------------------------------------------------
    def steps(self) -> tuple[list, list]:
        """(steps that take moments, steps that take seconds each)."""
        return ([self.mail_checks, self.smuggling, self.deep_tree, self.login_lockout],
                [self.content_bombs, self.slow_preview])

    def deep_tree(self) -> None:
        """Once: a 990-level tree in the attacker's consume folder, then a file at its top and
        one in the victim's folder, watched until they are imported."""
        self._start_once("deep tree", self._deep_tree)

    def login_lockout(self) -> None:
        """Once: wrong passwords for the victim from 19 addresses, the owner's login from its
        address; then from 20 more, and the owner's login from a new address and from its own
        (known) one."""
        self._start_once("lockout", self._lockout)

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

    def _deep_tree(self) -> None:
        attacker_dir = self.consume_dir / self.attacker.user["name"] / "deep"
        attacker_dir.mkdir(parents=True)
        deep_chain(attacker_dir, DEEP_LEVELS, "bottom.txt", text("990 folders down\n"))
        victim_dir = self.consume_dir / self.victim_user["name"]
        victim_dir.mkdir(exist_ok=True)
        dropped = time.monotonic()
        (victim_dir / "victim-note.txt").write_bytes(text("the victim's note\n"))
        (attacker_dir.parent / "top.txt").write_bytes(text("beside the deep tree\n"))
        watched = {"victim-note.txt": connect(self.attacker.port, self.victim_user["token"]),
                   "top.txt": connect(self.attacker.port, self.attacker.user["token"])}
        self.imported_after = dict.fromkeys(watched)
        while time.monotonic() - dropped < 60 and None in self.imported_after.values():
            for name, client in watched.items():
                if self.imported_after[name] is None and name in self._inbox(client):
                    self.imported_after[name] = time.monotonic() - dropped
            time.sleep(0.1)

    @staticmethod
    def _inbox(client: KeepAlive) -> set[str]:
        status, body = exchange(client, "GET", "/api/users/me/")
        if status != 200:
            return set()
        inbox = json.loads(body)["data"]["relationships"]["inbox_folder"]["data"]["id"]
        status, body = exchange(client, "GET", f"/api/nodes/{inbox}/?page[size]=100")
        return {item["attributes"]["title"] for item in json.loads(body)["data"]} \
            if status == 200 else set()

    def _lockout(self) -> None:
        client = connect(self.attacker.port)
        name = self.victim_user["name"]

        def login(op: str, address: str, password: str) -> tuple[int, bytes]:
            started = time.perf_counter()
            return self.attacker.tally.record(op, started, exchange(
                client, "POST", "/api/auth/login/", {"username": name, "password": password},
                {"X-Forwarded-For": address}))

        for round_, addresses in enumerate((LOCKING_ADDRESSES - 1, LOCKING_ADDRESSES), 1):
            for number in range(addresses):
                for _ in range(TRIES_PER_ADDRESS):
                    login(f"login as the victim, wrong password ({addresses} addresses)",
                          f"198.18.{round_}.{number + 1}", "wrong-password")
            tried = f"{addresses * TRIES_PER_ADDRESS} wrong passwords from {addresses} addresses"
            # Past the ceiling, the new address first: the known one's success must not be what
            # lets the new one in.
            owners = [("its own address", OWNER_ADDRESS, 200)] if round_ == 1 else [
                ("a new address", NEW_ADDRESS, 429), ("its own, known address", OWNER_ADDRESS, 200)]
            for where, address, expected in owners:
                status, body = login(f"the owner's login from {where} after {addresses} "
                                     "addresses", address, USER_PASSWORD)
                detail = "" if status == 200 else self._detail(body)
                self.lockout.append((tried, where, status, detail, expected))

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
        if self._mail_thread is not None:  # until each check was queued (past 429s)
            self._mail_thread.join(120)
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
        for thread in self._once.values():
            thread.join(120)
        for name, seconds in self.imported_after.items():
            shown = f"imported after {seconds:.1f} s" if seconds is not None else \
                "NOT imported within 60 s"
            print(f"  beside a {DEEP_LEVELS}-level tree in the attacker's consume folder: {name} "
                  f"{shown} (a look every 1 s, a file taken once stable for 1 s)")
        remove_chain(self.consume_dir / self.attacker.user["name"] / "deep" / "d")
        for tried, where, status, detail, expected in self.lockout:
            print(f"  login lockout: {tried}, then the owner from {where}: {status} {detail} "
                  f"(expected {expected})")
        unchanged = self.victim_file.read_bytes() == self.victim_bytes
        outside = sorted(p.name for p in self.victim_file.parent.iterdir())
        print(f"  consume folder links: the victim file outside is "
              f"{'unchanged' if unchanged else 'CHANGED'}; beside it: {outside}")
        for server in self.servers.values():
            server.stop()

    # -- helpers -----------------------------------------------------------------------------------
    @staticmethod
    def _detail(body: bytes) -> str:
        try:
            return json.loads(body)["errors"][0]["detail"]
        except (ValueError, KeyError, IndexError, TypeError):
            return repr(body[:160])

    def _start_once(self, name: str, work) -> None:
        if name not in self._once:
            self._once[name] = threading.Thread(target=work, daemon=True)
            self._once[name].start()

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


# -- a phase of its own ---------------------------------------------------------------------------
def pool_of_two(seconds: float, clients: int = 16) -> None:
    """A `dms serve` on a throwaway PostgreSQL cluster (tests/harness/pgcluster.py) with
    DMS_DB_POOL_SIZE=2, the documented minimum, and a scan being read: `clients` victims loop
    for `seconds`; then, after a few heartbeats, one more request. Skipped without PostgreSQL."""
    try:
        import psycopg  # noqa: F401  (the postgres extra: scripts/setup.sh --bench)

        from tests.harness.pgcluster import Cluster
        cluster = Cluster().start()
    except Exception as error:  # not installed, or no way to start it here
        print(f"skipped: no PostgreSQL to start here ({type(error).__name__}: {error})")
        return
    try:
        with tempfile.TemporaryDirectory(prefix="dms-bench-pool-") as tmp:
            server = ServerProcess(Path(tmp) / "data", DMS_OCR_WORKERS="1", DMS_DB_POOL_SIZE="2",
                                   DMS_DATABASE_URL=cluster.new_database(empty=True))
            try:
                user = create_user(server.port, server.login(), "pooled")
                client = connect(server.port, user["token"])
                document = must(create_node(client, "documents", "scan", user["home"]),
                                "create a document")["data"]["id"]
                must(exchange(client, "PUT", f"/api/documents/{document}/upload/scan.png",
                              png("Pool of two"), {"Content-Disposition":
                                                   "attachment; filename=scan.png"}), "upload")
                victims = [Victim(index, server.port, user) for index in range(clients)]
                tally, wall, memory = run_phase(server, victims, seconds)
                print_latencies(tally, wall)
                memory.report()
                time.sleep(3)  # several heartbeats of background work later
                started = time.perf_counter()
                status, _ = exchange(client, "GET", "/api/users/me/")
                print(f"3 s later: GET users/me {status} in "
                      f"{(time.perf_counter() - started) * 1000:.1f} ms")
            finally:
                server.stop()
    finally:
        cluster.stop()
