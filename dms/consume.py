"""The consume folder (DMS_CONSUME_DIR, issue 16): a network scanner, or anyone, drops files into
`<consume>/<username>/...` and they become that user's documents in .inbox, sub-folders kept as
folders — without a script.

Polled, not watched: SMB and NFS shares send no inotify events. A file is taken only when its size
and modification time have not changed for `consume_stable_seconds` (a scanner writing slowly is
never imported half-written); a file seen but not yet stable is looked at again after that time
rather than a whole interval later. It goes through dms.documents.import_into_folder, the checks of
an upload; then it is deleted, or moved to `<consume>/.done/` with DMS_CONSUME_KEEP=1. A refused
file goes to `<consume>/.failed/` beside a `.txt` with the reason. A crash between the import and
the removal is harmless: at the next look the file is a duplicate of its folder's document and is
only removed. A temporary trouble (full disk, the database busy or away) leaves the file where it
is, for the next look. A directory that names no active user is reported once in the log.

The folder is shared, so nothing below its root is trusted (issue 22): no symbolic link is ever
followed — not in a user's tree, not as a user folder, not in `.failed/` or `.done/` — because
every step goes through directory descriptors (dms.safedir). A link is left where it is and
reported once; a file that cannot be moved safely stays and is not tried again until it changes.
Each user's folder is looked at on its own: one user's broken tree never stops the others.

Runs in a thread of `dms serve` and of `dms worker`; several nodes on one shared consume folder
may both take a file: the duplicate check (in the transaction that adds) keeps one document.
Bounded: at most MAX_FILES_PER_LOOK files are imported per look, MAX_ENTRIES_PER_USER entries of a
user's tree are looked at, and directories are walked without recursion at most max_depth() deep.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from dms import documents, safedir, tree
from dms.db import database
from dms.errors import DomainError, StorageFull, Unavailable
from dms.models import Node, User

if TYPE_CHECKING:
    from dms.services import Services

log = logging.getLogger("dms.consume")

DONE, FAILED = ".done", ".failed"
MAX_FILES_PER_LOOK = 1000
MAX_ENTRIES_PER_USER = 100_000
MAX_CONSUME_DEPTH = 100  # levels below a user's folder (each level of a walk holds a descriptor)
MAX_REPORTED = 10_000  # standing problems remembered so as to log each once

Key = tuple[str, tuple[str, ...]]  # (username, path below the user's folder)


class ConsumeFolder:
    def __init__(self, services: Services):
        self.services = services
        self.config = services.config
        self.root: Path = self.config.consume_dir
        self._seen: dict[Key, tuple[tuple[int, int], float]] = {}  # -> (size, mtime), since
        self._stuck: dict[Key, tuple[int, int]] = {}  # could not be moved; until it changes
        self._reported: set[str] = set()  # problems already logged once
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

    def max_depth(self) -> int:
        return min(self.config.max_tree_depth, MAX_CONSUME_DEPTH)

    def look(self) -> int:
        """One pass: import every file that has been stable long enough; returns how many were
        taken (imported, duplicates or refused)."""
        now = time.monotonic()
        present: set[Key] = set()
        taken = 0
        root = safedir.open_directory(None, str(self.root))
        try:
            for username in sorted(os.listdir(root)):
                if username.startswith(".") or self._stop.is_set():
                    continue
                try:
                    taken += self._look_at_user(root, username, now, present, taken)
                except Exception as error:  # this user's trouble; the others go on
                    self._report(f"user:{username}:{type(error).__name__}",
                                 "consume folder: the folder of %r could not be read: %s",
                                 username, error)
        finally:
            os.close(root)
        self._seen = {key: state for key, state in self._seen.items() if key in present}
        self._stuck = {key: state for key, state in self._stuck.items() if key in present}
        return taken

    def _look_at_user(self, root: int, username: str, now: float, present: set[Key],
                      taken_before: int) -> int:
        try:
            user_fd = safedir.open_directory(root, username)
        except safedir.NotADirectory:
            self._report(f"link:{username}", "consume folder: %r is a symbolic link or not a "
                         "folder; it is not followed", username)
            return 0
        user = self._user(username)
        taken = 0
        try:
            if user is None:
                return 0
            for parts, state in self._files(user_fd, username):
                key = (username, parts)
                present.add(key)
                if taken_before + taken >= MAX_FILES_PER_LOOK or self._stop.is_set():
                    continue
                if self._stuck.get(key) == state or not self._stable(key, state, now):
                    continue
                taken += self._take(root, user, username, parts, state)
        finally:
            os.close(user_fd)
        return taken

    def _user(self, name: str) -> User | None:
        user = User.get_or_none(User.username == name)
        if user is None or not user.is_active:
            self._report(f"unknown:{name}", "consume folder: %r is not an active user; its "
                         "files stay where they are", name)
            return None
        self._reported.discard(f"unknown:{name}")
        return user

    def _files(self, user_fd: int, username: str) -> Iterator[tuple[tuple[str, ...],
                                                                     tuple[int, int]]]:
        """(path below the user's folder, (size, mtime)) of every regular file, in name order;
        an explicit stack of open directories, at most max_depth() of them."""
        stack = [(os.dup(user_fd), (), None)]
        seen = 0
        try:
            while stack:
                fd, parts, entries = stack[-1]
                if entries is None:
                    with os.scandir(fd) as listing:
                        entries = iter(sorted(listing, key=lambda entry: entry.name))
                    stack[-1] = (fd, parts, entries)
                entry = next(entries, None)
                if entry is None:
                    os.close(fd)
                    stack.pop()
                    continue
                seen += 1
                if seen > MAX_ENTRIES_PER_USER:
                    self._report(f"entries:{username}", "consume folder: the folder of %r holds "
                                 "more than %d entries; only the first are looked at", username,
                                 MAX_ENTRIES_PER_USER)
                    return
                if entry.name.startswith("."):
                    continue  # hidden: a scanner's partial file, .DS_Store
                path = parts + (entry.name,)
                if entry.is_symlink():
                    self._report(f"link:{username}:{path}", "consume folder: %r of %r is a "
                                 "symbolic link; it is not followed", "/".join(path), username)
                elif entry.is_dir(follow_symlinks=False):
                    if len(path) > self.max_depth():
                        self._report(f"deep:{username}:{path[:self.max_depth()]}",
                                     "consume folder: %r of %r is more than %d folders deep; "
                                     "what lies below is not imported", "/".join(path),
                                     username, self.max_depth())
                        continue
                    try:
                        child = safedir.open_directory(fd, entry.name)
                    except OSError as error:
                        self._report(f"dir:{username}:{path}", "consume folder: %r of %r "
                                     "cannot be read: %s", "/".join(path), username, error)
                        continue
                    stack.append((child, path, None))
                elif entry.is_file(follow_symlinks=False):
                    status = entry.stat(follow_symlinks=False)
                    yield path, (status.st_size, status.st_mtime_ns)
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    def _stable(self, key: Key, state: tuple[int, int], now: float) -> bool:
        seen = self._seen.get(key)
        if seen is None or seen[0] != state:
            self._seen[key] = (state, now)
            return False
        return now - seen[1] >= self.config.consume_stable_seconds

    def _take(self, root: int, user: User, username: str, parts: tuple[str, ...],
              state: tuple[int, int]) -> int:
        key, shown = (username, parts), "/".join(parts)
        try:
            with safedir.directory(root, (username, *parts[:-1])) as folder_fd:
                try:
                    fd = safedir.open_file(folder_fd, parts[-1])
                except safedir.NotAFile:
                    self._report(f"link:{username}:{parts}", "consume folder: %r of %r is a "
                                 "symbolic link or not a file; it is not followed", shown,
                                 username)
                    return 0
                with os.fdopen(fd, "rb") as stream:
                    folder_id = self._folder(user, parts[:-1])
                    document = documents.import_into_folder(
                        self.services, user, folder_id, stream, os.fstat(stream.fileno()).st_size,
                        parts[-1])
                if document is None:
                    log.info("consume folder: %r is already in %s's folder; removed", shown,
                             username)
                else:
                    log.info("consume folder: imported %r for %s", shown, username)
                self._finish(root, folder_fd, username, parts, state)
        except (StorageFull, Unavailable) as error:
            log.warning("consume folder: %r of %s waits for the next look: %s", shown, username,
                        error.message)
            return 0
        except DomainError as error:
            self._fail(root, username, parts, state, error.message)
            return 1
        except (FileNotFoundError, safedir.NotADirectory):
            return 0  # taken by another node meanwhile, or its folder replaced by a link
        self._seen.pop(key, None)
        return 1

    def _folder(self, user: User, folders: tuple[str, ...]) -> str:
        folder_id = tree.special_folder(user, Node.INBOX).id
        for name in folders:
            folder_id = tree.child_folder(user, folder_id, name, self.config.max_tree_depth)[0].id
        return folder_id

    def _finish(self, root: int, folder_fd: int, username: str, parts: tuple[str, ...],
                state: tuple[int, int]) -> None:
        if not self.config.consume_keep:
            os.unlink(parts[-1], dir_fd=folder_fd)
            return
        try:
            with safedir.made_directory(root, (DONE, username, *parts[:-1])) as done_fd:
                safedir.move(folder_fd, parts[-1], done_fd, parts[-1])
        except safedir.NotADirectory:
            self._stuck[(username, parts)] = state
            self._report(f"done:{username}:{parts[:-1]}", "consume folder: %s/%s/%s holds a "
                         "symbolic link or a file where a folder belongs; %r stays where it is",
                         DONE, username, "/".join(parts[:-1]), "/".join(parts))

    def _fail(self, root: int, username: str, parts: tuple[str, ...], state: tuple[int, int],
              reason: str) -> None:
        shown = "/".join(parts)
        log.warning("consume folder: refused %r of %s: %s", shown, username, reason)
        try:
            with safedir.directory(root, (username, *parts[:-1])) as folder_fd, \
                    safedir.made_directory(root, (FAILED, username, *parts[:-1])) as failed_fd:
                safedir.move(folder_fd, parts[-1], failed_fd, parts[-1])
                safedir.write_new(failed_fd, parts[-1] + ".txt",
                                  [(reason + "\n").encode("utf-8")])
        except (safedir.NotADirectory, safedir.NotAFile):
            self._stuck[(username, parts)] = state
            self._report(f"failed:{username}:{parts[:-1]}", "consume folder: %s/%s/%s holds a "
                         "symbolic link or a file where a folder belongs; the refused %r stays "
                         "where it is", FAILED, username, "/".join(parts[:-1]), shown)
        except FileNotFoundError:
            pass  # taken by another node meanwhile
        self._seen.pop((username, parts), None)

    def _report(self, key: str, message: str, *args) -> None:
        """Log a standing problem once, not at every look (remembered up to MAX_REPORTED)."""
        if key not in self._reported:
            if len(self._reported) >= MAX_REPORTED:
                self._reported.clear()
            self._reported.add(key)
            log.warning(message, *args)
