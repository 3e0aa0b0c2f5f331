"""The event stream (GET /events/, api.md, "The event stream") over real sockets: events arrive as
they happen, another user's never, Last-Event-ID and ?since= resume exactly after the last one,
heartbeat comments, the end after DMS_EVENTS_MAX_SECONDS and when the token goes or the server
stops, the caps (5 per user: 429; DMS_EVENTS_MAX_STREAMS per process: 503), and streams that take
neither the threads of ordinary requests nor, while they wait, a database connection."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest
import requests

from tests.harness.client import VND, assert_error
from tests.harness.documents import create_node
from tests.harness.waiting import wait_for
from tests.harness.webhooks import EventStream

# The stream is a response a waitress thread serves for its whole life; the point is the socket.
pytestmark = pytest.mark.socket


def created(stream: EventStream, count: int) -> list[str]:
    return [data["node"]["title"] for _, data in stream.events(count)]


def test_events_arrive_as_they_happen_and_only_the_callers(server, alice, bob):
    create_node(alice, "folders", "Before", alice.home_id)  # before the stream: not sent
    mine, theirs = EventStream(server.url, alice.token), EventStream(server.url, bob.token)
    try:
        assert (mine.response.status_code, mine.response.headers["Content-Type"],
                mine.response.headers["Cache-Control"]) == (200, "text/event-stream", "no-store")
        folder = create_node(alice, "folders", "Now", alice.home_id)
        event_id, data = mine.next_event()
        assert (data["type"], data["user_id"], data["node"]["id"], data["details"]["action"],
                data["id"]) == ("node.created", alice.user_id, folder, "created", event_id)
        assert mine.fields == ["retry: 3000"] and mine.comments == [": dms events"]
        create_node(bob, "folders", "Bob's", bob.home_id)
        create_node(alice, "folders", "Then", alice.home_id)
        assert created(theirs, 1) == ["Bob's"]  # the first bob sees is his own
        assert created(mine, 1) == ["Then"]
    finally:
        mine.close()
        theirs.close()


def test_last_event_id_and_since_resume_exactly_after_the_last_event(server, alice):
    first = EventStream(server.url, alice.token)
    for title in ("one", "two", "three", "four"):
        create_node(alice, "folders", title, alice.home_id)
    seen = first.events(2)
    first.close()
    assert [data["node"]["title"] for _, data in seen] == ["one", "two"]
    resumed = EventStream(server.url, alice.token, last_event_id=seen[-1][0])
    assert created(resumed, 2) == ["three", "four"]
    create_node(alice, "folders", "five", alice.home_id)
    assert created(resumed, 1) == ["five"]
    resumed.close()
    since = EventStream(server.url, alice.token, query=f"?since={seen[0][0]}")
    assert created(since, 4) == ["two", "three", "four", "five"]
    since.close()
    # Last-Event-ID wins over ?since= (an EventSource reconnecting keeps its URL).
    both = EventStream(server.url, alice.token, last_event_id=seen[-1][0], query="?since=0")
    assert created(both, 1) == ["three"]
    both.close()


def test_a_bad_resume_point_and_no_token_are_refused(server, alice, anon):
    for headers, query, name in (({"Last-Event-ID": "abc"}, "", "Last-Event-ID"),
                                 ({}, "?since=-1", "since"), ({}, "?since=1e3", "since")):
        answer = requests.get(f"{server.url}/api/events/{query}", timeout=30, headers={
            "Authorization": f"Token {alice.token}", **headers})
        assert_error(answer, 400, "invalid",
                     f"{name} must be the id of an event (a whole number such as 1234) or the "
                     "id: of the stream's last event.")
    assert_error(requests.get(f"{server.url}/events/", timeout=30), 401, "not_authenticated",
                 "Authentication credentials were not provided.")
    head = requests.head(f"{server.url}/api/events/", timeout=30, headers={
        "Authorization": f"Token {alice.token}"})  # the headers only: no stream is opened
    assert (head.status_code, head.headers["Content-Type"], head.content) == (
        200, "text/event-stream", b"")
    assert_error(requests.get(f"{server.url}/events/", timeout=30, headers={
        "Authorization": "Token nope"}), 401, "authentication_failed", "Invalid token.")


@pytest.mark.parametrize("header, query", [
    ("\xa01", ""), ("1\xa0", ""), ("\xa0", ""),          # a non-breaking space around the id
    (None, "?since=%201"), (None, "?since=1%20"), (None, "?since=+1"),  # "+": a space too
    (None, "?since=%20"), (None, "?since=%C2%A01"), (None, "?since=%EF%BC%91"),  # fullwidth 1
])
def test_a_resume_point_is_ascii_digits_and_nothing_around_them(server, alice, header, query):
    """A leading space in Last-Event-ID was trimmed and accepted: one rule for the header and
    ?since=, whatever reaches the application. (HTTP's own spaces around a header's value are not
    part of it; waitress drops them before anyone sees them.) Over http.client: requests refuses to
    send a header value that starts with a space."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.putrequest("GET", f"/api/events/{query}")
        connection.putheader("Authorization", f"Token {alice.token}")
        if header is not None:
            connection.putheader("Last-Event-ID", header)  # sent as latin-1: 0xA0 as it is
        connection.endheaders()
        answer = connection.getresponse()
        assert answer.status == 400  # before reading: a stream's body would not end
        assert (answer.getheader("Content-Type"), json.loads(answer.read())) == (
            VND, {"errors": [{
                "detail": f"{'since' if header is None else 'Last-Event-ID'} must be the id of "
                          "an event (a whole number such as 1234) or the id: of the stream's "
                          "last event.",
                "status": "400", "code": "invalid"}]})
    finally:
        connection.close()


def test_at_most_five_streams_of_one_user(server, alice, bob):
    streams = [EventStream(server.url, alice.token) for _ in range(5)]
    try:
        assert [s.response.status_code for s in streams] == [200] * 5
        sixth = requests.get(f"{server.url}/api/events/", timeout=30,
                             headers={"Authorization": f"Token {alice.token}"})
        assert_error(sixth, 429, "throttled",
                     "At most 5 event streams of one user are open at once; close one first.")
        assert sixth.headers["Retry-After"] == "5"
        other = EventStream(server.url, bob.token)  # another user is not counted
        assert other.response.status_code == 200
        other.close()
        streams.pop().close()

        def reopened():
            stream = EventStream(server.url, alice.token)
            if stream.response.status_code == 200:
                return stream
            stream.close()
            return None

        streams.append(wait_for(reopened, timeout=30, interval=0.1))
    finally:
        for stream in streams:
            stream.close()


@pytest.mark.config(events_heartbeat_seconds=0.2, events_max_seconds=2)
def test_comments_keep_it_alive_until_its_time_is_up(server, alice):
    stream = EventStream(server.url, alice.token)
    started = time.monotonic()
    assert stream.next_event() is None  # ended by the server
    assert time.monotonic() - started < 60  # it did not hang
    assert stream.comments[0] == ": dms events" and len(stream.comments) >= 3
    assert set(stream.comments[1:]) == {": keep-alive"}


@pytest.mark.config(events_heartbeat_seconds=0.2)
def test_a_stream_ends_when_its_token_is_revoked(server, alice):
    token = alice.post("/api/tokens/", {"data": {"type": "tokens", "attributes": {
        "name": "stream"}}}).json()["data"]
    stream = EventStream(server.url, token["attributes"]["token"])
    assert stream.response.status_code == 200
    assert alice.delete(f"/api/tokens/{token['id']}/").status_code == 204
    assert stream.next_event() is None


def test_stopping_the_server_ends_its_streams_at_once(config, alice, server):
    stream = EventStream(server.url, alice.token)
    ended = threading.Event()
    threading.Thread(target=lambda: (stream.next_event(), ended.set()), daemon=True).start()
    started = time.monotonic()
    server.stop()
    assert ended.wait(30)
    assert time.monotonic() - started < 15  # not the hour of DMS_EVENTS_MAX_SECONDS


@pytest.mark.config(threads=2, events_max_streams=3, db_pool_size=2)
def test_streams_take_neither_request_threads_nor_idle_connections(server, make_user):
    users = [make_user() for _ in range(4)]
    streams = [EventStream(server.url, user.token) for user in users[:3]]
    try:
        assert [s.response.status_code for s in streams] == [200] * 3
        fourth = requests.get(f"{server.url}/api/events/", timeout=30,
                              headers={"Authorization": f"Token {users[3].token}"})
        assert_error(fourth, 503, "unavailable",
                     "This server serves 3 event streams at once (DMS_EVENTS_MAX_STREAMS), all "
                     "open; try again in a moment.")
        # Two request threads and a pool of two connections (PostgreSQL) still serve everyone.
        answers = []
        workers = [threading.Thread(target=lambda user=user: answers.append(
            create_node(user, "folders", "busy", user.home_id))) for user in users for _ in
            range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert len(answers) == 12
        for stream in streams:
            assert created(stream, 3) == ["busy"] * 3
    finally:
        for stream in streams:
            stream.close()
