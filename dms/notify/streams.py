"""The event stream (GET /events/, api.md, "The event stream"): the caller's events, and those of
what others share with them (dms.notify.feed), as Server-Sent Events, as they happen, each an
`id:` line (the caller's place after it: the event's id for a caller with nothing shared with
them) and a `data:` line (the webhook body's JSON, dms.notify.feed); resumable after a place
(Last-Event-ID or ?since=); a comment every
DMS_EVENTS_HEARTBEAT_SECONDS; ended after DMS_EVENTS_MAX_SECONDS (the client reconnects with
Last-Event-ID and misses nothing).

How a stream is served: waitress answers each request on one of its worker threads and holds that
thread until the answer ends, so a stream holds a thread for its whole life. dms gives waitress
DMS_EVENTS_MAX_STREAMS threads beyond DMS_THREADS (dms.web.server) and serves at most that many
streams per process (503 past it): streams never take the threads of ordinary requests. Each
stream is also a connection, counted against DMS_CONNECTION_LIMIT like any other. A waiting
stream holds no database connection; it reads when woken.

Waking: one watch thread per process asks the database for the newest event id of each user with
an open stream and of each owner who shares something with them, when a write of this process
commits (dms.db.on_commit) and at least every POLL_SECONDS (writes of other nodes and processes),
and wakes the streams of the users whose owners' newest grew; it reads who shares with whom every
POLL_SECONDS, and wakes a user's streams when someone new does. One owner's events commit in the
order of their ids (dms.db.events), so a stream that reads "after the last id I sent" of each
owner never skips one and never sends one twice.

The cap per user (MAX_STREAMS_PER_USER, 429 with Retry-After past it) holds across every node:
open streams are rows of `event_stream`, counted in the owner's write scope; each process renews
its rows' expiry every RENEW_SECONDS, so the rows of a process that died expire on their own.
The stream also ends when its token is revoked or expires, or its user deactivated (checked at
each heartbeat), and at once when the server stops.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator

from dms.config import Config
from dms.db import database, owner_scope, release_connection, write_transaction
from dms.db.models import User, new_id, utcnow
from dms.domain.access.following import newest_event, sharers_of
from dms.domain.sessions import idle_limit, token_is_live
from dms.errors import Throttled, Unavailable
from dms.files.loop import BackgroundLoop
from dms.notify import feed

log = logging.getLogger("dms.events")

MAX_STREAMS_PER_USER = 5  # api.md, "The event stream"
POLL_SECONDS = 1.0  # an event of another process reaches a stream this much later at most
MIN_POLL_GAP = 0.02  # seconds between two looks of the watch, however busy the writers
RENEW_SECONDS = 15.0
EXPIRE_SECONDS = 3 * RENEW_SECONDS  # a dead process' streams stop counting after this long
CLIENT_CHECK_SECONDS = 1.0  # a waiting stream notices this soon that its client left
RETRY_AFTER_SECONDS = 5  # the Retry-After of a 429: a stream whose client left ends within 1 s
RECONNECT_MILLISECONDS = 3000  # the stream's `retry:` field, for clients that reconnect
OWNERS_PER_QUERY = 200


class Stream:
    """One open stream: its owner, the token it was opened with, its place (the last event id
    read of each owner whose events it sends)."""

    def __init__(self, hub: StreamHub, owner_id: str, token_digest: str, stream_id: str,
                 cursors: feed.Cursors):
        self.hub, self.owner_id, self.token_digest = hub, owner_id, token_digest
        self.id, self.cursors = stream_id, cursors
        self.wake = threading.Event()

    def chunks(self, client_gone: Callable[[], bool]) -> Iterator[bytes]:
        """The stream's bytes, until its time is up, the client leaves, the token goes or the
        server stops; closing it (waitress does when the client leaves) ends it too."""
        config = self.hub.config
        try:
            yield f"retry: {RECONNECT_MILLISECONDS}\n: dms events\n\n".encode()
            now = time.monotonic()
            end, beat = now + config.events_max_seconds, now + config.events_heartbeat_seconds
            while True:
                self.wake.clear()  # before reading: a wake during the read is kept
                batch = self._read()
                if batch is None:
                    return
                for event, place in batch.events:
                    yield b"id: %s\ndata: %s\n\n" % (
                        feed.place_text(self.owner_id, place).encode(), event.body)
                    self.cursors = place
                self.cursors = batch.cursors  # past the events not shared with the caller too
                if time.monotonic() >= end or self.hub.stopping or client_gone():
                    return
                if batch.full:
                    continue  # more are waiting
                # Until woken: the heartbeat, the end, the server's stop, or the client gone
                # (looked at every CLIENT_CHECK_SECONDS, so that its place under the caps is
                # free again soon after it left).
                while not self.wake.is_set():
                    now = time.monotonic()
                    if now >= end or self.hub.stopping or client_gone():
                        return
                    if now >= beat:
                        if not self._allowed():
                            return
                        yield b": keep-alive\n\n"
                        beat = now + config.events_heartbeat_seconds
                    self.wake.wait(min(end, beat, now + CLIENT_CHECK_SECONDS) - now)
        finally:
            self.hub.close(self)

    def _read(self) -> feed.Read | None:
        """The next events (of the owners who share something with the caller now), or None when
        the database cannot be read (the stream ends; its client resumes later with
        Last-Event-ID)."""
        try:
            self.cursors = feed.starting_places(self.owner_id, self.cursors)
            return feed.read(self.owner_id, self.cursors)
        except Exception as error:
            log.info("an event stream of user %s ended: %s", self.owner_id, error)
            return None
        finally:
            release_connection()

    def _allowed(self) -> bool:
        try:
            return token_is_live(self.token_digest, utcnow(), idle_limit(self.hub.config))
        except Exception:
            return False
        finally:
            release_connection()


class StreamHub:
    """The event streams of one server process, and the watch thread that wakes them."""

    def __init__(self, config: Config):
        self.config = config
        self.server_id = uuid.uuid4().hex
        self._watch = BackgroundLoop("dms-events", self._look_round)
        self._slots = threading.BoundedSemaphore(config.events_max_streams)
        self._streams: dict[str, set[Stream]] = {}  # user id: their open streams
        self._sharers: dict[str, set[str]] = {}  # user id: who shares with them, as last read
        self._latest: dict[str, int] = {}  # owner id: newest event id seen by the watch
        self._sharers_at = 0.0  # when the watch next reads who shares with whom
        self._lock = threading.Lock()
        self._renew_at = 0.0  # when the watch next renews this process's rows

    def start(self) -> None:
        self._renew_at = time.monotonic() + RENEW_SECONDS
        self._watch.start()

    @property
    def stopping(self) -> bool:
        return self._watch.stopping

    def notify(self) -> None:
        """A write of this process committed (dms.db.on_commit)."""
        self._watch.wake()

    def stop(self) -> None:
        """End every stream now (the server is stopping) and the watch."""
        self._watch.stop_soon()
        with self._lock:
            for streams in self._streams.values():
                for stream in streams:
                    stream.wake.set()
        self._watch.join(timeout=10)

    def count(self) -> int:
        with self._lock:
            return sum(len(streams) for streams in self._streams.values())

    def open(self, user: User, token_digest: str, after: feed.Cursors | None) -> Stream:
        """A new stream of the user's events after the place `after` (None: from now on; the
        events of owners who share with the user from their newest on). Unavailable
        (503) when this process serves its most streams, Throttled (429) when the user has
        MAX_STREAMS_PER_USER open."""
        if self.stopping:
            raise Unavailable("The server is stopping; connect again in a moment.")
        if not self._slots.acquire(blocking=False):
            raise Unavailable(f"This server serves {self.config.events_max_streams} event "
                              "streams at once (DMS_EVENTS_MAX_STREAMS), all open; try again in "
                              "a moment.")
        try:
            stream_id, now = new_id(), time.time()
            with write_transaction(owner_scope(user.id)):
                database.execute_sql("DELETE FROM event_stream WHERE owner_id = ? "
                                     "AND expires_at < ?", (user.id, now))
                open_now = database.execute_sql(
                    "SELECT count(*) FROM event_stream WHERE owner_id = ?",
                    (user.id,)).fetchone()[0]
                if open_now >= MAX_STREAMS_PER_USER:
                    raise Throttled(f"At most {MAX_STREAMS_PER_USER} event streams of one user "
                                    "are open at once; close one first.",
                                    retry_after=RETRY_AFTER_SECONDS)
                database.execute_sql(
                    "INSERT INTO event_stream (id, owner_id, server_id, expires_at) "
                    "VALUES (?, ?, ?, ?)", (stream_id, user.id, self.server_id,
                                            now + EXPIRE_SECONDS))
                # In the owner's scope: every event of theirs still to commit comes after it.
                # (Others' newest are read outside theirs: one of theirs still to commit with a
                # smaller id was made before the stream was asked for.)
                cursors = feed.starting_places(user.id, {user.id: newest_event(user.id)}) \
                    if after is None else feed.starting_places(user.id, after)
                if after is None:
                    cursors.update({owner_id: newest_event(owner_id) for owner_id in cursors
                                    if owner_id != user.id})
        except BaseException:
            self._slots.release()
            raise
        stream = Stream(self, user.id, token_digest, stream_id, cursors)
        with self._lock:
            self._streams.setdefault(user.id, set()).add(stream)
        return stream

    def close(self, stream: Stream) -> None:
        with self._lock:
            streams = self._streams.get(stream.owner_id, set())
            streams.discard(stream)
            if not streams:
                self._streams.pop(stream.owner_id, None)
                self._sharers.pop(stream.owner_id, None)
        self._slots.release()
        try:
            with write_transaction():
                database.execute_sql("DELETE FROM event_stream WHERE id = ?", (stream.id,))
        except Exception:  # its row expires by itself
            log.exception("forgetting an event stream failed")
        finally:
            release_connection()

    def _look_round(self) -> None:
        """One round of the watch: wait to be woken (or POLL_SECONDS), look, renew the rows."""
        self._watch.wait(POLL_SECONDS)
        if self._watch.stopping:
            return
        try:
            self._look()
            if time.monotonic() >= self._renew_at and self.count():
                self._renew_at = time.monotonic() + RENEW_SECONDS
                with write_transaction():
                    database.execute_sql(
                        "UPDATE event_stream SET expires_at = ? WHERE server_id = ?",
                        (time.time() + EXPIRE_SECONDS, self.server_id))
        except Exception:  # the database away for a moment: the next look tries again
            log.exception("watching for events failed")
        finally:
            release_connection()
        self._watch.rest(MIN_POLL_GAP)

    def _look(self) -> None:
        """Wake the streams of the users whose owners' newest event (theirs, or of someone who
        shares with them) is newer than the watch saw, or whom someone new shares with."""
        with self._lock:
            users = list(self._streams)
            sharers = {user_id: self._sharers.get(user_id, set()) for user_id in users}
        woken = set()
        if time.monotonic() >= self._sharers_at:
            self._sharers_at = time.monotonic() + POLL_SECONDS
            for start in range(0, len(users), OWNERS_PER_QUERY):
                for user_id, now_sharing in sharers_of(users[start:start + OWNERS_PER_QUERY]) \
                        .items():
                    if now_sharing - sharers[user_id]:
                        woken.add(user_id)
                    sharers[user_id] = now_sharing
        owners = sorted(set(users).union(*sharers.values()))
        grown, latest = set(), {}
        for start in range(0, len(owners), OWNERS_PER_QUERY):
            part = owners[start:start + OWNERS_PER_QUERY]
            # One max() per owner: each is a step down the (owner_id, id) index on both engines,
            # where a GROUP BY would read every event of those owners.
            for owner_id, newest in database.execute_sql(" UNION ALL ".join(
                    ["SELECT CAST(? AS TEXT), (SELECT max(id) FROM event WHERE owner_id = ?)"]
                    * len(part)), [value for owner in part for value in (owner, owner)]):
                latest[owner_id] = newest
                if newest != self._latest.get(owner_id):
                    grown.add(owner_id)
        woken.update(user_id for user_id in users
                     if user_id in grown or sharers[user_id] & grown)
        with self._lock:
            self._latest = latest
            for user_id in users:
                if user_id in self._streams:
                    self._sharers[user_id] = sharers[user_id]
                    if user_id in woken:
                        for stream in self._streams[user_id]:
                            stream.wake.set()
