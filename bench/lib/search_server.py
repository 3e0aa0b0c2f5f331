"""bench/search.py's server: its output drained, its memory, the size of its search index, and
the wait until it has built that index."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

from bench.common import KeepAlive, ServerProcess

POLL_SECONDS = 0.2
BUILD_TIMEOUT_SECONDS = 3 * 3600


# -- the server -----------------------------------------------------------------------------------
class OutputDrain:
    """Reads the server's output in a thread (a full pipe would block the server) and keeps the
    indexer's "search index built" line."""

    def __init__(self, stream):
        self.built_line: str | None = None
        self.tracebacks = 0
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            if "search index built" in line:
                self.built_line = line.strip()
            if "Traceback" in line:
                self.tracebacks += 1


def memory(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of a process, MiB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                values[key] = int(line.split()[1]) / 1024
    return values


def rss_text(values: dict[str, float]) -> str:
    rss, anonymous, file = (values.get(key, math.nan) for key in ("VmRSS", "RssAnon", "RssFile"))
    return f"{rss:.1f} MiB (anonymous {anonymous:.1f}, file-backed {file:.1f})"


def index_size(directory: Path) -> tuple[int, int]:
    """(bytes of every file under `directory`, segments in its meta.json)."""
    total = sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
    try:
        segments = len(json.loads((directory / "meta.json").read_text()).get("segments", []))
    except (OSError, ValueError):
        segments = -1
    return total, segments


def wait_for_index(server: ServerProcess, admin: KeepAlive, started: float) -> tuple[dict, dict]:
    """Polls /health until search is ready: (its last search status, peak memory)."""
    peak: dict[str, float] = {}
    last_report = time.perf_counter()
    while True:
        status = json.loads(admin.get("/health")).get("search", {})
        values = memory(server.process.pid)
        if values.get("VmRSS", 0) > peak.get("VmRSS", 0):
            peak = values
        if status.get("state") == "ready":
            return status, peak
        if time.perf_counter() - started > BUILD_TIMEOUT_SECONDS:
            raise RuntimeError(f"the index was not ready after {BUILD_TIMEOUT_SECONDS} s: "
                               f"{status}")
        if time.perf_counter() - last_report >= 15:
            last_report = time.perf_counter()
            print(f"  building: {status.get('indexed', 0):,} of {status.get('to_index', 0):,} "
                  f"({last_report - started:.0f} s, RSS {values.get('VmRSS', 0):.0f} MiB)",
                  flush=True)
        time.sleep(POLL_SECONDS)
