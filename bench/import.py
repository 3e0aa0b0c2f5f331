"""Import benchmark: `dms import` as an admin runs it, and the consume folder.

1. `dms import` of --small-files small PDFs (one page of text each) into a fresh data dir:
   files/s, MiB/s and the import process's peak RSS (target: >= 100 small files/s).
2. `dms import` of about --scan-mib MiB of scans (A4 at 300 dpi, 8-bit grey, uncompressed
   TIFFs, each with its own text so that none is a duplicate): files/s, MiB/s, peak RSS.
   No server runs during 1 and 2: the documents are queued for OCR, not read.
3. The consume folder: a `dms serve` with DMS_CONSUME_DIR, at its default interval (10 s) and
   stability (5 s), then at 1 s / 1 s: --consume-files one-page PDFs dropped one after another;
   the latency from a file becoming stable (its last write plus the stability time) to its
   document existing (polled through the API every 0.05 s).

It prints numbers and never asserts; every temp dir and process is removed at the end.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench.common import ADMIN_PASSWORD, ServerProcess, machine
from tests.harness import samples


def dms(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", *args], input=stdin, text=True,
                          capture_output=True, check=True)


def timed_import(data_dir: Path, source: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB of the import process, its summary line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "dms", "import", str(source), "--user",
                             "admin", "--data-dir", str(data_dir), "--log-level", "warning"],
                            capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if result.returncode != 0:
        raise RuntimeError(result.stdout + result.stderr)
    return seconds, max(peak, before) / 1024, result.stdout.splitlines()[0]


def new_data_dir(root: Path, name: str) -> Path:
    data_dir = root / name
    dms("createsuperuser", "admin", "--password-stdin", "--data-dir", str(data_dir),
        stdin=ADMIN_PASSWORD + "\n")
    return data_dir


def report(label: str, files: int, total_bytes: int, seconds: float, rss: float,
           summary: str) -> None:
    print(f"{label}: {files} files, {total_bytes / 2**20:.1f} MiB in {seconds:.1f} s: "
          f"{files / seconds:.1f} files/s, {total_bytes / 2**20 / seconds:.1f} MiB/s; "
          f"peak RSS of dms import {rss:.0f} MiB")
    print(f"  dms said: {summary}")


def small_files(root: Path, args) -> None:
    source = root / "small"
    source.mkdir()
    for number in range(args.small_files):
        (source / f"letter-{number:05}.pdf").write_bytes(
            samples.pdf([f"Letter number {number} about invoice {number * 7}"]))
    total = sum(p.stat().st_size for p in source.iterdir())
    seconds, rss, summary = timed_import(new_data_dir(root, "data-small"), source)
    report("1. small PDFs", args.small_files, total, seconds, rss, summary)


def scans(root: Path, args) -> None:
    source = root / "scans"
    source.mkdir()
    page = samples.scan("Statement", size=(2480, 3508))
    total, number = 0, 0
    while total < args.scan_mib * 2**20:
        image = page.copy()
        image.putpixel((number % 2480, 10), 0)  # every scan its own bytes
        out = io.BytesIO()
        image.save(out, format="TIFF", dpi=(300, 300))
        (source / f"scan-{number:04}.tiff").write_bytes(out.getvalue())
        total += len(out.getvalue())
        number += 1
    seconds, rss, summary = timed_import(new_data_dir(root, "data-scans"), source)
    report("2. A4 scans", number, total, seconds, rss, summary)


def consume(root: Path, args, interval: float, stable: float) -> None:
    data_dir = root / f"data-consume-{interval:g}"
    consume_dir = root / f"consume-{interval:g}"
    server = ServerProcess(data_dir, DMS_CONSUME_DIR=str(consume_dir),
                           DMS_CONSUME_INTERVAL=str(interval),
                           DMS_CONSUME_STABLE_SECONDS=str(stable))
    try:
        token = server.login()
        headers = {"Authorization": f"Token {token}"}
        me = requests.get(server.url + "/api/users/me/", headers=headers).json()["data"]
        inbox = me["relationships"]["inbox_folder"]["data"]["id"]
        (consume_dir / "admin").mkdir(parents=True, exist_ok=True)
        latencies = []
        for number in range(args.consume_files):
            name = f"dropped-{number}.pdf"
            (consume_dir / "admin" / name).write_bytes(samples.pdf([f"Dropped {number}"]))
            stable_at = time.monotonic() + stable
            while True:
                listing = requests.get(f"{server.url}/api/nodes/{inbox}/?page[size]=100",
                                       headers=headers).json()["data"]
                if any(item["attributes"]["title"] == name for item in listing):
                    break
                time.sleep(0.05)
            latencies.append(time.monotonic() - stable_at)
        print(f"3. consume folder, interval {interval:g} s, stability {stable:g} s: "
              f"{args.consume_files} files; from stable to document: median "
              f"{statistics.median(latencies):.2f} s, max {max(latencies):.2f} s")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-files", type=int, default=2000)
    parser.add_argument("--scan-mib", type=int, default=200)
    parser.add_argument("--consume-files", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    root = Path(tempfile.mkdtemp(prefix="dms-bench-import-"))
    try:
        small_files(root, args)
        scans(root, args)
        consume(root, args, 10, 5)
        consume(root, args, 1, 1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    main()
