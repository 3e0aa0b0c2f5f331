"""`dms verify`: is every file still what was stored, and does every row point somewhere real?

Finds: stored files whose SHA-256 or size differ from their version row (bit rot, tampering),
versions whose file is missing, files no version refers to, rows pointing at rows that are gone,
and documents stuck in processing. The server runs the same check weekly; its last result is
kept in `<data-dir>/verify.json` and shown at GET /health (the details to admins).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dms.db import database
from dms.storage import CHUNK_SIZE

STUCK_AFTER = dt.timedelta(hours=1)  # a document `started` or `received` for longer is reported
RESULT_FILE = "verify.json"

DANGLING = {
    "versions without a document":
        "SELECT v.id FROM document_version AS v LEFT JOIN node AS n ON n.id = v.document_id "
        "WHERE n.id IS NULL",
    "pages without a version":
        "SELECT p.id FROM page AS p LEFT JOIN document_version AS v ON v.id = p.version_id "
        "WHERE v.id IS NULL",
    "nodes whose parent is gone":
        "SELECT n.id FROM node AS n LEFT JOIN node AS p ON p.id = n.parent_id "
        "WHERE n.parent_id IS NOT NULL AND p.id IS NULL",
    "nodes whose owner is gone":
        "SELECT n.id FROM node AS n LEFT JOIN user AS u ON u.id = n.owner_id WHERE u.id IS NULL",
    "tokens whose user is gone":
        "SELECT t.token_key FROM token AS t LEFT JOIN user AS u ON u.id = t.user_id "
        "WHERE u.id IS NULL",
}


@dataclass
class Report:
    checked_at: str
    files_checked: int = 0
    corrupt: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    dangling: dict[str, list[str]] = field(default_factory=dict)
    stuck: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.corrupt or self.missing or self.orphaned or self.stuck
                    or any(self.dangling.values()))

    def as_dict(self) -> dict:
        return {"ok": self.ok, **asdict(self)}

    def lines(self) -> list[str]:
        lines = [f"Checked {self.files_checked} stored files."]
        for title, items in (("corrupt files (checksum or size differs)", self.corrupt),
                             ("missing files (version without its file)", self.missing),
                             ("orphaned files (no version refers to them)", self.orphaned),
                             ("documents stuck in processing", self.stuck),
                             *self.dangling.items()):
            if items:
                lines.append(f"{len(items)} {title}:")
                lines.extend(f"  {item}" for item in items)
        lines.append("No problems found." if self.ok else "Problems found.")
        return lines


def _sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(CHUNK_SIZE), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def run(data_dir: Path, now: dt.datetime | None = None) -> Report:
    """Check the data dir the database is open on."""
    now = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    report = Report(checked_at=now.isoformat(timespec="seconds") + "Z")
    files_dir = data_dir / "files"
    known = set()
    for version_id, sha256, size in database.execute_sql(
            "SELECT id, sha256, size FROM document_version").fetchall():
        known.add(version_id)
        path = files_dir / version_id[:2] / version_id
        if not path.is_file():
            report.missing.append(f"version {version_id}")
            continue
        report.files_checked += 1
        if _sha256(path) != (sha256, size):
            report.corrupt.append(f"version {version_id} ({path})")
    if files_dir.is_dir():
        for bucket in sorted(files_dir.iterdir()):
            for entry in sorted(bucket.iterdir()) if bucket.is_dir() else ():
                if entry.name not in known:
                    report.orphaned.append(str(entry))
    for title, sql in DANGLING.items():
        report.dangling[title] = [row[0] for row in database.execute_sql(sql).fetchall()]
    cutoff = (now - STUCK_AFTER).strftime("%Y-%m-%d %H:%M:%S.%f")
    report.stuck = [f"document {row[0]} ({row[1]} since {row[2]})" for row in database.execute_sql(
        "SELECT n.id, n.ocr_status, n.updated_at FROM node AS n WHERE n.kind = 'document' "
        "AND n.ocr_status IN ('received', 'started') AND n.updated_at < ? "
        "AND EXISTS (SELECT 1 FROM document_version AS v WHERE v.document_id = n.id)",
        (cutoff,)).fetchall()]
    return report


def save(data_dir: Path, report: Report) -> None:
    path = data_dir / RESULT_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report.as_dict(), indent=1))
    os.replace(temporary, path)


def last_result(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / RESULT_FILE).read_text())
    except (OSError, ValueError):
        return None
