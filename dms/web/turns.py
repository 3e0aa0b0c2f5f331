"""Request threads shared by users' turns: one user's flood of requests may not slow everyone.

Python runs one thread at a time, handing the interpreter from thread to thread in slices. A
user with sixteen requests under way (a script's sixteen connections, each refused at once with
a 429 and asking again) had sixteen threads in that rotation against another user's four, and
the other user's requests waited for most of the slices: round 4's dry runs raised another
user's p99 from ~40 to 110-140 ms while their matching ran in child processes.

So while anybody else has a request under way (or waiting), a user's requests run at most
PER_OWNER at a time; the next one waits, its thread blocked (not in the rotation), and is handed
the turn its user's first finished request gives back. A user alone is never held back. A wait
lasts at most LONGEST_WAIT_SECONDS, then the request runs anyway: turns order the work, they
never refuse it (refusals are the pools' own, dms.files.fairness).

Whom a request is for: the caller's user id once authenticated; anonymous callers (logins,
share links) are one owner, None, together. The turn covers the handler, not the answer's
transfer: an event stream or a download sends its body after its turn has ended.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Hashable, Iterator

PER_OWNER = 4  # half of the server's eight request threads (DMS_THREADS' default)
LONGEST_WAIT_SECONDS = 30.0


class RequestTurns:
    """The turns of one process' request threads (see the module docstring)."""

    def __init__(self, per_owner: int = PER_OWNER,
                 longest_wait: float = LONGEST_WAIT_SECONDS):
        self.per_owner = per_owner
        self.longest_wait = longest_wait
        self._lock = threading.Lock()
        self._running: dict[Hashable, int] = {}
        self._waiting: dict[Hashable, deque[threading.Event]] = {}

    @contextlib.contextmanager
    def turn(self, owner: Hashable) -> Iterator[None]:
        """Run the block as one of `owner`'s requests, waiting for its turn if it must."""
        self._enter(owner)
        try:
            yield
        finally:
            self._leave(owner)

    def under_way(self) -> dict[Hashable, tuple[int, int]]:
        """{owner: (requests running, requests waiting)} now (for tests and probes)."""
        with self._lock:
            owners = self._running.keys() | self._waiting.keys()
            return {owner: (self._running.get(owner, 0), len(self._waiting.get(owner, ())))
                    for owner in owners}

    def _enter(self, owner: Hashable) -> None:
        with self._lock:
            running = self._running.get(owner, 0)
            if running < self.per_owner or not self._others(owner):
                self._running[owner] = running + 1
                return
            turn = threading.Event()
            self._waiting.setdefault(owner, deque()).append(turn)
        if turn.wait(self.longest_wait):
            return  # handed a turn: counted as running by whoever handed it
        with self._lock:
            if turn.is_set():
                return  # handed one just as the wait ended
            self._forget(owner, turn)
            self._running[owner] = self._running.get(owner, 0) + 1

    def _leave(self, owner: Hashable) -> None:
        with self._lock:
            waiting = self._waiting.get(owner)
            if waiting:  # the turn goes to the user's next request, still counted as running
                self._forget(owner, waiting[0]).set()
                return
            left = self._running[owner] - 1
            if left:
                self._running[owner] = left
                return
            del self._running[owner]
            # With this user gone, a user left alone is no longer held back.
            active = self._running.keys() | self._waiting.keys()
            if len(active) == 1:
                (alone,) = active
                for turn in self._waiting.pop(alone, ()):
                    self._running[alone] = self._running.get(alone, 0) + 1
                    turn.set()

    def _others(self, owner: Hashable) -> bool:
        """Has anybody but `owner` a request running or waiting?"""
        return any(other != owner for other in self._running) or \
            any(other != owner for other in self._waiting)

    def _forget(self, owner: Hashable, turn: threading.Event) -> threading.Event:
        waiting = self._waiting[owner]
        waiting.remove(turn)
        if not waiting:
            del self._waiting[owner]
        return turn


TURNS = RequestTurns()  # this process' (both APIs' handlers take their turns here)
