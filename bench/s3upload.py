"""Uploads to an S3 bucket through dms (api.md §19) against a plain boto3 upload of the same file to
the same server in the same run.

Starts SeaweedFS (`weed mini` on loopback, tests/harness/s3server.py) and a `dms serve` with
DMS_STORAGE=s3 on it, then for each size (default 256 MiB and 1 GiB), --rounds times, alternating:
  - boto3's upload_file of the file to a key of its own (the client configured as dms's: path
    style, checksums only when required; boto3's default transfer settings), the reference;
  - a PUT of the same file through dms into a new document, streamed from disk, timed from its
    first byte to its 201 (dms receives it into tmp/ while hashing, then puts it in the bucket),
    with the dms process's RSS before and at its peak (sampled every 50 ms);
  - the same file copied into dms's tmp/ and fsynced: what dms's first pass (receiving) costs at
    least, the rest of its time being the put into the bucket.
Every round's file has bytes of its own (dms would otherwise find the object there and skip the
put). Medians are reported, and the ratio dms / boto3 in throughput (the target is >= 0.7).

Sizes are MiB (2**20 bytes) and throughputs MiB/s. It prints numbers and never asserts.

    .venv/bin/python -m bench.s3upload [--sizes 256,1024] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import ServerProcess, machine
from bench.upload import (
    MIB,
    PeakRss,
    disk_copy,
    home_folder,
    new_document,
    processed,
    upload_file,
)
from tests.harness.s3server import S3Server

LINE = b"the quick brown fox jumps over the lazy dog, 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
BLOCK = (LINE * (MIB // len(LINE) + 1))[:MIB]


def write_file(path: Path, size_mib: int, seed: str) -> None:
    """Plain text of exactly `size_mib` MiB whose every MiB starts with `seed` and its number:
    bytes no other round's file has, written a MiB at a time."""
    with path.open("wb") as out:
        for index in range(size_mib):
            head = f"{seed} MiB {index}\n".encode()
            out.write(head + BLOCK[len(head):])


def boto3_upload(client, bucket: str, key: str, path: Path) -> float:
    """boto3's upload_file with its default transfer settings; seconds taken."""
    started = time.perf_counter()
    client.upload_file(str(path), bucket, key)
    elapsed = time.perf_counter() - started
    client.delete_object(Bucket=bucket, Key=key)
    return elapsed


def measure(server: ServerProcess, s3: S3Server, home: str, work: Path, size_mib: int,
            rounds: int) -> dict:
    client = s3.client()
    plain, through_dms, copies, before, peaks = [], [], [], [], []
    http = server.connection()
    for number in range(rounds):
        path = work / f"upload-{size_mib}-{number}.txt"
        write_file(path, size_mib, f"round {number} of {size_mib} MiB at {time.time()}")
        plain.append(boto3_upload(client, s3.bucket, f"plain/{path.name}", path))
        document = new_document(http, home, path.name)
        with PeakRss(server) as rss:
            through_dms.append(upload_file(server, document, path))
        before.append(rss.before)
        peaks.append(rss.peak)
        copies.append(disk_copy(path, work / "data" / "tmp"))
        path.unlink()
        processed(http, document, timeout=900)  # read next: not during the next round
    boto3_seconds, dms_seconds = statistics.median(plain), statistics.median(through_dms)
    return {"size": size_mib, "rounds": rounds, "boto3": boto3_seconds, "dms": dms_seconds,
            "ratio": boto3_seconds / dms_seconds, "copy": statistics.median(copies),
            "before": before[0], "peak": max(peaks),
            "growth": max(peak - start for start, peak in zip(before, peaks, strict=True)),
            "all_boto3": plain, "all_dms": through_dms}


def print_rows(rows: list[dict]) -> None:
    print(f"\nuploads to the bucket, medians of {rows[0]['rounds']} alternating rounds")
    print(f"{'size MiB':>8}  {'boto3 s':>7}  {'MiB/s':>7}  {'dms s':>6}  {'MiB/s':>7}  "
          f"{'x boto3':>7}  {'copy s':>6}  {'RSS before':>10}  {'RSS peak':>8}  {'growth MiB':>10}")
    for row in rows:
        print(f"{row['size']:8d}  {row['boto3']:7.2f}  {row['size'] / row['boto3']:7.1f}  "
              f"{row['dms']:6.2f}  {row['size'] / row['dms']:7.1f}  {row['ratio']:7.2f}  "
              f"{row['copy']:6.2f}  {row['before']:10.1f}  {row['peak']:8.1f}  "
              f"{row['growth']:10.1f}")
    for row in rows:
        print(f"{row['size']} MiB rounds: boto3 "
              f"{', '.join(f'{s:.2f}' for s in row['all_boto3'])} s; dms "
              f"{', '.join(f'{s:.2f}' for s in row['all_dms'])} s")
    print("(x boto3: dms' throughput as a share of boto3's upload_file of the same file to the "
          "same server, target >= 0.7; dms' time runs from the request's first byte to its 201: "
          "receiving into tmp/ while hashing, the put into the bucket, the row; copy s: the file "
          "copied into dms's tmp/ and fsynced, the least its receiving costs; growth: the "
          "largest rise of dms' RSS during one upload, target <= 30 MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,1024", help="file sizes in MiB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"machine: {machine()}")
    print("load average before the run: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    s3 = S3Server(bucket="dms-bench").start()
    try:
        with tempfile.TemporaryDirectory(prefix="dms-bench-s3upload-") as tmp:
            work = Path(tmp)
            server = ServerProcess(work / "data", **s3.dms_environment("dms/"),
                                   DMS_MAX_UPLOAD_MB=str(max(2048, 2 * max(sizes))))
            try:
                server.login()
                http = server.connection()
                home = home_folder(http)
                # Warm-up: the first upload imports and opens what every later one uses.
                warm = new_document(http, home, "warm-up")
                http.request("PUT", f"/api/documents/{warm}/upload/warm.txt", b"warm up\n",
                             {"Content-Disposition": "attachment; filename=warm.txt"})
                rows = [measure(server, s3, home, work, size, args.rounds) for size in sizes]
                print_rows(rows)
                print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
            finally:
                server.stop()
    finally:
        s3.stop()


if __name__ == "__main__":
    main()
