"""Fair shares of pools (dms.files.fairness): a user holds at most their share, the user holding
fewest goes first, and a user's waiting calls are bounded. Threads are ordered with events, never
with sleeps or clocks."""

from __future__ import annotations

import os
import subprocess
import threading
from collections import deque

import pytest

from dms.errors import Throttled, Unavailable
from dms.files.fairness import (
    FairExecutor,
    FairSlots,
    Penalties,
    Refusals,
    acting_for,
    current_owner,
    run_behind,
    serving,
    share_of,
    yield_to_requests,
)


def test_share_of_a_pool_is_half_and_at_least_one():
    assert [share_of(n) for n in (1, 2, 3, 4, 5, 8)] == [1, 1, 1, 2, 2, 4]


def test_acting_for_sets_and_restores_the_owner():
    assert current_owner() is None
    with acting_for("alice"):
        assert current_owner() == "alice"
        with acting_for("bob"):
            assert current_owner() == "bob"
        assert current_owner() == "alice"
    assert current_owner() is None


def hold(slots: FairSlots, owner: str, wait: float = 10):
    """A thread that takes a place for `owner` and keeps it until released; returns (thread,
    taken event, release event, outcome list)."""
    taken, release, outcome = threading.Event(), threading.Event(), []

    def run():
        try:
            with slots.slot(wait, owner):
                taken.set()
                release.wait(10)
            outcome.append("done")
        except (Throttled, Unavailable) as error:
            outcome.append(type(error).__name__)
            taken.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, taken, release, outcome


def wait_until(condition, message: str):
    for _ in range(1000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(message)


def test_one_owner_takes_no_more_than_its_share_and_the_other_gets_the_rest():
    slots = FairSlots(size=2, per_owner=1, waiting_per_owner=1)
    a1, a1_taken, a1_release, a1_outcome = hold(slots, "alice")
    assert a1_taken.wait(5)
    a2, a2_taken, a2_release, a2_outcome = hold(slots, "alice")
    wait_until(lambda: slots._waiting, "alice's second call did not wait")
    assert not a2_taken.is_set()  # a place is free, but not for alice
    b1, b1_taken, b1_release, b1_outcome = hold(slots, "bob")
    assert b1_taken.wait(5) and b1_outcome == []
    assert slots.held() == {"alice": 1, "bob": 1}
    # A third call of alice's waits no more: she has one waiting already.
    with pytest.raises(Throttled) as refused:
        with slots.slot(5, "alice"):
            pass
    assert refused.value.retry_after == 5
    a1_release.set()
    assert a2_taken.wait(5)
    for release in (a2_release, b1_release):
        release.set()
    for thread in (a1, a2, b1):
        thread.join(5)
    assert a1_outcome == a2_outcome == b1_outcome == ["done"]
    assert slots.held() == {}


def test_a_freed_place_goes_to_the_owner_holding_fewest_before_an_earlier_waiter():
    slots = FairSlots(size=2, per_owner=2, waiting_per_owner=5)
    a1, _, a1_release, _ = hold(slots, "alice")
    a2, _, a2_release, _ = hold(slots, "alice")
    wait_until(lambda: slots.held() == {"alice": 2}, "alice did not take both places")
    a3, a3_taken, a3_release, _ = hold(slots, "alice")
    wait_until(lambda: len(slots._waiting) == 1, "alice's third call did not wait")
    b1, b1_taken, b1_release, _ = hold(slots, "bob")
    wait_until(lambda: len(slots._waiting) == 2, "bob's call did not wait")
    a1_release.set()  # alice (holding 1 now) came first, but bob holds none: bob's turn
    assert b1_taken.wait(5)
    assert not a3_taken.is_set()
    a2_release.set()
    assert a3_taken.wait(5)
    for release in (a3_release, b1_release):
        release.set()
    for thread in (a1, a2, a3, b1):
        thread.join(5)
    assert slots.held() == {}


def test_a_call_that_finds_no_place_in_time_is_unavailable_and_holds_nothing():
    slots = FairSlots(size=1, per_owner=1)
    a1, _, a1_release, _ = hold(slots, "alice")
    wait_until(lambda: slots.held() == {"alice": 1}, "alice did not take the place")
    with pytest.raises(Unavailable):
        with slots.slot(0.05, "bob"):
            pass
    assert slots.held() == {"alice": 1} and not slots._waiting
    a1_release.set()
    a1.join(5)
    assert slots.held() == {}


def test_the_executor_runs_each_owner_within_its_share_and_the_others_in_turn():
    pool = FairExecutor(threads=2, name="test-fair", per_owner=1)
    gates = {name: threading.Event() for name in ("a1", "a2", "a3", "b1")}
    started: list[tuple[str, object]] = []
    lock = threading.Lock()

    def work(name):
        with lock:
            started.append((name, current_owner()))
        gates[name].wait(10)
        return name

    futures = [pool.submit("alice", work, name) for name in ("a1", "a2", "a3")]
    wait_until(lambda: len(started) == 1, "alice's first task did not start")
    futures.append(pool.submit("bob", work, "b1"))
    wait_until(lambda: len(started) == 2, "bob's task did not start beside alice's")
    assert started == [("a1", "alice"), ("b1", "bob")]  # a2 waits: alice is at her share
    gates["b1"].set()
    assert futures[3].result(5) == "b1"
    assert pool.running() == {"alice": 1}  # the free thread has nothing alice may run
    gates["a1"].set()
    gates["a2"].set()
    gates["a3"].set()
    assert [f.result(5) for f in futures[:3]] == ["a1", "a2", "a3"]
    assert [name for name, _ in started] == ["a1", "b1", "a2", "a3"]
    pool.shutdown()


def test_the_executor_hands_errors_to_the_future_and_drops_queued_work_on_cancel():
    pool = FairExecutor(threads=1, name="test-fair", per_owner=1)
    gate = threading.Event()

    def fail():
        raise ValueError("the task's own error")

    first = pool.submit("alice", gate.wait, 10)
    failing = pool.submit("bob", fail)
    dropped = pool.submit("alice", lambda: "never")
    wait_until(lambda: pool.running() == {"alice": 1}, "the first task did not start")
    gate.set()
    with pytest.raises(ValueError, match="the task's own error"):
        failing.result(5)
    assert first.result(5) is True
    assert dropped.result(5) == "never"
    blocker = threading.Event()
    pool.submit("carol", blocker.wait, 10)
    later = pool.submit("carol", lambda: "dropped")
    wait_until(lambda: pool.running() == {"carol": 1}, "carol's task did not start")
    closing = threading.Thread(target=pool.shutdown, kwargs={"cancel_futures": True})
    closing.start()
    wait_until(lambda: pool.queued() == 0, "the queued task was not dropped")
    blocker.set()
    closing.join(5)
    assert later.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit("alice", lambda: None)


def test_penalties_close_the_door_after_the_free_strikes_twice_as_long_each_time():
    now = [1000.0]
    penalties = Penalties("Wait {seconds} s.", free=2, window=100, first=10, longest=25,
                          clock=lambda: now[0])
    penalties.strike("alice")
    penalties.strike("alice")
    penalties.check("alice")  # two are free
    penalties.strike("alice")
    with pytest.raises(Throttled) as refused:
        penalties.check("alice")
    assert (refused.value.message, refused.value.retry_after) == ("Wait 10 s.", 10)
    penalties.check("bob")
    penalties.strike(None)
    penalties.check(None)  # the server's own work is never held back
    now[0] += 10
    penalties.check("alice")
    penalties.strike("alice")  # the fourth in the window: 20 s
    with pytest.raises(Throttled) as refused:
        penalties.check("alice")
    assert refused.value.retry_after == 20
    penalties.strike("alice")  # the fifth: 40 s, at most 25
    with pytest.raises(Throttled) as refused:
        penalties.check("alice")
    assert refused.value.retry_after == 25
    now[0] += 200  # every strike has left the window
    penalties.check("alice")
    penalties.strike("alice")
    penalties.check("alice")
    assert penalties._strikes == {"alice": deque([1210.0])} and penalties._closed_until == {}


def test_a_pool_nobody_waits_for_refuses_at_once_saying_whose_work_fills_it():
    refusals = Refusals(waiting="yours", busy="others'", retry_after=7)
    slots = FairSlots(size=2, per_owner=1, waiting_per_owner=0, refusals=refusals)
    a1, _, a1_release, _ = hold(slots, "alice")
    wait_until(lambda: slots.held() == {"alice": 1}, "alice did not take a place")
    with pytest.raises(Throttled) as refused:
        with slots.slot(5, "alice"):
            pass
    assert (refused.value.message, refused.value.retry_after) == ("yours", 7)
    b1, _, b1_release, _ = hold(slots, "bob")
    wait_until(lambda: slots.held() == {"alice": 1, "bob": 1}, "bob did not take a place")
    with pytest.raises(Throttled) as refused:
        with slots.slot(5, "carol"):
            pass
    assert refused.value.message == "others'"
    assert slots.held() == {"alice": 1, "bob": 1} and not slots._waiting
    a1_release.set()
    b1_release.set()
    a1.join(5)
    b1.join(5)


def test_background_work_gives_way_while_requests_are_served_and_not_to_its_own():
    in_request, leave = threading.Event(), threading.Event()

    def request():
        with serving():
            in_request.set()
            leave.wait(10)

    yield_to_requests(longest=30)  # nothing served: returns at once
    served = threading.Thread(target=request)
    served.start()
    assert in_request.wait(5)
    waited = threading.Thread(target=yield_to_requests, kwargs={"longest": 30})
    waited.start()
    waited.join(0.3)
    assert waited.is_alive()  # gives way while the request is served (up to 30 s)
    leave.set()
    served.join(5)
    waited.join(5)
    assert not waited.is_alive()  # and goes on as soon as it ends
    with serving():  # work of a request itself (a dry run) does not wait for its own request
        yield_to_requests(longest=30)


def test_a_child_doing_heavy_work_runs_behind_the_server():
    child = subprocess.Popen(["sleep", "30"])
    try:
        run_behind(child.pid)
        own = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(19, own + 10)
    finally:
        child.kill()
        child.wait()
    run_behind(child.pid)  # gone already: nothing happens


def test_a_call_following_its_clients_last_at_once_waits_instead_of_being_refused():
    """The client of a held place sends its next call the moment its last one ends, before the
    waiter the place went to has taken it: its own calls in all are within the bound."""
    slots = FairSlots(size=1, per_owner=1, waiting_per_owner=1)
    slots.acquire("alice", 5)
    waiter = threading.Thread(target=lambda: (slots.acquire("alice", 5), slots.release("alice")))
    waiter.start()
    wait_until(lambda: slots._waiting, "the second call did not wait")
    with slots._condition:  # the waiter cannot wake before the next call is made
        slots.release("alice")
        assert slots._waiting and slots.held() == {}  # the place freed, not yet taken
        slots.acquire("alice", 5)  # waits its turn (the condition's lock is re-entrant)
    slots.release("alice")
    waiter.join(5)
    assert not waiter.is_alive() and slots.held() == {} and not slots._waiting
