"""Probes loaded into `dms serve` by bench/load.py (this directory first on the server's
PYTHONPATH, where Python imports `sitecustomize` at start-up); nothing of dms is changed on disk.
Each writes one JSON line per window to the file its variable names, and does nothing without it:

- BENCH_LOCK_LOG (`--profile-lock`): dms.db's write lock, every LOCK_WINDOW_SECONDS — how long the
  writers wait for it, how long they hold it and wait for the group commit's fsync; and of a
  hold, the holder's time on a core and in the kernel's run queue (/proc/thread-self/schedstat:
  runnable, waiting for a core); the rest it was blocked (on the interpreter's lock, or I/O). It
  wraps the lock's acquire and release on the instance and GroupSync.wait on the class, once
  dms.db is imported; reading schedstat adds ~10 µs to each end of a hold.
- BENCH_MEMORY_LOG (`--profile-memory`): what the process' memory is made of, every
  MEMORY_WINDOW_SECONDS — RSS, its anonymous part, glibc's main heap and the other anonymous
  mappings (thread arenas, stacks, large blocks), malloc's bytes in use and free (mallinfo2),
  SQLite's own allocations (sqlite3_status64), the interpreter's allocated blocks and threads."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from collections import defaultdict

LOCK_WINDOW_SECONDS = 10.0
MEMORY_WINDOW_SECONDS = 5.0
MIB = 1024 * 1024


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000


def _kind(name: str) -> str:
    """Whose hold: a request's (waitress' threads), the OCR workers', or another thread's."""
    if name.startswith("waitress"):
        return "request"
    return "worker" if "worker" in name.lower() else "other"


# -- the write lock --------------------------------------------------------------------------------
def _schedstat() -> tuple[float, float]:
    """Seconds this thread has run on a core and waited in a run queue (Linux' schedstat)."""
    with open("/proc/thread-self/schedstat") as stat:
        ran, queued, _ = stat.read().split()
    return int(ran) / 1e9, int(queued) / 1e9


def _lock_probe(path: str) -> None:
    while "dms.db.groupsync" not in sys.modules or not hasattr(
            sys.modules.get("dms.db.transactions"), "WRITE_LOCK"):
        time.sleep(0.05)
    lock = sys.modules["dms.db.transactions"].WRITE_LOCK
    groupsync = sys.modules["dms.db.groupsync"].GroupSync
    samples: dict[str, list[float]] = defaultdict(list)
    mutex, held_since = threading.Lock(), threading.local()
    acquire, release, wait = lock.acquire, lock.release, groupsync.wait

    def timed_acquire(timeout=None):
        started = time.perf_counter()
        taken = acquire(timeout)
        if taken and lock._depth == 1:  # the outermost acquire: the writer's turn
            now = time.perf_counter()
            held_since.at, held_since.sched = now, _schedstat()
            with mutex:
                samples["wait"].append(now - started)
        return taken

    def timed_release():
        if lock._depth == 1:
            kind = _kind(threading.current_thread().name)
            ran, queued = _schedstat()
            with mutex:
                samples["hold " + kind].append(time.perf_counter() - held_since.at)
                samples["ran " + kind].append(ran - held_since.sched[0])
                samples["queued " + kind].append(queued - held_since.sched[1])
        release()

    def timed_wait(self, ticket):
        started = time.perf_counter()
        try:
            wait(self, ticket)
        finally:
            with mutex:
                samples["fsync wait"].append(time.perf_counter() - started)

    lock.acquire, lock.release = timed_acquire, timed_release
    groupsync.wait = timed_wait
    with open(path, "a", buffering=1) as log:
        while True:
            time.sleep(LOCK_WINDOW_SECONDS)
            with mutex:
                taken = {name: values for name, values in samples.items() if values}
                samples.clear()
            log.write(json.dumps({"at": time.time(), **{
                name: {"n": len(values), "sum_s": round(sum(values), 3),
                       "p50_ms": round(_percentile(values, 0.5), 2),
                       "p99_ms": round(_percentile(values, 0.99), 2)}
                for name, values in taken.items()}}) + "\n")


# -- memory ----------------------------------------------------------------------------------------
class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _mappings() -> dict[str, float]:
    """MiB of RSS: all, anonymous, glibc's main heap ([heap]), other anonymous mappings (thread
    arenas, stacks, mmapped blocks), file-backed."""
    totals = {"rss": 0.0, "anon": 0.0, "heap": 0.0, "other anon": 0.0}
    name = ""
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            first = line.split(None, 1)[0]
            if not first.endswith(":"):  # a mapping's header: address perms offset dev inode name
                fields = line.split()
                name = fields[5] if len(fields) > 5 else ""
            elif first == "Rss:":
                kib = int(line.split()[1]) / 1024
                totals["rss"] += kib
                if name == "[heap]":
                    totals["heap"] += kib
            elif first == "Anonymous:":
                kib = int(line.split()[1]) / 1024
                totals["anon"] += kib
                if name != "[heap]" and not name.startswith("/"):
                    totals["other anon"] += kib
    return totals


def _sqlite_library():
    """libsqlite3 as the sqlite3 module loaded it (its status counters are process-wide)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libsqlite3" in line:
                library = ctypes.CDLL(line.split()[-1])
                library.sqlite3_status64.argtypes = [
                    ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                    ctypes.c_int]
                return library
    return None


def _memory_probe(path: str) -> None:
    while "sqlite3" not in sys.modules:
        time.sleep(0.05)
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    sqlite = _sqlite_library()
    with open(path, "a", buffering=1) as log:
        while True:
            sample = {"at": time.time(), **{key: round(value, 2)
                                            for key, value in _mappings().items()}}
            info = libc.mallinfo2()
            sample["malloc in use"] = round((info.uordblks + info.hblkhd) / MIB, 2)
            sample["malloc free"] = round(info.fordblks / MIB, 2)
            if sqlite is not None:
                current, highest = ctypes.c_int64(), ctypes.c_int64()
                sqlite.sqlite3_status64(0, ctypes.byref(current), ctypes.byref(highest), 0)
                sample["sqlite"] = round(current.value / MIB, 2)  # SQLITE_STATUS_MEMORY_USED
            sample["python blocks"] = sys.getallocatedblocks()
            sample["threads"] = threading.active_count()
            log.write(json.dumps(sample) + "\n")
            time.sleep(MEMORY_WINDOW_SECONDS)


if os.environ.get("BENCH_LOCK_LOG"):
    threading.Thread(target=_lock_probe, args=(os.environ["BENCH_LOCK_LOG"],),
                     name="bench-lock-probe", daemon=True).start()
if os.environ.get("BENCH_MEMORY_LOG"):
    threading.Thread(target=_memory_probe, args=(os.environ["BENCH_MEMORY_LOG"],),
                     name="bench-memory-probe", daemon=True).start()
