"""Part 1 of bench/scaleout.py: OCR throughput of 1, 2 or 4 workers reading multi-page scans
uploaded through both web nodes, with the CPU time they used and who read what."""

from __future__ import annotations

import io
import math
import os
import random
import re
import threading
import time

from bench.lib.cpu import CpuMeter
from bench.lib.scaleout_api import Api, status_text, wait_processed
from bench.lib.scaleout_cluster import Bench
from bench.ocr import load_font, scanned_page  # bench/ocr.py's A4 pages
from tests.harness import samples

PROCESSED = re.compile(r"processed version (\S+): (\d+) page\(s\)")
READ_SLICE = re.compile(r"version (\S+): read page\(s\) ([\d, -]+)")
A4_LINES = 16
FORMATS = {
    "a4": "A4 pages (2480x3508 px, 16 lines of 40 px DejaVuSans: bench/ocr.py's), LZW",
    "line": "1700x600 px frames of tests/harness/samples.tiff (one line of 64 px text), "
            "uncompressed",
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
