"""Copies of objects on the node's disk while they are read (api.md §19): OCR, previews and page
operations need a local file, and a document's pages are read one after the other — a preview
each, a slice of OCR each — so a copy is kept for a few minutes after its last use, at most
CACHE_BYTES of them, instead of fetching the whole object again for every page. A copy in use is
never removed; the others go oldest first. Only this process's copies are counted and removed
here (a command run beside the server has its own); the sweep removes any older than a day."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dms.files.storage.localspace import entries, remove_if_old

CACHE_BYTES = 512 * 1024 * 1024
CACHE_SECONDS = 300
STALE_SECONDS = 24 * 3600  # a copy left by a process that ended


@dataclass
class Copy:
    path: Path
    size: int
    users: int = 0
    used: float = 0.0  # monotonic


class FetchCache:
    def __init__(self, folder: Path, budget: int = CACHE_BYTES, keep: float = CACHE_SECONDS):
        self.folder, self.budget, self.keep = folder, budget, keep
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._copies: OrderedDict[str, Copy] = OrderedDict()

    @contextlib.contextmanager
    def copy_of(self, name: str, fetch: Callable[[Path], None]) -> Iterator[Path]:
        """The local copy named `name` (an object's SHA-256), made by `fetch(path)` when there
        is none; kept while the block runs."""
        copy = self._take(name)
        if copy is None:
            copy = self._made(name, fetch)
        try:
            yield copy.path
        finally:
            with self._lock:
                copy.users -= 1
                copy.used = time.monotonic()
                self._trim()

    def _take(self, name: str) -> Copy | None:
        with self._lock:
            copy = self._copies.get(name)
            if copy is None or not copy.path.is_file():
                return None
            copy.users += 1
            self._copies.move_to_end(name)
            return copy

    def _made(self, name: str, fetch: Callable[[Path], None]) -> Copy:
        descriptor, temporary = tempfile.mkstemp(dir=self.folder, prefix=".fetching-")
        os.close(descriptor)
        try:
            fetch(Path(temporary))
            target = self.folder / f"{name}-{os.getpid()}"
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        with self._lock:
            known = self._copies.get(name)
            if known is not None and known.path == target:
                known.users += 1
                known.size = target.stat().st_size
                return known
            copy = self._copies[name] = Copy(target, target.stat().st_size, users=1)
            return copy

    def _trim(self) -> None:
        """Drop unused copies past the budget or the time kept, oldest first (lock held)."""
        now = time.monotonic()
        total = sum(copy.size for copy in self._copies.values())
        for name, copy in list(self._copies.items()):
            if copy.users:
                continue
            if total <= self.budget and now - copy.used < self.keep:
                continue
            copy.path.unlink(missing_ok=True)
            total -= copy.size
            del self._copies[name]

    def sweep(self) -> None:
        """This process's copies unused for the time kept, and any copy a day old (a process
        that ended left it)."""
        with self._lock:
            self._trim()
            mine = {copy.path for copy in self._copies.values()}
        cutoff = time.time() - STALE_SECONDS
        for entry in entries(self.folder):
            if entry not in mine:
                remove_if_old(entry, cutoff)
