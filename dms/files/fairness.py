"""Fair shares of the pools that users fill: one user may not slow everyone.

Every pool a user's work can fill — the PDF readers of requests, rule dry runs, mail checks, rule
runs, webhook senders — is shared by turns, not first come, first served:

- **A share per user.** A user holds at most `per_owner` of a pool's `size` places at once, so a
  user whose work is slow or hostile (a Flate bomb, a tarpit IMAP server, a receiver that never
  answers) leaves the other places to the others.
- **The others go first.** When a place frees, it goes to the waiting user who holds the fewest
  places now; among equals, to the one who came first.
- **Bounded waiting.** A user has at most `waiting_per_owner` calls waiting for a place
  (`FairSlots`: a request thread waits); past it, the call is refused at once with a 429, so one
  user cannot pin the request threads either. A pool nobody waits for (`waiting_per_owner=0`)
  answers 429 at once when it has no place for the caller.

Who a piece of work is for is the *acting owner*: the web layer sets it for each request once the
caller is known, a worker for the document, account or run it works on (`acting_for`). A call
made for nobody in particular (the server's own work) counts as the owner None, one more user.

No database, no I/O: in-process bookkeeping under one lock per pool. Several processes each share
their own pools (a cluster's nodes are separate machines).

The processor is shared too. The child processes that do a user's heavy work (the PDF readers,
Tesseract) run behind the server's own threads (`run_behind`), so a Flate bomb being parsed or a
scan being read takes the cores only when the requests of everyone else leave them free. And
work in the server's own background threads that computes in Python (a dry run, a rule run, a
mail message parsed) gives way to requests (`yield_to_requests`): between its steps it pauses
while requests are being served, a little at a time, for Python runs one thread at a time and a
request thread would otherwise wait for the background's slices at each of its own steps.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field

from dms.errors import Throttled, Unavailable

_acting: contextvars.ContextVar[Hashable] = contextvars.ContextVar("dms_acting_owner",
                                                                   default=None)

# How much nicer than the server those children are: they get the cores the server's threads
# leave (10 steps nicer, a child gets about a tenth of a core the server's threads want; all of
# an idle one).
BEHIND_NICENESS = 10
MOST_NICENESS = 19


def run_behind(pid: int, steps: int = BEHIND_NICENESS) -> None:
    """Lower a child process' CPU priority to `steps` below the server's own (at most to the
    lowest there is); where that is not allowed, it stays as it is. A process cannot be given
    its priority back without privileges: a child lowered further is not lent again."""
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(MOST_NICENESS, own + steps))
    except (OSError, AttributeError):  # the child gone already, or no such call on this system
        pass


# A background step waits at most this long for the requests in flight (then goes on however
# busy the server is: under a steady stream of requests the background still makes progress).
YIELD_SECONDS = 0.02


class _Serving:
    """The requests this process is serving now (dms.web counts them)."""

    def __init__(self):
        self.count = 0
        self.idle = threading.Condition()


_serving = _Serving()
_in_request: contextvars.ContextVar[bool] = contextvars.ContextVar("dms_in_request",
                                                                 default=False)


class serving:  # noqa: N801 (a context manager, named as the functions beside it)
    """A request served (in this thread) for `owner` for the length of the block: counted for
    yield_to_requests, its work against the owner's shares (acting_for). A class: cheaper."""

    __slots__ = ("owner", "tokens")

    def __init__(self, owner: Hashable = None):
        self.owner = owner

    def __enter__(self) -> None:
        with _serving.idle:
            _serving.count += 1
        self.tokens = (_in_request.set(True), _acting.set(self.owner))

    def __exit__(self, *exc_info: object) -> None:
        _acting.reset(self.tokens[1])
        _in_request.reset(self.tokens[0])
        with _serving.idle:
            _serving.count -= 1
            if _serving.count <= 1:
                _serving.idle.notify_all()


def yield_to_requests(longest: float = YIELD_SECONDS) -> None:
    """Between two steps of long work: wait (at most `longest`) while requests are being served
    — other requests than the caller's own, when the work is a request's (a dry run). Costs
    nothing when none is."""
    mine = 1 if _in_request.get() else 0
    if _serving.count <= mine:
        return
    with _serving.idle:
        _serving.idle.wait_for(lambda: _serving.count <= mine, longest)


def current_owner() -> Hashable:
    """Whom the work of this thread is for now (None: the server itself)."""
    return _acting.get()


@contextlib.contextmanager
def acting_for(owner: Hashable) -> Iterator[None]:
    """Work done inside counts against `owner`'s shares and turns."""
    token = _acting.set(owner)
    try:
        yield
    finally:
        _acting.reset(token)


def share_of(size: int) -> int:
    """The usual share of one user in a pool of `size` places: half of it (at least one), so a
    single user's slow work leaves the other half to everyone else."""
    return max(1, size // 2)


@dataclass(frozen=True)
class Refusals:
    """The sentences a pool answers with; `{limit}` is filled in."""
    waiting: str = "Too many of your requests wait for the same work; try again in a moment."
    busy: str = "The server is busy with other users' work; try again in a moment."
    retry_after: int = 5


class FairSlots:
    """`size` places taken by calling threads for the time of a `with slot():` block, shared by
    turns (see the module docstring)."""

    def __init__(self, size: int, per_owner: int | None = None, waiting_per_owner: int = 2,
                 refusals: Refusals = Refusals()):
        self.size = size
        self.per_owner = per_owner if per_owner is not None else share_of(size)
        self.waiting_per_owner = waiting_per_owner
        self.refusals = refusals
        self._condition = threading.Condition()
        self._held: dict[Hashable, int] = {}
        self._waiting: deque[tuple[int, Hashable]] = deque()  # (ticket, owner), in arrival order
        self._tickets = itertools.count()

    @contextlib.contextmanager
    def slot(self, wait: float, owner: Hashable = ...) -> Iterator[None]:
        """Hold one place for the block; waits at most `wait` seconds for one (then
        Unavailable). `owner` defaults to the acting owner."""
        owner = current_owner() if owner is ... else owner
        self.acquire(owner, wait)
        try:
            yield
        finally:
            self.release(owner)

    def acquire(self, owner: Hashable, wait: float) -> None:
        deadline = time.monotonic() + wait
        with self._condition:
            if self._may_take(owner, None):
                self._take(owner)
                return
            # The owner's calls in all, held and waiting: a call that ends and is followed at
            # once by its client's next one finds the place it left not yet taken by the waiter
            # it went to (still counted as waiting), but the held one no longer counted.
            mine = self._held.get(owner, 0) + sum(1 for _, o in self._waiting if o == owner)
            if not self.waiting_per_owner \
                    or mine >= self.per_owner + self.waiting_per_owner:
                # Their own calls fill their turn, or (a pool nobody waits for) other users'.
                raise Throttled(self.refusals.waiting if mine else self.refusals.busy,
                                self.refusals.retry_after)
            ticket = next(self._tickets)
            self._waiting.append((ticket, owner))
            try:
                while not self._may_take(owner, ticket):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Unavailable(self.refusals.busy)
                    self._condition.wait(left)
            finally:
                self._waiting.remove((ticket, owner))
                self._condition.notify_all()  # the next in turn may be someone else now
            self._take(owner)

    def release(self, owner: Hashable) -> None:
        with self._condition:
            left = self._held[owner] - 1
            if left:
                self._held[owner] = left
            else:
                del self._held[owner]
            self._condition.notify_all()

    def held(self) -> dict[Hashable, int]:
        with self._condition:
            return dict(self._held)

    # -- under the lock ---------------------------------------------------------------------------
    def _may_take(self, owner: Hashable, ticket: int | None) -> bool:
        """A place is free, `owner` is under its share, and no waiter of an owner under its share
        goes before this one (fewer places held, then earlier)."""
        if sum(self._held.values()) >= self.size or self._held.get(owner, 0) >= self.per_owner:
            return False
        # A newcomer queues behind the waiters of its rank (a place freed for a waiter is not
        # taken by whoever arrives before the waiter wakes).
        mine = (self._held.get(owner, 0), ticket if ticket is not None else float("inf"))
        for other_ticket, other in self._waiting:
            if other_ticket == ticket or self._held.get(other, 0) >= self.per_owner:
                continue
            if (self._held.get(other, 0), other_ticket) < mine:
                return False
        return True

    def _take(self, owner: Hashable) -> None:
        self._held[owner] = self._held.get(owner, 0) + 1


@dataclass(order=True)
class _Task:
    ticket: int
    owner: Hashable = field(compare=False)
    run: Callable[[], object] = field(compare=False)
    future: Future = field(compare=False)


class FairExecutor:
    """`threads` threads running submitted work by turns: a user runs at most `per_owner` tasks
    at once, and a freed thread takes the task of the user running the fewest now (then the
    oldest task). `submit` never blocks; the callers bound what they queue."""

    def __init__(self, threads: int, name: str, per_owner: int | None = None):
        self.threads = threads
        self.per_owner = per_owner if per_owner is not None else share_of(threads)
        self.name = name
        self._condition = threading.Condition()
        self._queued: list[_Task] = []
        self._running: dict[Hashable, int] = {}
        self._tickets = itertools.count()
        self._workers: list[threading.Thread] = []
        self._shutdown = False

    def submit(self, owner: Hashable, run: Callable[..., object], *args) -> Future:
        """Run `run(*args)` on a thread of the pool, in `owner`'s turn and acting for them."""
        future: Future = Future()
        with self._condition:
            if self._shutdown:
                raise RuntimeError(f"{self.name} is shut down")
            self._queued.append(_Task(next(self._tickets), owner,
                                      lambda: run(*args), future))
            if len(self._workers) < self.threads:
                worker = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self.name}-{len(self._workers)}")
                self._workers.append(worker)
                worker.start()
            self._condition.notify_all()
        return future

    def running(self) -> dict[Hashable, int]:
        with self._condition:
            return dict(self._running)

    def queued(self) -> int:
        with self._condition:
            return len(self._queued)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """No new work; queued work is dropped when `cancel_futures`, else it still runs."""
        with self._condition:
            self._shutdown = True
            if cancel_futures:
                for task in self._queued:
                    task.future.cancel()
                self._queued.clear()
            self._condition.notify_all()
            workers = list(self._workers)
        if wait:
            for worker in workers:
                if worker is not threading.current_thread():
                    worker.join()

    def _next(self) -> _Task | None:
        """Under the lock: the task whose turn it is, or None."""
        best: _Task | None = None
        best_key: tuple[int, int] | None = None
        for task in self._queued:
            running = self._running.get(task.owner, 0)
            if running >= self.per_owner:
                continue
            key = (running, task.ticket)
            if best_key is None or key < best_key:
                best, best_key = task, key
        return best

    def _work(self) -> None:
        while True:
            with self._condition:
                while True:
                    task = self._next()
                    if task is not None:
                        break
                    if self._shutdown and not self._queued:
                        return
                    self._condition.wait()
                self._queued.remove(task)
                self._running[task.owner] = self._running.get(task.owner, 0) + 1
            try:
                if task.future.set_running_or_notify_cancel():
                    with acting_for(task.owner):
                        try:
                            task.future.set_result(task.run())
                        except BaseException as error:  # the caller's future carries it
                            task.future.set_exception(error)
            finally:
                with self._condition:
                    left = self._running[task.owner] - 1
                    if left:
                        self._running[task.owner] = left
                    else:
                        del self._running[task.owner]
                    self._condition.notify_all()


class Penalties:
    """Owners whose work keeps failing at a pool's limits wait before they may start more (a user
    uploading Flate bombs, each refused only after seconds of a reader's time).

    `free` such failures within `window` seconds cost nothing (a damaged scan happens); each one
    past them closes the door for `first` seconds, twice as long for every further one, at most
    `longest`. The owner None (the server's own work) is never held back."""

    def __init__(self, message: str, free: int = 3, window: float = 600.0, first: float = 30.0,
                 longest: float = 600.0, clock: Callable[[], float] = time.monotonic):
        self.message = message
        self.free, self.window, self.first, self.longest = free, window, first, longest
        self._clock = clock
        self._lock = threading.Lock()
        self._strikes: dict[Hashable, deque[float]] = {}
        self._closed_until: dict[Hashable, float] = {}

    def strike(self, owner: Hashable) -> None:
        if owner is None:
            return
        now = self._clock()
        with self._lock:
            self._forget(now)
            strikes = self._strikes.setdefault(owner, deque())
            strikes.append(now)
            past = len(strikes) - self.free
            if past > 0:
                self._closed_until[owner] = now + min(self.longest,
                                                      self.first * 2 ** (past - 1))

    def struck(self, owner: Hashable) -> bool:
        """Whether `owner`'s work failed at the limits within the window."""
        with self._lock:
            self._forget(self._clock())
            return owner in self._strikes

    def check(self, owner: Hashable) -> None:
        """Throttled while `owner`'s door is closed."""
        if owner is None:
            return
        with self._lock:
            until = self._closed_until.get(owner)
        if until is not None:
            wait = until - self._clock()
            if wait > 0:
                seconds = max(1, int(wait + 0.999))
                raise Throttled(self.message.format(seconds=seconds), seconds)

    def _forget(self, now: float) -> None:
        """Under the lock: strikes older than the window, and doors open again (bounded by the
        owners who struck within the window)."""
        for owner in list(self._strikes):
            strikes = self._strikes[owner]
            while strikes and strikes[0] <= now - self.window:
                strikes.popleft()
            if not strikes:
                del self._strikes[owner]
        for owner, until in list(self._closed_until.items()):
            if until <= now:
                del self._closed_until[owner]
