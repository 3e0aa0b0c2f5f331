"""Shared pieces of the benchmarks: a `dms serve` subprocess, timing, and the machine's description.

Benchmarks print numbers; they never pass or fail. Method (as in ../shared/docs/targets.md):
sequential keep-alive requests over one connection, 20 warm-up requests, then the timed ones."""

from __future__ import annotations

import http.client
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
ADMIN_PASSWORD = "bench-password-1"
LISTENING = re.compile(r"dms listening on (http://\S+)")


class ServerProcess:
    """`python -m dms serve` on a free port of 127.0.0.1, as a user would start it."""

    def __init__(self, data_dir: Path, **env: str):
        environment = {**os.environ, "DMS_ADMIN_PASSWORD": ADMIN_PASSWORD,
                       "DMS_LOG_LEVEL": "warning", **env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dms", "serve", "--port", "0", "--data-dir", str(data_dir),
             "--log-level", "info"],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.process.stdout:
            match = LISTENING.search(line)
            if match:
                self.url = match.group(1)
                break
        else:
            raise RuntimeError("dms serve did not start")
        self.port = int(self.url.rsplit(":", 1)[1])
        self.token: str | None = None

    def login(self, username: str = "admin", password: str = ADMIN_PASSWORD) -> str:
        response = requests.post(self.url + "/api/auth/login/",
                                 json={"username": username, "password": password})
        response.raise_for_status()
        self.token = response.json()["token"]
        return self.token

    def connection(self) -> KeepAlive:
        return KeepAlive(self.port, self.token)

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


class KeepAlive:
    """One keep-alive HTTP/1.1 connection (http.client: the client's own cost stays small next to
    the server's, unlike requests'). Every call raises on a status >= 400."""

    def __init__(self, port: int, token: str | None):
        self.connection = http.client.HTTPConnection("127.0.0.1", port)
        self.headers = {"Authorization": f"Token {token}"} if token else {}

    def request(self, method: str, path: str, body=None, headers: dict | None = None) -> bytes:
        all_headers = {**self.headers, **(headers or {})}
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            all_headers.setdefault("Content-Type", "application/json")
        self.connection.request(method, path, body=body, headers=all_headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return data

    def get(self, path: str) -> bytes:
        return self.request("GET", path)

    def post(self, path: str, body) -> bytes:
        return self.request("POST", path, body)


def timed(call, warmup: int = 20, runs: int = 300) -> dict[str, float]:
    """p50/p95 in milliseconds of `call()`, which must raise on a failed request."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"p50": statistics.median(samples), "p95": samples[int(len(samples) * 0.95) - 1]}


class FloorProcess:
    """bench/floor.py in a subprocess: the bare waitress app dms is compared with."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-m", "bench.floor"], cwd=ROOT,
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline().split()[-1])

    def connection(self) -> KeepAlive:
        return KeepAlive(self.port, None)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def timed_beside(call, floor_call, warmup: int = 20, runs: int = 300) -> dict[str, float]:
    """Like timed(), and the floor's median timed in the same loop, alternating request by
    request so that the machine's noise hits both alike; adds `floor_p50` and `ratio`."""
    for _ in range(warmup):
        call()
        floor_call()
    own, floor = [], []
    for _ in range(runs):
        start = time.perf_counter()
        floor_call()
        middle = time.perf_counter()
        call()
        end = time.perf_counter()
        floor.append((middle - start) * 1000)
        own.append((end - middle) * 1000)
    own.sort()
    p50, floor_p50 = statistics.median(own), statistics.median(floor)
    return {"p50": p50, "p95": own[int(len(own) * 0.95) - 1], "floor_p50": floor_p50,
            "ratio": p50 / floor_p50}


def engine_target(engine: str, cluster, data_dir: Path) -> tuple[Path | str, dict[str, str]]:
    """Where a benchmark's database goes, and the environment of the server it starts: a new
    database of the throwaway PostgreSQL `cluster` (tests/harness/pgcluster.py), or dms.db in
    `data_dir` (made here); one OCR worker either way."""
    env = {"DMS_OCR_WORKERS": "1"}
    if engine == "postgresql":
        url = cluster.new_database(empty=True)
        env["DMS_DATABASE_URL"] = url
        return url, env
    data_dir.mkdir()
    return data_dir / "dms.db", env


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}")
