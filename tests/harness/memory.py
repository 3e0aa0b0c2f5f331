"""How much memory the test process (and the server running in it) used while an action ran."""

from __future__ import annotations


def peak_rss_mib(action) -> float:
    """The peak resident memory of this process (the server runs in it) while `action` runs, in
    MiB: Linux resets the high-water mark when 5 is written to clear_refs."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    action()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/self/status")


def peak_growth_mib(action) -> float:
    """How far this process' resident memory (the server runs in it) rose above what it was
    before `action`, at its peak: the suite's earlier servers leave the process large."""
    with open("/proc/self/status") as status:
        before = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return peak_rss_mib(action) - before / 1024
