"""The request threads served by turns (dms/web/turns.py): the caller with the fewest requests
being served goes first, and a user answered 429 waits its Retry-After (at most a second) in the
queue, then asks again one request at a time. The queue alone, a real waitress server running a
small application, and a real dms server."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest
import requests

from dms.web import turns
from dms.web.turns import HOLD_SECONDS, TurnQueue, serving_user, with_refusals_held
from tests.harness.client import assert_error
from tests.harness.webhooks import EventStream
from tests.web.test_server_limits import tiny  # noqa: F401 (fixture)


def channel(authorization: str | None = None, address: str = "10.0.0.1"):
    """What the queue reads of a waitress connection: its first request's headers, its peer."""
    headers = {"AUTHORIZATION": authorization} if authorization else {}
    return SimpleNamespace(requests=[SimpleNamespace(headers=headers)], addr=(address, 40000))


def served(queue: TurnQueue, ticket, now: float, user=None, refused_for=None) -> bool:
    """The ticket's request answered for `user`; with a 429 of Retry-After `refused_for`."""
    if user is not None:
        queue.serving(ticket, user)
    if refused_for is not None:
        queue.refused(ticket, refused_for, now)
    return queue.finished(ticket, now)


def test_the_caller_with_fewer_requests_served_goes_first_and_alone_a_caller_takes_all():
    queue = TurnQueue()
    alice = [channel("Token alice") for _ in range(3)]
    bob = channel("Token bob")
    for each in [*alice, bob]:
        queue.append(each)
    assert len(queue) == 4
    assert [queue.take(0).channel for _ in range(4)] == [alice[0], bob, alice[1], alice[2]]
    assert queue.take(0) is None and len(queue) == 0
    assert queue.running == {("token", hash(("token", "alice"))): 3,
                             ("token", hash(("token", "bob"))): 1}


def test_beside_other_callers_a_caller_has_an_equal_share_of_the_places():
    queue = TurnQueue(limit=8)
    for _ in range(10):
        queue.append(channel("Token alice"))
    assert len([queue.take(0) for _ in range(8)]) == 8  # alone: every place
    queue = TurnQueue(limit=8)
    queue.append(channel("Token bob"))
    bobs = queue.take(0)
    for _ in range(10):
        queue.append(channel("Token alice"))
    alices = [queue.take(0) for _ in range(4)]
    assert None not in alices and queue.take(0) is None  # bob's place and 3 more kept
    queue.append(channel("Token bob"))
    bobs_next = queue.take(0)
    assert bobs_next.key == bobs.key
    assert served(queue, bobs, 0) is False  # bob still has one served
    assert queue.take(0) is None
    assert served(queue, bobs_next, 0) is True  # bob is done: alice's share grows
    assert None not in [queue.take(0) for _ in range(4)] and queue.busy == 8


def test_among_callers_serving_as_many_the_older_request_goes_first():
    queue = TurnQueue()
    first, second, third = channel("Token a"), channel("Token b"), channel(address="10.0.0.9")
    for each in (first, second, third):
        queue.append(each)
    assert [queue.take(0).channel for _ in range(3)] == [first, second, third]


def test_at_most_the_limit_is_served_at_once_and_an_event_stream_leaves_its_place():
    queue = TurnQueue(limit=2)
    for name in ("a", "b", "c", "d"):
        queue.append(channel(f"Token {name}"))
    first, second = queue.take(0), queue.take(0)
    assert queue.take(0) is None and queue.busy == 2
    queue.streaming(first)  # an event stream: its thread is one beyond the limit
    third = queue.take(0)
    assert third is not None and queue.take(0) is None
    served(queue, first, 0)  # the stream ends: it was counted off already
    assert queue.busy == 2 and queue.take(0) is None
    served(queue, second, 0)
    assert queue.take(0).channel.requests[0].headers == {"AUTHORIZATION": "Token d"}
    assert queue.running == {("token", hash(("token", "c"))): 1,
                             ("token", hash(("token", "d"))): 1}


def test_a_token_is_its_users_once_one_request_was_served_however_it_is_spaced():
    queue = TurnQueue()
    queue.append(channel("Token abc"))
    ticket = queue.take(0)
    assert ticket.key == ("token", hash(("token", "abc")))
    assert served(queue, ticket, 0, user="alice") is False
    queue.append(channel("token   abc "))
    queue.append(channel("Token abc"))
    assert [queue.take(0).key for _ in range(2)] == [("user", "alice")] * 2
    queue.append(channel())  # no token: its address
    assert queue.take(0).key == ("address", "10.0.0.1")


def test_a_refused_user_waits_its_retry_after_then_one_request_goes_first():
    queue = TurnQueue()
    queue.users[hash(("token", "a"))] = ("user", "alice")
    requests_ = [channel("Token a") for _ in range(3)]
    bob = channel("Token b")
    queue.append(requests_[0])
    refused = queue.take(10.0)
    for each in [*requests_[1:], bob]:
        queue.append(each)
    assert served(queue, refused, 10.0, user="alice", refused_for=5) is False
    # Held for HOLD_SECONDS (Retry-After 5 is longer): bob is served, alice's requests wait.
    assert queue.take(10.5).channel is bob
    assert queue.share(10.5) == 8  # alice's held requests take no part
    assert queue.take(10.5) is None
    assert queue.wait_seconds(10.5) == pytest.approx(10.0 + HOLD_SECONDS - 10.5)
    probe = queue.take(10.0 + HOLD_SECONDS)
    assert probe.channel is requests_[1]
    assert queue.take(20.0) is None  # one at a time until one is answered without a 429
    assert queue.wait_seconds(20.0) is None  # the probe's answer wakes the threads
    assert served(queue, probe, 20.0, user="alice") is True
    assert queue.take(20.0).channel is requests_[2]
    assert queue.holds == {}


def test_a_probe_refused_again_is_held_again_for_the_shorter_retry_after():
    queue = TurnQueue()
    queue.users[hash(("token", "a"))] = ("user", "alice")
    for _ in range(3):
        queue.append(channel("Token a"))
    first = queue.take(0.0)
    served(queue, first, 0.0, user="alice", refused_for=0.25)
    assert queue.take(0.2) is None
    probe = queue.take(0.25)
    assert probe is not None
    served(queue, probe, 0.3, user="alice", refused_for=1)
    assert queue.take(0.3 + HOLD_SECONDS - 0.01) is None
    assert queue.take(0.3 + HOLD_SECONDS) is not None


def test_a_probe_that_becomes_an_event_stream_lets_its_users_other_requests_in():
    queue = TurnQueue()
    queue.users[hash(("token", "a"))] = ("user", "alice")
    for _ in range(3):
        queue.append(channel("Token a"))
    served(queue, queue.take(0.0), 0.0, user="alice", refused_for=5)
    stream = queue.take(HOLD_SECONDS)  # the probe: an event stream, open for an hour
    queue.serving(stream, "alice")
    queue.streaming(stream)
    assert queue.holds == {} and queue.busy == 0
    assert queue.take(HOLD_SECONDS) is not None


def test_an_anonymous_caller_refused_is_not_held():
    queue = TurnQueue()
    for _ in range(2):
        queue.append(channel())
    first = queue.take(0.0)
    served(queue, first, 0.0, refused_for=5)
    assert queue.holds == {}
    assert queue.take(0.0) is not None


def test_the_memory_of_tokens_and_holds_is_bounded(monkeypatch):
    monkeypatch.setattr(turns, "MAX_KNOWN_TOKENS", 3)
    monkeypatch.setattr(turns, "MAX_HOLDS", 2)
    queue = TurnQueue()
    for number in range(4):
        queue.append(channel(f"Token t{number}"))
        served(queue, queue.take(0), 0, user=f"user{number}")
    assert list(queue.users.values()) == [("user", "user3")]  # the fourth started it again
    for number in range(3):
        queue.append(channel(f"Token t{number}"))
        served(queue, queue.take(number * 100.0), number * 100.0, user=f"u{number}",
               refused_for=1)
    # The holds over for a minute are forgotten (each refusal held its user and its token).
    assert set(queue.holds) == {("user", "u2"), ("token", hash(("token", "t2")))}


def test_waitress_shutdown_empties_the_queue_oldest_first():
    queue = TurnQueue()
    channels = [channel("Token a"), channel("Token b"), channel("Token a")]
    for each in channels:
        queue.append(each)
    assert [queue.popleft() for _ in range(3)] == channels
    assert len(queue) == 0 and queue.waiting == {}


def small_app(environ, start_response):
    """`Authorization: Token <user>-<n>` is the user's; /busy answers 429 (Retry-After 5), /slow
    takes 0.3 s, anything else answers at once."""
    credentials = environ.get("HTTP_AUTHORIZATION", "").partition(" ")[2]
    if credentials:
        serving_user(credentials.partition("-")[0])
    if environ["PATH_INFO"] == "/busy":
        start_response("429 Too Many Requests", [("Retry-After", "5"), ("Content-Length", "0")])
        return [b""]
    if environ["PATH_INFO"] == "/slow":
        time.sleep(0.3)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@pytest.mark.socket
def test_a_user_asking_again_at_once_after_each_429_is_answered_about_once_a_second(
        tiny):  # noqa: F811
    server = tiny(with_refusals_held(small_app), threads=4)
    url = f"http://127.0.0.1:{server.effective_port}"
    stop, answers, lock = threading.Event(), {"alice": [], "bob": []}, threading.Lock()

    def ask(user: str, path: str, token: int) -> None:
        with requests.Session() as session:
            while not stop.is_set():
                status = session.get(url + path, timeout=30,
                                     headers={"Authorization": f"Token {user}-{token}"}
                                     ).status_code
                with lock:
                    answers[user].append(status)

    threads = [threading.Thread(target=ask, args=("alice", "/busy", 1)) for _ in range(6)]
    threads.append(threading.Thread(target=ask, args=("bob", "/", 0)))
    for thread in threads:
        thread.start()
    time.sleep(3)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    # Without the hold, 6 clients (more than the 4 threads) would have had thousands of 429s in
    # 3 s. With it: the requests being served when the first refusal was made (4 threads), then
    # one each second, then each connection's last request, answered (one a second) after the
    # test stopped asking.
    assert set(answers["alice"]) == {429}
    assert len(answers["alice"]) <= 4 + 4 + 6
    assert set(answers["bob"]) == {200} and len(answers["bob"]) >= 50


@pytest.mark.socket
def test_another_users_request_is_served_when_a_thread_frees_not_after_the_queue(
        tiny):  # noqa: F811
    server = tiny(with_refusals_held(small_app), threads=2)
    url = f"http://127.0.0.1:{server.effective_port}"
    done: dict[str, float] = {}

    def get(name: str, user: str, path: str) -> None:  # one token of each user
        requests.get(url + path, timeout=30, headers={"Authorization": f"Token {user}-1"})
        done[name] = time.monotonic()

    began = time.monotonic()
    alices = [threading.Thread(target=get, args=(f"a{n}", "alice", "/slow")) for n in range(10)]
    for thread in alices:
        thread.start()
    time.sleep(0.1)  # alice's ten are queued (two being served) before bob asks
    get("bob", "bob", "/")
    for thread in alices:
        thread.join(timeout=30)
    # Alice's ten take 5 rounds of 0.3 s on two threads; bob's request went at the first free
    # thread (first come, first served, it would have been after all ten: at least 1.5 s).
    assert done["bob"] - began < 1.0
    assert max(done.values()) - began >= 1.5
    assert sorted(done) == sorted([f"a{n}" for n in range(10)] + ["bob"])


@pytest.mark.socket
def test_the_server_serves_at_most_its_limit_at_once_whatever_its_threads(tiny):  # noqa: F811
    at_once, most, lock = [0], [0], threading.Lock()

    def app(environ, start_response):
        with lock:
            at_once[0] += 1
            most[0] = max(most[0], at_once[0])
        time.sleep(0.2)
        with lock:
            at_once[0] -= 1
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    server = tiny(app, threads=6, served_at_once=2)
    url = f"http://127.0.0.1:{server.effective_port}"
    statuses = []
    askers = [threading.Thread(target=lambda n=n: statuses.append(requests.get(
        url, timeout=30, headers={"Authorization": f"Token user{n}"}).status_code))
        for n in range(6)]
    for thread in askers:
        thread.start()
    for thread in askers:
        thread.join(timeout=30)
    assert statuses == [200] * 6
    assert most[0] == 2


@pytest.mark.socket
def test_a_user_refused_by_the_event_streams_cap_waits_a_second_others_do_not(
        server, alice, bob):
    streams = [EventStream(server.url, alice.token) for _ in range(5)]
    try:
        sixth = requests.get(f"{server.url}/api/events/", timeout=30,
                             headers={"Authorization": f"Token {alice.token}"})
        assert_error(sixth, 429, "throttled",
                     "At most 5 event streams of one user are open at once; close one first.")
        took: dict[str, float] = {}

        def me(name: str, token: str) -> None:
            began = time.monotonic()
            answer = requests.get(f"{server.url}/api/users/me/", timeout=30,
                                  headers={"Authorization": f"Token {token}"})
            assert answer.status_code == 200
            took[name] = time.monotonic() - began

        asking = threading.Thread(target=me, args=("alice", alice.token))
        asking.start()
        me("bob", bob.token)
        asking.join(timeout=30)
        assert took["alice"] >= HOLD_SECONDS - 0.25  # held (the 429 said Retry-After 5)
        assert took["bob"] < took["alice"]
    finally:
        for stream in streams:
            stream.close()
