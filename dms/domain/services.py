"""What the domain needs beyond the database, handed to the domain functions that need it: the
settings, the file store, the PDF reader processes, the login throttle, and two interfaces the
domain declares here and the composition root (dms.runtime) implements — the job queue that reads
documents (dms.processing) and the search engine (dms.search). The domain never imports those
packages: it names what it calls, so the machinery can change (Redis for SQLite, PostgreSQL's
search for tantivy) without the domain knowing, and tests can hand in small real ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from dms.config import Config
from dms.domain.credentials import LoginThrottle
from dms.files.fairness import FairSlots, Refusals
from dms.files.pdf.process import PdfReaders
from dms.files.storage import FileStore


class JobQueue(Protocol):
    """Reads the pages of uploaded versions in the background
    (dms.processing.processor.Processor)."""

    def enqueue(self, version_id: str, delay: float | None = None) -> None:
        """Queue a version to be read; never raises (a lost job is found again later)."""

    def cancel(self, version_ids: list[str]) -> None:
        """Stop reading these versions now (their documents were deleted or replaced)."""


class SearchEngine(Protocol):
    """Full-text search over the caller's titles and texts (dms.search's engines)."""

    def status(self) -> dict[str, Any]:
        """The engine's state for GET /health (ready, documents, pending changes, ...)."""

    def searchable(self) -> object | None:
        """Something with `search(owner_id, words, limit, tag_ids, tags_op)`, or None while the
        index is not ready."""


@dataclass
class Services:
    config: Config
    store: FileStore
    jobs: JobQueue
    search: SearchEngine
    pdf: PdfReaders
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    dry_runs: FairSlots = field(default_factory=lambda: dry_run_slots())


# Rules' dry runs (GET /rules/{id}/matches/) at once in one process, and of one user: each holds a
# request thread and a core for up to DMS_RULES_PREVIEW_SECONDS, so sixteen of one user's at once
# took the request threads from everyone; past these, 429 at once.
DRY_RUNS_AT_ONCE, DRY_RUNS_PER_USER = 2, 1
DRY_RUN_REFUSALS = Refusals(
    waiting="Your other dry run of a rule is still running; try again when it has answered.",
    busy="Other users' dry runs of rules are running; try again in a moment.", retry_after=5)


def dry_run_slots() -> FairSlots:
    return FairSlots(DRY_RUNS_AT_ONCE, per_owner=DRY_RUNS_PER_USER, waiting_per_owner=0,
                     refusals=DRY_RUN_REFUSALS)
