"""Splits in the background (docs/api.md, "Splits in the background"): a split too large for one
request (dms.domain.splits) is a `split_run` row whose parts a worker makes a batch at a time,
resumable after a crash, never making a part twice.

A run is queued, then running, then succeeded or failed. A worker of some node claims it with a
lease in the database (`worker_id`, `lease_until`, for DMS_LEASE_SECONDS, as rule runs do:
dms.domain.rules.runs). A split at separator sheets that the request could not find cheaply
first looks at the pages, SCAN_PAGES per PDF reader lent (others have their turn between), the
lease renewed after each share, and commits its plan; killed meanwhile, it looks again (nothing
was made). Then batch after batch: at most splits.BATCH_PARTS parts built by the PDF readers and
stored durably outside any transaction, then one write transaction (dms.domain.pages.commit) that
checks the source is unchanged (live, the same latest version, in the same folder), writes the
parts with their history, their `split_part` rows and the cursor `parts_made` — only if the lease
is still this worker's and the cursor where it read it. The last batch puts the source in the
trash and ends the run. So a run killed half-way has exactly the batches it committed, and
whoever resumes it starts after the last of them. Nothing of a batch is kept after it: memory
stays bounded whatever the number of parts; another writer waits for one batch's rows at most.

The source changed meanwhile (a new version or another page operation, moved, deleted): the run
fails saying how many parts were made. Those stay (each a whole document of its pages, in the
folder) and the source stays as it is: nothing made is undone behind the owner's back. A page a
reader cannot read fails the run the same way, with the reader's sentence. A busy reader pool, a
busy database or a full disk is waited out (RETRY_SECONDS), the lease kept.

Fair turns: runs go on a TurnPool (dms.domain.turnpool) of PARALLEL_SPLITS threads,
RUNS_PER_USER running run per user, and a run gives its thread back after a slice of
SLICE_SECONDS (whole batches), behind other users' runs. A user has at most
MAX_ACTIVE_RUNS_PER_USER runs queued or running (429 past it), a document one (409). Resuming: at
every start and periodically (dms.runtime's PERIODIC_JOBS, DMS_SPLIT_RUNS_MINUTES) each node
takes up the runs whose lease expired; stopping a node gives its leases back after the batch at
hand.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from dms.db import database, document_scope, owner_scope, write_transaction
from dms.db.models import DocumentVersion, Node, SplitRun, User, new_id, utcnow
from dms.domain import splits
from dms.domain.listings import NodeRow, row_columns
from dms.domain.ownership import owned
from dms.domain.pages import separators
from dms.domain.pages.build import Builder, refusal
from dms.domain.pages.commit import Emptied, Kept, Operation, commit
from dms.domain.pages.operations import all_pages
from dms.domain.services import Services
from dms.domain.turnpool import FAILED, QUEUED, RUNNING, SUCCEEDED, RunLeases, TurnPool
from dms.errors import Conflict, Invalid, StorageFull, Throttled, Unavailable
from dms.files.pdf import UnreadablePdf

log = logging.getLogger("dms.splits")

MAX_ACTIVE_RUNS_PER_USER = 5  # queued or running; past it, 429
KEEP_RUNS_PER_USER = 100  # finished runs kept; older ones are deleted as new ones start
PARALLEL_SPLITS = 2  # threads of one node running runs
RUNS_PER_USER = 1  # of those, one user's at once
SLICE_SECONDS = 30.0
SCAN_PAGES = splits.LOOKS_IN_REQUEST  # pages looked at per reader lent: a request's share
RETRY_SECONDS = 10.0
RETRY_AFTER_SECONDS = 10


class _LeaseLost(Exception):
    """This worker stalled and another took the run over: its batch is undone."""


LEASES = RunLeases("split_run")


def changed_meanwhile(made: int, parts: int | None) -> str:
    return (f"The document changed while it was being split (a new version, another page "
            f"operation, a move or a deletion came first): {made} of {parts or 'its'} parts were "
            "made and stay in its folder; the document was left as it is.")


def start_run(user: User, plan: splits.Plan) -> SplitRun:
    """A new queued run of a split (the caller's runs under way: at most
    MAX_ACTIVE_RUNS_PER_USER; a document's: one)."""
    run_id, document = new_id(), plan.document
    with write_transaction(owner_scope(user.id), document_scope(document.id)):
        splits.refuse_while_under_way(document.id)
        if LEASES.under_way(user.id) >= MAX_ACTIVE_RUNS_PER_USER:
            raise Throttled(f"You have {MAX_ACTIVE_RUNS_PER_USER} splits under way; try again "
                            "when one has finished.", RETRY_AFTER_SECONDS)
        SplitRun.insert(
            id=run_id, owner=user.id, document_id=document.id, version_id=plan.version.id,
            folder_id=document.parent_id, title=document.title, kind=plan.kind,
            plan=None if plan.parts is None else json.dumps(plan.parts),
            parts=None if plan.parts is None else len(plan.parts), state=QUEUED,
            created_at=utcnow()).execute()
        LEASES.forget_finished(user.id, KEEP_RUNS_PER_USER)
    return SplitRun.get_by_id(run_id)


def owned_run(user: User, run_id: str) -> SplitRun:
    return owned(SplitRun, user, run_id)


class PartListing:
    """GET /split-runs/{id}/documents/: the live documents a run made, by part number."""

    FROM = ("FROM split_part AS p JOIN node AS n ON n.id = p.document_id "
            "WHERE p.run_id = ? AND n.trash_id IS NULL")

    def __init__(self, run_id: str):
        self.run_id = run_id

    def count(self) -> int:
        return cast(int, database.execute_sql(f"SELECT count(*) {self.FROM}",
                                              (self.run_id,)).fetchone()[0])

    def fetch(self, offset: int, limit: int) -> list[NodeRow]:
        return [NodeRow._make(row) for row in database.execute_sql(
            f"SELECT {row_columns('n.')} {self.FROM} ORDER BY p.number LIMIT ? OFFSET ?",
            (self.run_id, limit, offset))]


def parts_of(user: User, run_id: str) -> PartListing:
    return PartListing(owned_run(user, run_id).id)


def execute(services: Services, run_id: str, worker_id: str, stopping: Callable[[], bool],
            slice_seconds: float = SLICE_SECONDS) -> float | None:
    """Run (or resume) a run for a slice of about `slice_seconds` (whole batches). None when it
    ended, is no longer this worker's, or `stopping()` (then its lease is given back); else when
    to go on, keeping the lease: 0 for its next slice, behind other users' runs, or seconds to
    wait (a busy reader pool or database, a full disk)."""
    if not LEASES.claim(run_id, worker_id, services.config.lease_seconds):
        return None
    slice_end = time.monotonic() + slice_seconds
    with Builder(services) as builder:  # a TIFF or image becomes a PDF once per slice
        while not stopping():
            try:
                if not _step(services, builder, run_id, worker_id, stopping):
                    return None
            except (Unavailable, Throttled, StorageFull) as error:
                log.info("split run %s waits: %s", run_id, error.message)
                return RETRY_SECONDS
            if time.monotonic() >= slice_end:
                return 0
    LEASES.give_back(run_id, worker_id)
    return None


def _step(services: Services, builder: Builder, run_id: str, worker_id: str,
          stopping: Callable[[], bool]) -> bool:
    """The run's next step (its look for separator sheets, or a batch); False when the run has
    ended (or is no longer this worker's)."""
    run = SplitRun.get_or_none(SplitRun.id == run_id)
    if run is None or run.worker_id != worker_id or run.state != RUNNING:
        return False
    source = Node.get_or_none(Node.id == run.document_id)  # the commit checks who may change it
    version = DocumentVersion.get_or_none(DocumentVersion.id == run.version_id,
                                          DocumentVersion.document == run.document_id)
    if source is None or version is None:  # deleted for good meanwhile
        LEASES.finish(run_id, worker_id, FAILED, changed_meanwhile(run.parts_made, run.parts))
        return False
    try:
        if run.plan is None:
            return _look(services, builder, run, worker_id, source, version, stopping)
        return _batch(services, builder, run, worker_id, source, version)
    except Invalid as error:  # the file's fault: a page a reader cannot read or write
        LEASES.finish(run_id, worker_id, FAILED,
                      f"{error.message.rstrip('.')}: {run.parts_made} of {run.parts or 'its'} "
                      "parts were made and stay in its folder; the document was left as it is.")
        return False


def _look(services: Services, builder: Builder, run: SplitRun, worker_id: str, source: Node,
          version: DocumentVersion, stopping: Callable[[], bool]) -> bool:
    """Find the separator sheets, SCAN_PAGES pages per reader lent, and commit the plan (or fail
    the run as the request would have answered 400)."""
    pdf = builder.pdf_of(version)
    cut: list[int] = []
    for first in range(1, version.page_count + 1, SCAN_PAGES):
        if stopping():
            return True  # looked at again when resumed: nothing was made
        pages = all_pages(version, source, first, min(first + SCAN_PAGES - 1, version.page_count))
        try:
            cut += separators.find_among(services, pdf, run.kind, [
                (page.number, page.text, page.method, page.barcodes) for page in pages])
        except UnreadablePdf as error:
            raise refusal(error) from None
        with write_transaction():
            if database.execute_sql(
                    "UPDATE split_run SET lease_until = ? WHERE id = ? AND worker_id = ? "
                    "AND state = ?", (time.time() + services.config.lease_seconds, run.id,
                                      worker_id, RUNNING)).rowcount != 1:
                return False
    try:
        parts = splits.separator_parts(run.kind, version.page_count, cut)
    except Invalid as error:
        LEASES.finish(run.id, worker_id, FAILED, error.message)
        return False
    with write_transaction():
        return cast(bool, database.execute_sql(
            "UPDATE split_run SET plan = ?, parts = ?, lease_until = ? WHERE id = ? AND "
            "worker_id = ? AND state = ? AND plan IS NULL",
            (json.dumps(parts), len(parts), time.time() + services.config.lease_seconds, run.id,
             worker_id, RUNNING)).rowcount == 1)


def _batch(services: Services, builder: Builder, run: SplitRun, worker_id: str, source: Node,
           version: DocumentVersion) -> bool:
    """The next batch of parts, committed with the run's cursor; False when the run has ended."""
    plan, made = _plan(run, version.page_count), run.parts_made
    end = min(made + splits.BATCH_PARTS, len(plan))
    if end <= made:
        raise Invalid("This run's list of parts is damaged.")
    # Like a rule run's batch, it stops early to commit within its lease.
    deadline = time.monotonic() + services.config.lease_seconds / 3
    pages = {page.number: page
             for page in all_pages(version, source, plan[made][0], plan[end - 1][1])}
    documents = []
    for number in range(made + 1, end + 1):
        documents.append(splits.part(builder, source, pages, run.title, run.folder_id, number,
                                     plan[number - 1]))
        if time.monotonic() > deadline:
            break
    end = made + len(documents)
    last = end == len(plan)
    operation = Operation(documents=documents)
    if last:
        operation.emptied.append(Emptied(source, version.id, run.folder_id))
    else:
        operation.kept.append(Kept(source, version.id, run.folder_id))
    user = User.get_by_id(run.owner_id)
    try:
        commit(services, user, operation, then=lambda nodes: _advance(
            services, run, worker_id, made, [node.id for node in nodes], last))
    except _LeaseLost:
        return False
    except Conflict:
        LEASES.finish(run.id, worker_id, FAILED, changed_meanwhile(made, len(plan)))
        return False
    return not last


def _advance(services: Services, run: SplitRun, worker_id: str, made: int,
             document_ids: list[str], last: bool) -> None:
    """In the batch's transaction: the cursor moves past its parts, if the run is still this
    worker's and the cursor where the batch began."""
    end = made + len(document_ids)
    if last:
        changed = database.execute_sql(
            "UPDATE split_run SET parts_made = ?, state = ?, finished_at = ?, worker_id = NULL, "
            "lease_until = NULL WHERE id = ? AND worker_id = ? AND state = ? AND parts_made = ?",
            (end, SUCCEEDED, SplitRun.finished_at.db_value(utcnow()), run.id, worker_id,
             RUNNING, made))
    else:
        changed = database.execute_sql(
            "UPDATE split_run SET parts_made = ?, lease_until = ? WHERE id = ? AND worker_id = ? "
            "AND state = ? AND parts_made = ?",
            (end, time.time() + services.config.lease_seconds, run.id, worker_id, RUNNING, made))
    if changed.rowcount != 1:
        raise _LeaseLost()
    database.execute_sql(
        "INSERT INTO split_part (run_id, number, document_id) VALUES "
        + ", ".join("(?, ?, ?)" for _ in document_ids),
        [value for number, document_id in enumerate(document_ids, made + 1)
         for value in (run.id, number, document_id)])
    if last:
        log.info("split run %s succeeded: %d parts", run.id, end)


def _plan(run: SplitRun, page_count: int) -> list[tuple[int, int]]:
    """The run's parts as (first, last) page numbers, as start_run or _look wrote them (a row
    restored from a backup is checked: Invalid)."""
    try:
        plan = json.loads(run.plan)  # type: ignore[arg-type]  # a run being run has a plan
    except ValueError:
        plan = None
    if not isinstance(plan, list) or not all(
            isinstance(part, list) and len(part) == 2 and all(
                isinstance(n, int) and not isinstance(n, bool) for n in part)
            and 1 <= part[0] <= part[1] <= page_count for part in plan):
        raise Invalid("This run's list of parts is damaged.")
    return [(first, last) for first, last in plan]


class SplitPool(TurnPool):
    """The threads of one node that make runs' parts: those it was asked for and those it
    resumes, in users' turns (RUNS_PER_USER, SLICE_SECONDS)."""

    def __init__(self, services: Services):
        super().__init__("dms-splits", PARALLEL_SPLITS,
                         lambda run_id, worker_id, stopping: execute(services, run_id, worker_id,
                                                                     stopping),
                         LEASES, per_owner=RUNS_PER_USER)
        self.services = services

    def split(self, user: User, document_id: str, body: dict[str, Any]) -> list[Node] | SplitRun:
        """POST /documents/{id}/split/: the new documents of a small split, or a run started in
        the background."""
        result = splits.split(self.services, user, document_id, body,
                              lambda plan: start_run(user, plan))
        if isinstance(result, SplitRun):
            self.submit(result.id, user.id)
        return result
