"""The PDF reader processes: dms's side of dms.files.pdf.child. `PdfReaders` starts up to `size`
child processes on demand, hands each call to an idle one, and bounds it: the child's address space
is capped (a page that needs more memory kills only the child), and a call that runs past its time
limit has its child killed. A child idle for IDLE_SECONDS is stopped, so an idle server holds none
(and none of pdfium's memory).

Concurrency rules: a child serves one call at a time; `session()` lends one child to a thread for
several calls (reading a document page by page keeps it open in that child). A caller waits for a
free child at most WAIT_SECONDS (then Unavailable). Nothing here touches the database.

Shared fairly (`fair=True`: the readers of requests, uploads and intake, apart from the OCR workers'
own): each user holds at most a share of the children and has at most a few calls waiting (past
them, 429), the user holding fewest goes first (dms.files.fairness), and a user whose files keep
failing at the readers' limits (memory, time: COSTLY_FAILURES) waits before they may start more, so
parallel Flate bombs of one user cannot keep the readers from everyone else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any, BinaryIO, cast

from dms.config import Config
from dms.errors import Unavailable
from dms.files.children import dms_command
from dms.files.fairness import (
    MOST_NICENESS,
    FairSlots,
    Penalties,
    Refusals,
    current_owner,
    run_behind,
)
from dms.files.pdf._protocol import HEADER, MAX_FRAME, MEMORY, TOO_SLOW, write_frame

log = logging.getLogger("dms.pdf")

IDLE_SECONDS = 120.0  # a child unused this long is stopped
WAIT_SECONDS = 60.0  # the longest a caller waits for a free child, unless it says otherwise
CHILD_COMMAND = "_pdf-reader"  # the hidden subcommand of `dms` that runs dms.files.pdf.child
# A fair pool: one user's calls waiting for a child beside the ones they hold (each holds a
# request thread; the composition root sets it from the request threads); past it, 429 at once.
WAITING_PER_USER = 1
# Failures that cost a child seconds or its whole memory: they count against their user.
COSTLY_FAILURES = frozenset({MEMORY, TOO_SLOW, "timeout"})
FAIR_REFUSALS = Refusals(
    waiting="Your other files are still being read; try again when they are done.",
    busy="Every PDF reader of this server is busy; try again in a moment.", retry_after=5)
PENALTY_MESSAGE = ("Several of your recent files needed more memory or time than this server "
                   "allows for one file; it reads your next files in {seconds} seconds.")


@dataclasses.dataclass(frozen=True)
class ReaderTimes:
    """The time limits of calls, in seconds (DMS_PDF_PAGE_SECONDS, DMS_PDF_PREVIEW_SECONDS,
    DMS_PDF_INSPECT_SECONDS; dms.files.pdf and dms.files.pdf.pages use them): reading or rendering
    one page, rendering a preview, parsing every page of an upload (at most). The defaults are the
    settings'."""
    page: float = Config.pdf_page_seconds
    preview: float = Config.pdf_preview_seconds
    inspect: float = Config.pdf_inspect_seconds


class ReaderFailed(Exception):
    """The call did not complete: `code` is dms.files.pdf.child's (or "timeout", "crashed"),
    `details` what the sentence needs."""

    def __init__(self, code: str, details: dict[str, Any] | None = None):
        super().__init__(code)
        self.code, self.details = code, details or {}


class Child:
    """One reader process, used by one thread at a time."""

    interrupted = False  # killed by PdfReaders.interrupt(): the call fails as "interrupted"
    costly_failures = 0  # calls that failed at a limit since it was lent (COSTLY_FAILURES)

    def __init__(self, memory_mb: int, times: ReaderTimes):
        self.times = times
        command = dms_command(CHILD_COMMAND, str(memory_mb))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        bufsize=0, close_fds=True, start_new_session=True)
        # Its pipes (PIPE above, unbuffered: bufsize=0), never None.
        self.stdin = cast(BinaryIO, self.process.stdin)
        self.stdout = cast(io.FileIO, self.process.stdout)
        run_behind(self.process.pid)
        self.last_used = time.monotonic()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, op: str, args: dict[str, Any], timeout: float) -> tuple[dict[str, Any], bytes]:
        try:
            write_frame(self.stdin, {"op": op, "args": args})
        except OSError:
            raise self._ended() from None
        deadline = time.monotonic() + timeout
        header = self._read(HEADER.size, deadline)
        (size,) = HEADER.unpack(header)
        if size > MAX_FRAME:
            self.kill()
            raise ReaderFailed("crashed", {"reason": "an answer larger than allowed"})
        answer = json.loads(self._read(size, deadline))
        blob = self._read(answer["blob"], deadline) if answer.get("blob") else b""
        self.last_used = time.monotonic()
        if not answer.get("ok"):
            if answer.get("code") == MEMORY:
                self.kill()  # its heap may be fragmented past use; the next call gets a new one
            raise self._failed(ReaderFailed(answer.get("code", "error"), answer.get("details")))
        return answer.get("result") or {}, blob

    def _failed(self, failure: ReaderFailed) -> ReaderFailed:
        if failure.code in COSTLY_FAILURES:
            self.costly_failures += 1
        return failure

    def _read(self, size: int, deadline: float) -> bytearray:
        """`size` bytes, read straight into one buffer (a rendered page is tens of MB)."""
        stdout = self.stdout
        buffer = bytearray(size)
        view, done = memoryview(buffer), 0
        while done < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                self.kill()
                raise self._failed(ReaderFailed("interrupted" if self.interrupted else "timeout"))
            count = stdout.readinto(view[done:])
            if not count:
                raise self._failed(self._ended())
            done += count
        return buffer

    def _ended(self) -> ReaderFailed:
        """The child died in the middle of a call: SIGABRT or SIGSEGV when pdfium's allocation
        failed under the memory limit (or it crashed on the file)."""
        status = self.process.wait()
        if self.interrupted:
            return ReaderFailed("interrupted")
        if status in (-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS, -signal.SIGKILL, 1):
            return ReaderFailed(MEMORY, {"status": status})
        return ReaderFailed("crashed", {"status": status})

    def kill(self) -> None:
        if self.alive:
            self.process.kill()
        self.process.wait()
        self.close_pipes()

    def stop(self) -> None:
        """Closing its stdin tells the child to exit; it is killed if it does not in time."""
        try:
            self.stdin.close()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.close_pipes()

    def close_pipes(self) -> None:
        for pipe in (self.stdin, self.stdout):
            try:
                pipe.close()
            except OSError:
                pass


class PdfReaders:
    """Up to `size` reader processes, each limited to `memory_mb` of address space; `times` the
    limits the callers give their calls; `fair`: shared by users' turns (see the module
    docstring), a user having at most `waiting_per_user` calls waiting."""

    def __init__(self, size: int, memory_mb: int, times: ReaderTimes = ReaderTimes(),
                 fair: bool = False, waiting_per_user: int = WAITING_PER_USER):
        self.size, self.memory_mb, self.times = size, memory_mb, times
        self._shares = FairSlots(size, waiting_per_owner=waiting_per_user,
                                 refusals=FAIR_REFUSALS) if fair else None
        self._penalties = Penalties(PENALTY_MESSAGE) if fair else None
        self._idle: list[Child] = []
        self._busy = 0
        self._lent: set[Child] = set()
        self._condition = threading.Condition()
        self._reaper: threading.Thread | None = None
        self._stopped = False

    def call(self, op: str, timeout: float, wait: float = WAIT_SECONDS,
             **args: Any) -> tuple[dict[str, Any], bytes]:
        with self.session(wait) as child:
            return child.call(op, args, timeout)

    @contextlib.contextmanager
    def session(self, wait: float = WAIT_SECONDS) -> Iterator[Child]:
        """A child for this thread's calls, waiting at most `wait` seconds for a free one (in the
        acting user's turn, in a fair pool); a dead child is not given back."""
        if self._shares is None:
            child = self._acquire(wait)
            try:
                yield child
            finally:
                self._release(child)
            return
        assert self._penalties is not None  # made with _shares
        owner = current_owner()
        self._penalties.check(owner)
        with self._shares.slot(wait, owner):
            # A user whose files failed at the limits lately has them read by a child of their
            # own, started for the call at the lowest CPU priority and stopped after: behind
            # everyone else's files, and never taking (and ending) a child others have warm.
            far_behind = self._penalties.struck(owner)
            child = self._acquire(wait, fresh=far_behind)
            if far_behind:
                run_behind(child.process.pid, MOST_NICENESS)
            try:
                yield child
            finally:
                for _ in range(child.costly_failures):
                    self._penalties.strike(owner)
                if far_behind:
                    child.kill()
                self._release(child)

    def _acquire(self, wait: float, fresh: bool = False) -> Child:
        """An idle child, or a new one within `size` busy (`fresh`: always a new one)."""
        deadline = time.monotonic() + wait
        with self._condition:
            while True:
                if self._stopped:
                    raise Unavailable("The server is stopping; try again in a moment.")
                while self._idle and not fresh:
                    child = self._idle.pop()
                    if child.alive:
                        self._busy += 1
                        self._lent.add(child)
                        return child
                    child.close_pipes()
                if self._busy < self.size:
                    self._busy += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unavailable("Every PDF reader of this server is busy; try again in a "
                                      "moment.")
                self._condition.wait(left)
        try:
            child = Child(self.memory_mb, self.times)
        except BaseException:
            with self._condition:
                self._busy -= 1
                self._condition.notify()
            raise
        with self._condition:
            self._lent.add(child)
        self._start_reaper()
        return child

    def _release(self, child: Child) -> None:
        child.costly_failures = 0
        with self._condition:
            self._busy -= 1
            self._lent.discard(child)
            if child.alive and not self._stopped:
                self._idle.append(child)
            else:
                child.kill()
            self._condition.notify()

    def _start_reaper(self) -> None:
        with self._condition:
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="dms-pdf-reaper",
                                                daemon=True)
                self._reaper.start()

    def _reap(self) -> None:
        """Stop children idle for IDLE_SECONDS; ends when the pool is stopped."""
        while True:
            with self._condition:
                self._condition.wait(IDLE_SECONDS / 4)
                if self._stopped:
                    return
                now = time.monotonic()
                old = [c for c in self._idle if now - c.last_used >= IDLE_SECONDS]
                self._idle = [c for c in self._idle if c not in old]
            for child in old:
                child.stop()

    def interrupt(self) -> None:
        """Kill the children in use now (the server is stopping): their calls fail at once as
        "interrupted", which callers treat as cancelled, not as the file's fault."""
        with self._condition:
            lent = list(self._lent)
        for child in lent:
            child.interrupted = True
            if child.alive:
                child.process.kill()

    def stop(self) -> None:
        """Stop every idle child; a busy one is killed when its caller gives it back."""
        with self._condition:
            self._stopped = True
            idle, self._idle = self._idle, []
            self._condition.notify_all()
        for child in idle:
            child.stop()
        if self._reaper is not None:
            self._reaper.join(timeout=5)
            self._reaper = None
