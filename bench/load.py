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

With --profile-lock the server also times dms.db's write lock (bench/lib/serverprobe: how long
writers wait for it, request threads and others hold it, and writers wait for the group commit's
fsync; also the holders' time on a core and in the run queue during their holds) and
the mixed load's section ends with those figures per 10 s. With --profile-memory the server
samples what its memory is made of (RSS, anonymous, glibc's main heap and other anonymous
mappings, malloc's bytes in use and free, SQLite's own, the interpreter's blocks; same
directory), printed before and after the mixed load, or, in the soak, after the first minute,
every quarter hour, at the end and once quiet.

Soak variant (instead of 2 and 3): the mixed load at a lower rate -- by default 4 clients, each
pausing 200 ms between operations -- for N minutes, printing the server's RSS every 30 s, then
its growth from the end of the first minute to the end (it should not grow), and, once the OCR
backlog has drained (at most --drain-seconds), its RSS after the server's quiet-time trim of
freed memory (dms.cli.heap). For 10 minutes:

    .venv/bin/python -m bench.load --soak-minutes 10 [--clients 4] [--think-ms 200]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.common import ServerProcess, machine
from bench.lib.load_http import Client, Tally, create_users, must, print_tally
from bench.lib.load_mixed import run_mixed
from bench.lib.load_server import (
    RssSampler,
    latest_memory,
    print_lock_windows,
    print_memory_rows,
    print_server_output,
    start_server,
)
from bench.lib.serverprobe.sitecustomize import MEMORY_WINDOW_SECONDS as MEMORY_SAMPLE_SECONDS
from dms.cli.heap import QUIET_SECONDS

SOAK_REPORT_SECONDS = 30
SOAK_MEMORY_MARK_SECONDS = 15 * 60  # the memory's make-up every quarter hour (--profile-memory)


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
    print(f"\n2. throughput: {clients} concurrent clients on GET /api/users/me/ only, "
          f"{seconds:g} s")
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


def soak(server: ServerProcess, users: list[dict], args, memory_log: Path | None) -> None:
    print(f"\n2. soak: {args.clients} clients, {args.think_ms} ms between operations, "
          f"{args.soak_minutes:g} minutes; server RSS every {SOAK_REPORT_SECONDS} s")
    rss = RssSampler(server)
    marks: dict[str, float] = {}
    memory: list[tuple[str, dict | None]] = []
    next_report = [SOAK_REPORT_SECONDS]
    next_memory_mark = [SOAK_MEMORY_MARK_SECONDS]

    def tick(elapsed: float) -> None:
        if elapsed >= 60 and "first minute" not in marks:
            marks["first minute"] = server.rss_mib()
            if memory_log is not None:
                memory.append(("after the first minute", latest_memory(memory_log)))
        if memory_log is not None and elapsed >= next_memory_mark[0]:
            memory.append((f"after {next_memory_mark[0] / 60:g} minutes",
                           latest_memory(memory_log)))
            next_memory_mark[0] += SOAK_MEMORY_MARK_SECONDS
        if elapsed >= next_report[0]:
            next_report[0] += SOAK_REPORT_SECONDS
            print(f"  {elapsed / 60:5.1f} min  RSS {server.rss_mib():7.1f} MiB", flush=True)

    tally, wall, _ = run_mixed(server, users, args, args.soak_minutes * 60, tick)
    rss.stop()
    if memory_log is not None:
        memory.append(("at the end", latest_memory(memory_log)))
    print_tally(tally, wall)
    first = marks.get("first minute", rss.first)
    print(f"server RSS: start {rss.first:.1f} MiB, after the first minute {first:.1f} MiB, peak "
          f"{rss.peak:.1f} MiB, end {rss.last:.1f} MiB; growth from the first minute to the end "
          f"{rss.last - first:+.1f} MiB")
    backlog = ocr_backlog(server.port, users)
    print(f"OCR backlog at the end: {describe(backlog)}")
    if drain(server, users, backlog, args.drain_seconds):
        # What the load left behind, once the server has given back what it no longer uses
        # (dms.cli.heap: malloc_trim after QUIET_SECONDS without work).
        time.sleep(QUIET_SECONDS + 5)
        print(f"server RSS {QUIET_SECONDS + 5:g} s later, quiet: {server.rss_mib():.1f} MiB")
        if memory_log is not None:
            time.sleep(MEMORY_SAMPLE_SECONDS)  # a sample taken after the trim
            memory.append(("quiet, drained", latest_memory(memory_log)))
    if memory:
        print_memory_rows(memory)


def drain(server: ServerProcess, users: list[dict], backlog: Counter, seconds: float) -> bool:
    """Wait up to `seconds` for the OCR backlog to drain and say how long it took; whether it
    did."""
    started = time.perf_counter()
    while sum(backlog.values()) and time.perf_counter() - started < seconds:
        time.sleep(1)
        backlog = ocr_backlog(server.port, users)
    if sum(backlog.values()):
        print(f"OCR backlog after waiting {seconds:g} s more: {describe(backlog)}")
        return False
    print(f"OCR backlog drained {time.perf_counter() - started:.1f} s after the load; server "
          f"RSS then {server.rss_mib():.1f} MiB")
    return True


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
    parser.add_argument("--profile-lock", action="store_true",
                        help="the server times its write lock (bench/lib/serverprobe); printed "
                             "per 10 s after the mixed load")
    parser.add_argument("--profile-memory", action="store_true",
                        help="the server samples what its memory is made of "
                             "(bench/lib/serverprobe)")
    args = parser.parse_args()
    if args.clients is None:
        args.clients = 4 if args.soak_minutes else 16
    if args.think_ms is None:
        args.think_ms = 200 if args.soak_minutes else 0
    print(f"machine: {machine()}")

    with tempfile.TemporaryDirectory(prefix="dms-bench-load-") as tmp:
        lock_log = Path(tmp) / "lock.jsonl" if args.profile_lock else None
        memory_log = Path(tmp) / "memory.jsonl" if args.profile_memory else None
        server, scanner, listening, healthy = start_server(Path(tmp) / "data", lock_log,
                                                           memory_log)
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
                soak(server, users, args, memory_log)
            else:
                me_throughput(server.port, [user["token"] for user in users], args.me_clients,
                              args.me_seconds)

                print(f"\n3. mixed load: {args.clients} clients as {len(users)} users, "
                      f"{args.seconds:g} s, every {args.png_every}th upload a PNG scan")
                rss = RssSampler(server)
                before = None if memory_log is None else latest_memory(memory_log)
                tally, wall, workers = run_mixed(server, users, args, args.seconds)
                rss.stop()
                if memory_log is not None:
                    print_memory_rows([("before the load", before),
                                       ("after the load", latest_memory(memory_log))])
                print_tally(tally, wall)
                print(f"server RSS: before the load {rss.first:.1f} MiB, peak {rss.peak:.1f} MiB, "
                      f"after {rss.last:.1f} MiB")
                if lock_log is not None:
                    print_lock_windows(lock_log)
                backlog = ocr_backlog(server.port, users)
                uploads = sum(len(tally.latencies[op]) for op in ("upload pdf", "upload png"))
                print(f"OCR backlog at the end: {describe(backlog)} of {uploads} uploads")
                drain(server, users, backlog, args.drain_seconds)
        finally:
            server.stop()
            scanner.join()
        print()
        print_server_output(scanner)


if __name__ == "__main__":
    main()
