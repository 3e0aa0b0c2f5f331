"""bench/load.py's HTTP clients: keep-alive connections whose calls never raise, users made by
the admin, and the latencies and errors tallied per operation."""

from __future__ import annotations

import http.client
import json
import statistics
import time
from collections import Counter, defaultdict

VND = "application/vnd.api+json"
USER_PASSWORD = "bench-user-password-1"
MAX_ERRORS_SHOWN = 8


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
              f"{percentile(values, 0.95):8.1f}  {percentile(values, 0.99):8.1f}  "
              f"{values[-1]:8.1f}  {tally.errors[op]:6d}")
    print(f"total: {total} requests in {seconds:.1f} s = {total / seconds:.1f} requests/s, "
          f"errors {errors}")
    for message in tally.messages[:MAX_ERRORS_SHOWN]:
        print(f"  error: {message}")
