"""The request threads (dms/web/turns.py, LifoCondition): the thread that finished last
serves the next request, so a server with many threads (dms keeps 50 for event streams) uses
only as many as its load needs, each with its own warm SQLite connection."""

from __future__ import annotations

import threading
import time

import pytest

from dms.web.turns import LifoCondition
from tests.web.test_server_limits import connect, read_response, tiny  # noqa: F401 (fixture)

pytestmark = pytest.mark.socket


def test_sequential_requests_are_served_by_one_thread_of_eight(tiny):  # noqa: F811
    names = []

    def app(environ, start_response):
        names.append(threading.current_thread().name)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    server = tiny(app, threads=8)
    dispatcher = server.task_dispatcher

    def all_waiting() -> None:
        """Every thread waits on the condition (counted idle only once it does): the eight just
        started, and after each answer the one that answered (on a busy machine it could still be
        finishing, or a thread still starting, and another would rightly take the request)."""
        deadline = time.monotonic() + 10
        while dispatcher.active_count and time.monotonic() < deadline:
            time.sleep(0.001)
        assert dispatcher.active_count == 0

    all_waiting()
    with connect(server.effective_port) as sock:
        for _ in range(40):
            sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            assert read_response(sock)[0] == "HTTP/1.1 200 OK"
            all_waiting()
    # Round robin (Python's Condition) would have used all 8; the last waiter is woken first.
    assert len(names) == 40
    assert set(names) == {names[0]}, sorted(set(names))


def test_notify_wakes_the_thread_that_waited_last():
    condition = LifoCondition()
    woken, waiting = [], []

    def wait(name):
        with condition:
            waiting.append(name)
            condition.wait(10)
            woken.append(name)

    threads = []
    for name in ("first", "second", "third"):
        thread = threading.Thread(target=wait, args=(name,))
        thread.start()
        threads.append(thread)
        while True:  # each waits before the next starts: the order of the waiters is known
            with condition:
                if waiting[-1:] == [name]:
                    break
    for count in range(1, 4):
        with condition:
            condition.notify()
        while True:  # one woken at a time
            with condition:
                if len(woken) == count:
                    break
    for thread in threads:
        thread.join(5)
    assert woken == ["third", "second", "first"]
    with pytest.raises(RuntimeError):
        condition.notify()  # the lock not held: as threading.Condition
