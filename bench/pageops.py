"""Page operations: the request time of rotating, deleting and reordering pages of a 100-page PDF,
and of splitting a 50-page scanned batch (after given pages, and at QR separator sheets), each
against a real `dms serve`.

Two 100-page documents: a born-digital PDF (a text layer on every page, as an office program
writes it) and a scan (a 300-dpi grayscale image per page, as a sheet feeder's PDF; uploaded with
`ocr: false` so that no Tesseract runs beside the measurement). Each operation runs ROUNDS
times on the document's latest version, one request after the other; printed: median and worst
request time in ms. Target (../shared/docs/targets.md): each under a second of request time;
what follows (reading a turned page again) runs in the background and is not counted.

The split at QR separator sheets is timed twice: on a batch that was processed (Tesseract read
it, and processing read each page's barcodes from the same render: the request renders nothing)
and on one uploaded with `ocr: false` (no barcode known: the request renders every page).

    .venv/bin/python -m bench.pageops [--pages 100] [--batch 50] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import requests

from bench.common import ServerProcess, machine
from tests.harness import samples
from tests.harness.pdfops import batch_pdf, letter_page, separator_sheet


def document(session: requests.Session, url: str, home: str, title: str, data: bytes,
             ocr: bool = False) -> str:
    body = {"data": {"type": "documents", "attributes": {"title": title, "ocr": ocr},
                     "relationships": {"parent": {"data": {"type": "folders", "id": home}}}}}
    response = session.post(url + "/api/nodes/", json=body,
                            headers={"Content-Type": "application/vnd.api+json"})
    response.raise_for_status()
    document_id = response.json()["data"]["id"]
    session.put(f"{url}/api/documents/{document_id}/upload/{title}", data=data,
                headers={"Content-Disposition": "attachment"}).raise_for_status()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = session.get(f"{url}/api/documents/{document_id}/").json()["data"][
            "attributes"]["ocr_status"]
        if status in ("succeeded", "failed"):
            return document_id
        time.sleep(0.2)
    raise RuntimeError(f"{title} was not processed in time")


def page_ids(session, url, document_id) -> list[str]:
    attributes = session.get(f"{url}/api/documents/{document_id}/").json()["data"]["attributes"]
    return [page["id"] for page in attributes["versions"][-1]["pages"]]


def timed(call, session: requests.Session | None = None) -> float:
    """Milliseconds until the call's work is done: its answer, or for a split that answers 202
    (it runs in the background, api.md, "Splits in the background"), the end of its run followed
    with `session`."""
    started = time.perf_counter()
    response = call()
    if response.status_code == 202 and session is not None:
        location = response.headers["Location"]
        while (state := session.get(location).json()["data"]["attributes"]["state"]) in (
                "queued", "running"):
            time.sleep(0.01)
        if state != "succeeded":
            raise RuntimeError(f"the split's run {state}: {session.get(location).text}")
    elif response.status_code not in (201, 204):
        raise RuntimeError(f"{response.status_code}: {response.text}")
    return (time.perf_counter() - started) * 1000


def operations(session, url, document_id, rounds) -> dict[str, list[float]]:
    """Rotate two pages, delete one page, swap two pages: ROUNDS times each."""
    times: dict[str, list[float]] = {"rotate 2 pages": [], "delete 1 page": [],
                                     "reorder (swap 2 pages)": []}
    post = lambda path, body: session.post(url + path, json=body)  # noqa: E731
    for _ in range(rounds):
        ids = page_ids(session, url, document_id)
        times["rotate 2 pages"].append(timed(lambda ids=ids: post("/api/pages/rotate/", {"pages": [
            {"id": ids[0], "angle": 90}, {"id": ids[-1], "angle": 180}]})))
        ids = page_ids(session, url, document_id)
        times["delete 1 page"].append(timed(lambda ids=ids: session.delete(
            f"{url}/api/pages/{ids[len(ids) // 2]}/")))
        ids = page_ids(session, url, document_id)
        times["reorder (swap 2 pages)"].append(timed(lambda ids=ids: post("/api/pages/reorder/", {
            "pages": [{"id": ids[0], "old_number": 1, "new_number": 2},
                      {"id": ids[1], "old_number": 2, "new_number": 1}]})))
    return times


def report(label: str, times: dict[str, list[float]]) -> None:
    for name, values in times.items():
        print(f"  {label:<28} {name:<58} median {statistics.median(values):7.1f} ms   "
              f"worst {max(values):7.1f} ms   ({len(values)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"# bench/pageops.py — {machine()}")
    born_digital = samples.pdf([f"Page {n} of the annual statement, line after line of text"
                                for n in range(1, args.pages + 1)])
    scanned = batch_pdf([letter_page(f"Scanned page {n}") for n in range(1, args.pages + 1)])
    sheet = separator_sheet([("DMS-SPLIT", "QRCode")])
    batch_pages = [sheet if n % 10 == 0 else letter_page(f"Batch page {n}")
                   for n in range(1, args.batch + 1)]
    batch = batch_pdf(batch_pages)
    print(f"born-digital PDF: {args.pages} pages, {len(born_digital) / 1024:.0f} KiB; "
          f"scanned PDF: {args.pages} pages, {len(scanned) / 1048576:.1f} MiB; "
          f"batch: {args.batch} pages with {args.batch // 10} QR separator sheets, "
          f"{len(batch) / 1048576:.1f} MiB")
    with tempfile.TemporaryDirectory() as folder:
        server = ServerProcess(Path(folder) / "data")
        try:
            server.login()
            session = requests.Session()
            session.headers["Authorization"] = f"Token {server.token}"
            url = server.url
            home = session.get(url + "/api/users/me/").json()["data"]["relationships"][
                "home_folder"]["data"]["id"]
            print(f"request time of each operation ({args.rounds} rounds; target < 1,000 ms):")
            for label, data in ((f"born-digital, {args.pages} pages", born_digital),
                                (f"scanned, {args.pages} pages", scanned)):
                document_id = document(session, url, home, "doc.pdf", data)
                report(label, operations(session, url, document_id, args.rounds))
            processed, unread = ("split at QR separator sheets, batch processed",
                                 "split at QR separator sheets, not read (ocr: false; its run)")
            splits: dict[str, list[float]] = {"split after every 10th page": [], processed: [],
                                              unread: []}
            for _ in range(args.rounds):
                document_id = document(session, url, home, "batch.pdf", batch)
                cuts = list(range(10, args.batch, 10))
                splits["split after every 10th page"].append(timed(lambda: session.post(
                    f"{url}/api/documents/{document_id}/split/", json={"after_pages": cuts})))  # noqa: B023 (run in this iteration)
                document_id = document(session, url, home, "batch.pdf", batch)
                splits[unread].append(timed(lambda: session.post(
                    f"{url}/api/documents/{document_id}/split/", json={"separator": "barcode"}),  # noqa: B023 (run in this iteration)
                    session))
                document_id = document(session, url, home, "batch.pdf", batch, ocr=True)
                splits[processed].append(timed(lambda: session.post(
                    f"{url}/api/documents/{document_id}/split/", json={"separator": "barcode"})))  # noqa: B023 (run in this iteration)
            report(f"scanned batch, {args.batch} pages", splits)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
