"""Building the whole search index from the database (a first start, an index of another version
or a broken one, `dms reindex`): `build()` writes every live node into a new, empty index, commits
it and writes its marker.

A server builds a large index in a process of its own (`BuildProcess`: `dms _search-build`, this
module's `child_main`), not in its indexer thread: a thread of the server's interpreter building
for minutes takes the interpreter from the request threads in slices, and each request waits for
it dozens of times (2–3× slower for as long as the build runs: ~20 minutes at a million documents
on a 2-core machine, 2026-11-30). The child runs behind the server's threads (a lower CPU
priority), prints its progress, and exits 0 once the index and its marker are written. It holds
the server's `search.lock` with it (the same open file), so a server started after this one died
waits for the child; the child ends by itself within a batch when its parent is gone. A small
index (IN_PROCESS_NODES) is built in the thread: less work than starting the process.
"""

from __future__ import annotations

import errno
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

from dms.db import database, is_disk_full, open_database
from dms.files.children import dms_command
from dms.files.fairness import run_behind
from dms.search import outbox
from dms.search.index import SearchIndex

BUILD_COMMAND = "_search-build"  # the hidden subcommand of `dms` that runs child_main
# At most this many nodes are indexed in the server's own thread (about a second of work);
# more, in a child process.
IN_PROCESS_NODES = 2000
PROGRESS_EVERY = 1000  # nodes between two progress reports
DISK_FULL_STATUS = 3  # the child's exit status when the disk (or the quota) is full
POLL_SECONDS = 0.25  # how often the parent looks whether it should stop the child


class Stopped(Exception):
    """The build was asked to stop (the server stops, the parent is gone): the index is not
    marked complete, so the next start builds it again."""


def build(index: SearchIndex, total: int, progress: Callable[[int, int], None],
          stopping: Callable[[], bool]):
    """Empty `index`, add every live node, commit, write the marker; returns (nodes indexed,
    the open writer). `progress(done, total)` every PROGRESS_EVERY nodes; Stopped as soon as
    `stopping()` says so."""
    index.create_empty()
    writer = index.writer()
    done = 0
    for entry in outbox.all_entries():
        if done % PROGRESS_EVERY == 0 and stopping():
            raise Stopped()
        writer.add_document(index.document(entry))
        done += 1
        if done % PROGRESS_EVERY == 0:
            progress(done, max(total, done))
    writer.commit()
    index.mark_complete()
    return done, writer


class BuildProcess:
    """`dms _search-build` building `index_dir` from the SQLite file `database_file`, started
    behind the server's threads, holding `lock_fd` (the server's search.lock) too."""

    def __init__(self, index_dir: Path, database_file: str, lock_fd: int):
        command = dms_command(BUILD_COMMAND, str(index_dir), database_file, str(os.getpid()))
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, close_fds=True,
                                        pass_fds=(lock_fd,), start_new_session=True)
        run_behind(self.process.pid)

    def follow(self, progress: Callable[[int, int], None],
               stopping: Callable[[], bool]) -> int:
        """Pass the child's progress on until it exits; the nodes it indexed. Stopped (the child
        killed) when `stopping()`; OSError(ENOSPC) if the disk was full; RuntimeError if it
        failed otherwise (its own message is on the server's standard error)."""
        stdout = cast(IO[bytes], self.process.stdout)
        pending, done = b"", 0
        try:
            while True:
                if stopping():
                    raise Stopped()
                if not select.select([stdout], [], [], POLL_SECONDS)[0]:
                    continue
                chunk = os.read(stdout.fileno(), 4096)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-64:]  # a line is two numbers; anything longer is not one
                for line in lines[-1:]:
                    numbers = line.split()
                    if len(numbers) == 2 and all(number.isdigit() for number in numbers):
                        done = int(numbers[0])
                        progress(done, int(numbers[1]))
        except BaseException:
            self.process.kill()
            raise
        finally:
            status = self.process.wait()
            stdout.close()
        if status == DISK_FULL_STATUS:
            raise OSError(errno.ENOSPC, "the disk is full (building the search index)")
        if status != 0:
            raise RuntimeError(f"the search index builder exited with status {status}")
        return done


def child_main(argv: list[str]) -> int:
    """`dms _search-build INDEX_DIR DATABASE_FILE PARENT_PID`: build the index, print "done
    total" lines as it goes and the final count last; exit 0 when complete."""
    index_dir, database_file, parent = Path(argv[0]), Path(argv[1]), int(argv[2])
    open_database(database_file)
    total = outbox.node_count()

    def report(done: int, total: int) -> None:
        print(done, total, flush=True)

    try:
        done, writer = build(SearchIndex(index_dir), total, report,
                             stopping=lambda: os.getppid() != parent)
        writer.wait_merging_threads()
    except Stopped:
        return 1
    except Exception as error:
        print(f"dms: the search index could not be built: {error}", file=sys.stderr)
        return DISK_FULL_STATUS if is_disk_full(error) else 1
    finally:
        database.close()
    report(done, max(total, done))
    return 0
