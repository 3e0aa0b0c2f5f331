"""The consume folder (DMS_CONSUME_DIR, issue 16): a network scanner, or anyone, drops files into
`<consume>/<username>/...` and they become that user's documents in .inbox, sub-folders kept as
folders — without a script.

Polled, not watched: SMB and NFS shares send no inotify events. A file is taken only when its size
and modification time have not changed for `consume_stable_seconds` (a scanner writing slowly is
never imported half-written); a file seen but not yet stable is looked at again after that time
rather than a whole interval later. It goes through dms.documents.import_into_folder, the checks of an
upload; then it is deleted, or moved to `<consume>/.done/` with DMS_CONSUME_KEEP=1. A refused file
goes to `<consume>/.failed/` beside a `.txt` with the reason. A crash between the import and the
removal is harmless: at the next look the file is a duplicate of its folder's document and is
only removed. A temporary trouble (full disk, the database busy or away) leaves the file where it
is, for the next look. A directory that names no active user is reported once in the log.

Runs in a thread of `dms serve` and of `dms worker`; several nodes on one shared consume folder
may both take a file: the duplicate check (in the transaction that adds) keeps one document.
Bounded: at most MAX_FILES_PER_LOOK files are imported per look, and directories are walked
at most the folder tree's depth limit deep.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from dms import documents, tree
from dms.db import database
from dms.errors import DomainError, StorageFull, Unavailable
from dms.models import Node, User
from dms.storage import entries

if TYPE_CHECKING:
    from dms.services import Services

log = logging.getLogger("dms.consume")

DONE, FAILED = ".done", ".failed"
MAX_FILES_PER_LOOK = 1000


class ConsumeFolder:
    def __init__(self, services: Services):
        self.services = services
        self.config = services.config
        self.root: Path = self.config.consume_dir
        self._seen: dict[Path, tuple[tuple[int, int], float]] = {}  # path -> (size, mtime), since
        self._unknown: set[str] = set()  # user directories already reported
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="dms-consume", daemon=True)
        self._thread.start()
        log.info("watching the consume folder %s every %g s", self.root,
                 self.config.consume_interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.look()
            except Exception:  # never let one bad look end the watching
                log.exception("the consume folder could not be read")
            finally:
                database.close()
            # A file seen but not yet stable is looked at again once it can be, not a whole
            # interval later.
            wait = self.config.consume_interval
            if self._seen:
                wait = min(wait, max(self.config.consume_stable_seconds, 0.1))
            self._stop.wait(wait)

    def look(self) -> int:
        """One pass: import every file that has been stable long enough; returns how many were
        taken (imported, duplicates or refused)."""
        now = time.monotonic()
        present: set[Path] = set()
        taken = 0
        for user_dir in sorted(entries(self.root)):
            if user_dir.name.startswith(".") or not user_dir.is_dir() or user_dir.is_symlink():
                continue
            user = self._user(user_dir.name)
            if user is None:
                continue
            for path in self._files(user_dir, 0):
                present.add(path)
                if taken >= MAX_FILES_PER_LOOK or self._stop.is_set():
                    continue
                if self._stable(path, now):
                    taken += self._take(user, user_dir, path)
        self._seen = {path: state for path, state in self._seen.items() if path in present}
        return taken

    def _user(self, name: str) -> User | None:
        user = User.get_or_none(User.username == name)
        if user is None or not user.is_active:
            if name not in self._unknown:
                self._unknown.add(name)
                log.warning("consume folder: %r is not an active user; its files stay where "
                            "they are", name)
            return None
        self._unknown.discard(name)
        return user

    def _files(self, directory: Path, depth: int):
        if depth > self.config.max_tree_depth:
            return
        for entry in sorted(entries(directory)):
            if entry.name.startswith(".") or entry.is_symlink():
                continue  # hidden (a scanner's partial file, .DS_Store), or a link
            if entry.is_dir():
                yield from self._files(entry, depth + 1)
            elif entry.is_file():
                yield entry

    def _stable(self, path: Path, now: float) -> bool:
        try:
            stat = path.stat()
        except OSError:
            return False
        key = (stat.st_size, stat.st_mtime_ns)
        seen = self._seen.get(path)
        if seen is None or seen[0] != key:
            self._seen[path] = (key, now)
            return False
        return now - seen[1] >= self.config.consume_stable_seconds

    def _take(self, user: User, user_dir: Path, path: Path) -> int:
        relative = path.relative_to(user_dir)
        try:
            folder_id = tree.special_folder(user, Node.INBOX).id
            for name in relative.parts[:-1]:
                folder_id = tree.child_folder(user, folder_id, name,
                                              self.config.max_tree_depth)[0].id
            with open(path, "rb") as stream:
                size = os.fstat(stream.fileno()).st_size
                document = documents.import_into_folder(self.services, user, folder_id, stream,
                                                        size, path.name)
        except (StorageFull, Unavailable) as error:
            log.warning("consume folder: %s waits for the next look: %s", path, error.message)
            return 0
        except DomainError as error:
            self._fail(user_dir.name, relative, path, error.message)
            return 1
        except FileNotFoundError:
            return 0  # taken by another node meanwhile
        if document is None:
            log.info("consume folder: %s is already in %s's folder; removed", relative, user.username)
        else:
            log.info("consume folder: imported %s for %s", relative, user.username)
        self._finish(user_dir.name, relative, path)
        return 1

    def _finish(self, username: str, relative: Path, path: Path) -> None:
        if self.config.consume_keep:
            _move(path, self.root / DONE / username / relative)
        else:
            path.unlink(missing_ok=True)
        self._seen.pop(path, None)

    def _fail(self, username: str, relative: Path, path: Path, reason: str) -> None:
        target = self.root / FAILED / username / relative
        log.warning("consume folder: refused %s of %s: %s", relative, username, reason)
        _move(path, target)
        target.with_name(target.name + ".txt").write_text(reason + "\n", encoding="utf-8")
        self._seen.pop(path, None)


def _move(source: Path, target: Path) -> None:
    """Move a file out of the way; an earlier file of the same name there is replaced."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, target)
    except OSError:  # another filesystem
        shutil.move(str(source), str(target))
