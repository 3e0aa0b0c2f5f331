"""What the long-lived commands (`dms serve`, `dms worker`) ask of glibc's malloc: share two arenas
among the threads, and give the memory freed by a burst of work back to the system once the
process has gone quiet. Elsewhere than glibc: nothing.

Measured (bench/RESULTS.md, issue 30): under load each thread's arena grew to 15-18 MiB and kept
it (328 MiB with 12 arenas; 125 MiB with two); and after the load, malloc held 22-32 MiB free for
reuse that `malloc_trim` returned in 3-6 ms. Trimming under load is no remedy (the pages are
touched again within seconds), so it waits for QUIET_SECONDS without work."""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
import time
from typing import Any

log = logging.getLogger("dms.heap")

MALLOC_ARENAS = 2
QUIET_SECONDS = 10.0  # without work after a burst, then the free memory goes back
CHECK_SECONDS = 1.0
# The process' CPU time in a check's interval above which it is working (all its threads; not
# its children, such as Tesseract): 2 % of a core.
BUSY_SHARE = 0.02


def _libc() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018 (glibc's, not musl's: both must be there)
    except (OSError, AttributeError):
        return None
    return libc


def limit_malloc_arenas() -> None:
    """glibc gives each thread that allocates an arena of its own, up to 8 per core, and under
    load each grows and keeps its size. Set before the long-lived process starts its threads; an
    explicit MALLOC_ARENA_MAX in the environment wins."""
    libc = _libc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return
    m_arena_max = -8  # glibc's malloc.h
    libc.mallopt(m_arena_max, MALLOC_ARENAS)


class TrimWhenQuiet:
    """A daemon thread that, once the process has done no work for `quiet` seconds after doing
    some (its start-up counts), calls malloc_trim(0) once: RSS after a burst falls back towards
    what the process holds, instead of staying at the burst's peak. Work is the process' own CPU
    time, whatever thread spent it: no part of dms has to report in."""

    def __init__(self, quiet: float = QUIET_SECONDS, check: float = CHECK_SECONDS):
        self.quiet, self.check = quiet, check
        self.trims = 0
        self._sleep = threading.Event()  # never set: the thread ends with the process
        self._thread = threading.Thread(target=self._run, name="heap-trim", daemon=True)

    def start(self) -> TrimWhenQuiet:
        if _libc() is not None:
            self._thread.start()
        return self

    def _run(self) -> None:
        libc = _libc()
        if libc is None:
            return
        busy, quiet_for, spent = True, 0.0, time.process_time()
        while not self._sleep.wait(self.check):
            now = time.process_time()
            working = now - spent > self.check * BUSY_SHARE
            spent = now
            if working:
                busy, quiet_for = True, 0.0
                continue
            quiet_for += self.check
            if busy and quiet_for >= self.quiet:
                started = time.perf_counter()
                libc.malloc_trim(0)
                spent = time.process_time()  # the trim's own time is not work
                busy = False
                self.trims += 1
                log.debug("gave the memory freed since the last quiet moment back in %.1f ms",
                          (time.perf_counter() - started) * 1000)
