"""The background loop (dms.files.loop): rounds until stopped, waits a wake-up ends, rests it does
not, and a stop that wakes the thread and joins it. Threads are ordered with events, never with
sleeps or clocks: a wait that should end early is given a minute, so a failure shows as False
(or a hung test), never as a slow pass."""

from __future__ import annotations

import threading

from dms.files.loop import BackgroundLoop

MINUTE = 60.0


def alive(name: str) -> bool:
    return any(thread.name == name for thread in threading.enumerate())


def test_rounds_run_in_a_daemon_thread_of_its_name_until_stopped():
    rounds: list[str] = []

    def body():
        thread = threading.current_thread()
        rounds.append(f"{thread.name} daemon={thread.daemon}")
        if len(rounds) == 3:
            loop.stop_soon()  # the round at hand ends, no other starts

    loop = BackgroundLoop("test-rounds", body)
    loop.start()
    loop.join(timeout=MINUTE)
    assert rounds == ["test-rounds daemon=True"] * 3
    assert not alive("test-rounds")
    assert loop.stopping


def test_stop_wakes_a_round_that_waits_and_joins_its_thread():
    waiting, woken = threading.Event(), []

    def body():
        waiting.set()
        woken.append(loop.wait(MINUTE))

    loop = BackgroundLoop("test-stop", body)
    loop.start()
    assert waiting.wait(MINUTE)
    loop.stop()
    assert woken == [True]
    assert not alive("test-stop")


def test_stop_ends_a_rest_at_once():
    resting, rested = threading.Event(), []

    def body():
        resting.set()
        rested.append(loop.rest(MINUTE))

    loop = BackgroundLoop("test-rest", body)
    loop.start()
    assert resting.wait(MINUTE)
    loop.stop(timeout=MINUTE)
    assert rested == [True]
    assert not alive("test-rest")


def test_a_wake_up_ends_one_wait_and_is_used_up():
    loop = BackgroundLoop("test-wake", lambda: None)  # never started: the waits run here
    loop.wake()
    assert loop.wait(MINUTE) is True
    assert loop.wait(0) is False  # used up


def test_a_wake_up_from_another_thread_ends_a_wait():
    loop = BackgroundLoop("test-other", lambda: None)
    waker = threading.Timer(0.01, loop.wake)
    waker.start()
    assert loop.wait(MINUTE) is True
    waker.join()


def test_a_wake_up_does_not_end_a_rest():
    loop = BackgroundLoop("test-gap", lambda: None)
    loop.wake()
    assert loop.rest(0.01) is False  # not stopping: the gap was kept
    assert loop.wait(0) is True  # and the wake-up is still there for the next wait


def test_stopping_until_the_next_start_and_a_loop_starts_again():
    rounds = []

    def body():
        rounds.append(1)
        loop.stop_soon()

    loop = BackgroundLoop("test-again", body)
    assert not loop.stopping
    loop.stop(timeout=MINUTE)  # before any start: nothing to join
    assert loop.stopping
    for _ in range(2):
        loop.start()
        loop.join(timeout=MINUTE)
    assert rounds == [1, 1]
    assert not alive("test-again")
