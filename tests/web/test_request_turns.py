"""The request threads' turns (dms.web.turns): while anybody else has a request under way, a
user's requests run at most PER_OWNER at a time and the next one waits for the turn its user's
first finished request gives back; a user alone is never held back, and is let go at once when
the others leave; a wait is bounded. Many threads of several users at once: every request runs,
no user runs more than its share while another is under way, and nothing is left counted.

In this process with threads (the turns are in-process bookkeeping, no database); one test
through a real server: a request of a user whose turns are all taken waits, another user's
does not."""

from __future__ import annotations

import threading
import time

import pytest

from dms.web.turns import TURNS, RequestTurns
from tests.harness.waiting import wait_for


class Holder:
    """A thread that takes one of `owner`'s turns and holds it until released."""

    def __init__(self, turns: RequestTurns, owner: str):
        self.entered, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run, args=(turns, owner), daemon=True)
        self.thread.start()

    def _run(self, turns: RequestTurns, owner: str) -> None:
        with turns.turn(owner):
            self.entered.set()
            self.release.wait(30)

    def end(self) -> None:
        self.release.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def holding(turns: RequestTurns, owner: str, count: int) -> list[Holder]:
    holders = [Holder(turns, owner) for _ in range(count)]
    for holder in holders:
        assert holder.entered.wait(10)
    return holders


def test_a_user_alone_is_never_held_back():
    turns = RequestTurns(per_owner=2)
    holders = holding(turns, "alice", 6)
    assert turns.under_way() == {"alice": (6, 0)}
    for holder in holders:
        holder.end()
    assert turns.under_way() == {}


def test_past_its_share_a_users_request_waits_while_another_user_is_served():
    turns = RequestTurns(per_owner=2)
    bobs = holding(turns, "bob", 1)
    alices = holding(turns, "alice", 2)
    third = Holder(turns, "alice")
    wait_for(lambda: turns.under_way()["alice"] == (2, 1), timeout=10)
    assert not third.entered.wait(0.2)
    # Bob is not held back by Alice's waiting request: his share is his own.
    bobs += holding(turns, "bob", 1)
    assert turns.under_way() == {"alice": (2, 1), "bob": (2, 0)}

    # Alice's first finished request hands its turn to her waiting one.
    alices[0].end()
    assert third.entered.wait(10)
    assert turns.under_way() == {"alice": (2, 0), "bob": (2, 0)}

    # Alone again once Bob's requests end, Alice is not held back any more: her waiting
    # requests go on at once.
    fourth, fifth = Holder(turns, "alice"), Holder(turns, "alice")
    wait_for(lambda: turns.under_way()["alice"] == (2, 2), timeout=10)
    for holder in bobs:
        holder.end()
    assert fourth.entered.wait(10) and fifth.entered.wait(10)
    assert turns.under_way() == {"alice": (4, 0)}
    for holder in (alices[1], third, fourth, fifth):
        holder.end()
    assert turns.under_way() == {}


def test_a_wait_is_bounded():
    turns = RequestTurns(per_owner=1, longest_wait=0.3)
    bob, alice = holding(turns, "bob", 1)[0], holding(turns, "alice", 1)[0]
    started = time.monotonic()
    late = Holder(turns, "alice")
    assert late.entered.wait(10)
    assert 0.25 <= time.monotonic() - started < 5
    assert turns.under_way() == {"alice": (2, 0), "bob": (1, 0)}
    for holder in (bob, alice, late):
        holder.end()
    assert turns.under_way() == {}


def test_many_threads_of_several_users_all_run_within_their_shares():
    turns = RequestTurns(per_owner=3)
    bob = holding(turns, "bob", 1)[0]  # under way from start to end: the shares always apply
    lock = threading.Lock()
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    done: list[str] = []

    def request(owner: str) -> None:
        with turns.turn(owner):
            with lock:
                running[owner] = running.get(owner, 0) + 1
                most[owner] = max(most.get(owner, 0), running[owner])
            time.sleep(0.002)
            with lock:
                running[owner] -= 1
        with lock:
            done.append(owner)

    owners = ["alice", "carol", "dave"]
    threads = [threading.Thread(target=lambda o=owner: [request(o) for _ in range(20)])
               for owner in owners for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert sorted(done) == sorted(owner for owner in owners for _ in range(12 * 20))
    assert most == {"alice": 3, "carol": 3, "dave": 3}
    assert turns.under_way() == {"bob": (1, 0)}
    bob.end()
    assert turns.under_way() == {}


@pytest.mark.socket  # waitress' threads are the point
def test_through_the_server_a_request_past_the_share_waits_for_its_turn(server, alice, bob):
    users = {"alice": alice.get("/api/users/me/").json()["data"]["id"],
             "bob": bob.get("/api/users/me/").json()["data"]["id"]}
    bobs = holding(TURNS, users["bob"], 1)
    alices = holding(TURNS, users["alice"], TURNS.per_owner)
    answers: list[int] = []
    asking = threading.Thread(target=lambda: answers.append(
        alice.get("/api/users/me/").status_code))
    asking.start()
    try:
        wait_for(lambda: TURNS.under_way().get(users["alice"]) == (TURNS.per_owner, 1),
                 timeout=10)
        assert bob.get("/api/users/me/").status_code == 200  # Bob's turn is his own
        assert answers == []
        alices[0].end()
        asking.join(10)
        assert answers == [200]
    finally:
        for holder in (*alices, *bobs):
            holder.end()
        asking.join(10)
    assert TURNS.under_way() == {}
