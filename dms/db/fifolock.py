"""A fair lock for dms.db's writers of one process."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Hashable


class FifoLock:
    """A re-entrant lock handed to waiters in the order they arrived (threading.Lock is unfair:
    a thread that just released it often takes it again before a waiter wakes up), and by users'
    turns: when it is let go, the first waiter working for another user than the one it was
    held for goes first, if there is one (one user's eight writers in a row made another user's
    write wait for all eight; now it waits for one). Whom a thread works for is `turn_of()`: the
    composition root wires dms.files.fairness.current_owner in (dms.db knows nothing of users'
    turns); until then every writer is the same user's, first come, first served."""

    turn_of: Callable[[], Hashable] = staticmethod(lambda: None)

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: collections.deque[tuple[int, threading.Event, Hashable]] = \
            collections.deque()
        self._owner: int | None = None
        self._depth = 0
        self._held_for: Hashable = None  # the user the holder works for

    def held_by_me(self) -> bool:
        return self._owner == threading.get_ident()

    def acquire(self, timeout: float | None = None) -> bool:
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._waiters:
                self._owner, self._depth, self._held_for = me, 1, self.turn_of()
                return True
            entry = (me, threading.Event(), self.turn_of())
            self._waiters.append(entry)
        if entry[1].wait(timeout):
            return True
        with self._mutex:
            if self._owner == me:  # handed over just as the wait timed out
                return True
            self._waiters.remove(entry)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._owner != threading.get_ident():
                raise RuntimeError("release of a FifoLock this thread does not hold")
            self._depth -= 1
            if self._depth:
                return
            if self._waiters:
                entry = next((w for w in self._waiters if w[2] != self._held_for),
                             self._waiters[0])
                self._waiters.remove(entry)
                self._owner, event, self._held_for = entry
                self._depth = 1
                event.set()
            else:
                self._owner = None
