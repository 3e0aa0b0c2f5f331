"""The one writer of the search index: a thread of the server that keeps the index exactly in
step with the database through the outbox (dms.search.outbox).

- At start-up it checks the index's marker; an index that is missing, from another version, or
  (found when it is opened) broken is rebuilt from the database while searches answer 503 with
  the progress: a small one in this thread, a large one in a process of its own
  (dms.search.build), so that the requests keep the interpreter to themselves.
- It applies the outbox: the changed nodes' current state is written to the index, the index
  commits and is reloaded, and only then are those outbox rows deleted. A crash anywhere in
  between leaves rows that are applied again at the next start: nothing is lost or doubled.
- It wakes when a write transaction of this process commits (dms.db.on_commit) and at least every
  POLL_SECONDS (for writes of other processes, such as `dms verify --repair`).
- Memory: the index is opened when first needed (a search, a change) and let go after
  IDLE_CLOSE_SECONDS without either, so an idle appliance does not keep it mapped; under steady
  use it is let go and opened again every RENEW_SECONDS, as what tantivy allocates for an open
  index grows with its commits and searches (an hour of mixed load: +40 MiB, flat when renewed,
  bench/RESULTS.md).
- "Done" means findable. A search first asks `catch_up(owner)`: if the outbox holds
  a row of one of the caller's nodes that the index lacks, committed before the search began (a
  document whose status just turned `succeeded`), the search wakes this thread and waits until
  the index holds it (dms.search.freshness: the marks of what the index holds, moved here after
  each commit and reload). This thread applies the rows of owners with waiting searches first,
  in batches of their own, then one batch of the oldest rows, and looks again: another user's
  backlog (a bulk import) delays a waiting search by one batch at most.

A rebuild reads the database while the server keeps writing: it notes the newest outbox row
first, indexes every node, then deletes the rows up to that mark; changes made meanwhile have
newer rows and are applied after it. `search.lock` in the data dir is held for the life of the
server, so `dms reindex` knows to ask the running server for a rebuild instead of writing itself.
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from pathlib import Path

from dms.db import database, is_disk_full
from dms.files.loop import BackgroundLoop
from dms.search import build, outbox
from dms.search.freshness import Freshness
from dms.search.index import IndexUnusable, SearchIndex, Snapshot
from dms.search.overlay import Overlaid, Overlays

log = logging.getLogger("dms.search")

POLL_SECONDS = 1.0
# Changes come in bursts (an import, a script, a rule run): the indexer gathers them this long
# after a commit woke it, unless a search waits for some. Fewer commits of the index (each some
# 15 ms of writing and syncing, more on a busy machine), so a search that waits finds the indexer
# free, not in the middle of committing another user's changes.
GATHER_SECONDS = 0.1
# The writer (its indexing and merge threads, its 32 MiB budget's tables: ~2 MiB resident when
# idle) is let go after this long without changes; opening it again costs ~10 ms.
IDLE_CLOSE_SECONDS = 5.0
# An index kept open by steady use is let go after this long (at the end of a step or a batch of
# this thread; searches in flight keep the commit they read) and opened again by the next use.
RENEW_SECONDS = 120.0
BATCH_ROWS = 2000  # outbox rows applied per index commit
RETRY_SECONDS_MAX = 60.0

STARTING, REBUILDING, READY, STOPPED = "starting", "rebuilding", "ready", "stopped"


class WriterLock:
    """An exclusive, advisory lock on `<data-dir>/search.lock`, released when the process ends."""

    def __init__(self, path: Path):
        self.path = path
        self._file = None

    def acquire(self) -> bool:
        if self._file is not None:
            return True
        self._file = open(self.path, "a+")  # noqa: SIM115 (held open: the lock lives with it)
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            self._file = None
            return False
        return True

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    def fileno(self) -> int:
        """The held lock's file (a child process given it holds the lock with this process)."""
        assert self._file is not None, "the lock is not held"
        return self._file.fileno()


class Indexer:
    def __init__(self, data_dir: Path):
        self.index = SearchIndex(data_dir / "search")
        self.lock = WriterLock(data_dir / "search.lock")
        self.state = STARTING
        self.progress = (0, 0)  # nodes indexed, nodes to index (during a rebuild)
        self._writer = None
        self._open_lock = threading.Lock()  # opening and closing the index
        self._last_used = time.monotonic()
        self._opened_at: float | None = None  # when a step of this thread first found it open
        self.renewals = 0  # times the index was let go by RENEW_SECONDS (for the tests)
        self._rebuild_wanted = False
        self._loop = BackgroundLoop("search-indexer", self._run)
        self._urgent = threading.Event()  # a search waits for the outbox (set with a wake-up)
        self._delay, self._disk_full = 1.0, False  # the back-off after a failed step
        self._waiting_for_lock = False
        self.fresh = Freshness()  # what the index holds of the outbox; searches waiting
        self._overlays = Overlays()  # each owner's changes it lacks, for their searches
        self._failing = False  # the last step failed: the thread waits out its back-off
        self._in_process = False  # every rebuild in this thread (`dms reindex`), however large

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._delay, self._disk_full = 1.0, False
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop_soon()
        self._hurry()
        self._loop.join(timeout=30)
        self._close()  # uncommitted work is simply done again from the outbox
        self.lock.release()
        self.state = STOPPED
        self.fresh.moved()

    def notify(self) -> None:
        """Something was committed: look at the outbox now."""
        self._loop.wake()

    @property
    def ready(self) -> bool:
        return self.state == READY

    def view(self, owner_id: str, seconds: float) -> Snapshot | Overlaid | None:
        """What a search of `owner_id`'s looks at: the index's last commit, and laid over it the
        owner's finished changes that it lacks (dms.search.overlay); where those are too many,
        the commit after waiting until the index holds them, at most `seconds`
        (dms.search.freshness). None while the index is not ready (the search answers 503);
        while its writer fails (it retries on its own time), the commit as it is."""
        if self._going():
            target = self.fresh.missing(owner_id)
            if target is None:
                self._overlays.forget(owner_id)
            else:
                laid = self._overlays.laid(owner_id, self.fresh.holds(owner_id), target)
                if laid is not None:
                    base = self.searchable()  # after the mark was read: it holds at least that
                    return None if base is None else Overlaid(base, *laid)
                # The wake-up: the row may be another process's (a worker's), not yet seen.
                self.fresh.wait(owner_id, target, seconds, self._going, self._hurry)
        return self.searchable()

    def _hurry(self) -> None:
        """A search waits: look at the outbox now, gathering nothing."""
        self._urgent.set()
        self._loop.wake()

    def _going(self) -> bool:
        return self.state == READY and not self._failing

    def status(self) -> dict:
        status = {"state": self.state, "pending_changes": outbox.pending_count()}
        if self.state == REBUILDING:
            status["indexed"], status["to_index"] = self.progress
        elif self.state == READY:
            status["indexed"] = self.searchable().count()
        return status

    def searchable(self) -> Snapshot | None:
        """The index's last commit to search, the index opened if it was not; None (and a
        rebuild on its way) if it cannot be."""
        if self.state != READY:
            return None
        self._last_used = time.monotonic()
        with self._open_lock:
            if not self.index.is_open:
                try:
                    self.index.open()
                except IndexUnusable as reason:
                    log.warning("rebuilding the search index: %s", reason)
                    self.state, self._rebuild_wanted = REBUILDING, True
                    self._loop.wake()
                    return None
            return self.index.snapshot()

    # -- the thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        """One round of the thread: a step, then a wait (the back-off after a failed one)."""
        try:
            self._step()
            self._delay, self._failing = 1.0, False
            if self._disk_full:
                log.info("the search index is written again: the disk has space")
                self._disk_full = False
        except Exception as error:
            if not is_disk_full(error):
                log.exception("the search indexer failed; retrying in %.0f s", self._delay)
            elif not self._disk_full:  # said once, not at every retry; searches still answer
                log.warning("the disk is full, so the search index holds the changes made "
                            "until now and takes the rest when there is space again")
                self._disk_full = True
            self._close()
            self._failing = True
            self.fresh.moved()  # waiting searches answer from the index as it is
            # The whole back-off: a commit meanwhile does not cut it short (the changes wait in
            # the outbox), or a busy server would have the indexer fail again and again at once.
            self._loop.rest(self._delay)
            self._delay = min(self._delay * 2, RETRY_SECONDS_MAX)
            return
        self._loop.wait(POLL_SECONDS)
        if not self._loop.stopping:
            self._urgent.wait(GATHER_SECONDS)
        self._urgent.clear()

    def _step(self) -> None:
        if not self.lock.acquire():
            if not self._waiting_for_lock:
                log.warning("another dms process writes the search index of this data dir; "
                            "waiting for it")
                self._waiting_for_lock = True
            self._loop.rest(5)  # commits cannot hurry another process' lock
            return
        self._waiting_for_lock = False
        if self.state == STARTING:
            try:
                self.index.check_marker()
                self.state = READY
            except IndexUnusable as reason:
                log.info("building the search index: %s", reason)
                self._rebuild_wanted = True
        if self._rebuild_wanted:
            self._rebuild()
        elif outbox.pending_count():
            self._apply_outbox()
        elif self._writer is not None and time.monotonic() - self._last_used > IDLE_CLOSE_SECONDS:
            self._close()
        self._renew_if_old()

    def _renew_if_old(self) -> None:
        """Let go of an index open for RENEW_SECONDS (counted from the first look that found it
        open; at the end of each step and each batch of changes): the next search or change
        opens it again, with what tantivy allocated for it freed."""
        if self.state != READY or not self.index.is_open:
            self._opened_at = None
        elif self._opened_at is None:
            self._opened_at = time.monotonic()
        elif time.monotonic() - self._opened_at > RENEW_SECONDS:
            self._close()
            self.renewals += 1

    def _open_writer(self) -> bool:
        if self._writer is None:
            if self.searchable() is None:
                return False
            with self._open_lock:
                self._writer = self.index.writer()
        self._last_used = time.monotonic()
        return True

    def _close(self) -> None:
        with self._open_lock:
            self._writer = None
            self.index.close()

    def _rebuild(self) -> None:
        self.state = REBUILDING
        self._rebuild_wanted = True  # until done: a failed build is tried again (_step)
        self.fresh.moved()  # waiting searches answer 503 now
        self._close()
        started = time.monotonic()
        mark = outbox.high_water_mark()
        total = outbox.node_count()
        self.progress = (0, total)
        try:
            if total <= build.IN_PROCESS_NODES or self._in_process:
                with self._open_lock:
                    done, writer = build.build(self.index, total, self._progress,
                                               lambda: self._loop.stopping)
                self.index.reload()
                self._writer, self._last_used = writer, time.monotonic()
                where = ""
            else:
                child = build.BuildProcess(self.index.directory, database.database,
                                           self.lock.fileno())
                done = child.follow(self._progress, lambda: self._loop.stopping)
                where = " (in a process of its own)"
        except build.Stopped:
            return  # not marked complete: the next start builds it again
        self.progress = (done, done)
        self._rebuild_wanted = False
        self.fresh.moved(mark)
        self.state = READY
        outbox.applied(mark)  # after READY: an empty outbox means searches see everything
        log.info("search index built%s: %d folders and documents in %.1f s", where, done,
                 time.monotonic() - started)

    def _progress(self, done: int, total: int) -> None:
        self.progress = (done, total)

    def _apply_outbox(self) -> None:
        while not self._loop.stopping:
            for owner_id in self.fresh.waiting_owners():
                if not self._apply_first(owner_id):
                    return
            rows = outbox.pending(BATCH_ROWS)
            if not rows:
                return
            node_ids = list(dict.fromkeys(node_id for _, node_id in rows))
            if outbox.REBUILD in node_ids:
                self._rebuild()
                continue
            if not self._apply(node_ids):
                return
            self.fresh.moved(rows[-1][0])
            outbox.applied(rows[-1][0])
            self._renew_if_old()  # changes that never pause keep this loop going

    def _apply_first(self, owner_id: str) -> bool:
        """Apply the rows of `owner_id`'s nodes ahead of the others (a search of theirs waits),
        up to the newest row now, a batch or a window of rows looked through at a time; False
        if the index turned out broken."""
        top = outbox.high_water_mark()
        while not self._loop.stopping:
            after = self.fresh.holds(owner_id)
            if after >= top:
                break
            rows, up_to = outbox.pending_of(owner_id, after, BATCH_ROWS)
            if up_to <= after:
                break  # nothing left after `after` (already applied by the others' turns)
            if rows and not self._apply(list(dict.fromkeys(node_id for _, node_id in rows))):
                return False
            self.fresh.moved(up_to, owner_id)
            if rows:
                outbox.applied_rows([seq for seq, _ in rows])
        return True

    def _apply(self, node_ids: list[str]) -> bool:
        """Put these nodes' current state in the index, commit and reload; False if the index
        turned out broken (rebuilt on the next step)."""
        if not self._open_writer():
            return False
        for node_id, entry in outbox.entries(node_ids):
            self.index.put(self._writer, node_id, entry)
        self._writer.commit()
        self.index.reload()
        return True

    # -- without a server ----------------------------------------------------------------------
    def rebuild_now(self) -> int:
        """`dms reindex` when no server runs: rebuild in this process, return the node count."""
        if not self.lock.acquire():
            raise RuntimeError("the search index is being written by another process")
        self._in_process = True  # this process does nothing else
        try:
            self._rebuild()
            return self.progress[0]
        finally:
            self._close()
            self.lock.release()
