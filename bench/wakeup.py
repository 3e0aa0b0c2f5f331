"""Why the app runs slower inside the server than in a loop: the same WSGI call of `GET
/api/users/me/` (dms' whole app, no socket), in-process, timed right after the previous call,
after a 0.3 ms sleep, and after being woken by another thread (as a request thread is when
waitress hands it a request). A profile probe for bench/RESULTS.md's request floor; it prints
medians in µs and never asserts.

    .venv/bin/python -m bench.wakeup [--calls 1500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench.common import ADMIN_PASSWORD, machine
from dms.config import Config
from dms.web.server import Server

GAP_SECONDS = 0.0003


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1500, help="timed calls per variant")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="dms-bench-wakeup-") as tmp:
        config = Config(host="127.0.0.1", port=0, data_dir=Path(tmp) / "data", threads=4,
                        admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)
        server = Server(config)
        threading.Thread(target=server.run, daemon=True).start()
        requests.get(server.url + "/api/version/", timeout=60)
        token = requests.post(server.url + "/api/auth/login/", timeout=60, json={
            "username": "admin", "password": ADMIN_PASSWORD}).json()["token"]
        call = wsgi_call(server.wsgi_app, token)
        for _ in range(300):
            call()
        print("µs per call of the app (median):")
        for number in range(args.rounds):
            cells = {
                "back to back": timed(call, args.calls, lambda: None),
                "after a 0.3 ms sleep": timed(call, args.calls, lambda: time.sleep(GAP_SECONDS)),
                "woken by another thread": timed(call, args.calls // 3, woken_by_a_thread),
            }
            print(f"  round {number + 1}: " + " | ".join(f"{name} {value:6.1f}"
                                                          for name, value in cells.items()))
        server.stop()


def wsgi_call(app, token: str):
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/users/me/", "QUERY_STRING": "",
               "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.url_scheme": "http", "HTTP_HOST": "127.0.0.1:8000",
               "HTTP_AUTHORIZATION": f"Token {token}", "REMOTE_ADDR": "127.0.0.1"}

    def call() -> None:
        body = app({**environ, "wsgi.input": io.BytesIO(b"")}, lambda *_: None)
        b"".join(body)
        if hasattr(body, "close"):
            body.close()
    return call


def woken_by_a_thread() -> None:
    """Block until another thread, started now, sets an event after GAP_SECONDS."""
    event = threading.Event()
    threading.Timer(GAP_SECONDS, event.set).start()
    event.wait()


def timed(call, count: int, before) -> float:
    samples = []
    for _ in range(count):
        before()
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
