"""How much memory a server used while an action ran: the test process (a server running in it),
or another process (a `dms serve` subprocess) by its pid."""

from __future__ import annotations


def peak_rss_mib(action) -> float:
    """The peak resident memory of this process (the server runs in it) while `action` runs, in
    MiB: Linux resets the high-water mark when 5 is written to clear_refs."""
    reset_peak("self")
    action()
    return status_mib("self", "VmHWM")


def peak_growth_mib(action) -> float:
    """How far this process' resident memory (the server runs in it) rose above what it was
    before `action`, at its peak: the suite's earlier servers leave the process large."""
    before = status_mib("self", "VmRSS")
    return peak_rss_mib(action) - before


def status_mib(pid: int | str, field: str) -> float:
    """A memory field of /proc/<pid>/status in MiB: VmRSS (resident now), VmHWM (the peak of
    VmRSS since the process started or since `reset_peak`)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def reset_peak(pid: int | str) -> None:
    """Start VmHWM again from the resident memory of now (a process of our own user)."""
    with open(f"/proc/{pid}/clear_refs", "w") as clear:
        clear.write("5")
