"""The write lock's probe, loaded into `dms serve` by `bench.load --profile-lock` (this directory
first on the server's PYTHONPATH, where Python imports `sitecustomize` at start-up): how long the
writers wait for dms.db's write lock, how long they hold it and wait for the group commit's
fsync, written every WINDOW_SECONDS as one JSON line to the file BENCH_LOCK_LOG names. It wraps
the lock's acquire and release on the instance and GroupSync.wait on the class, once dms.db has
been imported; nothing of dms is changed on disk. Without BENCH_LOCK_LOG it does nothing."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import defaultdict

WINDOW_SECONDS = 10.0


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000


def _kind(name: str) -> str:
    """Whose hold: a request's (waitress' threads), the OCR workers', or another thread's."""
    if name.startswith("waitress"):
        return "request"
    return "worker" if "worker" in name.lower() else "other"


def _probe(path: str) -> None:
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
            held_since.at = now
            with mutex:
                samples["wait"].append(now - started)
        return taken

    def timed_release():
        if lock._depth == 1:
            with mutex:
                samples["hold " + _kind(threading.current_thread().name)].append(
                    time.perf_counter() - held_since.at)
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
            time.sleep(WINDOW_SECONDS)
            with mutex:
                taken = {name: values for name, values in samples.items() if values}
                samples.clear()
            log.write(json.dumps({"at": time.time(), **{
                name: {"n": len(values), "sum_s": round(sum(values), 3),
                       "p50_ms": round(_percentile(values, 0.5), 2),
                       "p99_ms": round(_percentile(values, 0.99), 2)}
                for name, values in taken.items()}}) + "\n")


if os.environ.get("BENCH_LOCK_LOG"):
    threading.Thread(target=_probe, args=(os.environ["BENCH_LOCK_LOG"],), name="bench-lock-probe",
                     daemon=True).start()
