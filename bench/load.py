"""Load benchmark: many concurrent clients mixing every kind of request against a real `dms serve`
on 127.0.0.1, with OCR busy in the background; also idle RSS, start-up time and the throughput of
GET /api/users/me/ alone.

In order, against one fresh server (a new temporary data dir):
  1. start-up: seconds from starting the subprocess until GET /health first answers 200 (polled
     every 2 ms), and the server's RSS right after start-up and after a login, idle;
  2. throughput: --me-clients threads (each its own keep-alive connection) on GET /api/users/me/
     only for --me-seconds: requests/s, latency, errors (the project's target: >= 1,000 req/s with
     no error on 2 cores -- the clients run in this process and share the CPU with the server);
  3. mixed load: --clients threads for --seconds, each with its own keep-alive connection, logged
     in as one of --users users (created by the admin with POST /api/users/, change-password and
     login), each working in its own folder under its user's .home: list a folder, create a
     folder, move a node between two sub-folders, create a document and upload a small file into
     it (text-layer PDFs, every --png-every-th one a 300-dpi PNG scan so that Tesseract runs in
     the background), search, GET /api/users/me/. Past --max-nodes nodes a client deletes its
     oldest node (op "delete"), so that a long run works on a bounded tree. Clients send requests
     back to back (--think-ms 0).

Every response with a status >= 400 and every exception counts as an error (none is provoked on
purpose). The server's output is drained by a thread (the pipe never fills) and scanned for
"database is locked" and "Traceback". It prints per operation: count, p50/p95/p99/max latency in
ms and errors; the total requests/s; the server's RSS before, at its peak (sampled every 250 ms)
and after the load; the OCR backlog at the end (uploaded documents not yet `succeeded`, counted per
user from the legacy GET /api/documents list), and how long the backlog then takes to drain (at
most --drain-seconds). It prints numbers and never asserts.

    .venv/bin/python -m bench.load [--seconds 60] [--clients 16] [--users 4] [--me-seconds 10]

Soak variant (instead of 2 and 3): the mixed load at a lower rate -- by default 4 clients, each
pausing 200 ms between operations -- for N minutes, printing the server's RSS every 30 s, then
its growth from the end of the first minute to the end (it should not grow). For 10 minutes:

    .venv/bin/python -m bench.load --soak-minutes 10 [--clients 4] [--think-ms 200]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import statistics
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

from bench.common import ServerProcess, machine
from tests.harness.samples import pdf, png  # the tests' tiny PDF writer and scans

VND = "application/vnd.api+json"
USER_PASSWORD = "bench-user-password-1"
SEARCH_WORDS = ["invoice", "electricity", "stadtwerke", "insurance", "folder", "contract", "inv",
                "report", "quarterly", "scan", "receipt", "zzzunknown"]
PDF_WORDS = ["Invoice", "Electricity", "Stadtwerke", "Insurance", "Contract", "Quarterly", "Report",
             "Receipt", "Garden", "Water", "Rent", "Tax"]
SAMPLE_SECONDS = 0.25
SOAK_REPORT_SECONDS = 30
MAX_ERRORS_SHOWN = 8


# -- the server's output --------------------------------------------------------------------------
class OutputScanner:
    """Reads the server's stdout+stderr to the end in a thread (so the pipe never fills) and counts
    lines with "database is locked" and "Traceback"; keeps the first tracebacks' lines."""

    def __init__(self, stream):
        self.stream = stream
        self.lines = 0
        self.locked = 0
        self.tracebacks = 0
        self.levels: Counter = Counter()  # WARNING / ERROR / CRITICAL log lines
        self.problems: Counter = Counter()  # the same, by logger and message with digits as N
        self.examples: dict[str, str] = {}  # the first line of each kind
        self.excerpts: list[list[str]] = []
        self._current: list[str] | None = None
        self._previous = ""
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.stream:
            self.lines += 1
            if "database is locked" in line:
                self.locked += 1
            level = next((name for name in (" WARNING ", " ERROR ", " CRITICAL ") if name in line),
                         None)
            if level:
                self.levels[level.strip()] += 1
                kind = re.sub(r"\d+", "N", line.split(level, 1)[1].strip())[:150]
                self.problems[level.strip() + " " + kind] += 1
                self.examples.setdefault(level.strip() + " " + kind, line.rstrip())
            if "Traceback" in line:
                self.tracebacks += 1
                if len(self.excerpts) < 3:
                    self._current = [self._previous.rstrip()]
                    self.excerpts.append(self._current)
            if self._current is not None:
                self._current.append(line.rstrip())
                if len(self._current) >= 40 or (len(self._current) > 1 and not line.startswith(" ")
                                                 and "Traceback" not in line
                                                 and not line.startswith("During")):
                    self._current = None
            self._previous = line

    def join(self, timeout: float = 10) -> None:
        self._thread.join(timeout)


class RssSampler:
    """The server's RSS every SAMPLE_SECONDS in a thread: peak, and the latest value."""

    def __init__(self, server: ServerProcess):
        self.server = server
        self.first = self.peak = self.last = server.rss_mib()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            try:
                self.last = self.server.rss_mib()
            except OSError:
                return
            self.peak = max(self.peak, self.last)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.last = self.server.rss_mib()
        self.peak = max(self.peak, self.last)


# -- HTTP -----------------------------------------------------------------------------------------
class Client:
    """One keep-alive connection with one token. `call` never raises: it returns (status, body),
    status 0 for an exception (the connection is then opened anew)."""

    def __init__(self, port: int, token: str | None = None):
        self.port = port
        self.headers = {"Authorization": f"Token {token}"} if token else {}
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body=None, headers: dict | None = None,
             content_type: str | None = None) -> tuple[int, bytes]:
        all_headers = {**self.headers, **(headers or {})}
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            all_headers["Content-Type"] = content_type or "application/json"
        try:
            self.connection.request(method, path, body=body, headers=all_headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            return 0, f"{type(error).__name__}: {error}".encode()

    def close(self) -> None:
        self.connection.close()


def must(reply: tuple[int, bytes], what: str) -> dict | list:
    status, body = reply
    if not 200 <= status < 300:
        raise RuntimeError(f"{what}: {status} {body[:300]!r}")
    return json.loads(body) if body else {}


def create_node_body(kind: str, title: str, parent: str) -> dict:
    return {"data": {"type": kind, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}


def login(port: int, username: str, password: str) -> str:
    client = Client(port)
    token = must(client.call("POST", "/api/auth/login/", {"username": username,
                                                         "password": password}), "login")["token"]
    client.close()
    return token


def create_users(port: int, admin_token: str, count: int) -> list[dict]:
    """`count` users made by the admin; each {"name", "token", "home"}."""
    admin = Client(port, admin_token)
    users = []
    for index in range(count):
        name = f"bench-user-{index + 1}"
        created = must(admin.call("POST", "/api/users/",
                                  {"data": {"type": "users", "attributes": {"username": name}}},
                                  content_type=VND), "create user")
        user_id = created["data"]["id"]
        must(admin.call("POST", f"/api/users/{user_id}/change-password/",
                        {"password": USER_PASSWORD}), "change password")
        token = login(port, name, USER_PASSWORD)
        me = must(Client(port, token).call("GET", "/api/users/me/"), "me")
        users.append({"name": name, "token": token,
                      "home": me["data"]["relationships"]["home_folder"]["data"]["id"]})
    admin.close()
    return users


# -- statistics -----------------------------------------------------------------------------------
class Tally:
    """Latencies (ms) and errors per operation of one client thread (merged at the end)."""

    def __init__(self):
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.messages: list[str] = []

    def record(self, op: str, started: float, reply: tuple[int, bytes]) -> bool:
        self.latencies[op].append((time.perf_counter() - started) * 1000)
        status, body = reply
        if status == 0 or status >= 400:
            self.errors[op] += 1
            if len(self.messages) < MAX_ERRORS_SHOWN:
                self.messages.append(f"{op}: {status} {body[:200]!r}")
            return False
        return True

    def merge(self, other: Tally) -> None:
        for op, values in other.latencies.items():
            self.latencies[op].extend(values)
        self.errors.update(other.errors)
        self.messages.extend(other.messages)


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, int(len(ordered) * fraction + 0.5) - 1))]


def print_tally(tally: Tally, seconds: float) -> None:
    ops = sorted(tally.latencies, key=lambda op: -len(tally.latencies[op]))
    width = max([len(op) for op in ops] + [9])
    print(f"{'operation':<{width}}  {'count':>7}  {'p50 ms':>8}  {'p95 ms':>8}  {'p99 ms':>8}  "
          f"{'max ms':>8}  {'errors':>6}")
    total = errors = 0
    for op in ops:
        values = sorted(tally.latencies[op])
        total += len(values)
        errors += tally.errors[op]
        print(f"{op:<{width}}  {len(values):7d}  {statistics.median(values):8.1f}  "
              f"{percentile(values, 0.95):8.1f}  {percentile(values, 0.99):8.1f}  {values[-1]:8.1f}  "
              f"{tally.errors[op]:6d}")
    print(f"total: {total} requests in {seconds:.1f} s = {total / seconds:.1f} requests/s, "
          f"errors {errors}")
    for message in tally.messages[:MAX_ERRORS_SHOWN]:
        print(f"  error: {message}")


# -- the mixed load -------------------------------------------------------------------------------
class Worker:
    """One client of the mixed load: its own connection and folder, its own nodes."""

    OPS = [("list", 25), ("search", 15), ("me", 15), ("create folder", 15), ("move", 15),
           ("upload", 15)]

    def __init__(self, index: int, port: int, user: dict, scans: list[bytes], args,
                 stop: threading.Event):
        self.index, self.user, self.scans, self.args, self.stop = index, user, scans, args, stop
        self.client = Client(port, user["token"])
        self.random = random.Random(index)
        self.tally = Tally()
        self.nodes: list[tuple[str, str]] = []  # (id, parent id), oldest first
        self.uploads = 0
        self.folder = self.sides = None
        self.crash: str | None = None

    def setup(self) -> None:
        """The client's folder under .home, with two sub-folders the moves go between."""
        self.folder = self._create("folders", f"client {self.index:02d}", self.user["home"],
                                   "create folder")
        self.sides = [self._create("folders", side, self.folder, "create folder")
                      for side in ("A", "B")]
        if None in (self.folder, *self.sides):
            raise RuntimeError(f"client {self.index}: could not create its folders")

    def _create(self, kind: str, title: str, parent: str, op: str) -> str | None:
        started = time.perf_counter()
        reply = self.client.call("POST", "/api/nodes/", create_node_body(kind, title, parent),
                                 content_type=VND)
        if self.tally.record(op, started, reply):
            return json.loads(reply[1])["data"]["id"]
        return None

    def run(self) -> None:
        try:
            weights = [weight for _, weight in self.OPS]
            names = [name for name, _ in self.OPS]
            while not self.stop.is_set():
                op = self.random.choices(names, weights)[0]
                getattr(self, "op_" + op.replace(" ", "_"))()
                if len(self.nodes) > self.args.max_nodes:
                    self.op_delete()
                if self.args.think_ms:
                    self.stop.wait(self.args.think_ms / 1000)
        except Exception:  # a bug in the benchmark itself: shown, not hidden
            self.crash = traceback.format_exc()
        finally:
            self.client.close()

    def op_list(self) -> None:
        folder = self.random.choice([self.folder, *self.sides])
        started = time.perf_counter()
        self.tally.record("list folder", started, self.client.call("GET", f"/api/nodes/{folder}/"))

    def op_search(self) -> None:
        word = self.random.choice(SEARCH_WORDS)
        started = time.perf_counter()
        self.tally.record("search", started, self.client.call("GET", f"/api/search/?q={word}"))

    def op_me(self) -> None:
        started = time.perf_counter()
        self.tally.record("users/me", started, self.client.call("GET", "/api/users/me/"))

    def op_create_folder(self) -> None:
        parent = self.random.choice(self.sides)
        node = self._create("folders", f"folder {self.random.randrange(10**6)}", parent,
                            "create folder")
        if node:
            self.nodes.append((node, parent))

    def op_move(self) -> None:
        if not self.nodes:
            return self.op_create_folder()
        position = self.random.randrange(len(self.nodes))
        node, parent = self.nodes[position]
        target = self.sides[1] if parent == self.sides[0] else self.sides[0]
        started = time.perf_counter()
        reply = self.client.call("POST", "/api/nodes/move/", {"nodes": [{"id": node}],
                                                               "target_parent": {"id": target}})
        if self.tally.record("move", started, reply):
            self.nodes[position] = (node, target)

    def op_upload(self) -> None:
        parent = self.random.choice(self.sides)
        self.uploads += 1
        scan = self.args.png_every and self.uploads % self.args.png_every == 0
        number = self.random.randrange(10**6)
        document = self._create("documents", f"{'scan' if scan else 'invoice'} {number}", parent,
                                "create document")
        if document is None:
            return
        self.nodes.append((document, parent))
        if scan:
            body, name, op = self.random.choice(self.scans), f"scan-{number}.png", "upload png"
        else:
            words = self.random.sample(PDF_WORDS, 3)
            body = pdf([f"{' '.join(words)} invoice number {number} client {self.index}",
                        f"Page two: {words[0]} total {number % 997} EUR"])
            name, op = f"invoice-{number}.pdf", "upload pdf"
        started = time.perf_counter()
        self.tally.record(op, started, self.client.call(
            "PUT", f"/api/documents/{document}/upload/{name}", body,
            {"Content-Disposition": f"attachment; filename={name}"}))

    def op_delete(self) -> None:
        node, _ = self.nodes.pop(0)
        started = time.perf_counter()
        self.tally.record("delete", started, self.client.call("DELETE", f"/api/nodes/{node}/"))


def make_scans(count: int) -> list[bytes]:
    return [png(f"Receipt {index} Quarterly Report") for index in range(count)]


def run_mixed(server: ServerProcess, users: list[dict], args, seconds: float,
              on_tick=None) -> tuple[Tally, float, list[Worker]]:
    """args.clients workers for `seconds`; `on_tick(elapsed)` is called about every second."""
    scans = make_scans(6)
    stop = threading.Event()
    workers = [Worker(index, server.port, users[index % len(users)], scans, args, stop)
               for index in range(args.clients)]
    for worker in workers:
        worker.setup()
    threads = [threading.Thread(target=worker.run, daemon=True) for worker in workers]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    while (elapsed := time.perf_counter() - started) < seconds:
        time.sleep(min(1.0, seconds - elapsed))
        if on_tick:
            on_tick(time.perf_counter() - started)
    stop.set()
    for thread in threads:
        thread.join(timeout=180)
    wall = time.perf_counter() - started
    tally = Tally()
    for worker in workers:
        tally.merge(worker.tally)
        if worker.crash:
            print(f"client {worker.index} crashed:\n{worker.crash}")
    return tally, wall, workers


# -- the other measurements -----------------------------------------------------------------------
def start_server(data_dir: Path) -> tuple[ServerProcess, OutputScanner, float, float]:
    """The server, its output scanner, seconds until it printed where it listens and seconds
    until GET /health first answered 200."""
    started = time.perf_counter()
    server = ServerProcess(data_dir)
    listening = time.perf_counter() - started
    scanner = OutputScanner(server.process.stdout)
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        try:
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                break
        except OSError:
            pass
        finally:
            connection.close()
        if time.perf_counter() - started > 60:
            raise RuntimeError("GET /health did not answer 200 within 60 s")
        time.sleep(0.002)
    return server, scanner, listening, time.perf_counter() - started


def me_throughput(port: int, tokens: list[str], clients: int, seconds: float) -> None:
    stop = threading.Event()
    tallies = [Tally() for _ in range(clients)]

    def client(index: int) -> None:
        connection = Client(port, tokens[index % len(tokens)])
        for _ in range(20):  # warm-up, not counted
            connection.call("GET", "/api/users/me/")
        barrier.wait()
        while not stop.is_set():
            started = time.perf_counter()
            tallies[index].record("GET /api/users/me/", started,
                                  connection.call("GET", "/api/users/me/"))
        connection.close()

    barrier = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=client, args=(index,), daemon=True)
               for index in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    wall = time.perf_counter() - started
    tally = Tally()
    for one in tallies:
        tally.merge(one)
    print(f"\n2. throughput: {clients} concurrent clients on GET /api/users/me/ only, {seconds:g} s")
    print_tally(tally, wall)


def ocr_backlog(port: int, users: list[dict]) -> Counter:
    """ocr_status of every uploaded document (file_name set) not yet `succeeded`, over all users."""
    statuses: Counter = Counter()
    for user in users:
        client = Client(port, user["token"])
        for document in must(client.call("GET", "/api/documents"), "GET /api/documents"):
            if document["file_name"] and document["ocr_status"] != "succeeded":
                statuses[document["ocr_status"]] += 1
        client.close()
    return statuses


def describe(backlog: Counter) -> str:
    total = sum(backlog.values())
    parts = ", ".join(f"{status} {count}" for status, count in sorted(backlog.items()))
    return f"{total} documents" + (f" ({parts})" if parts else "")


def print_server_output(scanner: OutputScanner) -> None:
    print(f"server output: {scanner.lines} lines, 'database is locked' {scanner.locked}, "
          f"'Traceback' {scanner.tracebacks}, log lines of level WARNING {scanner.levels['WARNING']}, "
          f"ERROR {scanner.levels['ERROR']}, CRITICAL {scanner.levels['CRITICAL']}")
    for kind, count in scanner.problems.most_common(MAX_ERRORS_SHOWN):
        print(f"  {count:6d} x {kind}")
        print(f"           e.g. {scanner.examples[kind][:200]}")
    for excerpt in scanner.excerpts:
        print("  first lines of a traceback:")
        shown = excerpt if len(excerpt) <= 12 else excerpt[:2] + ["  ..."] + excerpt[-10:]
        for line in shown:
            print(f"    {line}")


def soak(server: ServerProcess, users: list[dict], args) -> None:
    print(f"\n2. soak: {args.clients} clients, {args.think_ms} ms between operations, "
          f"{args.soak_minutes:g} minutes; server RSS every {SOAK_REPORT_SECONDS} s")
    rss = RssSampler(server)
    marks: dict[str, float] = {}
    next_report = [SOAK_REPORT_SECONDS]

    def tick(elapsed: float) -> None:
        if elapsed >= 60 and "first minute" not in marks:
            marks["first minute"] = server.rss_mib()
        if elapsed >= next_report[0]:
            next_report[0] += SOAK_REPORT_SECONDS
            print(f"  {elapsed / 60:5.1f} min  RSS {server.rss_mib():7.1f} MiB", flush=True)

    tally, wall, _ = run_mixed(server, users, args, args.soak_minutes * 60, tick)
    rss.stop()
    print_tally(tally, wall)
    first = marks.get("first minute", rss.first)
    print(f"server RSS: start {rss.first:.1f} MiB, after the first minute {first:.1f} MiB, peak "
          f"{rss.peak:.1f} MiB, end {rss.last:.1f} MiB; growth from the first minute to the end "
          f"{rss.last - first:+.1f} MiB")
    print(f"OCR backlog at the end: {describe(ocr_backlog(server.port, users))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="length of the mixed load")
    parser.add_argument("--clients", type=int, default=None,
                        help="concurrent clients of the mixed load (default 16, soak 4)")
    parser.add_argument("--users", type=int, default=4, help="users the clients log in as")
    parser.add_argument("--me-seconds", type=float, default=10, help="length of the /users/me/ run")
    parser.add_argument("--me-clients", type=int, default=16)
    parser.add_argument("--png-every", type=int, default=5,
                        help="every n-th upload of a client is a PNG scan (0: none)")
    parser.add_argument("--max-nodes", type=int, default=300,
                        help="nodes a client keeps before deleting its oldest")
    parser.add_argument("--think-ms", type=float, default=None,
                        help="pause of each client between operations (default 0, soak 200)")
    parser.add_argument("--drain-seconds", type=float, default=60,
                        help="how long to wait for the OCR backlog to drain after the load")
    parser.add_argument("--soak-minutes", type=float, default=0,
                        help="run the soak variant for this many minutes instead")
    args = parser.parse_args()
    if args.clients is None:
        args.clients = 4 if args.soak_minutes else 16
    if args.think_ms is None:
        args.think_ms = 200 if args.soak_minutes else 0
    print(f"machine: {machine()}")

    with tempfile.TemporaryDirectory(prefix="dms-bench-load-") as tmp:
        server, scanner, listening, healthy = start_server(Path(tmp) / "data")
        try:
            print("\n1. start-up and idle memory")
            after_start = server.rss_mib()
            admin_token = server.login()
            time.sleep(1)
            after_login = server.rss_mib()
            print(f"start-up: 'listening' printed after {listening:.2f} s, first GET /health 200 "
                  f"after {healthy:.2f} s")
            print(f"idle RSS: {after_start:.1f} MiB after start-up, {after_login:.1f} MiB after a "
                  f"login")

            users = create_users(server.port, admin_token, args.users)
            if args.soak_minutes:
                soak(server, users, args)
            else:
                me_throughput(server.port, [user["token"] for user in users], args.me_clients,
                              args.me_seconds)

                print(f"\n3. mixed load: {args.clients} clients as {len(users)} users, "
                      f"{args.seconds:g} s, every {args.png_every}th upload a PNG scan")
                rss = RssSampler(server)
                tally, wall, workers = run_mixed(server, users, args, args.seconds)
                rss.stop()
                print_tally(tally, wall)
                print(f"server RSS: before the load {rss.first:.1f} MiB, peak {rss.peak:.1f} MiB, "
                      f"after {rss.last:.1f} MiB")
                backlog = ocr_backlog(server.port, users)
                uploads = sum(len(tally.latencies[op]) for op in ("upload pdf", "upload png"))
                print(f"OCR backlog at the end: {describe(backlog)} of {uploads} uploads")
                started = time.perf_counter()
                while sum(backlog.values()) and time.perf_counter() - started < args.drain_seconds:
                    time.sleep(1)
                    backlog = ocr_backlog(server.port, users)
                if sum(backlog.values()):
                    print(f"OCR backlog after waiting {args.drain_seconds:g} s more: "
                          f"{describe(backlog)}")
                else:
                    print(f"OCR backlog drained {time.perf_counter() - started:.1f} s after the "
                          f"load; server RSS then {server.rss_mib():.1f} MiB")
        finally:
            server.stop()
            scanner.join()
        print()
        print_server_output(scanner)


if __name__ == "__main__":
    main()
