"""The server of bench/load.py: started and waited for until it answers, its output scanned for
problems ("database is locked", tracebacks, warnings) and summarised, its memory sampled."""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path

from bench.common import ServerProcess
from bench.lib.load_http import MAX_ERRORS_SHOWN

SAMPLE_SECONDS = 0.25
PROBES = Path(__file__).resolve().parent / "serverprobe"
REPOSITORY = Path(__file__).resolve().parents[2]


# -- the server's output --------------------------------------------------------------------------
class OutputScanner:
    """Reads the server's stdout+stderr to the end in a thread (so the pipe never fills) and counts
    lines with "database is locked" and "Traceback"; keeps the first tracebacks' lines."""

    def __init__(self, stream):
        self.stream = stream
        self.lines = 0
        self.locked = 0
        self.tracebacks = 0
        self.levels: Counter = Counter()  # WARNING / ERROR / CRITICAL log lines
        self.problems: Counter = Counter()  # the same, by logger and message with digits as N
        self.examples: dict[str, str] = {}  # the first line of each kind
        self.excerpts: list[list[str]] = []
        self._current: list[str] | None = None
        self._previous = ""
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.stream:
            self.lines += 1
            if "database is locked" in line:
                self.locked += 1
            level = next((name for name in (" WARNING ", " ERROR ", " CRITICAL ") if name in line),
                         None)
            if level:
                self.levels[level.strip()] += 1
                kind = re.sub(r"\d+", "N", line.split(level, 1)[1].strip())[:150]
                self.problems[level.strip() + " " + kind] += 1
                self.examples.setdefault(level.strip() + " " + kind, line.rstrip())
            if "Traceback" in line:
                self.tracebacks += 1
                if len(self.excerpts) < 3:
                    self._current = [self._previous.rstrip()]
                    self.excerpts.append(self._current)
            if self._current is not None:
                self._current.append(line.rstrip())
                if len(self._current) >= 40 or (len(self._current) > 1 and not line.startswith(" ")
                                                 and "Traceback" not in line
                                                 and not line.startswith("During")):
                    self._current = None
            self._previous = line

    def join(self, timeout: float = 10) -> None:
        self._thread.join(timeout)


class RssSampler:
    """The server's RSS every SAMPLE_SECONDS in a thread: peak, and the latest value."""

    def __init__(self, server: ServerProcess):
        self.server = server
        self.first = self.peak = self.last = server.rss_mib()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            try:
                self.last = self.server.rss_mib()
            except OSError:
                return
            self.peak = max(self.peak, self.last)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.last = self.server.rss_mib()
        self.peak = max(self.peak, self.last)


# -- the other measurements -----------------------------------------------------------------------
def start_server(data_dir: Path, lock_log: Path | None = None, memory_log: Path | None = None
                 ) -> tuple[ServerProcess, OutputScanner, float, float]:
    """The server, its output scanner, seconds until it printed where it listens and seconds
    until GET /health first answered 200. `lock_log`: the server times its write lock there;
    `memory_log`: it writes what its memory is made of there (bench/lib/serverprobe)."""
    started = time.perf_counter()
    env = {}
    if lock_log is not None:
        env["BENCH_LOCK_LOG"] = str(lock_log)
    if memory_log is not None:
        env["BENCH_MEMORY_LOG"] = str(memory_log)
    if env:
        env["PYTHONPATH"] = os.pathsep.join([str(PROBES), str(REPOSITORY),
                                             os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    server = ServerProcess(data_dir, **env)
    listening = time.perf_counter() - started
    scanner = OutputScanner(server.process.stdout)
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        try:
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                break
        except OSError:
            pass
        finally:
            connection.close()
        if time.perf_counter() - started > 60:
            raise RuntimeError("GET /health did not answer 200 within 60 s")
        time.sleep(0.002)
    return server, scanner, listening, time.perf_counter() - started


def print_server_output(scanner: OutputScanner) -> None:
    print(f"server output: {scanner.lines} lines, 'database is locked' {scanner.locked}, "
          f"'Traceback' {scanner.tracebacks}, log lines of level "
          f"WARNING {scanner.levels['WARNING']}, ERROR {scanner.levels['ERROR']}, "
          f"CRITICAL {scanner.levels['CRITICAL']}")
    for kind, count in scanner.problems.most_common(MAX_ERRORS_SHOWN):
        print(f"  {count:6d} x {kind}")
        print(f"           e.g. {scanner.examples[kind][:200]}")
    for excerpt in scanner.excerpts:
        print("  first lines of a traceback:")
        shown = excerpt if len(excerpt) <= 12 else excerpt[:2] + ["  ..."] + excerpt[-10:]
        for line in shown:
            print(f"    {line}")


def print_lock_windows(lock_log: Path) -> None:
    """The write lock as the server's probe saw it, one line per 10 s of the load: what request
    threads and others held it, and how long writers waited for it and for the fsync (p50/p99)."""
    print("write lock per 10 s (the server's own timer): held s, holds, hold p50/p99 ms; "
          "of the request threads' holds, s and p50/p99 ms on a core and in the run queue "
          "(the rest: blocked); wait p50/p99 ms; fsync wait p50/p99 ms")
    if not lock_log.exists():
        print("  (no probe output)")
        return
    for line in lock_log.read_text().splitlines():
        window = json.loads(line)
        if "wait" not in window:
            continue
        held = [(name.removeprefix("hold "), part) for name, part in window.items()
                if name.startswith("hold ")]
        print("  " + "; ".join(
            f"{name} {part['sum_s']:.2f} s, {part['n']}, {part['p50_ms']:.1f}/{part['p99_ms']:.1f}"
            for name, part in held)
            + "".join(f"; request holds {what} {window[key]['sum_s']:.2f} s, "
                      f"{window[key]['p50_ms']:.1f}/{window[key]['p99_ms']:.1f}"
                      for what, key in (("on a core", "ran request"),
                                        ("in the run queue", "queued request"))
                      if key in window)
            + f"; wait {window['wait']['p50_ms']:.1f}/{window['wait']['p99_ms']:.1f}"
            + (f"; fsync {window['fsync wait']['p50_ms']:.1f}/{window['fsync wait']['p99_ms']:.1f}"
               if "fsync wait" in window else ""))


MEMORY_COLUMNS = ("rss", "anon", "heap", "other anon", "malloc in use", "malloc free", "sqlite")


def latest_memory(memory_log: Path) -> dict | None:
    """The server's latest memory sample (bench/lib/serverprobe), or None before its first."""
    if not memory_log.exists():
        return None
    lines = memory_log.read_text().splitlines()
    return json.loads(lines[-1]) if lines else None


def print_memory_rows(rows: list[tuple[str, dict | None]]) -> None:
    """What the server's memory was made of at each named moment (MiB; blocks: the interpreter's
    allocated blocks in thousands)."""
    print("the server's memory (MiB): " + ", ".join(MEMORY_COLUMNS)
          + ", Python blocks (thousands), threads")
    for name, sample in rows:
        if sample is None:
            print(f"  {name:>22}  (no sample)")
            continue
        print(f"  {name:>22}  " + "  ".join(f"{sample.get(column, float('nan')):7.1f}"
                                          for column in MEMORY_COLUMNS)
              + f"  {sample['python blocks'] / 1000:7.0f}  {sample['threads']:4d}")
