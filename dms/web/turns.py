"""The request threads served by turns: one user cannot take them all, nor spend them on asking
again at once.

waitress hands each request to a thread of its own, first come, first served, up to all of its
threads: 58 in dms (DMS_THREADS, 8, and one for each event stream it may serve). A user with 16
connections asking as fast as it could had 16 requests served at once, and another user's
request shared the interpreter with all of them (a flood of pages of 100: the other user's p99
247 ms). Here:

- **At most `limit` requests are served at once** (DMS_THREADS); the others wait in the queue.
  An event stream, which holds its thread for as long as it lasts, stops counting once it has
  started (`streaming`): the threads beyond the limit are for them.
- **Equal shares.** While several callers have requests waiting or being served, each may have
  at most an equal part of the places served at once (the places a caller leaves between two of
  its requests are kept for its next one, not filled by a caller asking faster). Alone, a caller
  has every place, as before.
- **The others go first.** A request that may start is the oldest of the caller with the fewest
  requests being served now; among equals, the request that came first.
- **Refused, held back.** A user answered 429 (its share of a pool taken, a limit reached) has its
  next requests wait in the queue, not in a thread, for the answer's Retry-After (at most
  HOLD_SECONDS); then one goes alone, and the others follow once one is answered without a 429. A
  client that asks again at once after each refusal gains nothing by it, and the requests it would
  have made cost the others nothing.

A caller is the user a token belongs to, once one request with that token has been served (the
application tells, `serving_user`); before, the token itself; without one, the connection's
address. Only users are held back: anonymous requests share their address (all of them, behind a
proxy), and logins have limits of their own.

The queue is guarded by the dispatcher's lock; the request's own thread tells its user, its 429
and its stream through the ticket the dispatcher handed that thread.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from waitress.task import ThreadedTaskDispatcher

# Longest a refused user's next requests wait (shorter when the answer's Retry-After is).
HOLD_SECONDS = 1.0
# Tokens whose user is remembered; past it the memory starts again (a token not known yet is a
# caller of its own until one of its requests is served).
MAX_KNOWN_TOKENS = 10_000
# Holds kept; past it, those over for a minute are forgotten.
MAX_HOLDS = 1_000
FORGET_HOLD_SECONDS = 60.0


@dataclass(eq=False)
class Ticket:
    """One request waiting or being served: its connection, its caller's key, its turn."""
    channel: Any
    key: Hashable
    token: int | None  # the hash of its Authorization header, if it had one
    arrived: int
    user: object = None  # who it was served for, once the application knows
    refused: bool = False  # answered 429
    long_lived: bool = False  # an event stream: not counted among the requests served


@dataclass
class Hold:
    until: float
    probe: Ticket | None = None  # the one request let through after the hold, being served


@dataclass
class TurnQueue:
    """waitress' task queue, by caller (len() and popleft() as its deque has them, for waitress'
    shutdown). At most `limit` requests are served at once, event streams not counted."""
    limit: int = 8
    waiting: dict[Hashable, deque[Ticket]] = field(default_factory=dict)
    running: dict[Hashable, int] = field(default_factory=dict)
    holds: dict[Hashable, Hold] = field(default_factory=dict)
    users: dict[int, Hashable] = field(default_factory=dict)  # token hash -> ("user", id)
    arrivals: itertools.count = field(default_factory=itertools.count)
    size: int = 0
    busy: int = 0  # requests being served, event streams not counted

    def __len__(self) -> int:
        return self.size

    def append(self, channel) -> None:
        key, token = self.key_of(channel)
        ticket = Ticket(channel, key, token, next(self.arrivals))
        self.waiting.setdefault(key, deque()).append(ticket)
        self.size += 1

    def key_of(self, channel) -> tuple[Hashable, int | None]:
        requests = channel.requests
        headers = requests[0].headers if requests else {}
        scheme, _, credentials = headers.get("AUTHORIZATION", "").strip().partition(" ")
        if credentials:  # as the application reads it: one token however it is spaced
            token = hash((scheme.lower(), credentials.strip()))
            return self.users.get(token) or ("token", token), token
        address = channel.addr[0] if isinstance(channel.addr, tuple) else channel.addr
        return ("address", address), None

    def take(self, now: float) -> Ticket | None:
        """The next request to serve (counted as being served), or None if none may start now."""
        if self.busy >= self.limit:
            return None
        share = self.share(now)
        best: Hashable = None
        best_rank: tuple[int, int] | None = None
        for key, tickets in self.waiting.items():  # one per caller with a request waiting
            running = self.running.get(key, 0)
            if running >= share or not self._may_start(key, now):
                continue
            rank = (running, tickets[0].arrived)
            if best_rank is None or rank < best_rank:
                best, best_rank = key, rank
        if best_rank is None:
            return None
        tickets = self.waiting[best]
        ticket = tickets.popleft()
        if not tickets:
            del self.waiting[best]
        self.size -= 1
        self.busy += 1
        self.running[best] = self.running.get(best, 0) + 1
        hold = self.holds.get(best)
        if hold is not None:
            hold.probe = ticket
        return ticket

    def share(self, now: float) -> int:
        """The most requests one caller may have served at once: all places when it is alone,
        else an equal part of them among the callers with requests being served or free to
        start (the places a caller leaves are kept for its next request rather than filled by
        another's; a caller held back after a 429 takes no part)."""
        callers = set(self.running)
        callers.update(key for key in self.waiting if self._may_start(key, now))
        return self.limit if len(callers) <= 1 else max(1, self.limit // len(callers))

    def _may_start(self, key: Hashable, now: float) -> bool:
        hold = self.holds.get(key)
        return hold is None or (now >= hold.until and hold.probe is None)

    def wait_seconds(self, now: float) -> float | None:
        """How long until a held request may start (None: nothing waits for a time; a finished
        request or a new one wakes the threads)."""
        ends = [hold.until for key, hold in self.holds.items()
                if hold.probe is None and key in self.waiting]
        return max(0.0, min(ends) - now) if ends else None

    def refused(self, ticket: Ticket, seconds: float, now: float) -> None:
        """The request is being answered 429 with Retry-After `seconds`: its user's next requests
        wait (held as the answer is made, before the client can read it and ask again)."""
        ticket.refused = True
        if ticket.user is not None:  # its token's requests queued before it was known, too
            for key in {ticket.key, ("user", ticket.user)}:
                self.holds[key] = Hold(now + min(seconds, HOLD_SECONDS))
            if len(self.holds) > MAX_HOLDS:
                self._forget_old_holds(now)

    def finished(self, ticket: Ticket, now: float) -> bool:
        """A request was answered. True when more than the one request its thread takes next may
        start now: held ones let in, or the shares grown for callers that reached theirs."""
        key = ticket.key
        before = self.share(now)
        if not ticket.long_lived:
            self._not_served(ticket)
        hold = self.holds.get(key)
        if hold is not None and hold.probe is ticket and not ticket.refused:
            del self.holds[key]
            return key in self.waiting
        return self.share(now) > before and any(self.running.get(waiting, 0) >= before
                                                for waiting in self.waiting)

    def streaming(self, ticket: Ticket) -> None:
        """The request is an event stream, answered for as long as it lasts: it no longer counts
        among the requests served (its caller's, or the limit); as a hold's probe, it was let in
        (its caller's other requests need not wait for it to end)."""
        if not ticket.long_lived:
            ticket.long_lived = True
            self._not_served(ticket)
        hold = self.holds.get(ticket.key)
        if hold is not None and hold.probe is ticket:
            del self.holds[ticket.key]

    def _not_served(self, ticket: Ticket) -> None:
        self.busy -= 1
        left = self.running[ticket.key] - 1
        if left:
            self.running[ticket.key] = left
        else:
            del self.running[ticket.key]

    def serving(self, ticket: Ticket, user: object) -> None:
        """The request is the user's: so are its token's next requests."""
        ticket.user = user
        if ticket.token is not None:
            if ticket.token not in self.users and len(self.users) >= MAX_KNOWN_TOKENS:
                self.users.clear()
            self.users[ticket.token] = ("user", user)

    def _forget_old_holds(self, now: float) -> None:
        for key in [key for key, hold in self.holds.items()
                    if hold.probe is None and hold.until < now - FORGET_HOLD_SECONDS]:
            del self.holds[key]

    def popleft(self):
        """Any waiting request's connection, oldest first (waitress' shutdown cancels them)."""
        key = min(self.waiting, key=lambda key: self.waiting[key][0].arrived)
        tickets = self.waiting[key]
        ticket = tickets.popleft()
        if not tickets:
            del self.waiting[key]
        self.size -= 1
        return ticket.channel


class LifoCondition(threading.Condition):
    """waitress' request threads wait on one condition, and Python's notify() wakes the one that
    has waited longest: every request went to another of the 58 threads (8, plus 50 kept for
    event streams), each with its own SQLite connection and page cache, so under load all of
    them grew one (server RSS 300 MiB under bench/load.py) and each request ran on cold caches.
    This notify() wakes the thread that waited last: the threads a load needs stay warm and the
    others stay idle. (CPython's Condition keeps its waiters in `_waiters`, oldest first.)"""

    def notify(self, n: int = 1) -> None:
        if not self._is_owned():
            raise RuntimeError("cannot notify on un-acquired lock")
        waiters = self._waiters
        while waiters and n > 0:
            waiter = waiters.pop()
            try:
                waiter.release()
            except RuntimeError:  # already released: a waiter that timed out
                continue
            n -= 1


# .ticket: the request this thread serves; .dispatcher: the TurnDispatcher whose thread it is
_serving = threading.local()


class TurnDispatcher(ThreadedTaskDispatcher):
    """waitress' task dispatcher with the queue by caller (TurnQueue) and the last idle thread
    woken first (LifoCondition)."""

    def __init__(self, clock: Callable[[], float], limit: int):
        super().__init__()
        self.queue = TurnQueue(limit)  # type: ignore[assignment]  # a deque's len(), popleft()
        self.queue_cv = LifoCondition(self.lock)
        self.clock = clock

    def add_task(self, task) -> None:
        with self.lock:
            self.queue.append(task)
            self.queue_cv.notify()

    def handler_thread(self, thread_no: int) -> None:
        while True:
            with self.lock:
                ticket = None
                while self.stop_count == 0:
                    ticket = self.queue.take(self.clock())
                    if ticket is not None:
                        break
                    self.active_count -= 1
                    self.queue_cv.wait(self.queue.wait_seconds(self.clock()))
                    self.active_count += 1
                if ticket is None:  # told to stop
                    self.active_count -= 1
                    self.stop_count -= 1
                    self.threads.discard(thread_no)
                    self.thread_exit_cv.notify()
                    return
            _serving.ticket, _serving.dispatcher = ticket, self
            try:
                ticket.channel.service()
            except BaseException:
                self.logger.exception("Exception when servicing %r", ticket.channel)
            finally:
                _serving.ticket = _serving.dispatcher = None
                with self.lock:
                    if self.queue.finished(ticket, self.clock()):
                        self.queue_cv.notify(self.queue.limit)

    def streaming(self, ticket: Ticket) -> None:
        with self.lock:
            self.queue.streaming(ticket)
            if self.queue:
                self.queue_cv.notify(self.queue.limit)

    def serving(self, ticket: Ticket, user: object) -> None:
        with self.lock:
            self.queue.serving(ticket, user)

    def refused(self, ticket: Ticket, seconds: float) -> None:
        with self.lock:
            self.queue.refused(ticket, seconds, self.clock())
            if self.queue:  # the others' shares may have grown
                self.queue_cv.notify(self.queue.limit)


def serving_user(user_id: object) -> None:
    """The request this thread serves is the user's: its token's next requests will be too.
    Outside a TurnDispatcher's thread (the in-process client), nothing."""
    ticket = getattr(_serving, "ticket", None)
    if ticket is not None:
        _serving.dispatcher.serving(ticket, user_id)


def streaming() -> None:
    """The request this thread serves is an event stream: it holds its thread for as long as it
    lasts, beside the requests served at once (it has a thread of its own)."""
    ticket = getattr(_serving, "ticket", None)
    if ticket is not None:
        _serving.dispatcher.streaming(ticket)


def with_refusals_held(app: Callable) -> Callable:
    """WSGI middleware: an answer 429 holds its user's next requests back for its Retry-After
    (at most HOLD_SECONDS), from the moment the answer is made."""

    def held_app(environ, start_response):
        def start(status, headers, exc_info=None):
            if status.startswith("429"):
                ticket = getattr(_serving, "ticket", None)
                if ticket is not None:
                    _serving.dispatcher.refused(ticket, _seconds(headers))
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return held_app


def _seconds(headers) -> float:
    for name, value in headers:
        if name.lower() == "retry-after":
            try:
                return max(0.0, float(value))
            except ValueError:
                break
    return HOLD_SECONDS
