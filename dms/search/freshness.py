"""What the tantivy index holds of the outbox, and the searches waiting for their caller's changes
("done" means findable; dms.search.indexer applies the rows, dms.search.service asks).

- **Marks.** `applied`: every outbox row up to it is in the index's last reload; `owner_applied`
  per owner: every row of that owner's nodes up to it is (their rows applied ahead of the
  others'). The indexer moves them only after a commit and a reload, so no crash, failed commit,
  rebuild or idle close of the writer can make them claim more than the index has. Rows of nodes
  deleted or in the trash do not count for an owner (dms.search.outbox.OF_OWNER).
- **Waiting.** A search finds the newest row of its caller's nodes that the index lacks and, if
  there is one, waits on `changed` until the marks pass it — at most the seconds it is given, and
  past SHORT_WAIT_SECONDS only while fewer than LONG_WAITS_PER_OWNER searches of the same user
  wait that long. It waits for its own caller's rows only: another user's never hold it.
- **Looking.** Where each owner's searches last looked through the outbox is remembered, so the
  next search looks only at rows written since (a search while another user's bulk import runs
  reads a few rows, not the whole look each time).

No I/O but the outbox's queries; in-process bookkeeping under one condition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from dms.search import outbox

# Every search may wait this long for its caller's changes (a burst of one user's searches, each
# the moment a document is done, is answered within a commit of the index); longer only
# LONG_WAITS_PER_OWNER searches of one user at a time, so that one user's many searches cannot
# hold the request threads while the index takes a large backlog of theirs.
SHORT_WAIT_SECONDS = 0.5
LONG_WAITS_PER_OWNER = 2


def _count(counts: dict[str, int], key: str, step: int) -> None:
    """Add `step` to `counts[key]`, the key gone at 0."""
    value = counts.get(key, 0) + step
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)


class Freshness:
    def __init__(self):
        self.applied = 0
        self._owner_applied: dict[str, int] = {}
        # owner id -> (seq, the newest row of their nodes up to it): how far their searches
        # have looked through the outbox.
        self._looked: dict[str, tuple[int, int | None]] = {}
        self._waiting: dict[str, int] = {}  # owner id -> searches waiting
        self._waiting_long: dict[str, int] = {}  # ... of them past SHORT_WAIT_SECONDS
        self.changed = threading.Condition()  # notified when a mark moves or the index's state

    def holds(self, owner_id: str) -> int:
        """The seq up to which the index holds every row of `owner_id`'s nodes."""
        return max(self.applied, self._owner_applied.get(owner_id, 0))

    def missing(self, owner_id: str) -> int | None:
        """The newest outbox row of `owner_id`'s nodes that the index lacks (None if none): one
        small query when the outbox holds nothing new."""
        holds, top = self.holds(owner_id), outbox.high_water_mark()
        looked, newest = self._looked.get(owner_id, (0, None))
        if looked < holds:
            looked, newest = holds, None
        if top > looked:
            found = outbox.newest_of(owner_id, looked, top)
            newest = max((seq for seq in (newest, found) if seq is not None), default=None)
            self._looked[owner_id] = (top, newest)
        return newest if newest is not None and newest > holds else None

    def wait(self, owner_id: str, target: int, seconds: float, going: Callable[[], bool],
             wake: Callable[[], None]) -> bool:
        """Wait until the index holds `owner_id`'s rows up to `target`, at most `seconds` (see
        the module docstring), while `going()` (the index ready, its writer not failing);
        `wake()` asks the indexer to look now. True if it holds them."""
        started = time.monotonic()
        deadline, long_wait = started + min(seconds, SHORT_WAIT_SECONDS), False
        with self.changed:
            _count(self._waiting, owner_id, 1)
            try:
                wake()
                while self.holds(owner_id) < target and going():
                    left = deadline - time.monotonic()
                    if left > 0:
                        self.changed.wait(left)
                    elif (not long_wait and seconds > SHORT_WAIT_SECONDS
                          and self._waiting_long.get(owner_id, 0) < LONG_WAITS_PER_OWNER):
                        _count(self._waiting_long, owner_id, 1)
                        deadline, long_wait = started + seconds, True
                    else:
                        break
            finally:
                _count(self._waiting, owner_id, -1)
                if long_wait:
                    _count(self._waiting_long, owner_id, -1)
            return self.holds(owner_id) >= target

    def waiting_owners(self) -> list[str]:
        """The owners whose searches wait now: their rows are applied first."""
        with self.changed:
            return list(self._waiting)

    def moved(self, applied: int | None = None, owner_id: str | None = None) -> None:
        """The index's last reload holds every row up to `applied` (of `owner_id`'s nodes, or of
        everyone's); without arguments: the index's state changed. Wakes the waiting searches."""
        with self.changed:
            if owner_id is not None:
                self._owner_applied[owner_id] = max(self.holds(owner_id), applied)
            elif applied is not None:
                self.applied = max(self.applied, applied)
                self._owner_applied = {owner: mark for owner, mark in
                                       self._owner_applied.items() if mark > self.applied}
                self._looked = {owner: looked for owner, looked in self._looked.items()
                                if looked[0] > self.applied}
            self.changed.notify_all()
