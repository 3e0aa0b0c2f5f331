"""`dms verify`: is every file still what was stored, and does every row point somewhere real?

Finds: stored files whose SHA-256 or size differ from their version row (bit rot, tampering),
versions whose file is missing, files no version refers to, rows pointing at rows that are gone,
trash marks that disagree with the tree (a deletion that did not take its whole subtree),
documents stuck in processing, a folder tree that is not a tree (loops, nodes unreachable from
their owner's .home and .inbox, parents owned by another user or that are documents), documents
whose attributes, page rows or status disagree with their latest version, usernames that differ
only by case, documentlinks without their mirror (A -> B stored, B -> A not), and documents
carrying another user's correspondent, document type or custom field (or linking to another
user's document). A worker of the cluster runs the same check weekly; the last result of either
is kept in the database (table `verify_result`) and shown at GET /health (the details to admins).

`repair()` (`dms verify --repair`) fixes what is safely fixable, in one write transaction: it
re-derives documents' attributes from their latest version, adds missing page rows and sends such
documents back to processing, and moves nodes out of loops and misplaced subtrees into a
`lost+found` folder in their owner's .home. Files are never touched: a corrupt or missing file
cannot be repaired here, and unreferenced files are the server's start-up sweep's to remove.

The package dms.ops.verify: this module owns the report, the file and row checks, and running,
saving and repairing; with `tree` (the folder-tree checks and the lost+found repair, which a
restore runs too) and `documents` (a document's page rows and attributes against its latest
version) it is the face. `_queries`, the SQL of the row checks, is private.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dms.db import database, write_transaction
from dms.db.models import (
    COPY_VALUE_KEYS,
    STORED_DATETIME,
    VALUE_KEYS_OUT_OF_STEP,
    OcrStatus,
    new_id,
    utcnow,
)
from dms.files import modes
from dms.ops.verify._queries import (
    ANOTHER_USERS,
    DANGLING,
    FAILED_WITHOUT_ERROR,
    LATEST_VERSION,
    LINK_WITHOUT_MIRROR,
    STUCK,
    TRASH,
    UNREAD,
)
from dms.ops.verify.documents import attribute_problems, page_problems
from dms.ops.verify.files import check_bucket, check_directory
from dms.ops.verify.tree import Execute, check_tree, repair_tree
from dms.search import check as search_check
from dms.text import ranges, runs_text, username_key

if TYPE_CHECKING:
    from dms.config import Config
    from dms.files.storage import FileStore

log = logging.getLogger("dms.processing")  # the periodic verify logged as it always did

STUCK_AFTER = dt.timedelta(hours=1)  # a document `started` or `received` for longer is reported
REPAIRED_ERROR = "Unknown error (repaired by dms verify)."
MAX_PAGES = 1_000_000  # the highest DMS_MAX_PAGES: a version claiming more is not filled in

DOCUMENT_TITLES = {
    "attributes":
        "documents whose file_name, size or page_count disagree with their latest version",
    "pages": "documents whose page rows do not number 1 to their page count",
    "unread": "documents marked succeeded with unread pages",
    "failed": "documents marked failed without an error",
    "values": "custom field values whose copy of their document's folder, title or trash mark "
              "is out of step",
}
METADATA_TITLES = {
    "mirrors": "documentlinks without their mirror (A -> B stored, B -> A not)",
    "another_users": "documents with another user's correspondent, document type or custom field",
}


@dataclass
class Report:
    checked_at: str
    files_checked: int = 0
    corrupt: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    # Files no version refers to *yet*: younger than the sweep's grace period, an upload in
    # progress or one a crash interrupted before its row. Expected; not a problem.
    recent_orphans: list[str] = field(default_factory=list)
    dangling: dict[str, list[str]] = field(default_factory=dict)
    trash: dict[str, list[str]] = field(default_factory=dict)  # TRASH's titles: node ids
    stuck: list[str] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    misplaced: list[str] = field(default_factory=list)
    documents: dict[str, list[str]] = field(default_factory=dict)
    metadata: dict[str, list[str]] = field(default_factory=dict)  # METADATA_TITLES' keys
    username_clashes: list[str] = field(default_factory=list)
    search_drift: list[str] = field(default_factory=list)
    search_note: str | None = None  # no index to compare (not a problem: it is rebuilt)
    loose_modes: list[str] = field(default_factory=list)  # other local users may read them
    in_bucket: bool = False  # the files are objects of a bucket (DMS_STORAGE=s3)

    @property
    def ok(self) -> bool:
        return not (self.corrupt or self.missing or self.orphaned or self.stuck
                    or any(self.dangling.values()) or any(self.trash.values()) or self.loops
                    or self.unreachable or self.misplaced or any(self.documents.values())
                    or any(self.metadata.values()) or self.username_clashes
                    or self.search_drift or self.loose_modes)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **asdict(self)}

    def lines(self) -> list[str]:
        lines = [f"Checked {self.files_checked} stored files"
                 + (" (objects of the bucket)." if self.in_bucket else ".")]
        for title, items in (
                ("corrupt files (checksum or size differs)", self.corrupt),
                ("missing files (version without its file)", self.missing),
                ("orphaned files (no version refers to them)", self.orphaned),
                ("documents stuck in processing", self.stuck),
                *self.dangling.items(),
                *self.trash.items(),
                ("nodes in a loop (their parents lead back to them)", self.loops),
                ("nodes unreachable from their owner's .home and .inbox (below a loop or a "
                 "misplaced node)", self.unreachable),
                ("nodes whose parent belongs to another user or is a document", self.misplaced),
                *((DOCUMENT_TITLES[key], items) for key, items in self.documents.items()),
                *((METADATA_TITLES[key], items) for key, items in self.metadata.items()),
                ("usernames that differ only by case", self.username_clashes),
                ("differences between the search index and the database (repair rebuilds the "
                 "index)", self.search_drift),
                ("entries of the data dir that other local users may read (repair makes them "
                 "owner-only)", self.loose_modes)):
            if items:
                lines.append(f"{len(items)} {title}:")
                lines.extend(f"  {item}" for item in items)
        if self.recent_orphans and self.in_bucket:
            lines.append(f"{len(self.recent_orphans)} objects no version refers to yet are "
                         "younger than a day: uploads in progress, or interrupted ones that the "
                         "garbage collection removes once they are older (not a problem):")
        elif self.recent_orphans:
            lines.append(f"{len(self.recent_orphans)} files no version refers to yet are younger "
                         "than DMS_SWEEP_GRACE_MINUTES: uploads in progress, or interrupted ones "
                         "that the sweep removes once they are older (not a problem):")
        lines.extend(f"  {item}" for item in self.recent_orphans)
        if self.search_note:
            lines.append(self.search_note)
        lines.append("No problems found." if self.ok else "Problems found.")
        return lines


def check_rows(report: Report, execute: Execute | None = None) -> None:
    """Every check of the database (not of the files) into `report`."""
    execute = execute or database.execute_sql
    for title, sql in DANGLING.items():
        report.dangling[title] = [row[0] for row in execute(sql, ()).fetchall()]
    for title, sql in TRASH.items():
        report.trash[title] = [row[0] for row in execute(sql, ()).fetchall()]
    tree = check_tree(execute)
    report.loops = [f"node {node_id} (parent {tree.parents[node_id]})"
                    for loop in tree.loops for node_id in loop]
    report.unreachable = [f"node {node_id} (parent {parent_id})"
                          for node_id, parent_id in tree.unreachable.items()]
    report.misplaced = [f"node {node_id} (parent {tree.parents[node_id]}, {why})"
                        for node_id, why in sorted(tree.misplaced.items())]
    report.documents = {
        "attributes": [f"document {document_id}: " + "; ".join(
            f"{name} is {value!r}, should be {should!r}" for name, value, should in differences)
            for document_id, differences in attribute_problems(execute)],
        "pages": [f"document {document_id} (version {version_id}): " + "; ".join(
            ([f"page rows {runs_text(missing)} missing"] if missing else [])
            + ([f"page rows {ranges(extra)} beyond its {page_count} pages"] if extra else []))
            for document_id, version_id, missing, extra, page_count in page_problems(execute)],
        "unread": [f"document {document_id} (version {version_id}): pages "
                   f"{ranges(_unread_numbers(execute, version_id))} unread"
                   for document_id, version_id in execute(UNREAD, ()).fetchall()],
        "failed": [f"document {row[0]}" for row in execute(FAILED_WITHOUT_ERROR, ()).fetchall()],
        "values": [f"document {document_id} (custom field {field_id})" for document_id, field_id
                   in execute(VALUE_KEYS_OUT_OF_STEP, ()).fetchall()],
    }
    report.metadata = {
        "mirrors": [f"{document_id} -> {target_id} (custom field {field_id})"
                    for document_id, target_id, field_id in execute(LINK_WITHOUT_MIRROR, ())],
        "another_users": [f"document {document_id} ({what} {thing_id}"
                          + (f", link to {target_id})" if target_id else ")")
                          for document_id, what, thing_id, target_id
                          in execute(ANOTHER_USERS, ()).fetchall()],
    }
    by_key: dict[str, list[tuple[str, str]]] = {}
    for user_id, username in execute("SELECT id, username FROM \"user\" ORDER BY username, id",
                                     ()).fetchall():
        by_key.setdefault(username_key(username), []).append((username, user_id))
    report.username_clashes = [", ".join(f"{name!r} ({user_id})" for name, user_id in users)
                               for key, users in sorted(by_key.items()) if len(users) > 1]


def _unread_numbers(execute: Execute, version_id: str) -> list[int]:
    return [row[0] for row in execute(
        "SELECT number FROM page WHERE version_id = ? AND method IS NULL ORDER BY number",
        (version_id,)).fetchall()]


def check_files(report: Report, files_dir: Path, grace_seconds: float = 0) -> None:
    """The files of a directory store (dms.ops.verify.files.check_directory)."""
    check_directory(report, files_dir, grace_seconds)


def run(data_dir: Path, now: dt.datetime | None = None, files: Report | None = None,
        files_dir: Path | None = None, grace_seconds: float = 0, bucket: FileStore | None = None,
        deep: bool = False) -> Report:
    """Check the database that is open and the files in `files_dir` (default <data_dir>/files),
    or with `bucket` (an S3Store) its objects, their sizes (`deep`: and SHA-256s). With `files`,
    take the file checks from that earlier report instead of reading every file again (a repair
    changes no file). Files no version refers to are problems once older than `grace_seconds`
    (the sweep's; in a bucket the garbage collection's day)."""
    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None)
    report = Report(checked_at=now.isoformat(timespec="seconds") + "Z")
    if files is None and bucket is not None:
        check_bucket(report, bucket, deep)  # type: ignore[arg-type]  # an S3Store
    elif files is None:
        check_files(report, files_dir or data_dir / "files", grace_seconds)
    else:
        report.in_bucket = files.in_bucket
        report.files_checked = files.files_checked
        report.corrupt, report.missing = list(files.corrupt), list(files.missing)
        report.orphaned = list(files.orphaned)
        report.recent_orphans = list(files.recent_orphans)
    check_rows(report)
    report.loose_modes = [str(path) for path in modes.loose(modes.installation_paths(
        data_dir, files_dir or data_dir / "files"))]
    report.search_drift, report.search_note = search_check.compare(data_dir)
    cutoff = (now - STUCK_AFTER).strftime(STORED_DATETIME)
    report.stuck = [f"document {row[0]} ({row[1]} since {row[2]})"
                    for row in database.execute_sql(STUCK, (cutoff,)).fetchall()]
    return report


def repair(report: Report) -> list[str]:
    """Fix what is safely fixable, in one write transaction; one line per fix, then one per kind
    of problem left as it is. `report` is the check just made (for the files' problems)."""
    tightened = modes.tighten([Path(path) for path in report.loose_modes])
    execute = database.execute_sql
    fixes: list[str] = []
    with write_transaction():
        now = utcnow().strftime(STORED_DATETIME)
        # As a re-run does: attempts (and, where the schema has it, the time budget) start over.
        columns = {column.name for column in database.get_columns("node")}  # both engines
        back_to_processing = (f"ocr_status = '{OcrStatus.RECEIVED}', ocr_error = NULL, "
                              "ocr_attempts = 0, "
                              + ("ocr_seconds = 0, " if "ocr_seconds" in columns else "")
                              + "updated_at = ?")
        for document_id, differences in attribute_problems(execute):
            latest = execute(f"SELECT v.file_name, v.size, v.page_count FROM node AS n "
                             f"JOIN document_version AS v ON v.id = {LATEST_VERSION} "
                             f"WHERE n.id = ?", (document_id,)).fetchone()
            execute("UPDATE node SET file_name = ?, size = ?, page_count = ? WHERE id = ?",
                    (*(latest or (None, 0, 0)), document_id))
            names = ", ".join(name for name, value, should in differences)
            fixes.append(f"Document {document_id}: {names} set from its latest version."
                         if latest else f"Document {document_id}: {names} cleared, as it has no "
                                        f"version.")
        for document_id, version_id, missing, extra, page_count in page_problems(execute):
            if extra:
                fixes.append(f"Not repaired: document {document_id} (version {version_id}) has "
                             f"page rows {ranges(extra)} beyond its {page_count} pages.")
            if not missing:
                continue
            if page_count > MAX_PAGES:
                fixes.append(f"Not repaired: document {document_id} (version {version_id}) claims "
                             f"{page_count} pages, more than dms ever accepts.")
                continue
            for first, last in missing:
                for number in range(first, last + 1):
                    execute("INSERT INTO page (id, version_id, number, text, method) "
                            "VALUES (?, ?, ?, '', NULL)", (new_id(), version_id, number))
            execute(f"UPDATE node SET {back_to_processing} WHERE id = ?", (now, document_id))
            fixes.append(f"Document {document_id}: added the missing page rows "
                         f"{runs_text(missing)}; set back to received, to be processed again.")
        for document_id, _version_id in execute(UNREAD, ()).fetchall():
            execute(f"UPDATE node SET {back_to_processing} WHERE id = ?", (now, document_id))
            fixes.append(f"Document {document_id}: succeeded with unread pages; set back to "
                         f"received, to be processed again.")
        for (document_id,) in execute(FAILED_WITHOUT_ERROR, ()).fetchall():
            execute("UPDATE node SET ocr_error = ? WHERE id = ?", (REPAIRED_ERROR, document_id))
            fixes.append(f"Document {document_id}: failed without an error; its error now "
                         f"reads: {REPAIRED_ERROR}")
        out_of_step = execute(VALUE_KEYS_OUT_OF_STEP, ()).fetchall()
        if out_of_step:
            execute(COPY_VALUE_KEYS, ())
            fixes.append(f"Copied their document's folder, title and trash mark to "
                         f"{len(out_of_step)} custom field values again.")
        fixes.extend(repair_tree(execute, check_tree(execute), now))
    if tightened:
        fixes.append(f"Made {len(tightened)} entries of the data dir owner-only: "
                     f"{', '.join(str(path) for path in tightened)}.")
    return fixes + _not_repaired(report)


def _not_repaired(report: Report) -> list[str]:
    lines = []
    if report.corrupt or report.missing:
        lines.append(f"Not repaired: {len(report.corrupt)} corrupt and {len(report.missing)} "
                     f"missing files cannot be repaired; restore them from a backup.")
    if report.orphaned and report.in_bucket:
        lines.append(f"Not repaired: {len(report.orphaned)} orphaned objects are left for the "
                     f"garbage collection (every DMS_SWEEP_MINUTES, or dms storage gc now), "
                     f"which removes them.")
    elif report.orphaned:
        lines.append(f"Not repaired: {len(report.orphaned)} orphaned files are left for the "
                     f"server's sweep (at start-up and every DMS_SWEEP_MINUTES), which removes "
                     f"them.")
    if report.stuck:
        lines.append(f"Not repaired: {len(report.stuck)} documents stuck in processing; the "
                     f"server queues them again when it runs.")
    if any(report.dangling.values()):
        lines.append("Not repaired: rows pointing at rows that are gone.")
    if any(report.trash.values()):
        lines.append("Not repaired: trash marks that disagree with the folder tree; the owner "
                     "restores the deletion involved (POST /trash/{id}/restore/) or deletes it "
                     "for good (DELETE /trash/{id}/), either of which makes it whole again.")
    if any(report.metadata.values()):
        lines.append("Not repaired: documentlinks without their mirror, and documents with "
                     "another user's correspondent, document type or custom field: which end or "
                     "owner is right cannot be told.")
    if report.username_clashes:
        lines.append("Not repaired: usernames that differ only by case; an admin renames one of "
                     "each.")
    return lines


def run_periodically(config: Config, store: FileStore | None = None) -> None:
    """`dms verify` inside a worker, weekly by default (a periodic job of dms.runtime); GET
    /health shows the result. A bucket's objects are checked by their sizes (a listing), not
    read: reading them all is `dms verify --deep`'s."""
    bucket = None
    if config.storage == "s3":
        from dms.files.storage import open_store

        bucket = store or open_store(config)
    report = run(config.data_dir, files_dir=config.files_path,
                 grace_seconds=config.sweep_grace_minutes * 60, bucket=bucket)
    save(report)
    (log.info if report.ok else log.warning)("periodic verify: %s", report.lines()[-1])


def save(report: Report) -> None:
    """Keep the report as the last result, for every node's GET /health."""
    with write_transaction():
        database.execute_sql(
            "INSERT INTO verify_result (id, report) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET report = excluded.report",
            (json.dumps(report.as_dict()),))


def last_result() -> dict[str, Any] | None:
    row = database.execute_sql("SELECT report FROM verify_result WHERE id = 1").fetchone()
    return json.loads(row[0]) if row else None
