"""A fair lock for dms.db's writers of one process."""

from __future__ import annotations

import collections
import threading


class FifoLock:
    """A re-entrant lock handed to waiters in the order they arrived (threading.Lock is unfair:
    a thread that just released it often takes it again before a waiter wakes up)."""

    def __init__(self):
        self._mutex = threading.Lock()
        self._waiters: collections.deque[tuple[int, threading.Event]] = collections.deque()
        self._owner: int | None = None
        self._depth = 0

    def held_by_me(self) -> bool:
        return self._owner == threading.get_ident()

    def acquire(self, timeout: float | None = None) -> bool:
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._waiters:
                self._owner, self._depth = me, 1
                return True
            entry = (me, threading.Event())
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
                owner, event = self._waiters.popleft()
                self._owner, self._depth = owner, 1
                event.set()
            else:
                self._owner = None
