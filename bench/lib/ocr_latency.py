"""bench/ocr.py, parts 4 and 5: how long one scanned document takes from its upload, next to bare
Tesseract on the same pages in the same run (docs/performance.md, "Numbers").

4. A 4-page 300-dpi scanned PDF (each page a JPEG, as scanners make them), upload → `succeeded`
   with its searchable PDF made, 1 worker; the limit: `tesseract page.jpg out -l eng --dpi 300
   txt pdf` on the same four JPEGs, one after another.
5. A one-page scan (PNG), upload → found by a search for a word only it has; the limit: bare
   `tesseract page.png stdout` on that page.

Each round runs dms and the bare Tesseract one after the other (interleaved, so drift in the
machine's speed hits both); the medians and each round are printed.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
import urllib.parse
from pathlib import Path

from PIL import Image

from bench.common import KeepAlive, ServerProcess

POLL_SECONDS = 0.02  # finer than part 2's: one document's latency is measured here
TIMEOUT_SECONDS = 300


def make_scanned_pdf(pages: list[Image.Image], work: Path) -> tuple[bytes, list[Path]]:
    """The pages as JPEG files (quality 75) and a PDF of those JPEGs at 300 dpi."""
    jpegs = []
    for index, page in enumerate(pages):
        path = work / f"pdf-page-{index}.jpg"
        page.save(path, "JPEG", quality=75, dpi=(300, 300))
        jpegs.append(path)
    opened = [Image.open(path) for path in jpegs]
    target = work / "scan-4-pages.pdf"
    opened[0].save(target, "PDF", save_all=True, append_images=opened[1:], resolution=300)
    return target.read_bytes(), jpegs


def bare_txt_pdf(paths: list[Path], work: Path, env: dict) -> float:
    started = time.perf_counter()
    for index, path in enumerate(paths):
        subprocess.run(["tesseract", str(path), str(work / f"bare-{index}"), "-l", "eng",
                        "--dpi", "300", "txt", "pdf"], env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def bare_stdout(path: Path, env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(["tesseract", str(path), "stdout", "-l", "eng", "--dpi", "300"], env=env,
                   capture_output=True, check=True)
    return time.perf_counter() - started


def wait_status(http: KeepAlive, document_id: str) -> str:
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = json.loads(http.get(f"/api/documents/{document_id}/"))["data"]["attributes"][
            "ocr_status"]
        if status in ("succeeded", "failed"):
            return status
        time.sleep(POLL_SECONDS)
    return "timed out"


def wait_found(http: KeepAlive, document_id: str, word: str) -> bool:
    path = f"/api/search/?q={urllib.parse.quote(word)}"
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if document_id.encode() in http.get(path):
            return True
        time.sleep(POLL_SECONDS)
    return False


def upload(http: KeepAlive, name: str, body: bytes) -> str:
    return json.loads(http.request("PUT", f"/api/document/upload/{name}", body))["id"]


def run(work: Path, pages: list[Image.Image], single: Image.Image, word: str, rounds: int,
        env: dict) -> None:
    pdf_bytes, jpegs = make_scanned_pdf(pages, work)
    single_path = work / "single-scan.png"
    single.save(single_path, dpi=(300, 300))
    single_bytes = single_path.read_bytes()
    server = ServerProcess(work / "data-latency", DMS_OCR_WORKERS="1")
    rows: dict[str, list[float]] = {"pdf": [], "bare pdf": [], "found": [], "bare page": []}
    statuses = []
    try:
        server.login()
        http = server.connection()
        warm = upload(http, "warm-up.pdf", pdf_bytes)  # imports, reader process, traineddata
        wait_status(http, warm)
        for index in range(rounds):
            started = time.perf_counter()
            statuses.append(wait_status(http, upload(http, f"scan-{index}.pdf", pdf_bytes)))
            rows["pdf"].append(time.perf_counter() - started)
            rows["bare pdf"].append(bare_txt_pdf(jpegs, work, env))
            started = time.perf_counter()
            found = wait_found(http, upload(http, f"single-{index}.png", single_bytes), word)
            rows["found"].append(time.perf_counter() - started if found else float("nan"))
            rows["bare page"].append(bare_stdout(single_path, env))
    finally:
        server.stop()
    print(f"\n4. a {len(pages)}-page 300-dpi scanned PDF (JPEG pages, {len(pdf_bytes) // 1024} "
          f"KiB), upload -> succeeded, 1 worker, searchable PDF made; against bare "
          f"`tesseract page.jpg out txt pdf` on its {len(pages)} pages one after another; "
          f"{rounds} interleaved rounds")
    _print_pair("dms", rows["pdf"], "bare tesseract", rows["bare pdf"])
    if any(status != "succeeded" for status in statuses):
        print(f"  NOT ALL SUCCEEDED: {statuses}")
    print(f"\n5. a one-page scan (PNG), upload -> found by searching a word only it has "
          f"({word!r}); against bare `tesseract page.png stdout` on it; {rounds} rounds")
    _print_pair("dms", rows["found"], "bare tesseract", rows["bare page"])


def _print_pair(label: str, values: list[float], limit_label: str, limits: list[float]) -> None:
    """Medians and minimums: on a shared VM a round may be slowed by neighbours (bare Tesseract
    on the same four pages took 5.2-7.3 s in consecutive rounds); the minimum is each side's
    least disturbed round."""
    for name, rounds in ((label, values), (limit_label, limits)):
        print(f"  {name:<16} median {statistics.median(rounds):6.2f} s, min {min(rounds):6.2f} s"
              f"   rounds: {' '.join(f'{v:.2f}' for v in rounds)}")
    print(f"  ratio            median {statistics.median(values) / statistics.median(limits):.2f}x"
          f", min {min(values) / min(limits):.2f}x")
