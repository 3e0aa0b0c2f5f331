"""bench/hostile.py's clients: requests on keep-alive connections that never raise, users made by
the admin, latencies tallied per operation, the victims, ordinary clients looping over ordinary
requests, and a phase of them (beside an attacker) with the server's memory sampled."""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
import traceback
from collections import Counter, defaultdict

from bench.common import KeepAlive, ServerProcess
from bench.lib.hostile_watch import MAX_MESSAGES, MemorySampler

VND = "application/vnd.api+json"
USER_PASSWORD = "bench-user-password-1"
TIMEOUT_SECONDS = 300  # per request of a client: a stuck server shows as an error, not a hang


# -- HTTP -----------------------------------------------------------------------------------------
def connect(port: int, token: str | None = None) -> KeepAlive:
    keep_alive = KeepAlive(port, token)
    keep_alive.connection.timeout = TIMEOUT_SECONDS
    return keep_alive


def exchange(keep_alive: KeepAlive, method: str, path: str, body: bytes | dict | None = None,
             headers: dict | None = None) -> tuple[int, bytes]:
    """One request on the keep-alive connection: (status, body); never raises. Status 0 is an
    exception (timeout, closed connection), after which the connection is opened anew."""
    all_headers = {**keep_alive.headers, **(headers or {})}
    if isinstance(body, dict):
        body = json.dumps(body).encode()
        all_headers.setdefault("Content-Type", "application/json")
    try:
        keep_alive.connection.request(method, path, body=body, headers=all_headers)
        response = keep_alive.connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        keep_alive.connection.close()  # the next request connects again
        return 0, f"{type(error).__name__}: {error}".encode()


def must(reply: tuple[int, bytes], what: str) -> dict:
    status, body = reply
    if not 200 <= status < 300:
        raise RuntimeError(f"{what}: {status} {body[:300]!r}")
    return json.loads(body) if body else {}


def node_body(kind: str, title: str, parent: str) -> dict:
    return {"data": {"type": kind, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}


def create_node(client: KeepAlive, kind: str, title: str, parent: str) -> tuple[int, bytes]:
    return exchange(client, "POST", "/api/nodes/", node_body(kind, title, parent),
                    {"Content-Type": VND})


def create_user(port: int, admin_token: str, name: str) -> dict:
    """An ordinary user made by the admin: {"token", "home"}."""
    admin = connect(port, admin_token)
    created = must(exchange(admin, "POST", "/api/users/",
                            {"data": {"type": "users", "attributes": {"username": name}}},
                            {"Content-Type": VND}), f"create user {name}")
    must(exchange(admin, "POST", f"/api/users/{created['data']['id']}/change-password/",
                  {"password": USER_PASSWORD}), "change password")
    admin.connection.close()
    anonymous = connect(port)
    token = must(exchange(anonymous, "POST", "/api/auth/login/",
                          {"username": name, "password": USER_PASSWORD}), "login")["token"]
    anonymous.connection.close()
    user = connect(port, token)
    me = must(exchange(user, "GET", "/api/users/me/"), "users/me")
    user.connection.close()
    return {"name": name, "token": token,
            "home": me["data"]["relationships"]["home_folder"]["data"]["id"]}


# -- statistics -----------------------------------------------------------------------------------
class Tally:
    """Latencies (ms) and answers by status per operation of one thread (merged at the end)."""

    def __init__(self):
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.statuses: dict[str, Counter] = defaultdict(Counter)
        self.examples: dict[tuple[str, int], bytes] = {}  # the first body of each failed answer

    def record(self, op: str, started: float, reply: tuple[int, bytes]) -> tuple[int, bytes]:
        self.latencies[op].append((time.perf_counter() - started) * 1000)
        status, body = reply
        self.statuses[op][status] += 1
        if status == 0 or status >= 400:
            self.examples.setdefault((op, status), body[:200])
        return reply

    def errors(self, op: str) -> int:
        return sum(count for status, count in self.statuses[op].items()
                   if status == 0 or status >= 400)

    def merge(self, other: Tally) -> None:
        for op, values in other.latencies.items():
            self.latencies[op].extend(values)
            self.statuses[op].update(other.statuses[op])
        for key, body in other.examples.items():
            self.examples.setdefault(key, body)


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, int(len(ordered) * fraction + 0.5) - 1))]


def print_latencies(tally: Tally, seconds: float, by_status: bool = False) -> None:
    """One line per operation; `by_status` adds the answers by status instead of the errors."""
    width = max([len(op) for op in tally.latencies] + [9])
    last = "answers" if by_status else "errors"
    print(f"{'operation':<{width}}  {'count':>6}  {'p50 ms':>8}  {'p95 ms':>8}  {'p99 ms':>8}  "
          f"{'max ms':>8}  {last}")
    total = errors = 0
    for op, values in tally.latencies.items():
        values = sorted(values)
        total += len(values)
        errors += tally.errors(op)
        answers = (", ".join(f"{status} x{count}"
                             for status, count in sorted(tally.statuses[op].items()))
                   if by_status else f"{tally.errors(op):6d}")
        print(f"{op:<{width}}  {len(values):6d}  {statistics.median(values):8.1f}  "
              f"{percentile(values, 0.95):8.1f}  {percentile(values, 0.99):8.1f}  "
              f"{values[-1]:8.1f}  {answers}")
    if not by_status:
        everything = sorted(value for values in tally.latencies.values() for value in values)
        if everything:
            print(f"all: {total} requests in {seconds:.1f} s = {total / seconds:.1f} requests/s, "
                  f"p99 {percentile(everything, 0.99):.1f} ms, max {everything[-1]:.1f} ms, "
                  f"errors {errors}")
    for (op, status), body in list(tally.examples.items())[:MAX_MESSAGES]:
        print(f"  {'answer' if by_status else 'error'} {status} to {op}: {body!r}")


# -- the victims ----------------------------------------------------------------------------------
class Victim:
    """An ordinary client: its own keep-alive connection and its own folder under .home."""

    def __init__(self, index: int, port: int, user: dict):
        self.index, self.user = index, user
        self.client = connect(port, user["token"])
        self.folder = must(create_node(self.client, "folders", f"victim {index}", user["home"]),
                           "create the victim's folder")["data"]["id"]
        self.created = 0
        self.crash: str | None = None

    def operations(self):
        home = self.user["home"]
        return [("GET users/me", lambda: exchange(self.client, "GET", "/api/users/me/")),
                ("GET nodes/{home}", lambda: exchange(self.client, "GET", f"/api/nodes/{home}/")),
                ("GET search?q=invoice",
                 lambda: exchange(self.client, "GET", "/api/search/?q=invoice")),
                ("POST nodes (folder)", self.create_folder)]

    def create_folder(self) -> tuple[int, bytes]:
        self.created += 1
        return create_node(self.client, "folders", f"folder {self.created}", self.folder)

    def run(self, stop: threading.Event, tally: Tally) -> None:
        try:
            while not stop.is_set():
                for op, call in self.operations():
                    started = time.perf_counter()
                    tally.record(op, started, call())
        except Exception:  # a bug in the benchmark itself: shown, not hidden
            self.crash = traceback.format_exc()


def run_phase(server: ServerProcess, victims: list[Victim], seconds: float,
              attacker=None) -> tuple[Tally, float, MemorySampler]:
    """The victims loop for `seconds` (beside the attacker, whose `run(stop)` loops too): their
    merged tally, the phase's wall time, the server's memory sampled meanwhile."""
    memory = MemorySampler(server.process.pid)
    stop = threading.Event()
    tallies = [Tally() for _ in victims]
    threads = [threading.Thread(target=victim.run, args=(stop, tally), daemon=True)
               for victim, tally in zip(victims, tallies, strict=True)]
    if attacker:
        threads.append(threading.Thread(target=attacker.run, args=(stop,), daemon=True))
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=TIMEOUT_SECONDS + 10)
    wall = time.perf_counter() - started
    memory.stop()
    tally = Tally()
    for one in tallies:
        tally.merge(one)
    for victim in victims:
        if victim.crash:
            print(f"victim {victim.index} crashed:\n{victim.crash}")
    return tally, wall, memory
