"""One background thread that runs rounds until it is stopped, and can be woken between them: the
search indexer (dms.search.indexer), the event streams' watch (dms.notify.streams), the webhooks'
scanner (dms.notify.deliverer) and the consume folder's watch (dms.intake.consume).

A round is the owner's function (`body`), called again and again while the loop is not
stopping. It waits inside with `wait(seconds)`: until woken (`wake()`, e.g. when a write
commits) or stopped, at most `seconds`, the wake-up used up; or with `rest(seconds)`: until
stopped only, a gap that a burst of wake-ups does not shorten. Long work in a round looks at
`stopping` to end early. `stop(timeout)` is `stop_soon()` then `join(timeout)`: an owner that
must tell others between the two (the indexer's waiting searches, the webhooks' senders) calls
them itself.

The thread is a daemon, so a join that times out leaves it to the process's exit. Errors are the
round's to handle: one that escapes ends the thread (threading's excepthook logs it). No I/O of
its own, and nothing of users or documents.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class BackgroundLoop:
    """`body` run round after round in a thread named `name`, from `start()` until `stop()`."""

    def __init__(self, name: str, body: Callable[[], None]):
        self.name = name
        self._body = body
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._body()

    @property
    def stopping(self) -> bool:
        """True from `stop_soon()` until the next `start()` (also when never started)."""
        return self._stopping.is_set()

    def wake(self) -> None:
        """End the round's `wait` now (or the next one, if it is not waiting)."""
        self._wake.set()

    def stop_soon(self) -> None:
        """Ask the thread to stop after the round at hand, waking it; returns at once."""
        self._stopping.set()
        self._wake.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end, at most `timeout` seconds (None: however long)."""
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def stop(self, timeout: float | None = None) -> None:
        self.stop_soon()
        self.join(timeout)

    # -- for the round ----------------------------------------------------------------------------
    def wait(self, seconds: float) -> bool:
        """Until woken or stopping, at most `seconds`; True if woken. The wake-up is used up."""
        woken = self._wake.wait(seconds)
        self._wake.clear()
        return woken

    def rest(self, seconds: float) -> bool:
        """Until stopping, at most `seconds`, however often the loop is woken; True if
        stopping."""
        return self._stopping.wait(seconds)
