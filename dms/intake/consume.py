"""The consume folder (DMS_CONSUME_DIR; docs/guide.md, "The consume folder"): a network scanner, or
anyone, drops files into `<consume>/<username>/...` and they become that user's documents in .inbox,
sub-folders kept as folders — without a script.

Polled, not watched: SMB and NFS shares send no inotify events. A file is taken only when its size
and modification time have not changed for `consume_stable_seconds` (a scanner writing slowly is
never imported half-written); a file seen but not yet stable is looked at again after that time
rather than a whole interval later. It goes through dms.domain.uploads.import_into_folder, the
checks of an upload; then it is deleted, or moved to `<consume>/.done/` with DMS_CONSUME_KEEP=1. A
refused file goes to `<consume>/.failed/` beside a `.txt` with the reason, and is listed among its
user's intake refusals — a file the user already has too (DMS_CONSUME_IF_DUPLICATE=refuse, the
default; dms.domain.duplicates), naming the existing document. A crash between the import and the
removal is harmless: at the next look the file is a duplicate of the document made from it (of
its name, made after the file was last written) and is only removed. A temporary trouble (full
disk, the database busy or away) leaves the file where it is, for the next look. A directory
that names no active user is reported once in the log.

The folder is shared, so nothing below its root is trusted: no symbolic link is ever followed — not
in a user's tree, not as a user folder, not in `.failed/` or `.done/` — because every step goes
through directory descriptors (dms.files.safedir). A link is left where it is and reported once; a
file that cannot be moved or removed (a link or a folder in the way, no permission) stays and is not
tried again until it changes. Each user's folder is looked at on its own, and each file: one broken
tree or file never stops the others.

Runs in a thread of `dms serve` and of `dms worker`; several nodes on one shared consume folder
may both take a file: the duplicate check (in the transaction that adds) keeps one document.
Bounded: at most MAX_FILES_PER_LOOK files are imported per look, DMS_CONSUME_MAX_ENTRIES entries of
the root and of each user's tree are read, directories are walked without recursion at most
max_depth() deep (DMS_CONSUME_MAX_DEPTH, or DMS_MAX_TREE_DEPTH if lower), and at most
MAX_REPORTS_PER_LOOK new problems are logged one by one per look (thousands of planted links make
one line, not thousands at every look).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dms.db import database
from dms.db.models import Node, User
from dms.domain import duplicates, refusals, tree, uploads
from dms.errors import DomainError, Duplicate, StorageFull, Throttled, Unavailable
from dms.files import safedir
from dms.files.fairness import acting_for
from dms.files.loop import BackgroundLoop

if TYPE_CHECKING:
    from dms.domain.services import Services

log = logging.getLogger("dms.consume")

DONE, FAILED = ".done", ".failed"
MAX_FILES_PER_LOOK = 1000
MAX_REPORTS_PER_LOOK = 100  # new problems logged one by one; one line counts the rest
NAME_MAX = 255  # bytes in a file name (Linux file systems)

Key = tuple[str, tuple[str, ...]]  # (username, path below the user's folder)


class ConsumeFolder:
    def __init__(self, services: Services):
        self.services = services
        self.config = services.config
        self.root: Path = self.config.consume_dir
        self._seen: dict[Key, tuple[tuple[int, int], float]] = {}  # -> (size, mtime), since
        self._stuck: dict[Key, tuple[int, int]] = {}  # could not be moved; until it changes
        self._reported: set[str] = set()  # problems standing at the last look, logged once
        self._standing: set[str] = set()  # problems found by this look
        self._listed = self._unlisted = 0  # new problems of this look logged / only counted
        self._watch = BackgroundLoop("dms-consume", self._round)
        self._duplicates: duplicates.ImportRule = (
            duplicates.AnyCopy() if self.config.consume_if_duplicate == "refuse"
            else duplicates.KeepCopies())

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._watch.start()
        log.info("watching the consume folder %s every %g s", self.root,
                 self.config.consume_interval)

    def stop(self) -> None:
        self._watch.stop()

    def _round(self) -> None:
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
        self._watch.rest(wait)

    def max_depth(self) -> int:
        return min(self.config.max_tree_depth, self.config.consume_max_depth)

    def look(self) -> int:
        """One pass: import every file that has been stable long enough; returns how many were
        taken (imported, duplicates or refused)."""
        now = time.monotonic()
        present: set[Key] = set()
        taken = 0
        self._standing, self._listed, self._unlisted = set(), 0, 0
        root = safedir.open_directory(None, str(self.root))
        try:
            for entry in self._listing(root, self.config.consume_max_entries, "the consume folder",
                                       ""):
                username = entry.name
                if username.startswith(".") or self._watch.stopping:
                    continue
                try:
                    taken += self._look_at_user(root, username, now, present, taken)
                except Exception as error:  # this user's trouble; the others go on
                    self._report(f"user:{username}:{type(error).__name__}",
                                 "consume folder: the folder of %r could not be read: %s",
                                 username, error)
        finally:
            os.close(root)
            # A problem gone is forgotten (logged again if it comes back); one still there is not
            # logged again.
            self._reported = self._standing
            if self._unlisted:
                log.warning("consume folder: %s more problems like those above are not listed one "
                            "by one", f"{self._unlisted:,}")
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
                if taken_before + taken >= MAX_FILES_PER_LOOK or self._watch.stopping:
                    continue
                if self._stuck.get(key) == state or not self._stable(key, state, now):
                    continue
                try:
                    taken += self._take(root, user, username, parts, state)
                except OSError as error:  # this file's trouble (no permission, I/O); tried again
                    self._report(f"take:{username}:{parts}", "consume folder: %r of %r cannot be "
                                 "taken (%s); it stays where it is", "/".join(parts), username,
                                 error.strerror or error)
        finally:
            os.close(user_fd)
        return taken

    def _user(self, name: str) -> User | None:
        user = User.get_or_none(User.username == name)
        if user is None or not user.is_active:
            self._report(f"unknown:{name}", "consume folder: %r is not an active user; its "
                         "files stay where they are", name)
            return None
        return user

    def _files(self, user_fd: int, username: str) -> Iterator[tuple[tuple[str, ...],
                                                                     tuple[int, int]]]:
        """(path below the user's folder, (size, mtime)) of every regular file, in name order;
        an explicit stack of open directories, at most max_depth() of them, and at most
        DMS_CONSUME_MAX_ENTRIES entries read in all."""
        stack = [(os.dup(user_fd), (), None)]
        budget = self.config.consume_max_entries
        try:
            while stack:
                fd, parts, entries = stack[-1]
                if entries is None:
                    listed = self._listing(fd, budget, f"the folder of {username!r}", username)
                    budget -= len(listed)
                    entries = iter(listed)
                    stack[-1] = (fd, parts, entries)
                entry = next(entries, None)
                if entry is None:
                    os.close(fd)
                    stack.pop()
                    continue
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

    def _listing(self, fd: int, limit: int, where: str, username: str) -> list[os.DirEntry]:
        """At most `limit` entries of a directory, in name order; never the whole of a directory
        of millions (the first ones read are kept)."""
        with os.scandir(fd) as listing:
            entries = list(itertools.islice(listing, limit + 1))
        if len(entries) > limit:
            self._report(f"entries:{username}", "consume folder: %s holds more than %s entries; "
                         "only the first are looked at", where,
                         f"{self.config.consume_max_entries:,}")
            entries = entries[:limit]
        return sorted(entries, key=lambda entry: entry.name)

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
                    try:
                        folder_id = self._folder(user, parts[:-1])
                        with acting_for(user.id):  # the readers' fair shares
                            documents = uploads.import_into_folder(
                                self.services, user, folder_id, stream,
                                os.fstat(stream.fileno()).st_size, parts[-1],
                                rule=self._duplicates, source="consume",
                                split=self.services.config.split_on_barcode)
                    except DomainError as error:
                        if isinstance(error, (StorageFull, Unavailable, Throttled)):
                            raise
                        if not self._its_own_copy(error, parts[-1], state):
                            self._fail(root, folder_fd, username, parts, state, error.message)
                            refusals.record(user.id, "consume", shown, error.message)
                            return 1
                        log.info("consume folder: %r was imported already (by another node, or "
                                 "before a restart); removed", shown)
                        documents = []
                if len(documents) == 1:
                    log.info("consume folder: imported %r for %s", shown, username)
                elif documents:  # a batch split at its separator sheets
                    log.info("consume folder: imported %r for %s as %d documents", shown,
                             username, len(documents))
                self._finish(root, folder_fd, username, parts, state)
        except (StorageFull, Unavailable, Throttled) as error:
            log.warning("consume folder: %r of %s waits for the next look: %s", shown, username,
                        error.message)
            return 0
        except (FileNotFoundError, safedir.NotADirectory):
            return 0  # taken by another node meanwhile, or its folder replaced by a link
        self._seen.pop(key, None)
        return 1

    @staticmethod
    def _its_own_copy(error: DomainError, name: str, state: tuple[int, int]) -> bool:
        """Is `error` a duplicate of a document made from this very file — by another node
        sharing the folder, or by this one before a crash kept it from removing the file? A
        document of that name made after the file was last written. A copy dropped again later
        is written later than its document was made: refused."""
        if not isinstance(error, Duplicate):
            return False
        written = dt.datetime.fromtimestamp(state[1] / 1e9, dt.UTC).replace(tzinfo=None)
        return duplicates.made_from(error, name, written)

    def _folder(self, user: User, folders: tuple[str, ...]) -> str:
        folder_id = tree.special_folder(user, Node.INBOX).id
        for name in folders:
            folder_id = tree.child_folder(user, folder_id, name, self.config.max_tree_depth,
                                          source="consume")[0].id
        return folder_id

    def _finish(self, root: int, folder_fd: int, username: str, parts: tuple[str, ...],
                state: tuple[int, int]) -> None:
        if self.config.consume_keep:
            self._move_aside(root, folder_fd, DONE, username, parts, state)
            return
        try:
            os.unlink(parts[-1], dir_fd=folder_fd)
        except FileNotFoundError:
            pass  # taken by another node meanwhile
        except OSError as error:  # imported; so as not to read it again at every look
            self._stays(username, parts, state, "cannot be removed", error)

    def _fail(self, root: int, folder_fd: int, username: str, parts: tuple[str, ...],
              state: tuple[int, int], reason: str) -> None:
        log.warning("consume folder: refused %r of %s: %s", "/".join(parts), username, reason)
        self._move_aside(root, folder_fd, FAILED, username, parts, state, reason)
        self._seen.pop((username, parts), None)

    def _move_aside(self, root: int, folder_fd: int, kind: str, username: str,
                    parts: tuple[str, ...], state: tuple[int, int],
                    reason: str | None = None) -> None:
        """Move the file to `kind`/<user>/..., with its reason beside it if there is one. What
        stands in the way (a link or a file where a folder belongs, a folder where the file goes,
        no permission) leaves the file where it is until it changes."""
        target = "/".join((kind, username, *parts[:-1])) + "/"
        moved = False
        try:
            with safedir.made_directory(root, (kind, username, *parts[:-1])) as target_fd:
                safedir.move(folder_fd, parts[-1], target_fd, parts[-1])
                moved = True
                if reason is not None:
                    safedir.write_new(target_fd, reason_name(parts[-1]),
                                      [(reason + "\n").encode("utf-8")])
        except FileNotFoundError:
            pass  # taken by another node meanwhile
        except OSError as error:
            if not moved:
                self._stays(username, parts, state, f"cannot be moved to {target}", error)
            else:
                log.warning("consume folder: the reason for %r could not be written in %s: %s",
                            "/".join(parts), target, error.strerror or error)

    def _stays(self, username: str, parts: tuple[str, ...], state: tuple[int, int], what: str,
               error: OSError) -> None:
        self._stuck[(username, parts)] = state
        self._report(f"stays:{username}:{parts}", "consume folder: %r of %r %s (%s); it stays "
                     "where it is until it changes", "/".join(parts), username, what,
                     error.strerror or error)

    def _report(self, key: str, message: str, *args) -> None:
        """Log a standing problem once, not at every look; past MAX_REPORTS_PER_LOOK new ones in
        a look, only count them."""
        if key in self._standing:
            return
        self._standing.add(key)
        if key in self._reported:
            return
        if self._listed < MAX_REPORTS_PER_LOOK:
            self._listed += 1
            log.warning(message, *args)
        else:
            self._unlisted += 1


def reason_name(name: str) -> str:
    """`<name>.txt`, the name cut short if that would be longer than a name may be."""
    while len(os.fsencode(name)) > NAME_MAX - len(".txt"):
        name = name[:-1]
    return name + ".txt"
