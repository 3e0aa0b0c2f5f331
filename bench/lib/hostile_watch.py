"""The server's process as bench/hostile.py watches it: its output drained and summarised, the
resident memory of it, its Tesseract children and its PDF reader processes, sampled in a thread."""

from __future__ import annotations

import os
import threading
from collections import Counter

SAMPLE_SECONDS = 0.1
MAX_MESSAGES = 8
MAX_NOTABLE = 100_000  # WARNING/ERROR/CRITICAL lines kept for report_since() (200 bytes each)


# -- the server's process: output and memory ------------------------------------------------------
class OutputDrain:
    """Reads the server's stdout+stderr to the end in a thread (so that the pipe never fills);
    counts lines, tracebacks and WARNING/ERROR/CRITICAL lines, keeping the first few (and, for
    report_since(), the text of the first MAX_NOTABLE)."""

    def __init__(self, stream):
        self.lines = self.tracebacks = 0
        self.levels: Counter = Counter()
        self.examples: list[str] = []
        self.notable: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines += 1
            self.tracebacks += "Traceback" in line
            level = next((name for name in ("WARNING", "ERROR", "CRITICAL")
                          if f" {name} " in line), None)
            if level:
                self.levels[level] += 1
                if len(self.examples) < MAX_MESSAGES:
                    self.examples.append(line.rstrip()[:200])
                if len(self.notable) < MAX_NOTABLE:
                    # Without its date and time: the same message counts once in report_since().
                    self.notable.append(line.rstrip().split(" ", 2)[-1][:200])

    def snapshot(self) -> tuple[int, int, Counter, int]:
        """The counts so far, for report_since()."""
        return self.lines, self.tracebacks, Counter(self.levels), len(self.notable)

    def report_since(self, mark: tuple[int, int, Counter, int]) -> None:
        """What the server wrote since snapshot() gave `mark`: counts and the commonest
        messages."""
        lines, tracebacks, levels, notable = mark
        since = Counter(self.levels)
        since.subtract(levels)
        print(f"server output meanwhile: {self.lines - lines} lines, 'Traceback' "
              f"{self.tracebacks - tracebacks}, WARNING {since['WARNING']}, ERROR "
              f"{since['ERROR']}, CRITICAL {since['CRITICAL']}")
        for message, count in Counter(self.notable[notable:]).most_common(3):
            print(f"  {count} x {message}")

    def report(self) -> None:
        self._thread.join(10)
        print(f"server output: {self.lines} lines, 'Traceback' {self.tracebacks}, WARNING "
              f"{self.levels['WARNING']}, ERROR {self.levels['ERROR']}, CRITICAL "
              f"{self.levels['CRITICAL']}")
        for example in self.examples:
            print(f"  {example}")


def rss_mib(pid: int) -> float | None:
    """VmRSS of a process in MiB, None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def tesseract_children(parent: int) -> list[int]:
    """Pids of the `tesseract` processes and PDF readers whose parent is `parent`, from
    /proc/<pid>/stat (and cmdline)."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        if ppid == parent and (name == "tesseract" or _is_pdf_reader(entry)):
            children.append(int(entry))
    return children


def _is_pdf_reader(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"_pdf-reader" in cmdline.read()
    except OSError:
        return False


class MemorySampler:
    """Every SAMPLE_SECONDS in a thread: the server's RSS and its tesseract children's RSS."""

    def __init__(self, pid: int):
        self.pid = pid
        self.server_peak = rss_mib(pid) or 0.0
        self.tesseract_peak = self.together_peak = 0.0
        self.tesseract_seen = self.most_at_once = 0
        self.server_last = self.server_peak
        self._seen: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            server = rss_mib(self.pid)
            if server is None:
                return
            children = tesseract_children(self.pid)
            sizes = [size for size in map(rss_mib, children) if size is not None]
            self._seen.update(children)
            self.server_peak = max(self.server_peak, server)
            self.tesseract_peak = max([self.tesseract_peak, *sizes])
            self.together_peak = max(self.together_peak, server + sum(sizes))
            self.most_at_once = max(self.most_at_once, len(sizes))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.tesseract_seen = len(self._seen)
        self.server_last = rss_mib(self.pid) or 0.0

    def report(self) -> None:
        print(f"peak RSS: server {self.server_peak:.1f} MiB (at the end of the phase "
              f"{self.server_last:.1f} MiB); tesseract and PDF reader children "
              f"{self.tesseract_peak:.1f} MiB (largest one; {self.tesseract_seen} seen, at most "
              f"{self.most_at_once} at once); server and children together "
              f"{self.together_peak:.1f} MiB")
