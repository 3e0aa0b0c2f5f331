"""Paperless-ngx import benchmark (api.md §18): `dms import --from paperless` of an export of
--documents small PDFs (one page of text each, with an archive PDF, a tag, a correspondent and a
note each, written as Paperless-ngx 2.20 writes it: tests/harness/paperless_export.py), into a
fresh data dir, beside `dms import` of the same originals as plain files into another fresh data
dir — the machine's own floor for storing that many small files in dms. Prints documents/s of
each, their ratio, and each process's peak RSS (target: >= 100 documents/s, memory flat).
No server runs: neither import reads a page (the Paperless-ngx import brings the text; the plain
one queues the documents for OCR).

    .venv/bin/python -m bench.paperless_import [--documents 2000] [--rounds 2]
    .venv/bin/python -m bench.paperless_import --documents 200 --rounds 1   # quick
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ADMIN_PASSWORD, machine
from tests.harness.paperless_export import Doc, write_export

TARGET_PER_SECOND = 100


def dms(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", *args], input=stdin, text=True,
                          capture_output=True, check=True)


def new_data_dir(root: Path, name: str) -> Path:
    data_dir = root / name
    dms("createsuperuser", "admin", "--password-stdin", "--data-dir", str(data_dir),
        stdin=ADMIN_PASSWORD + "\n")
    return data_dir


def timed(args: list[str], scratch: Path) -> tuple[float, float, str]:
    """(seconds, the process's own peak RSS in MiB, the line of its summary that counts)."""
    output = scratch / "output.txt"
    with open(output, "w") as sink:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "dms", *args, "--log-level",
                                    "warning"], stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
    text = output.read_text()
    if process.returncode != 0:
        raise RuntimeError(text)
    lines = text.strip().splitlines()
    return seconds, usage.ru_maxrss / 1024, lines[2 if args[1:2] == ["--from"] else 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2, help="each import this many times, "
                                                              "alternated, each in a fresh dir")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="dms-bench-paperless-") as tmp:
        root = Path(tmp)
        docs = [Doc(pk, f"Letter {pk:05d}", f"Letter number {pk} about the meter reading",
                    tags=[1], correspondent=1, notes=[(2, f"note {pk}")])
                for pk in range(1, args.documents + 1)]
        started = time.perf_counter()
        export = write_export(root / "export", "2.20.15", docs, tags=[(1, "Bills")],
                              correspondents=[(1, "Stadtwerke")])
        plain = root / "plain"
        plain.mkdir()
        for original in (export).glob("*.pdf"):
            if not original.name.endswith("-archive.pdf"):
                (plain / original.name).write_bytes(original.read_bytes())
        size = sum(path.stat().st_size for path in export.rglob("*") if path.is_file())
        print(f"export: {args.documents:,} documents, {size / 2**20:.1f} MiB with archives and "
              f"thumbnails, written in {time.perf_counter() - started:.1f} s")
        rates: dict[str, list[float]] = {"paperless": [], "plain": []}
        for round_number in range(1, args.rounds + 1):
            for kind in ("paperless", "plain"):
                data_dir = new_data_dir(root, f"{kind}-{round_number}")
                command = ["import", "--from", "paperless", str(export)] if kind == "paperless" \
                    else ["import", str(plain), "--user", "admin"]
                seconds, peak, line = timed([*command, "--data-dir", str(data_dir)], root)
                rate = args.documents / seconds
                rates[kind].append(rate)
                print(f"round {round_number} {kind:<9}: {seconds:6.1f} s, {rate:6.1f} "
                      f"documents/s, peak RSS {peak:.0f} MiB ({line.strip()})",
                      flush=True)
        best = {kind: max(values) for kind, values in rates.items()}
        print(f"best: Paperless-ngx import {best['paperless']:.1f} documents/s, plain import "
              f"{best['plain']:.1f} files/s: {best['paperless'] / best['plain']:.2f}x the plain "
              f"import's rate; target >= {TARGET_PER_SECOND} documents/s: "
              f"{'met' if best['paperless'] >= TARGET_PER_SECOND else 'missed'}")


if __name__ == "__main__":
    sys.exit(main())
