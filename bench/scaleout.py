"""Scale-out benchmark: several web nodes and `dms worker` processes on one machine.

A throwaway PostgreSQL (tests/harness/pgcluster.py: Debian's server binaries, fsync off) and
Redis (tests/harness/redisserver.py) on loopback; two web nodes (`dms serve --no-worker`) and 1,
2 or 4 `dms worker --concurrency 1` processes (tests/harness/nodes.py, as the multi-node tests
run them), each with a data dir of its own (on the disk, under /tmp), all sharing one files dir
under /dev/shm: another filesystem than the data dirs, as a NAS mount would be. Every process
is configured as a real installation is, by DMS_DATABASE_URL, DMS_QUEUE_URL, DMS_FILES_DIR and
DMS_ADMIN_PASSWORD. Everything runs on this machine and shares its cores: the benchmark's own
clients, PostgreSQL, Redis, the web nodes and the workers (and their Tesseract processes). More
workers than cores cannot read more pages; the numbers show how the cluster behaves when it is
CPU-bound, not how it would scale on more machines.

Before the parts: one worker reads a warm-up scan and --seed small text documents (folder
`Listing`, words of a small vocabulary: what parts 2's listing and search requests read); then it
is stopped.

1. OCR throughput, once per --workers value and --page-formats value: the workers are started
   (and each given a one-page warm-up scan, not timed); then --pages scanned pages in documents
   of --pages-per-document pages, multi-page 300-dpi grayscale TIFFs, are uploaded through the
   two web nodes (one uploading thread each) into a new folder. Page formats: `a4`, full A4 pages
   of 16 lines (bench/ocr.py's, LZW-compressed), what a scanner sends; `line`, the 1700x600 px
   frames of one line of tests/harness/samples.py, on which Tesseract is quick and dms's own cost
   per page (upload, queue, database, leases, searchable PDF) weighs more. Timed from the first
   upload until the folder's listing (polled through a web node every 0.2 s) shows every
   document `succeeded`. Then the workers are stopped (SIGTERM) and the folder deleted. Also
   shown: the CPU time the workers and their Tesseract processes used per page, how busy the
   machine's cores were, and how many pages each worker read (from its log; every document must
   be read exactly once).
2. --clients concurrent clients (threads, each its own keep-alive requests.Session, half on each
   web node) for --seconds: GET /api/users/me/, a page of 25 of `Listing` (GET /api/nodes/{id}/),
   a one-word search, and small uploads (POST /api/nodes/ then PUT a 2 KiB text file), in equal
   shares, all as the admin; requests/s, p50/p99 latency per kind, errors (a non-2xx answer or
   an exception). No worker runs (uploads queue up in Redis and stay unread).
3. --upload-clients clients uploading --upload-mib MiB text files (each into a new document)
   through the two web nodes for --seconds: MiB/s and uploads/s of the PUTs' bodies, then a check
   that the files are in the shared dir and some download intact through the other node. No
   worker runs.

It prints numbers and never asserts. Every process and temp dir it made is removed at the end,
also after an error or Ctrl-C.

    .venv/bin/python -m bench.scaleout [--pages 48] [--pages-per-document 3] [--workers 1 2 4]
                                       [--page-formats a4 line] [--seconds 20] [--clients 16]
                                       [--upload-clients 8] [--upload-mib 4] [--seed 100]
    .venv/bin/python -m bench.scaleout --quick     # smoke run: 6 pages, 5 s per load part
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine
from bench.lib.cpu import OWN_ROOTS
from bench.lib.scaleout_api import Api, login
from bench.lib.scaleout_cluster import Bench, prepare
from bench.lib.scaleout_load import part_mixed, part_uploads
from bench.lib.scaleout_ocr import FORMATS, part_ocr
from tests.harness.pgcluster import Cluster
from tests.harness.redisserver import RedisServer

LOG_PROBLEM = re.compile(r"\S+ \S+ (WARNING|ERROR|CRITICAL) (.*)")


def versions(cluster: Cluster) -> tuple[str, str, str]:
    def first_line(command: list[str]) -> str:
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=30)
            return (result.stdout or result.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired) as error:
            return f"unknown ({error})"
    postgres = first_line([str(cluster.bin / "postgres"), "--version"])
    redis = first_line([shutil.which("redis-server") or "redis-server", "--version"])
    tesseract = first_line(["tesseract", "--version"])
    return postgres, redis, tesseract


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=None, help="scanned pages per OCR run "
                        "(default 48; 6 with --quick)")
    parser.add_argument("--pages-per-document", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4],
                        help="worker processes of each OCR run")
    parser.add_argument("--page-formats", nargs="+", choices=sorted(FORMATS),
                        default=["a4", "line"], help="the scans of part 1, a table each")
    parser.add_argument("--seconds", type=float, default=None,
                        help="of parts 2 and 3 each (default 20; 5 with --quick)")
    parser.add_argument("--clients", type=int, default=16, help="of part 2")
    parser.add_argument("--upload-clients", type=int, default=8, help="of part 3")
    parser.add_argument("--upload-mib", type=int, default=4, help="size of part 3's files")
    parser.add_argument("--seed", type=int, default=None,
                        help="text documents in `Listing` (default 100; 30 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    args.pages = args.pages or (6 if args.quick else 48)
    args.seconds = args.seconds or (5.0 if args.quick else 20.0)
    args.seed = args.seed or (30 if args.quick else 100)
    if args.pages < 1 or args.pages_per_document < 1 or min(args.workers) < 1:
        parser.error("--pages, --pages-per-document and --workers must be at least 1")

    # SIGTERM (e.g. from run_all's caller) cleans up like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    begun = time.monotonic()
    print(f"machine: {machine()}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="dms-bench-scaleout-"))
    shared = Path(tempfile.mkdtemp(prefix="dms-bench-shared-", dir="/dev/shm"))
    cluster = redis = bench = None
    try:
        cluster = Cluster()
        cluster.start()
        redis = RedisServer().start()
        try:
            OWN_ROOTS.add(int((cluster.data / "postmaster.pid").read_text().split()[0]))
        except (OSError, ValueError, IndexError) as error:
            print(f"(PostgreSQL's CPU time cannot be told from other processes': {error})")
        postgres, redis_version, tesseract = versions(cluster)
        print(f"PostgreSQL: {postgres} (throwaway cluster on loopback, fsync off, shared_buffers "
              f"64MB); Redis: {redis_version} (no persistence); {tesseract}")
        other_fs = os.stat(shared).st_dev != os.stat(root).st_dev
        print(f"data dirs under {root}, shared files dir {shared} "
              f"({'another' if other_fs else 'THE SAME'} filesystem)")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        bench = Bench(root, shared, cluster.new_database(empty=True), redis.url(0))
        started = time.perf_counter()
        bench.start_web("web-a")  # the first migrates the empty database and makes the admin
        bench.start_web("web-b")
        print(f"two web nodes up in {time.perf_counter() - started:.1f} s: "
              f"{bench.web_nodes()[0].url} {bench.web_nodes()[1].url}", flush=True)
        token = login(bench.web_nodes()[0].url)
        apis = [Api(node.url, token) for node in bench.web_nodes()]
        home = apis[0].get("/api/users/me/")["data"]["relationships"]["home_folder"]["data"]["id"]
        listing = prepare(bench, apis, home, args.seed)
        part_ocr(bench, apis, home, args)
        part_mixed(bench, token, home, listing, args.seed, args)
        part_uploads(bench, token, home, args)
        health = apis[1].get("/health")
        print(f"\nqueue after the run (GET /health): {health.get('queue')}; workers known: "
              f"{len(health.get('workers', []))}, live now: "
              f"{sum(1 for w in health.get('workers', []) if w.get('live'))}")
        for api in apis:
            api.close()
    finally:
        if bench is not None:
            bench.stop_all()
            tracebacks = {node.name: node.output.count("Traceback")
                          for node in bench.all_nodes()}
            noisy = {name: count for name, count in tracebacks.items() if count}
            print(f"tracebacks in the dms processes' logs: "
                  f"{noisy if noisy else 'none'}", flush=True)
            for name in noisy:
                node = next(n for n in bench.all_nodes() if n.name == name)
                first = node.output.split("Traceback", 1)[1][:1500]
                print(f"--- first traceback of {name}:\nTraceback{first}")
            warned: dict[str, int] = {}
            for node in bench.all_nodes():
                for line in node.output.splitlines():
                    match = LOG_PROBLEM.match(line)
                    if match:  # the message without its ids and numbers, to group alike ones
                        message = re.sub(r"[0-9a-f-]{8,}|[0-9.]+", "#", match.group(2))
                        key = f"{match.group(1)} {message}"
                        warned[key] = warned.get(key, 0) + 1
            print(f"WARNING/ERROR lines in the dms processes' logs: "
                  f"{sum(warned.values()) if warned else 'none'}", flush=True)
            for key, count in sorted(warned.items(), key=lambda item: -item[1])[:8]:
                print(f"  {count:>5} x {key[:160]}")
        for what, server in (("Redis", redis), ("PostgreSQL", cluster)):
            try:
                if server is not None:
                    server.stop()
            except Exception as error:  # keep cleaning up
                print(f"could not stop {what}: {error}", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)
    print(f"total wall time: {time.monotonic() - begun:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
