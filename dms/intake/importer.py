"""`dms import PATH... --user NAME [--into FOLDER_ID] [--dry-run]` (docs/guide.md, "Importing
files"): files and whole directory trees become a user's documents and folders, by default in the
user's .inbox.

Each file goes through the same code as an API upload (dms.domain.uploads.import_into_folder:
sniffing, page counting, versions, the OCR queue), so it is checked the same way and queued for
the server's workers (works while the server runs). Each directory becomes a folder of the same
name, found again on a re-run. A file whose SHA-256 a document of its folder already holds is
skipped, which makes a re-run after an interruption import nothing twice and miss nothing: each
file is committed on its own. A refused file (unknown type, too large, corrupt, unreadable) is
listed with the reason and leaves nothing behind; the run goes on. Symbolic links are not
followed (a link could lead out of the tree, or round in a loop), and directories deeper than
the folder tree's limit are refused.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from dms.db.models import Node, User
from dms.domain import tree, uploads
from dms.errors import DomainError, NotFound
from dms.text import escape_controls

if TYPE_CHECKING:
    from dms.domain.services import Services

PROGRESS_EVERY_SECONDS = 0.2


@dataclass
class Entry:
    path: Path
    folders: tuple[str, ...]  # the directories between the import's root and the file
    size: int


@dataclass
class Summary:
    imported: int = 0
    duplicates: int = 0
    folders_made: int = 0
    imported_bytes: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)

    def lines(self, dry_run: bool = False) -> list[str]:
        verb = "Would import" if dry_run else "Imported"
        lines = [f"{verb} {self.imported} files ({self.imported_bytes / 2**20:.1f} MiB), "
                 f"{'would make' if dry_run else 'made'} {self.folders_made} folders; skipped "
                 f"{self.duplicates} already in their folder; refused {len(self.refused)}."]
        lines += [f"  refused {escape_controls(path)}: {reason}"
                  for path, reason in sorted(self.refused)]
        return lines


def collect(paths: list[Path], summary: Summary, max_depth: int) -> list[Entry]:
    """Every regular file below `paths`, in name order, with the folders it goes into; what
    cannot be imported (missing, a link, not a file, deeper than `max_depth` directories) is put
    in the summary as refused."""
    entries: list[Entry] = []
    for root in paths:
        if root.is_symlink() or not root.exists():
            summary.refused.append((str(root), "not found" if not root.is_symlink()
                                    else "a symbolic link (not followed)"))
        elif root.is_file():
            entries.append(Entry(root, (), root.stat().st_size))
        elif root.is_dir():
            entries += _walk(root, (root.resolve().name or "import",), summary, max_depth)
        else:
            summary.refused.append((str(root), "not a regular file or directory"))
    return entries


def _walk(top: Path, top_folders: tuple[str, ...], summary: Summary,
          max_depth: int) -> list[Entry]:
    """Depth first, in name order, without recursion (a tree may be deeper than Python's)."""
    entries: list[Entry] = []
    pending = [(top, top_folders)]
    while pending:
        directory, folders = pending.pop()
        if len(folders) > max_depth:
            summary.refused.append((str(directory), f"more than {max_depth} folders deep "
                                                    "(DMS_MAX_TREE_DEPTH)"))
            continue
        try:
            children = sorted(os.scandir(directory), key=lambda child: child.name)
        except OSError as error:
            summary.refused.append((str(directory), f"could not be read: {error.strerror}"))
            continue
        below = []
        for child in children:
            path = Path(child.path)
            if child.is_symlink():
                summary.refused.append((str(path), "a symbolic link (not followed)"))
            elif child.is_dir(follow_symlinks=False):
                below.append((path, folders + (child.name,)))
            elif child.is_file(follow_symlinks=False):
                entries.append(Entry(path, folders, child.stat(follow_symlinks=False).st_size))
            else:
                summary.refused.append((str(path), "not a regular file"))
        pending.extend(reversed(below))
    return entries


class Progress:
    """One line on a terminal, rewritten in place: files, MiB, rate, time left. Silent when the
    stream is not a terminal (cron, logs)."""

    def __init__(self, total_files: int, total_bytes: int, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.total_files, self.total_bytes = total_files, total_bytes
        self.files = self.bytes = 0
        self.started = self.shown = time.monotonic()

    def advance(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        now = time.monotonic()
        if self.enabled and (now - self.shown >= PROGRESS_EVERY_SECONDS
                             or self.files == self.total_files):
            self.shown = now
            elapsed = max(now - self.started, 1e-6)
            rate = self.bytes / elapsed
            left = (self.total_bytes - self.bytes) / rate if rate else 0
            self.stream.write(
                f"\r{self.files}/{self.total_files} files  {self.bytes / 2**20:.1f}/"
                f"{self.total_bytes / 2**20:.1f} MiB  {self.files / elapsed:.1f} files/s  "
                f"{int(left) // 60}:{int(left) % 60:02d} left ")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self.files:
            self.stream.write("\n")
            self.stream.flush()


def _into_folder(user: User, folder_id: str) -> Node:
    """The --into folder: the user's, a folder, live. Another user's, a document's, an unknown
    id and one in the trash read the same, as in the API, but the person at the command line is
    told which ids count."""
    try:
        return tree.owned_node(user, folder_id, Node.FOLDER)
    except NotFound:
        raise NotFound(f"{user.username} has no folder {escape_controls(folder_id)} to import into "
                       "(a folder in the trash counts only once it is restored).") from None


def run(services: Services, user: User, paths: list[Path], into_id: str | None = None,
        dry_run: bool = False, progress_stream: TextIO | None = None) -> Summary:
    """Import `paths` for `user` into the folder `into_id` (default the user's .inbox)."""
    into = _into_folder(user, into_id) if into_id else tree.special_folder(user, Node.INBOX)
    summary = Summary()
    entries = collect(paths, summary, services.config.max_tree_depth)
    progress = Progress(len(entries), sum(entry.size for entry in entries), progress_stream)
    folder_ids: dict[tuple[str, ...], str | None] = {(): into.id}
    try:
        for entry in entries:
            try:
                folder_id = _folder(services, user, entry.folders, folder_ids, summary, dry_run)
                if dry_run:
                    _check_only(services, user, entry, folder_id, summary)
                else:
                    _import(services, user, entry, folder_id, summary)
            except DomainError as error:
                summary.refused.append((str(entry.path), error.message))
            except OSError as error:
                summary.refused.append((str(entry.path),
                                        f"could not be read: {error.strerror or error}"))
            progress.advance(entry.size)
    finally:
        progress.finish()
    return summary


def _folder(services: Services, user: User, folders: tuple[str, ...],
            known: dict[tuple[str, ...], str | None], summary: Summary,
            dry_run: bool) -> str | None:
    """The id of the folder for these directories, made (with its parents) if needed; None in
    a dry run for a folder that does not exist yet."""
    if folders in known:
        return known[folders]
    parent_id = _folder(services, user, folders[:-1], known, summary, dry_run)
    folder_id = None
    if parent_id is not None:
        if dry_run:
            existing = tree.find_child_folder(user, parent_id, folders[-1])
            folder_id = existing.id if existing is not None else None
        else:
            folder, made = tree.child_folder(user, parent_id, folders[-1],
                                             services.config.max_tree_depth)
            folder_id = folder.id
            summary.folders_made += made
    if folder_id is None:
        summary.folders_made += 1
    known[folders] = folder_id
    return folder_id


def _import(services: Services, user: User, entry: Entry, folder_id: str,
            summary: Summary) -> None:
    with open(entry.path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        documents = uploads.import_into_folder(services, user, folder_id, stream, size,
                                               entry.path.name)
    if not documents:
        summary.duplicates += 1
    else:
        summary.imported += 1
        summary.imported_bytes += size


def _check_only(services: Services, user: User, entry: Entry, folder_id: str | None,
                summary: Summary) -> None:
    """A dry run: the checks of an upload, and the duplicate check where the folder exists."""
    with open(entry.path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if uploads.would_import(services, user, folder_id, stream, size, entry.path.name):
            summary.imported += 1
            summary.imported_bytes += size
        else:
            summary.duplicates += 1
