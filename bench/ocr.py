"""OCR benchmark: how fast `dms serve` turns uploads into searchable text, next to bare Tesseract.

Measures, over loopback, each time from the first upload until every document is `succeeded`
(the legacy document list is polled):
  1. born-digital PDFs (text layer, read by pdfium): pages/s, for full pages of sentences
     (--pdf-lines lines of ~90 characters) and for the one-line pages of
     tests/harness/samples.pdf();
  2. 300-dpi scans: A4 pages (2480x3508 px, grayscale PNG, --scan-lines lines of DejaVuSans at
     40 px), each uploaded as its own document: pages/min, once per --workers value
     (DMS_OCR_WORKERS, a fresh server each time), with the searchable PDF made beside each
     (the default), and once with one worker and DMS_SEARCHABLE_PDF=0 to show what the
     searchable PDFs cost;
  3. bare Tesseract on the same PNG files (`tesseract page.png stdout -l eng --dpi 300`,
     OMP_THREAD_LIMIT=1), 1 at a time and --workers at a time: pages/min, and dms's overhead per
     page against it at the same parallelism;
  4. and 5. one document's latency against bare Tesseract on its pages (bench/lib/ocr_latency.py):
     a 4-page scanned PDF upload → succeeded, and a one-page scan upload → found by search.

Parts 2 and 3 are measured in --rounds interleaved rounds (dms, then bare Tesseract) and
reported as means: a single page's Tesseract time varies by several per cent from run to run.

Each server gets one warm-up document (not timed) before its timed uploads, and Tesseract one
warm-up page, so neither pays for first imports or a cold page cache. It prints numbers and never
asserts.

    .venv/bin/python -m bench.ocr [--pdfs 20] [--pdf-pages 50] [--pdf-lines 45] [--short-pdfs 40]
                                  [--short-pdf-pages 50] [--scans 12] [--scan-lines 16]
                                  [--workers 1 2] [--rounds 2] [--latency-rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from bench.common import KeepAlive, ServerProcess, machine
from bench.lib import ocr_latency
from tests.harness.samples import pdf, png  # the tests' tiny PDF writer and scans

POLL_SECONDS = 0.1
TIMEOUT_SECONDS = 1800
A4_300DPI = (2480, 3508)
MARGIN = 200  # px, about 17 mm at 300 dpi
FONT_PX = 40  # about 10 pt at 300 dpi
LINE_PX = 72
LINE_CHARS = 90
TESSERACT_ENV = {**os.environ, "OMP_THREAD_LIMIT": "1"}
UNIQUE_WORD = "Marmalade"  # on part 5's page only: searched for until it is found

SENTENCES = [
    "Thank you for your order of the third of March, which we have shipped today.",
    "Please pay the amount shown below within thirty days of the invoice date.",
    "The warranty covers all parts and labour for a period of two years.",
    "If you have any questions about this statement, please call our service desk.",
    "Your contract renews automatically unless it is cancelled in writing.",
    "The meeting has been moved to Thursday afternoon in the main conference room.",
    "We confirm receipt of your application and will reply within two weeks.",
    "The annual report shows a moderate increase in revenue and lower costs.",
    "Vielen Dank für Ihre Bestellung, die wir heute an Sie verschickt haben.",
    "Bitte überweisen Sie den Betrag innerhalb von vierzehn Tagen auf unser Konto.",
    "Die Rechnung enthält die gesetzliche Mehrwertsteuer von neunzehn Prozent.",
    "Für Rückfragen stehen wir Ihnen montags bis freitags gerne zur Verfügung.",
    "Der Mietvertrag verlängert sich um ein Jahr, wenn er nicht gekündigt wird.",
    "Die Größe des Grundstücks beträgt laut Grundbuch achthundert Quadratmeter.",
    "Wir bestätigen den Eingang Ihrer Unterlagen vom zwölften Februar.",
    "Die Versicherung übernimmt die Kosten für die Reparatur der Heizungsanlage.",
]


# -- files ----------------------------------------------------------------------------------------
def paragraphs(rng: random.Random, lines: int) -> list[str]:
    """`lines` lines of at most LINE_CHARS characters, filled with whole sentences."""
    result, line = [], ""
    while len(result) < lines:
        for word in rng.choice(SENTENCES).split():
            if len(line) + 1 + len(word) > LINE_CHARS:
                result.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
    return result[:lines]


def scanned_page(rng: random.Random, lines: int, font: ImageFont.FreeTypeFont) -> Image.Image:
    """A white A4 page at 300 dpi with `lines` lines of black text, a blank line every 4 lines."""
    image = Image.new("L", A4_300DPI, 255)
    draw = ImageDraw.Draw(image)
    y = MARGIN + 100
    for index, line in enumerate(paragraphs(rng, lines)):
        draw.text((MARGIN, y), line, fill=0, font=font)
        y += LINE_PX * (2 if index % 4 == 3 else 1)
    return image


def load_font() -> ImageFont.FreeTypeFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, FONT_PX)
        except OSError:
            continue
    return ImageFont.load_default(size=FONT_PX)


# -- dms ------------------------------------------------------------------------------------------
def upload(http: KeepAlive, name: str, body: bytes) -> dict:
    return json.loads(http.request("PUT", f"/api/document/upload/{name}", body))


def wait_until_done(http: KeepAlive, ids: set[str]) -> dict[str, int]:
    """Poll the legacy document list until none of `ids` is received or started; the count of
    each final status."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while True:
        documents = [d for d in json.loads(http.get("/api/documents")) if d["id"] in ids]
        statuses = [d["ocr_status"] for d in documents]
        if all(status in ("succeeded", "failed") for status in statuses) or \
                time.monotonic() > deadline:
            return {status: statuses.count(status) for status in set(statuses)}
        time.sleep(POLL_SECONDS)


def timed_uploads(server: ServerProcess, files: list[tuple[str, bytes]]) -> dict:
    """Upload `files` one after another over one connection, then wait for all of them."""
    http = server.connection()
    warm = upload(http, "warm-up.png", png("Warm up 4711"))
    wait_until_done(http, {warm["id"]})
    started = time.perf_counter()
    documents = [upload(http, name, body) for name, body in files]
    uploaded = time.perf_counter() - started
    statuses = wait_until_done(http, {d["id"] for d in documents})
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "uploaded": uploaded, "statuses": statuses,
            "pages": sum(d["page_count"] for d in documents), "rss": server.rss_mib()}


def status_note(statuses: dict[str, int]) -> str:
    unfinished = {k: v for k, v in statuses.items() if k != "succeeded"}
    return "" if not unfinished else "  NOT ALL SUCCEEDED: " + ", ".join(
        f"{count} {status}" for status, count in sorted(unfinished.items()))


def born_digital(work: Path, args) -> list[tuple[str, dict]]:
    rng = random.Random(1)
    full_pages = [[paragraphs(rng, args.pdf_lines) for _ in range(args.pdf_pages)]
                  for _ in range(args.pdfs)]
    full = [(f"letters-{index:03d}.pdf", pdf(pages)) for index, pages in enumerate(full_pages)]
    chars = [sum(len(line) + 1 for line in page) for pages in full_pages for page in pages]
    short = [(f"short-{index:03d}.pdf",
              pdf([" ".join(paragraphs(rng, 1)) for _ in range(args.short_pdf_pages)]))
             for index in range(args.short_pdfs)]
    runs = [(f"{args.pdfs} PDFs x {args.pdf_pages} pages, {args.pdf_lines} lines "
             f"(~{statistics.mean(chars or [0]):.0f} chars) a page", full),
            (f"{args.short_pdfs} PDFs x {args.short_pdf_pages} pages, one line a page "
             f"(samples.pdf)", short)]
    runs = [(name, files) for name, files in runs
            if files and args.pdf_pages and args.short_pdf_pages]
    if not runs:
        return []
    server = ServerProcess(work / "data-pdf")
    try:
        server.login()
        return [(name, timed_uploads(server, files)) for name, files in runs]
    finally:
        server.stop()


def scans_through_dms(work: Path, files: list[tuple[str, bytes]], workers: int,
                      searchable: bool = True) -> dict:
    server = ServerProcess(work / f"data-scan-{workers}-{int(searchable)}",
                           DMS_OCR_WORKERS=str(workers), DMS_SEARCHABLE_PDF=str(int(searchable)))
    try:
        server.login()
        return timed_uploads(server, files)
    finally:
        server.stop()


# -- bare Tesseract -------------------------------------------------------------------------------
def tesseract(path: Path) -> str:
    return subprocess.run(["tesseract", str(path), "stdout", "-l", "eng", "--dpi", "300"],
                          env=TESSERACT_ENV, capture_output=True, text=True, check=True).stdout


def bare_tesseract(paths: list[Path], parallel: int) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(tesseract, paths))
    return time.perf_counter() - started


# -- main -----------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=int, default=20, help="PDFs with full pages of text")
    parser.add_argument("--pdf-pages", type=int, default=50)
    parser.add_argument("--pdf-lines", type=int, default=45, help="lines of text on a full page")
    parser.add_argument("--short-pdfs", type=int, default=40, help="PDFs with one line a page")
    parser.add_argument("--short-pdf-pages", type=int, default=50)
    parser.add_argument("--scans", type=int, default=12, help="scanned pages (one document each)")
    parser.add_argument("--scan-lines", type=int, default=16, help="lines of text on a scan")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="DMS_OCR_WORKERS values, and Tesseract processes run at once")
    parser.add_argument("--rounds", type=int, default=2, help="scan measurements, interleaved")
    parser.add_argument("--latency-rounds", type=int, default=5,
                        help="parts 4 and 5 (one document's latency), interleaved; 0 skips them")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    version = subprocess.run(["tesseract", "--version"], capture_output=True, text=True)
    print(f"tesseract: {(version.stdout or version.stderr).splitlines()[0]}")

    with tempfile.TemporaryDirectory(prefix="dms-bench-ocr-") as tmp:
        work = Path(tmp)
        print("\n1. born-digital PDFs (text layer), default DMS_OCR_WORKERS "
              f"({max(1, (os.cpu_count() or 1) - 1)})")
        print(f"{'files':<58}  {'pages':>5}  {'seconds':>7}  {'pages/s':>7}  {'RSS MiB':>7}")
        for name, row in born_digital(work, args):
            print(f"{name:<58}  {row['pages']:5d}  {row['seconds']:7.2f}  "
                  f"{row['pages'] / row['seconds']:7.1f}  {row['rss']:7.1f}"
                  f"{status_note(row['statuses'])}")

        rng, font = random.Random(2), load_font()
        paths = []
        for index in range(args.scans):
            path = work / f"scan-{index:03d}.png"
            scanned_page(rng, args.scan_lines, font).save(path, dpi=(300, 300))
            paths.append(path)
        files = [(path.name, path.read_bytes()) for path in paths]
        size_kib = sum(len(body) for _, body in files) / len(files) / 1024
        tesseract(paths[0])  # warm-up: traineddata into the page cache

        # Rounds interleave dms and bare Tesseract, so that drift in the machine's speed (a
        # shared VM) hits both alike; the tables show the mean of the rounds and each round.
        dms: dict[int, list[dict]] = {workers: [] for workers in args.workers}
        without_pdf: list[dict] = []
        bare: dict[int, list[float]] = {parallel: [] for parallel in sorted({1, *args.workers})}
        for _ in range(args.rounds):
            for workers in args.workers:
                dms[workers].append(scans_through_dms(work, files, workers))
            without_pdf.append(scans_through_dms(work, files, 1, searchable=False))
            for parallel in bare:
                bare[parallel].append(bare_tesseract(paths, parallel))

        print(f"\n2. 300-dpi scans through dms: {args.scans} A4 pages "
              f"({A4_300DPI[0]}x{A4_300DPI[1]} px, grayscale PNG, ~{size_kib:.0f} KiB, "
              f"{args.scan_lines} lines of {FONT_PX} px DejaVuSans), one document each; "
              f"mean of {args.rounds} round(s)")
        print(f"{'run':<20}  {'seconds':>7}  {'pages/min':>9}  {'s/page':>6}  {'uploads s':>9}  "
              f"{'RSS MiB':>7}  seconds of each round")
        dms_seconds = {}
        for label, rows in [*((f"DMS_OCR_WORKERS={w}", rows) for w, rows in dms.items()),
                            ("1, no searchable PDF", without_pdf)]:
            seconds = statistics.mean(row["seconds"] for row in rows)
            dms_seconds[label] = seconds
            pages = rows[0]["pages"]
            notes = "".join(status_note(row["statuses"]) for row in rows)
            print(f"{label:<20}  {seconds:7.2f}  {pages * 60 / seconds:9.1f}  "
                  f"{seconds / pages:6.2f}  "
                  f"{statistics.mean(row['uploaded'] for row in rows):9.2f}  "
                  f"{max(row['rss'] for row in rows):7.1f}  "
                  f"{' '.join(format(row['seconds'], '.2f') for row in rows)}{notes}")
        if 1 in dms:
            cost = dms_seconds["DMS_OCR_WORKERS=1"] / dms_seconds["1, no searchable PDF"] - 1
            print(f"the searchable PDFs cost (1 worker, with against without): {cost * 100:+.1f} %")

        print("\n3. bare tesseract on the same files (-l eng --dpi 300, OMP_THREAD_LIMIT=1)")
        print(f"{'run':<20}  {'seconds':>7}  {'pages/min':>9}  {'s/page':>6}  "
              "seconds of each round")
        for parallel, rounds in bare.items():
            label = "1 at a time" if parallel == 1 else f"{parallel} in parallel"
            seconds = statistics.mean(rounds)
            print(f"{label:<20}  {seconds:7.2f}  {args.scans * 60 / seconds:9.1f}  "
                  f"{seconds / args.scans:6.2f}  {' '.join(f'{value:.2f}' for value in rounds)}")
        print("dms overhead per page against bare tesseract at the same parallelism (means):")
        for workers in dms:
            per_page = statistics.mean(bare[workers]) / args.scans
            seconds = dms_seconds[f"DMS_OCR_WORKERS={workers}"]
            overhead = (seconds / dms[workers][0]["pages"]) / per_page - 1
            print(f"  DMS_OCR_WORKERS={workers} (searchable PDFs made) vs {workers} tesseract at a "
                  f"time: {overhead * 100:+.1f} %")
        seconds = dms_seconds["1, no searchable PDF"]
        overhead = (seconds / without_pdf[0]["pages"]) / (statistics.mean(bare[1]) / args.scans) - 1
        print(f"  DMS_OCR_WORKERS=1, no searchable PDF vs 1 tesseract at a time: "
              f"{overhead * 100:+.1f} %")

        if args.latency_rounds:
            pages = [scanned_page(rng, args.scan_lines, font) for _ in range(4)]
            single = scanned_page(rng, args.scan_lines, font)
            ImageDraw.Draw(single).text((MARGIN, MARGIN), f"Reference {UNIQUE_WORD}", fill=0,
                                        font=font)
            ocr_latency.run(work, pages, single, UNIQUE_WORD, args.latency_rounds, TESSERACT_ENV)

if __name__ == "__main__":
    main()
