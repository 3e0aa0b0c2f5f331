"""File operations below a directory that others can write to, without ever following a symbolic
link: the consume folder is a shared folder, and anyone who can write there can plant links.
Everything goes through directory file descriptors: each path component is opened with O_NOFOLLOW
relative to its parent's descriptor, files are opened the same way and checked to be regular files,
moves are renames between descriptors, and an existing file is never opened for writing (a new file
is written under a fresh name and renamed over it: a rename replaces the directory entry, it never
writes into a victim's inode, not even through a hard link).

A link (or anything not a directory) where a directory should be raises `NotADirectory`; a link or
special file where a file should be raises `NotAFile`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
COPY_CHUNK = 1024 * 1024


class NotADirectory(OSError):
    """A path component is a link or not a directory."""


class NotAFile(OSError):
    """The entry is a link or not a regular file."""


def open_directory(parent_fd: int | None, name: str) -> int:
    """`name` in `parent_fd` (None: a path of the administrator's, which may be a link)."""
    try:
        if parent_fd is None:
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return os.open(name, DIRECTORY_FLAGS, dir_fd=parent_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotADirectory(errno.ENOTDIR, "a symbolic link or a file where a folder belongs",
                                name) from None
        raise


@contextlib.contextmanager
def directory(parent_fd: int, parts: tuple[str, ...]) -> Iterator[int]:
    """The directory at `parts` below `parent_fd`, each component opened without following."""
    fd = os.dup(parent_fd)
    try:
        for part in parts:
            child = open_directory(fd, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def made_directory(parent_fd: int, parts: tuple[str, ...], mode: int = 0o777) -> Iterator[int]:
    """Like `directory`, making the missing components."""
    fd = os.dup(parent_fd)
    try:
        for part in parts:
            try:
                os.mkdir(part, mode, dir_fd=fd)
            except FileExistsError:
                pass
            child = open_directory(fd, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def open_file(directory_fd: int, name: str) -> int:
    """A regular file for reading, never through a link (and never blocking on a FIFO)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=directory_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotAFile(errno.ELOOP, "a link", name) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotAFile(errno.EINVAL, "not a regular file", name)
    os.set_blocking(fd, True)
    return fd


def move(source_fd: int, name: str, target_fd: int, target_name: str) -> None:
    """Move the entry `name` (never followed) to `target_name` in another directory, replacing
    what is there; across file systems a copy through descriptors."""
    try:
        os.rename(name, target_name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    source = open_file(source_fd, name)
    try:
        with os.fdopen(source, "rb", closefd=False) as data:
            write_new(target_fd, target_name, iter(lambda: data.read(COPY_CHUNK), b""))
    finally:
        os.close(source)
    os.unlink(name, dir_fd=source_fd)


def write_new(directory_fd: int, name: str, chunks, mode: int = 0o666) -> None:
    """Write `name` whole: into a new file of a fresh name first (O_EXCL, never a link), then
    renamed over whatever `name` was. The fresh name is short: one made from `name` could be
    longer than a name may be (255 bytes; 100 CJK characters are 300)."""
    draft = f".dms-{secrets.token_hex(8)}.part"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                 dir_fd=directory_fd)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.rename(draft, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(draft, dir_fd=directory_fd)
        raise
