"""The write lock of a process (dms.db.fifolock): re-entrant, handed to waiters in the order they
came, but by users' turns: when it is let go, the first waiter of another user than the one it was
held for goes first. Ordered by events, never by sleeps."""

from __future__ import annotations

import threading

from dms.db.fifolock import FifoLock
from dms.files.fairness import acting_for, current_owner


def turn_taking() -> FifoLock:
    """A lock as the composition root wires it (dms.runtime: dms.db.take_turns_by)."""
    lock = FifoLock()
    lock.turn_of = current_owner
    return lock


def waiter(lock: FifoLock, owner, served: list, name: str) -> threading.Thread:
    def run():
        with acting_for(owner):
            assert lock.acquire(timeout=10)
            served.append(name)
            lock.release()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def queued(lock: FifoLock, count: int) -> None:
    for _ in range(1000):
        with lock._mutex:
            if len(lock._waiters) == count:
                return
        threading.Event().wait(0.01)
    raise AssertionError(f"{count} waiters never queued")


def test_another_users_writer_goes_before_the_rest_of_one_users_queue():
    lock, served = turn_taking(), []
    with acting_for("alice"):
        assert lock.acquire()
        assert lock.acquire()  # re-entrant
        lock.release()
    threads = []
    for name, owner in (("a1", "alice"), ("a2", "alice"), ("a3", "alice"), ("b1", "bob"),
                        ("c1", None)):
        threads.append(waiter(lock, owner, served, name))
        queued(lock, len(threads))
    lock.release()
    for thread in threads:
        thread.join(10)
    # Bob's after alice's held one; then alice's first (the first not bob's), then the server's
    # own (None: one more user), then alice's in the order they came.
    assert served == ["b1", "a1", "c1", "a2", "a3"]
    assert lock._owner is None and not lock._waiters


def test_one_users_waiters_are_served_in_the_order_they_came():
    lock, served = turn_taking(), []
    with acting_for("alice"):
        assert lock.acquire()
    threads = []
    for name in ("a1", "a2", "a3"):
        threads.append(waiter(lock, "alice", served, name))
        queued(lock, len(threads))
    lock.release()
    for thread in threads:
        thread.join(10)
    assert served == ["a1", "a2", "a3"]
