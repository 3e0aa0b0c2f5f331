"""Scale-out benchmark (issue 15): several web nodes and `dms worker` processes on one machine.

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
   frames of one line of tests/harness/samples.py, on which Tesseract is quick and dms's own cost per
   page (upload, queue, database, leases, searchable PDF) weighs more. Timed from the first
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
import hashlib
import io
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import requests

from bench.common import machine
from bench.ocr import load_font, scanned_page  # bench/ocr.py's A4 pages
from tests.harness import samples
from tests.harness.nodes import NodeGroup
from tests.harness.pgcluster import Cluster
from tests.harness.redisserver import RedisServer

PASSWORD = "bench-scaleout-pw-1"
PROCESSED = re.compile(r"processed version (\S+): (\d+) page\(s\)")
READ_SLICE = re.compile(r"version (\S+): read page\(s\) ([\d, -]+)")
LOG_PROBLEM = re.compile(r"\S+ \S+ (WARNING|ERROR|CRITICAL) (.*)")
JSONAPI = "application/vnd.api+json"
TIMEOUT = 120  # seconds, per HTTP request
POLL_SECONDS = 0.2
WORDS = ("invoice insurance contract payment reminder statement pension tax receipt warranty "
         "delivery mortgage salary rental deposit refund license premium account balance "
         "electricity telephone garage doctor pharmacy school holiday membership donation "
         "vehicle registration passport certificate subscription appliance landlord notary "
         "transfer quarterly annual").split()


# --------------------------------------------------------------------------- CPU time

def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # without guest time, which is counted in user already
    return total - idle, total


# The roots of the processes this benchmark runs: itself (its dms processes, their Tesseract
# processes and Redis are its descendants) and PostgreSQL's postmaster (pg_ctl detaches it).
OWN_ROOTS = {os.getpid()}


def tree_cpu_ticks(roots: set[int]) -> int:
    """CPU clock ticks (user + system, with those of waited-for children) of the processes
    `roots` and all their descendants now alive."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, stack, seen = 0, [pid for pid in roots if pid in ticks], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += ticks[pid]
        stack += children.get(pid, [])
    return total


class CpuMeter:
    """Between start and stop, as shares of all cores' time: how busy the machine was, how much
    of that this process (the clients) used, and how much processes that are not this
    benchmark's used (other load on the shared machine, and time the hypervisor stole)."""

    def __init__(self):
        self.busy0, self.total0 = machine_cpu()
        self.own0 = sum(os.times()[:2])
        self.tree0 = tree_cpu_ticks(OWN_ROOTS)
        self.wall0 = time.monotonic()

    def stop(self) -> dict:
        busy, total = machine_cpu()
        tree = tree_cpu_ticks(OWN_ROOTS)
        wall = time.monotonic() - self.wall0
        cores = os.cpu_count() or 1
        span = max(1, total - self.total0)
        return {"busy": (busy - self.busy0) / span * 100,
                "client": (sum(os.times()[:2]) - self.own0) / max(wall, 1e-9) / cores * 100,
                "other": max(0.0, (busy - self.busy0) - (tree - self.tree0)) / span * 100}


# --------------------------------------------------------------------------- HTTP

class Api:
    """A keep-alive requests.Session on one web node, logged in with a token."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def call(self, method: str, path: str, expect: int = 200, **kwargs) -> requests.Response:
        response = self.session.request(method, self.url + path, timeout=TIMEOUT, **kwargs)
        if response.status_code != expect:
            raise RuntimeError(f"{method} {path} on {self.url}: {response.status_code} "
                               f"{response.text[:300]}")
        return response

    def get(self, path: str) -> dict:
        return self.call("GET", path).json()

    def create(self, kind: str, title: str, parent: str) -> str:
        body = {"data": {"type": kind, "attributes": {"title": title},
                         "relationships": {"parent": {"data": {"type": "folders",
                                                               "id": parent}}}}}
        response = self.call("POST", "/api/nodes/", 201, json=body,
                             headers={"Content-Type": JSONAPI})
        return response.json()["data"]["id"]

    def upload(self, document_id: str, name: str, content: bytes) -> str:
        """PUT the file; the new version's id."""
        response = self.call("PUT", f"/api/documents/{document_id}/upload/{name}", 201,
                             data=content,
                             headers={"Content-Type": "application/octet-stream",
                                      "Content-Disposition": f"attachment; filename={name}"})
        return response.json()["data"]["attributes"]["versions"][-1]["id"]

    def children(self, folder: str) -> list[dict]:
        """Every child of the folder (pages of 100)."""
        found, number = [], 1
        while True:
            body = self.get(f"/api/nodes/{folder}/?page[size]=100&page[number]={number}")
            found += body["data"]
            if len(found) >= body["meta"]["pagination"]["count"] or not body["data"]:
                return found
            number += 1

    def close(self) -> None:
        self.session.close()


def login(url: str) -> str:
    response = requests.post(url + "/api/auth/login/",
                             json={"username": "admin", "password": PASSWORD}, timeout=TIMEOUT)
    response.raise_for_status()
    return response.json()["token"]


def wait_processed(api: Api, folder: str, count: int, timeout: float) -> dict[str, int]:
    """Poll the folder's listing until `count` documents are succeeded or failed; the statuses."""
    deadline = time.monotonic() + timeout
    statuses: dict[str, int] = {}
    while time.monotonic() < deadline:
        statuses = {}
        for child in api.children(folder):
            status = child["attributes"].get("ocr_status")
            statuses[status] = statuses.get(status, 0) + 1
        if statuses.get("succeeded", 0) + statuses.get("failed", 0) >= count:
            return statuses
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"not processed within {timeout:.0f} s: {statuses}")


def percentile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


# --------------------------------------------------------------------------- the cluster

class Bench(NodeGroup):
    """The two web nodes and the workers of the runs, configured as a real installation is."""

    def __init__(self, root: Path, shared: Path, database_url: str, queue_url: str):
        super().__init__(root, {"DMS_DATABASE_URL": database_url, "DMS_QUEUE_URL": queue_url,
                                "DMS_FILES_DIR": str(shared), "DMS_ADMIN_PASSWORD": PASSWORD},
                         worker_args=("--concurrency", "1"), start_timeout=120, stop_timeout=90)
        self.shared = shared


def texts_of(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def prepare(bench: Bench, apis: list[Api], home: str, seed: int) -> str:
    """One worker reads a warm-up scan and `seed` small text documents in `Listing`; its id."""
    started = time.perf_counter()
    rng = random.Random(1)
    [worker] = bench.start_workers(1)
    listing = apis[0].create("folders", "Listing", home)
    warm = apis[0].create("folders", "Warm-up", home)
    warm_doc = apis[0].create("documents", "warm-up scan", warm)
    apis[0].upload(warm_doc, "warm.tiff", samples.tiff(["Warm up page one", "Warm up page two"]))
    for number in range(seed):
        api = apis[number % 2]
        title = f"Letter {number:03d} {rng.choice(WORDS)} {rng.choice(WORDS)}"
        document = api.create("documents", title, listing)
        api.upload(document, f"letter-{number:03d}.txt", (texts_of(rng, 60) + "\n").encode())
    wait_processed(apis[0], warm, 1, 600)
    statuses = wait_processed(apis[0], listing, seed, 600)
    bench.stop_workers()
    print(f"prepared in {time.perf_counter() - started:.1f} s: a warm-up scan and {seed} text "
          f"documents in `Listing`, read by {worker.name} ({status_text(statuses)})", flush=True)
    return listing


def status_text(statuses: dict[str, int]) -> str:
    return ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))


# --------------------------------------------------------------------------- part 1

A4_LINES = 16
FORMATS = {
    "a4": "A4 pages (2480x3508 px, 16 lines of 40 px DejaVuSans: bench/ocr.py's), LZW",
    "line": "1700x600 px frames of tests/harness/samples.tiff (one line of 64 px text), uncompressed",
}


def a4_tiff(rng: random.Random, pages: int) -> bytes:
    """A multi-page 300-dpi grayscale TIFF of bench/ocr.py's A4 pages, LZW-compressed as a
    scanner's would be."""
    font = load_font()
    frames = [scanned_page(rng, A4_LINES, font) for _ in range(pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:], dpi=(300, 300),
                   compression="tiff_lzw")
    return out.getvalue()


def scan_files(page_format: str, per_doc: list[int], number: int) -> list[bytes]:
    if page_format == "a4":
        rng = random.Random(number)
        return [a4_tiff(rng, pages) for pages in per_doc]
    return [samples.tiff([f"Run {number} document {d} page {p}" for p in range(1, n + 1)])
            for d, n in enumerate(per_doc, 1)]


def ocr_run(bench: Bench, apis: list[Api], home: str, workers: int, args, number: int,
            page_format: str) -> dict:
    documents = math.ceil(args.pages / args.pages_per_document)
    per_doc = [args.pages_per_document] * documents
    per_doc[-1] = args.pages - args.pages_per_document * (documents - 1)
    files = scan_files(page_format, per_doc, number)
    nodes = bench.start_workers(workers)
    # Warm-up: one single-page scan per worker (not timed), read before the batch is uploaded.
    warm = apis[0].create("folders", f"Warm-up {number}", home)
    for index in range(workers):
        document = apis[index % 2].create("documents", f"warm-up {index}", warm)
        apis[index % 2].upload(document, "warm.tiff", samples.tiff([f"Warm up {index}"]))
    wait_processed(apis[0], warm, workers, 600)
    folder = apis[0].create("folders", f"OCR run {number} ({workers} workers, {page_format})",
                            home)
    cpu_before = {node.name: node.cpu_seconds() for node in nodes}
    versions: dict[str, int] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def upload(which: int) -> None:
        api = Api(apis[which].url, apis[which].session.headers["Authorization"].split()[1])
        try:
            for index in range(which, documents, 2):
                document = api.create("documents", f"run {number} scan {index + 1}", folder)
                version = api.upload(document, f"scan-{index + 1}.tiff", files[index])
                with lock:
                    versions[version] = per_doc[index]
        except BaseException as error:
            errors.append(error)
        finally:
            api.close()

    meter = CpuMeter()
    started = time.monotonic()
    threads = [threading.Thread(target=upload, args=(which,), daemon=True) for which in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    uploaded = time.monotonic() - started
    if errors:
        raise errors[0]
    statuses = wait_processed(apis[0], folder, documents, max(600, args.pages * 30))
    seconds = time.monotonic() - started
    cpu = meter.stop()
    worker_cpu = sum(node.cpu_seconds() - cpu_before[node.name] for node in nodes)
    stop_started = time.monotonic()
    exit_statuses = bench.stop_workers()
    stop_seconds = time.monotonic() - stop_started
    # Who read what, from the workers' logs; every batch version exactly once.
    pages_by_worker, processed_count, slices = [], {v: 0 for v in versions}, 0
    for node in nodes:
        log = node.output
        mine = 0
        for version, pages in PROCESSED.findall(log):
            if version in processed_count:
                processed_count[version] += 1
                mine += int(pages)
        slices += sum(1 for version, _ in READ_SLICE.findall(log) if version in versions)
        pages_by_worker.append(mine)
    read_once = all(count == 1 for count in processed_count.values())
    apis[0].call("DELETE", f"/api/nodes/{folder}/", 204)
    apis[0].call("DELETE", f"/api/nodes/{warm}/", 204)
    return {"workers": workers, "documents": documents, "pages": args.pages,
            "seconds": seconds, "uploaded": uploaded, "rate": args.pages / seconds * 60,
            "statuses": statuses, "busy": cpu["busy"], "client": cpu["client"],
            "other": cpu["other"],
            "worker_cpu_per_page": worker_cpu / args.pages, "pages_by_worker": pages_by_worker,
            "read_once": read_once, "slices": slices, "stop_seconds": stop_seconds,
            "exit_statuses": exit_statuses,
            "mib": sum(len(f) for f in files) / 2**20}


def part_ocr(bench: Bench, apis: list[Api], home: str, args) -> None:
    documents = math.ceil(args.pages / args.pages_per_document)
    print(f"\n== 1. OCR throughput: {args.pages} scanned pages in {documents} multi-page 300-dpi "
          f"TIFFs, uploaded through both web nodes; `dms worker --concurrency 1` each", flush=True)
    number = 0
    for page_format in args.page_formats:
        print(f"\n-- {FORMATS[page_format]}; load average before: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        number = ocr_table(bench, apis, home, args, page_format, number)
    cores = os.cpu_count() or 1
    print(f"cores busy: share of all {cores} cores' time (the whole machine: workers, "
          f"Tesseract, web nodes, PostgreSQL, Redis, this process); other: the part of it used "
          f"by processes not this benchmark's (or stolen by the hypervisor); worker CPU "
          f"s/page: the workers' and their Tesseract processes' CPU time per page; uploads s: "
          f"until the "
          f"last upload was acknowledged (the workers read meanwhile)")


def ocr_table(bench: Bench, apis: list[Api], home: str, args, page_format: str,
              number: int) -> int:
    header = (f"{'workers':>7}  {'seconds':>7}  {'pages/min':>9}  {'speed-up':>8}  "
              f"{'s/page':>6}  {'uploads s':>9}  {'cores busy':>10}  {'other':>5}  "
              f"{'worker CPU s/page':>17}  "
              f"pages read by each worker")
    results = []
    print(header, flush=True)
    for workers in args.workers:
        number += 1
        result = ocr_run(bench, apis, home, workers, args, number, page_format)
        results.append(result)
        base = results[0]["rate"] if results[0]["workers"] == 1 else None
        speedup = f"{result['rate'] / base:7.2f}x" if base else "       -"
        print(f"{workers:>7}  {result['seconds']:7.1f}  {result['rate']:9.1f}  {speedup}  "
              f"{result['seconds'] / result['pages']:6.2f}  {result['uploaded']:9.2f}  "
              f"{result['busy']:9.0f}%  {result['other']:4.0f}%  "
              f"{result['worker_cpu_per_page']:17.2f}  "
              f"{' / '.join(str(p) for p in result['pages_by_worker'])}", flush=True)
    print(f"uploaded per run: {results[0]['mib']:.1f} MiB of TIFFs")
    for result in results:
        problems = []
        if result["statuses"].get("succeeded", 0) != result["documents"]:
            problems.append(f"statuses {status_text(result['statuses'])}")
        if not result["read_once"]:
            problems.append("a document was NOT read exactly once")
        if any(result["exit_statuses"]):
            problems.append(f"worker exit statuses {result['exit_statuses']}")
        print(f"  {result['workers']} worker(s): {result['documents']} documents "
              f"{status_text(result['statuses'])}, each read exactly once: "
              f"{'yes' if result['read_once'] else 'NO'} ({result['slices']} slice(s)); "
              f"the benchmark's own process used {result['client']:.0f}% of the cores; workers "
              f"stopped (SIGTERM) in {result['stop_seconds']:.1f} s"
              + (f"; PROBLEMS: {'; '.join(problems)}" if problems else ""))
    return number


# --------------------------------------------------------------------------- part 2

KINDS = ["GET /api/users/me/", "GET /api/nodes/{Listing}/ (25 of 100)", "GET /api/search/?q=word",
         "POST /api/nodes/ (new document)", "PUT upload (2 KiB text)"]


def part_mixed(bench: Bench, token: str, home: str, listing: str, seed: int, args) -> None:
    print(f"\n== 2. {args.clients} concurrent clients, mixed requests, {args.seconds:g} s, half "
          f"on each web node (no worker running)", flush=True)
    uploads_folder = Api(bench.web_nodes()[0].url, token).create("folders", "Mixed uploads", home)
    listing_pages = max(1, math.ceil(seed / 25))
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    per_node = [0] * len(bench.web_nodes())
    errors: list[str] = []
    lock = threading.Lock()
    deadline = [0.0]
    barrier = threading.Barrier(args.clients + 1)

    def client(index: int) -> None:
        which = index % len(bench.web_nodes())
        api = Api(bench.web_nodes()[which].url, token)
        rng = random.Random(100 + index)
        mine: dict[str, list[float]] = {kind: [] for kind in KINDS}
        count, failures = 0, []
        barrier.wait()

        def timed(kind: str, method: str, path: str, expect: int, **kwargs):
            nonlocal count
            start = time.perf_counter()
            try:
                response = api.call(method, path, expect, **kwargs)
            except Exception as error:  # a non-2xx answer or a broken connection: counted
                failures.append(f"{kind}: {str(error)[:200]}")
                return None
            mine[kind].append((time.perf_counter() - start) * 1000)
            count += 1
            return response

        while time.monotonic() < deadline[0]:
            choice = rng.randrange(4)
            if choice == 0:
                timed(KINDS[0], "GET", "/api/users/me/", 200)
            elif choice == 1:
                page = rng.randint(1, listing_pages)
                timed(KINDS[1], "GET", f"/api/nodes/{listing}/?page[size]=25&page[number]={page}",
                      200)
            elif choice == 2:
                timed(KINDS[2], "GET", f"/api/search/?q={rng.choice(WORDS)}", 200)
            else:
                body = {"data": {"type": "documents", "attributes": {"title": f"note {index}"},
                                 "relationships": {"parent": {"data": {
                                     "type": "folders", "id": uploads_folder}}}}}
                response = timed(KINDS[3], "POST", "/api/nodes/", 201, json=body,
                                 headers={"Content-Type": JSONAPI})
                if response is not None:
                    document = response.json()["data"]["id"]
                    content = (f"note {uuid.uuid4()} " + texts_of(rng, 300) + "\n").encode()[:2048]
                    timed(KINDS[4], "PUT", f"/api/documents/{document}/upload/note.txt", 201,
                          data=content, headers={"Content-Type": "application/octet-stream",
                                                 "Content-Disposition":
                                                 "attachment; filename=note.txt"})
        api.close()
        with lock:
            for kind in KINDS:
                latencies[kind] += mine[kind]
            per_node[which] += count
            errors.extend(failures)

    threads = [threading.Thread(target=client, args=(n,), daemon=True)
               for n in range(args.clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + args.seconds
    meter = CpuMeter()
    started = time.monotonic()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    cpu = meter.stop()
    every = sorted(x for values in latencies.values() for x in values)
    print(f"{'request':<40} {'count':>7} {'p50 ms':>8} {'p99 ms':>8}")
    for kind in KINDS:
        ordered = sorted(latencies[kind])
        print(f"{kind:<40} {len(ordered):>7} {percentile(ordered, 0.5):8.1f} "
              f"{percentile(ordered, 0.99):8.1f}")
    print(f"{'all':<40} {len(every):>7} {percentile(every, 0.5):8.1f} "
          f"{percentile(every, 0.99):8.1f}")
    print(f"{len(every) / wall:.1f} requests/s ({' + '.join(f'{n / wall:.1f}' for n in per_node)}"
          f" on the two nodes), {len(errors)} error(s); cores busy {cpu['busy']:.0f}%, of which "
          f"this benchmark's clients {cpu['client']:.0f}%, other processes {cpu['other']:.0f}%",
          flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    print("all clients are the admin: dms serialises one owner's tree writes (POST, the PUT's "
          "commit) on a PostgreSQL advisory lock per owner, across both nodes")


# --------------------------------------------------------------------------- part 3

def part_uploads(bench: Bench, token: str, home: str, args) -> None:
    size = args.upload_mib * 2**20
    print(f"\n== 3. upload throughput into the shared files dir: {args.upload_clients} clients, "
          f"{args.upload_mib} MiB text files (each a new document), {args.seconds:g} s, half on "
          f"each web node (no worker running)", flush=True)
    folder = Api(bench.web_nodes()[0].url, token).create("folders", "Big uploads", home)
    rng = random.Random(3)
    alphabet = b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    blob = bytes(rng.choice(alphabet) for _ in range(2**16)) * (size // 2**16 + 1)
    latencies: list[float] = []
    finished: list[float] = []  # time.monotonic() of each acknowledged upload
    uploaded: list[tuple[str, str, int]] = []  # (document id, sha256, web node index)
    errors: list[str] = []
    lock = threading.Lock()
    deadline = [0.0]
    barrier = threading.Barrier(args.upload_clients + 1)

    def client(index: int) -> None:
        which = index % len(bench.web_nodes())
        api = Api(bench.web_nodes()[which].url, token)
        barrier.wait()
        number = 0
        while time.monotonic() < deadline[0]:
            number += 1
            prefix = f"upload {index}-{number} {uuid.uuid4()}\n".encode()
            content = prefix + blob[:size - len(prefix)]
            try:
                document = api.create("documents", f"big {index}-{number}", folder)
                start = time.perf_counter()
                api.upload(document, f"big-{index}-{number}.txt", content)
                elapsed = (time.perf_counter() - start) * 1000
            except Exception as error:  # counted
                with lock:
                    errors.append(str(error)[:200])
                continue
            with lock:
                latencies.append(elapsed)
                finished.append(time.monotonic())
                if len(uploaded) < 3 or rng.random() < 0.05:
                    uploaded.append((document, hashlib.sha256(content).hexdigest(), which))
        api.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True)
               for n in range(args.upload_clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + args.seconds
    meter = CpuMeter()
    started = time.monotonic()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    cpu = meter.stop()
    latencies.sort()
    step = args.seconds / 4
    buckets = [0] * 4
    for moment in finished:
        buckets[min(3, int((moment - started) / step))] += 1
    mib = len(latencies) * size / 2**20
    print(f"{len(latencies)} uploads, {mib:,.0f} MiB in {wall:.1f} s: {mib / wall:.1f} MiB/s "
          f"({mib * 2**20 / 1e6 / wall:.1f} MB/s), {len(latencies) / wall:.2f} uploads/s; PUT "
          f"latency p50 {percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f}"
          f" ms; {len(errors)} error(s); cores busy {cpu['busy']:.0f}%, of which this benchmark's "
          f"clients {cpu['client']:.0f}%, other processes {cpu['other']:.0f}%", flush=True)
    print(f"MiB/s in each quarter of the run ({step:g} s each): "
          + ", ".join(f"{count * size / 2**20 / step:.0f}" for count in buckets))
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    # Where the files are, and that they download intact through the other node.
    stored = [p for p in bench.shared.rglob("*") if p.is_file() and ".previews" not in p.parts]
    big = [p for p in stored if p.stat().st_size == size]
    leftovers = [p for node in bench.web_nodes() for p in (node.data_dir / "tmp").rglob("*")
                 if p.is_file()]
    checked = bad = 0
    for document, digest, which in uploaded[:10]:
        other = Api(bench.web_nodes()[1 - which].url, token)
        try:
            body = other.call("GET", f"/api/documents/{document}/download/").content
            checked += 1
            bad += hashlib.sha256(body).hexdigest() != digest
        finally:
            other.close()
    print(f"shared files dir ({bench.shared}): {len(big)} files of {args.upload_mib} MiB "
          f"(uploads acknowledged: {len(latencies)}); files left in the web nodes' tmp dirs: "
          f"{len(leftovers)}; {checked} uploads downloaded through the other node, "
          f"{checked - bad} intact")
    print("the shared dir is tmpfs (memory, not a network mount): what is measured is dms "
          "receiving each body into the node's own tmp/ (on the disk, in its data dir) and "
          "copying it onto another filesystem")


# --------------------------------------------------------------------------- main

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
