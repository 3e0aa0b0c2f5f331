"""`dms serve` and `dms worker` limit glibc's malloc arenas (dms.cli.heap.limit_malloc_arenas,
issue 30): eight threads allocating at once share two arenas instead of getting one each, which
under load each grew to ~16 MiB and kept it. Counted in a fresh interpreter from /proc/self/maps: an
arena of a thread is an anonymous read-write mapping aligned to glibc's 64 MiB heap size."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import sys, threading
if sys.argv[1] == "limit":
    from dms.cli.heap import limit_malloc_arenas
    limit_malloc_arenas()
held, barrier = [], threading.Barrier(8)
def work():
    barrier.wait()
    # malloc'd (not pymalloc's small blocks); 1 MB a thread, so that the eight threads' 8 MB in
    # one shared arena never need a second 64 MiB heap (counted here like another arena).
    held.append([bytearray(2000) for _ in range(500)])
    barrier.wait()  # every thread alive until all have allocated
threads = [threading.Thread(target=work) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
arenas = 0
for line in open("/proc/self/maps"):
    fields = line.split()
    start = int(fields[0].split("-")[0], 16)
    arenas += fields[1] == "rw-p" and len(fields) == 5 and start % (64 << 20) == 0
print(arenas)
"""


def thread_arenas(mode: str, arena_max: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    if arena_max is not None:
        env["MALLOC_ARENA_MAX"] = arena_max
    result = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True,
                            text=True, timeout=60, check=True)
    return int(result.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas, on Linux")
@pytest.mark.parametrize("mode, arena_max, expected", [
    ("none", None, 8),  # glibc's default: an arena for each thread that allocates at once
    ("limit", None, 1),  # dms' limit: two in all, the main one and one shared by the threads
    ("limit", "4", 3),  # an administrator's MALLOC_ARENA_MAX wins
])
def test_threads_share_two_malloc_arenas(mode, arena_max, expected):
    assert thread_arenas(mode, arena_max) == expected


TRIM_PROBE = """
import gc, re, sys, time
from dms.cli.heap import TrimWhenQuiet
def anon_mib():
    return int(re.search(r"RssAnon:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024
trimmer = TrimWhenQuiet(quiet=0.5, check=0.1).start() if sys.argv[1] == "trim" else None
time.sleep(1.5)  # the start-up's own trim, once it is quiet
held = [bytearray(2000) for _ in range(50_000)]  # a burst of work: 100 MB malloc'd
pin = bytearray(2000)  # allocated above them: the heap's top cannot shrink by itself
peak = anon_mib()
del held
gc.collect()
time.sleep(2.5)
print(peak, anon_mib(), trimmer.trims if trimmer else 0)
"""


def after_a_burst(mode: str) -> tuple[int, int, int]:
    result = subprocess.run([sys.executable, "-c", TRIM_PROBE, mode], capture_output=True,
                            text=True, timeout=60, check=True)
    peak, after, trims = (int(word) for word in result.stdout.split())
    return peak, after, trims


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc, on Linux")
def test_the_memory_of_a_burst_goes_back_once_the_process_is_quiet():
    """dms.cli.heap.TrimWhenQuiet (issue 47): after its start-up and after the burst, one trim
    each; the 100 MB freed go back to the system. Without it glibc keeps them. (On a loaded
    machine the process may wait for a core in the middle of the burst long enough to look quiet
    and trim once more: at least the two, not exactly.)"""
    peak, after, trims = after_a_burst("trim")
    assert (peak >= 100, after <= peak - 90, trims >= 2) == (True, True, True), (peak, after, trims)
    peak, after, trims = after_a_burst("none")
    assert (peak >= 100, after >= peak - 5, trims) == (True, True, 0), (peak, after)
