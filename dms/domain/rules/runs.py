"""Runs of a rule over existing documents, `POST /rules/{id}/apply/` (api.md, "Runs"): in the
background, one node at a time, resumable after a crash, never applying anything twice.

A run is a `rule_run` row: queued, then running, then succeeded or failed. A worker of some node
claims it with a lease in the database (`worker_id`, `lease_until`, for DMS_LEASE_SECONDS, as the
processing leases of dms.processing.leases) and goes through the owner's live documents whose
reading has ended, by id, a batch at a time: the batch is matched outside any write transaction,
then one transaction checks the lease is still this worker's, applies the batch's changes and
commits the cursor (`after_id`), the counts and a renewed lease with them. So a run killed
half-way (kill -9, a lost machine) has committed exactly the batches whose changes it committed;
whoever resumes it starts after the last of them. A stalled worker that lost its lease writes
nothing.

Resuming: at every start (and, with the embedded queue, after releasing what the last run of this
installation held) and periodically (dms.runtime's table), each node takes up the runs whose
lease expired. Stopping a node gives its leases back after the batch at hand.

Like the dry run, a run ignores `enabled`, `sources` and `stop`, and what a person changed by
hand: the owner asked for it. A run's rule deleted meanwhile, or its folder gone, fails the run
with the reason.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from dms.config import Config
from dms.db import database, owner_scope, write_transaction
from dms.db.models import Node, OcrStatus, Rule, RuleRun, User, new_id, utcnow
from dms.domain.ownership import owned
from dms.domain.rules import matcher
from dms.domain.rules.checks import spec_of
from dms.domain.rules.filing import apply_steps, live_folders, title_of
from dms.domain.rules.store import disable, folder_gone, owned_rule
from dms.domain.turnpool import FAILED, QUEUED, RUNNING, SUCCEEDED, RunLeases, TurnPool
from dms.errors import Throttled, Unavailable
from dms.files.fairness import MOST_NICENESS

log = logging.getLogger("dms.rules")

BATCH_DOCUMENTS = 50
# A batch stops matching after this long (or a third of the lease, DMS_LEASE_SECONDS, if that
# is shorter) and commits what it has; each commit renews the lease.
BATCH_SECONDS = 10
MAX_ACTIVE_RUNS_PER_USER = 2  # queued or running; past it, 429
KEEP_RUNS_PER_USER = 100  # finished runs kept; older ones are deleted as new ones start
PARALLEL_RUNS = 2  # threads of one node running runs
# Fair turns: a user's runs take one of those threads at a time, and a run gives its thread back
# after a slice this long (whole batches), behind the runs of users waiting, so one user's hour-long
# runs never hold both threads or keep another user's run waiting for the hour.
RUNS_PER_USER = 1
SLICE_SECONDS = 30.0
RETRY_AFTER_SECONDS = 10
DOCUMENTS = ("SELECT id FROM node WHERE owner_id = ? AND kind = ? AND trash_id IS NULL "
             "AND ocr_status IN (?, ?) AND id > ? ORDER BY id LIMIT ?")


LEASES = RunLeases("rule_run")


def start_run(user: User, rule_id: str) -> RuleRun:
    """A new queued run of the caller's rule (the caller's runs under way: at most
    MAX_ACTIVE_RUNS_PER_USER)."""
    run_id = new_id()
    with write_transaction(owner_scope(user.id)):
        rule = owned_rule(user, rule_id)
        if LEASES.under_way(user.id) >= MAX_ACTIVE_RUNS_PER_USER:
            raise Throttled(f"You have {MAX_ACTIVE_RUNS_PER_USER} rule runs under way; try again "
                            "when one has finished.", RETRY_AFTER_SECONDS)
        RuleRun.insert(id=run_id, owner=user.id, rule_id=rule.id, rule_name=rule.name,
                       state=QUEUED, created_at=utcnow()).execute()
        LEASES.forget_finished(user.id, KEEP_RUNS_PER_USER)
    return RuleRun.get_by_id(run_id)


def owned_run(user: User, run_id: str) -> RuleRun:
    return owned(RuleRun, user, run_id)


def execute(config: Config, run_id: str, worker_id: str, stopping: Callable[[], bool],
            slice_seconds: float = SLICE_SECONDS) -> float | None:
    """Run (or resume) a run for a slice of about `slice_seconds` (whole batches): 0 when it
    has more to do and keeps its lease (its next slice goes behind other users' runs), None
    when it ended, is no longer this worker's, or `stopping()` (then its lease is given back).
    The slice's batches are matched by one child process (see _Matching)."""
    if not LEASES.claim(run_id, worker_id, config.lease_seconds):
        return None
    slice_end = time.monotonic() + slice_seconds
    matching = _Matching(config, slice_seconds)
    try:
        while not stopping():
            if not _batch(config, run_id, worker_id, matching):
                return None
            if time.monotonic() >= slice_end:
                return 0
    finally:
        matching.close()
    LEASES.give_back(run_id, worker_id)
    return None


class _Matching:
    """A slice's matching: in a child process of its own (matching is the interpreter's own
    work, which the server's threads share), started at the slice's first batch of more than a
    few documents, at the lowest CPU priority: behind the children that serve requests (the PDF
    readers an upload waits for) and the readings of new documents, as the most patient work
    there is; in this thread for the rest of the slice if the child fails (logged), so a run
    never stalls on it."""

    def __init__(self, config: Config, slice_seconds: float):
        self.config = config
        self.seconds = slice_seconds + BATCH_SECONDS  # a slice's matching: its batches' in all
        self.child: matcher.Child | None = None
        self.failed = False

    def match(self, owner_id: str, rule_id: str, ids: list[str]) -> matcher.Matches:
        seconds = min(BATCH_SECONDS, self.config.lease_seconds / 3)
        # A last batch of a few documents, with no child yet (a run over a few), is matched in
        # this thread, as a dry run's few are: a child's start would cost more than they do.
        few = self.child is None and len(ids) <= matcher.IN_PROCESS_DOCUMENTS
        if not self.failed and not few:
            try:
                if self.child is None:
                    self.child = matcher.Child(self.config, self.seconds, MOST_NICENESS)
                return self.child.match(owner_id, rule_id, ids, seconds)
            except OSError as error:  # not started
                log.warning("a rule run's matching goes on in its thread: no child process "
                            "could be started (%s)", error)
                self.failed = True
            except Unavailable:  # it failed (logged)
                self.failed = True
        return matcher.match_here(owner_id, rule_id, ids, time.monotonic() + seconds,
                                  self.config.rules_max_text_chars, self.config.rules_max_seconds)

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _holds(run_id: str, worker_id: str) -> bool:
    return database.execute_sql(
        "SELECT 1 FROM rule_run WHERE id = ? AND worker_id = ? AND state = ?",
        (run_id, worker_id, RUNNING)).fetchone() is not None


def _batch(config: Config, run_id: str, worker_id: str, matching: _Matching) -> bool:
    """One batch; False when the run has ended (or is no longer this worker's)."""
    run = RuleRun.get_or_none(RuleRun.id == run_id)
    if run is None or run.worker_id != worker_id or run.state != RUNNING:
        return False
    rule = Rule.get_or_none(Rule.id == run.rule_id, Rule.owner == run.owner_id)
    if rule is None:
        LEASES.finish(run_id, worker_id, FAILED, "The rule was deleted while it ran.")
        return False
    spec = spec_of(rule)
    folder = spec.actions.move_to
    if folder and not live_folders(run.owner_id, {folder}):
        with write_transaction(owner_scope(run.owner_id)):
            disable(rule.id, folder_gone(title_of(folder)))
        LEASES.finish(run_id, worker_id, FAILED, "The rule's folder was deleted; the rule is "
                                           "disabled.")
        return False
    ids = [row[0] for row in database.execute_sql(DOCUMENTS, (
        run.owner_id, Node.DOCUMENT, OcrStatus.SUCCEEDED, OcrStatus.FAILED, run.after_id or "",
        BATCH_DOCUMENTS))]
    if not ids:
        LEASES.finish(run_id, worker_id, SUCCEEDED)
        return False
    found = matching.match(run.owner_id, rule.id, ids)
    if not found.examined:
        return True  # the rule went meanwhile: the next batch fails the run, saying so
    plans = {document_id: [step] for document_id, _, step in found.matched}
    last, matched = ids[found.examined - 1], len(plans)
    with write_transaction(owner_scope(run.owner_id)):
        if not _holds(run_id, worker_id):
            return False  # the lease was lost (this worker stalled): its successor goes on
        changed = sum(apply_steps(run.owner_id, document_id, steps, config.max_tree_depth,
                                  by_hand=False)
                      for document_id, steps in plans.items())
        database.execute_sql(
            "UPDATE rule_run SET after_id = ?, examined = examined + ?, matched = matched + ?, "
            "changed = changed + ?, lease_until = ? WHERE id = ?",
            (last, found.examined, matched, changed, time.time() + config.lease_seconds,
             run_id))
    return True


class RunPool(TurnPool):
    """The threads of one node that run runs: those it was asked for and those it resumes, in
    users' turns (RUNS_PER_USER, SLICE_SECONDS)."""

    def __init__(self, config: Config):
        super().__init__("dms-rules", PARALLEL_RUNS,
                         lambda run_id, worker_id, stopping: execute(config, run_id, worker_id,
                                                                     stopping),
                         LEASES, per_owner=RUNS_PER_USER)
        self.config = config

    def apply(self, user: User, rule_id: str) -> RuleRun:
        """POST /rules/{id}/apply/: a new run, started in the background."""
        run = start_run(user, rule_id)
        self.submit(run.id, user.id)
        return run
