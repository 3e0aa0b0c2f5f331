"""Upload benchmark: large and small uploads and a large download against a real `dms serve`.

Measures, over loopback:
  1. throughput of one large plain-text upload (default 1 GiB) streamed from disk, next to the
     machine's limit measured in the same run: the same file copied into the data dir's tmp/ in
     1 MiB pieces and fsynced (what any server must at least do with the bytes). The two alternate,
     --rounds times, medians reported; the server's RSS before and at its peak during the upload
     (sampled every 50 ms), next to a 256 MiB upload so the two rows show whether peak RSS grows
     with the file's size;
  2. 8 concurrent clients uploading 200 small PDFs in total, each into a new document: wall time,
     uploads/s, p50/p95 latency per upload and peak server RSS; an upload refused with 429 while
     the user's earlier files are still being read (api.md, fairness) is sent again after its
     Retry-After, its latency counted from the first try, and the 429s are counted;
  3. throughput of downloading the large file again, and whether its SHA-256 matches the upload's.

Sizes are MiB (2**20 bytes) and throughputs MiB/s. It prints numbers and never asserts.

    .venv/bin/python -m bench.upload [--size-mb 1024] [--small-size-mb 256] [--rounds 3]
                                     [--clients 8] [--pdfs 200]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Self

from bench.common import KeepAlive, ServerProcess, machine
from tests.harness.samples import pdf  # the tests' tiny PDF writer

MIB = 2**20
CHUNK = MIB  # client read/write size: big enough that the client is not the bottleneck
SAMPLE_SECONDS = 0.05
VND = "application/vnd.api+json"


class PeakRss:
    """Samples the server's VmRSS in a background thread while the `with` block runs."""

    def __init__(self, server: ServerProcess):
        self.server = server
        self.before = self.peak = server.rss_mib()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, self.server.rss_mib())

    def _sample(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, self.server.rss_mib())


def write_text_file(path: Path, size_mib: int) -> str:
    """A plain-text file of exactly `size_mib` MiB (numbered ASCII lines), written a MiB at a time
    so the client never holds it in memory; returns its SHA-256."""
    digest = hashlib.sha256()
    line = b"%012d the quick brown fox jumps over the lazy dog, 0123456789 ABCDEFGHIJKLMNOP\n"
    per_chunk = CHUNK // len(line % 0)
    with path.open("wb") as out:
        for index in range(size_mib):
            block = b"".join(line % (index * per_chunk + n) for n in range(per_chunk))
            block = block.ljust(CHUNK, b"\n")  # pad to exactly one MiB: sizes stay round
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def home_folder(http: KeepAlive) -> str:
    me = json.loads(http.get("/api/users/me/"))
    return me["data"]["relationships"]["home_folder"]["data"]["id"]


def new_document(http: KeepAlive, home: str, title: str) -> str:
    body = {"data": {"type": "documents", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": home}}}}}
    reply = http.request("POST", "/api/nodes/", json.dumps(body).encode(), {"Content-Type": VND})
    return json.loads(reply)["data"]["id"]


def streaming_connection(server: ServerProcess) -> http.client.HTTPConnection:
    # blocksize: http.client sends a file body in pieces of this size (8 KiB by default).
    return http.client.HTTPConnection("127.0.0.1", server.port, blocksize=CHUNK, timeout=600)


def upload_file(server: ServerProcess, document: str, path: Path) -> float:
    """PUT the file as the document's new version, streamed from disk; returns the seconds taken
    until the 201 arrived (so it includes the server's copy and fsync)."""
    connection = streaming_connection(server)
    headers = {"Authorization": f"Token {server.token}", "Content-Length": str(path.stat().st_size),
               "Content-Disposition": f"attachment; filename={path.name}"}
    started = time.perf_counter()
    with path.open("rb") as body:
        connection.request("PUT", f"/api/documents/{document}/upload/{path.name}", body, headers)
        response = connection.getresponse()
        reply = response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    if response.status != 201:
        raise RuntimeError(f"upload of {path.name}: {response.status} {reply[:300]!r}")
    return elapsed


def download_file(server: ServerProcess, document: str) -> tuple[float, int, str]:
    """GET the document's file in chunks, hashing and discarding them; (seconds, bytes, sha256)."""
    connection = streaming_connection(server)
    digest, size = hashlib.sha256(), 0
    started = time.perf_counter()
    connection.request("GET", f"/api/documents/{document}/download/",
                       headers={"Authorization": f"Token {server.token}"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"download: {response.status} {response.read(300)!r}")
    while chunk := response.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, size, digest.hexdigest()


def processed(http: KeepAlive, document: str, timeout: float = 300) -> None:
    """Wait until the document's processing has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        attributes = json.loads(http.get(f"/api/documents/{document}/"))["data"]["attributes"]
        if attributes["ocr_status"] in ("succeeded", "failed"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"document {document} was not processed in {timeout} s")


def disk_copy(source: Path, directory: Path) -> float:
    """The limit: `source` copied into `directory` in 1 MiB pieces, then fsynced; seconds taken.
    The copy is removed afterwards."""
    target = directory / "disk-limit.tmp"
    started = time.perf_counter()
    with source.open("rb") as reader, target.open("wb") as writer:
        while chunk := reader.read(CHUNK):
            writer.write(chunk)
        writer.flush()
        os.fsync(writer.fileno())
    elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


def large_upload(server: ServerProcess, http: KeepAlive, home: str, work: Path,
                 limit_dir: Path, size_mib: int, rounds: int) -> dict:
    """`rounds` large uploads, each into a new document, alternating with the disk's limit on
    the same file: median timings, RSS and the last upload's id/hash for the download."""
    path = work / f"large-{size_mib}.txt"
    sha256 = write_text_file(path, size_mib)
    uploads, copies, before, peaks = [], [], [], []
    for _ in range(rounds):
        copies.append(disk_copy(path, limit_dir))
        document = new_document(http, home, path.name)
        with PeakRss(server) as rss:
            uploads.append(upload_file(server, document, path))
        before.append(rss.before)
        peaks.append(rss.peak)
        processed(http, document)  # its text is read next: not during the next round
    path.unlink()  # the server has its own copy now; keeps the disk use down
    return {"size": size_mib, "seconds": statistics.median(uploads),
            "disk": statistics.median(copies), "before": before[0], "peak": max(peaks),
            "growth": max(peak - start for start, peak in zip(before, peaks, strict=True)),
            "document": document, "sha256": sha256, "rounds": rounds}


def concurrent_pdfs(server: ServerProcess, http: KeepAlive, home: str, clients: int,
                    count: int) -> dict:
    """`count` small PDFs uploaded by `clients` threads, each with its own keep-alive connection,
    each PDF into a document created beforehand (so only the uploads are timed)."""
    files = [pdf([f"Invoice {index:04d}", f"Page two of invoice {index:04d}"])
             for index in range(count)]
    documents = [new_document(http, home, f"invoice {index:04d}") for index in range(count)]
    latencies: list[float] = []  # list.append is atomic under the GIL
    refusals: list[int] = []

    def client(worker: int) -> None:
        connection = server.connection()
        for index in range(worker, count, clients):
            headers = {**connection.headers, "Content-Type": "application/pdf",
                       "Content-Disposition": f"attachment; filename=invoice-{index:04d}.pdf"}
            started = time.perf_counter()
            while True:  # as a client would: again after a 429's Retry-After
                connection.connection.request(
                    "PUT", f"/api/documents/{documents[index]}/upload/invoice-{index:04d}.pdf",
                    body=files[index], headers=headers)
                response = connection.connection.getresponse()
                data = response.read()
                if response.status != 429:
                    break
                refusals.append(1)
                time.sleep(float(response.getheader("Retry-After") or 1))
            if response.status >= 400:
                raise RuntimeError(f"upload {index}: {response.status} {data[:300]!r}")
            latencies.append((time.perf_counter() - started) * 1000)
        connection.connection.close()

    with PeakRss(server) as rss, ThreadPoolExecutor(clients) as pool:
        started = time.perf_counter()
        for future in [pool.submit(client, worker) for worker in range(clients)]:
            future.result()  # re-raises a failed upload
        wall = time.perf_counter() - started
    latencies.sort()
    return {"count": len(latencies), "bytes": statistics.mean(map(len, files)), "wall": wall,
            "p50": statistics.median(latencies), "p95": latencies[int(len(latencies) * 0.95) - 1],
            "before": rss.before, "peak": rss.peak, "refused": len(refusals)}


def print_large(rows: list[dict]) -> None:
    print(f"\n1. one large plain-text upload, streamed from disk, against the disk's limit (the "
          f"same file copied into the data dir and fsynced); medians of {rows[0]['rounds']} "
          f"alternating rounds")
    print(f"{'size MiB':>8}  {'dms s':>6}  {'MiB/s':>7}  {'disk s':>6}  {'MiB/s':>7}  "
          f"{'x disk':>6}  {'RSS before':>10}  {'RSS peak':>8}  {'growth MiB':>10}")
    for row in rows:
        print(f"{row['size']:8d}  {row['seconds']:6.2f}  {row['size'] / row['seconds']:7.1f}  "
              f"{row['disk']:6.2f}  {row['size'] / row['disk']:7.1f}  "
              f"{row['disk'] / row['seconds']:6.2f}  {row['before']:10.1f}  {row['peak']:8.1f}  "
              f"{row['growth']:10.1f}")
    print("(growth: the largest rise of the server's RSS during one upload; x disk: dms' "
          "throughput as a share of the disk copy's; dms' time runs from the "
          "request's first byte to its 201, so it includes receiving, hashing, fsync and storing)")


def print_pdfs(result: dict, clients: int) -> None:
    print(f"\n2. {clients} concurrent clients, {result['count']} small PDFs "
          f"(~{result['bytes'] / 1024:.1f} KiB each), each into a new document")
    print(f"wall {result['wall']:.2f} s, {result['count'] / result['wall']:.1f} uploads/s, "
          f"latency p50 {result['p50']:.1f} ms, p95 {result['p95']:.1f} ms, RSS before "
          f"{result['before']:.1f} MiB, peak {result['peak']:.1f} MiB; {result['refused']} "
          "answers 429 (the user's files still being read: sent again after Retry-After, the "
          "latency runs from the first try)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="the large file, in MiB")
    parser.add_argument("--small-size-mb", type=int, default=256,
                        help="the second large file, to compare peak RSS with")
    parser.add_argument("--rounds", type=int, default=3,
                        help="uploads of each large file, alternating with the disk copy")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--pdfs", type=int, default=200)
    args = parser.parse_args()
    print(f"machine: {machine()}")

    with tempfile.TemporaryDirectory(prefix="dms-bench-upload-") as tmp:
        work, data_dir = Path(tmp), Path(tmp) / "data"
        limit = max(2048, args.size_mb * 2)
        server = ServerProcess(data_dir, DMS_MAX_UPLOAD_MB=str(limit))
        try:
            server.login()
            http = server.connection()
            home = home_folder(http)
            # Warm-up: the first upload imports and opens what every later one uses.
            warm = new_document(http, home, "warm-up")
            http.request("PUT", f"/api/documents/{warm}/upload/warm.txt", b"warm up\n",
                         {"Content-Disposition": "attachment; filename=warm.txt"})
            rows = [large_upload(server, http, home, work, data_dir / "tmp", size, args.rounds)
                    for size in (args.small_size_mb, args.size_mb)]
            print_large(rows)

            print_pdfs(concurrent_pdfs(server, http, home, args.clients, args.pdfs), args.clients)

            large = rows[-1]
            with PeakRss(server) as rss:
                seconds, size, sha256 = download_file(server, large["document"])
            print(f"\n3. download of the {size / MIB:.0f} MiB file, read in 1 MiB chunks "
                  f"(hashed, then discarded)")
            print(f"{seconds:.2f} s, {size / MIB / seconds:.1f} MiB/s, RSS before "
                  f"{rss.before:.1f} MiB, peak {rss.peak:.1f} MiB")
            print("sha256 ok" if sha256 == large["sha256"] else
                  f"sha256 MISMATCH: uploaded {large['sha256']}, downloaded {sha256}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
