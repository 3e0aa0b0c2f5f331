"""What an import of another system's library (dms.intake.paperless, dms.intake.papermerge) says
at the end, and its progress line on a terminal."""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from dms.text import escape_controls

PROGRESS_EVERY_SECONDS = 0.2


@dataclass
class Report:
    """What an import did: counts by kind, documents skipped with the reason, parts lost, what
    was left out."""
    source: str
    version: str | None = None
    counts: Counter = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (document, reason)
    not_imported: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)  # a part lost: a document's metadata, ...
    left_out: list[str] = field(default_factory=list)  # reported, as workflows are
    readable: bool = True

    @property
    def exit_status(self) -> int:
        if not self.readable:
            return 2
        return 1 if self.skipped or self.problems else 0

    def lines(self, dry_run: bool) -> list[str]:
        would = "would be " if dry_run else ""
        lines = [f"{self.source} of release {self.version or 'unknown'}:"]
        for kind in ("users", "groups", "folders", "documents", "versions", "already there",
                     "notes", "trash", "grants", "tags", "correspondents", "document_types",
                     "custom_fields", "saved_searches"):
            if self.counts[kind]:
                label = kind.replace("_", " ")
                lines.append(f"  {label}: {self.counts[kind]:,} {would}imported"
                             if kind != "already there" else
                             f"  documents already there: {self.counts[kind]:,}")
        lines += [f"  skipped {escape_controls(name)}: {reason}" for name, reason in self.skipped]
        lines += [f"  not imported: {count:,} {kind}" for kind, count in
                  sorted(self.not_imported.items())]
        lines += [f"  {escape_controls(line)}" for line in self.problems + self.left_out]
        return lines


class Progress:
    """One line on a terminal, rewritten: documents, rate, time left; silent elsewhere."""

    def __init__(self, total: int, stream: TextIO | None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() and total > 0
        self.total, self.done = total, 0
        self.started = self.shown = time.monotonic()

    def advance(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.shown >= PROGRESS_EVERY_SECONDS or self.done == self.total):
            self.shown = now
            rate = self.done / max(now - self.started, 1e-6)
            left = int((self.total - self.done) / rate) if rate else 0
            self.stream.write(f"\r{self.done:,}/{self.total:,} documents  {rate:.0f}/s  "
                              f"{left // 60}:{left % 60:02d} left ")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\n")
            self.stream.flush()
