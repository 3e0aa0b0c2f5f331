"""CPU time on a shared machine: how busy all cores were between two moments, how much of that
this process used, and how much processes that are not the benchmark's used (bench/scaleout.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # without guest time, which is counted in user already
    return total - idle, total


# The roots of the processes this benchmark runs: itself (its dms processes, their Tesseract
# processes and Redis are its descendants) and PostgreSQL's postmaster (pg_ctl detaches it).
OWN_ROOTS = {os.getpid()}


def tree_cpu_ticks(roots: set[int]) -> int:
    """CPU clock ticks (user + system, with those of waited-for children) of the processes
    `roots` and all their descendants now alive."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, stack, seen = 0, [pid for pid in roots if pid in ticks], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += ticks[pid]
        stack += children.get(pid, [])
    return total


class CpuMeter:
    """Between start and stop, as shares of all cores' time: how busy the machine was, how much
    of that this process (the clients) used, and how much processes that are not this
    benchmark's used (other load on the shared machine, and time the hypervisor stole)."""

    def __init__(self):
        self.busy0, self.total0 = machine_cpu()
        self.own0 = sum(os.times()[:2])
        self.tree0 = tree_cpu_ticks(OWN_ROOTS)
        self.wall0 = time.monotonic()

    def stop(self) -> dict:
        busy, total = machine_cpu()
        tree = tree_cpu_ticks(OWN_ROOTS)
        wall = time.monotonic() - self.wall0
        cores = os.cpu_count() or 1
        span = max(1, total - self.total0)
        return {"busy": (busy - self.busy0) / span * 100,
                "client": (sum(os.times()[:2]) - self.own0) / max(wall, 1e-9) / cores * 100,
                "other": max(0.0, (busy - self.busy0) - (tree - self.tree0)) / span * 100}
