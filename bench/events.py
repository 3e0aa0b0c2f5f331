"""Webhooks and the event stream: how long from a change to its webhook delivery and to its event on
an open stream (target: p95 at most 1 s on an idle machine), and what 100 open streams cost the
server in memory and threads.

`dms serve` runs as a subprocess on a new data dir (SQLite, or PostgreSQL with --database-url).
Latency: a webhook to a receiver on loopback (tests/harness/webhooks.py) and a stream are open;
CHANGES folders are made one after another, PAUSE apart (an idle machine, not a burst); for each,
the time from sending its request to the delivery's arrival, and to the stream's event. Streams:
the server's resident memory and threads with no stream, then with STREAMS open (20 users, 5
streams each), and the same server started with DMS_EVENTS_MAX_STREAMS=1 for the threads' own
cost.

    .venv/bin/python -m bench.events [--changes 200] [--streams 100] [--database-url URL]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench.common import ADMIN_PASSWORD, ServerProcess, machine
from tests.harness.client import Client
from tests.harness.users import add_user
from tests.harness.webhooks import EventStream, Receiver, add_webhook

PAUSE = 0.05  # seconds between two changes
USERS_FOR_STREAMS = 20  # 5 streams each: the cap per user


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, " \
           f"max {ordered[-1] * 1000:.1f} ms"


def process_status(pid: int) -> dict[str, int]:
    """VmRSS (KiB) and Threads of a process."""
    found = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "Threads"):
                found[name] = int(value.split()[0])
    return found


def latency(server: ServerProcess, changes: int) -> None:
    admin = Client(server.url).login("admin", ADMIN_PASSWORD)
    user = add_user(admin, "latency")
    receiver = Receiver()
    add_webhook(user, receiver.url(), ["node.created"])
    stream = EventStream(server.url, user.token, timeout=120)
    streamed: dict[str, float] = {}

    def read_stream() -> None:
        while len(streamed) < changes:
            event = stream.next_event()
            if event is None:
                return
            streamed[event[1]["node"]["id"]] = time.monotonic()

    reader = threading.Thread(target=read_stream, daemon=True)
    reader.start()
    sent: dict[str, float] = {}
    for index in range(changes):
        started = time.monotonic()
        answer = user.post("/api/nodes/", {"data": {
            "type": "folders", "attributes": {"title": f"folder {index}"},
            "relationships": {"parent": {"data": {"type": "folders", "id": user.home_id}}}}})
        sent[answer.json()["data"]["id"]] = started
        time.sleep(PAUSE)
    receiver.wait_for_count(changes, timeout=120)
    reader.join(120)
    stream.close()
    delivered = {d.event["node"]["id"]: d.at for d in receiver.deliveries}
    receiver.stop()
    print(f"\nchange -> webhook delivery ({changes} changes, {PAUSE * 1000:.0f} ms apart): "
          f"{percentiles([delivered[node] - sent[node] for node in sent])}")
    print(f"change -> event on an open stream: "
          f"{percentiles([streamed[node] - sent[node] for node in sent if node in streamed])}"
          f" ({len(streamed)} of {changes} seen)")


def streams_cost(server: ServerProcess, count: int) -> None:
    admin = Client(server.url).login("admin", ADMIN_PASSWORD)
    users = [add_user(admin, f"streams{n}") for n in range(USERS_FOR_STREAMS)]
    time.sleep(1)
    before = process_status(server.process.pid)
    opened = [EventStream(server.url, users[n % len(users)].token) for n in range(count)]
    refused = [s for s in opened if s.response.status_code != 200]
    time.sleep(2)
    during = process_status(server.process.pid)
    for stream in opened:
        stream.close()
    print(f"\n{count} open streams ({len(refused)} refused): resident memory "
          f"{before['VmRSS'] / 1024:.1f} -> {during['VmRSS'] / 1024:.1f} MiB "
          f"(+{(during['VmRSS'] - before['VmRSS']) / count:.0f} KiB per stream), threads "
          f"{before['Threads']} -> {during['Threads']}")


def idle_threads(data_dir: Path, env: dict, streams: int) -> None:
    rows = []
    for maximum in (1, streams + 10):
        server = ServerProcess(data_dir / f"idle-{maximum}", DMS_EVENTS_MAX_STREAMS=str(maximum),
                               **env)
        try:
            Client(server.url).login("admin", ADMIN_PASSWORD)
            time.sleep(1)
            rows.append((maximum, process_status(server.process.pid)))
        finally:
            server.stop()
    (low, small), (high, large) = rows
    per_thread = (large["VmRSS"] - small["VmRSS"]) / (high - low)
    print(f"\nidle server, DMS_EVENTS_MAX_STREAMS={low}: {small['VmRSS'] / 1024:.1f} MiB, "
          f"{small['Threads']} threads; ={high}: {large['VmRSS'] / 1024:.1f} MiB, "
          f"{large['Threads']} threads ({per_thread:.0f} KiB per waiting stream thread)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    env = {"DMS_EVENTS_MAX_STREAMS": str(args.streams + 10), "DMS_LOG_LEVEL": "warning",
           "DMS_OUTBOUND_ALLOW": "127.0.0.1"}  # the receiver is on loopback
    if args.database_url:
        env["DMS_DATABASE_URL"] = args.database_url
    print(f"bench.events on {machine()}, "
          f"{'PostgreSQL' if args.database_url else 'SQLite'}")
    with tempfile.TemporaryDirectory(prefix="dms-bench-events-") as tmp:
        server = ServerProcess(Path(tmp) / "data", **env)
        try:
            latency(server, args.changes)
            streams_cost(server, args.streams)
        finally:
            server.stop()
        if not args.database_url:  # two more servers need two more empty databases
            idle_threads(Path(tmp), {k: v for k, v in env.items()
                                     if k != "DMS_EVENTS_MAX_STREAMS"}, args.streams)
    requests.Session().close()


if __name__ == "__main__":
    main()
