"""A large message is unpacked in a child process of its own (`dms _mail-unpack`, hidden: only a
mail check starts it), a small one in the checking thread.

Why: the email parser keeps an object for every line of a message (330,000 for one of 24 MiB), and
Python gives its small-object arenas back to the system only when every object in them is gone; a
few objects that other threads make meanwhile (a cursor, a log record) keep whole arenas. Four
checks of 24 MiB messages at once left the server 40-88 MiB larger each time, growing from round
to round (+100 MiB after five). In a child, the parse's memory goes with the process, its CPU
holds no lock that requests need, and its address space is capped (a message that needs more is
refused, the server is untouched). Starting the child costs ~0.1 s, more than parsing a message
of less than IN_PROCESS_BYTES.

The protocol: the parent writes one JSON object (the message's file, the folder for its
attachments, its key, the limits) to the child's stdin; the child writes one JSON object back
(what `_message.unpack` returned, or why the message was refused) and exits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dms.files.children import dms_command
from dms.files.fairness import run_behind
from dms.intake.mail._message import MessageLimits, MessageRefused, Origin, Unpacked, unpack

if TYPE_CHECKING:
    from dms.intake.mail._client import Budget

UNPACK_COMMAND = "_mail-unpack"  # spelled out in dms.cli, which dispatches it before anything else
IN_PROCESS_BYTES = 2**20  # a message of at most this size is parsed in the checking thread
# The child's address space: Python's own (~60 MiB) and up to MEMORY_PER_MESSAGE_MB times the
# largest message (DMS_MAIL_MAX_MESSAGE_MB), at least CHILD_MEMORY_MB. A message of 24 MiB took
# 91 MiB (base64) and 136 MiB (raw 8-bit bytes); a message needing more is refused.
CHILD_MEMORY_MB = 512
MEMORY_PER_MESSAGE_MB = 6
CHILD_SECONDS = 120.0  # a message taking longer is refused (unless its check ends first)
POLL_SECONDS = 0.5  # how often the parent looks whether its check was ended meanwhile
MEMORY = "it needs more memory than this server gives the reading of one message"


class CheckEnded(Exception):
    """The check ended while its message was being unpacked (its deadline, the server stopping):
    the child is killed, the budget expired."""


def child_memory_mb(max_message_mb: int) -> int:
    """The address space of a child for messages of at most `max_message_mb`."""
    return max(CHILD_MEMORY_MB, 64 + MEMORY_PER_MESSAGE_MB * max_message_mb)


def unpack_message(path: Path, folder: Path, key: str, limits: MessageLimits, budget: Budget,
                   max_message_mb: int) -> Unpacked:
    """`_message.unpack` of the message in `path`: in a child process when it is larger than
    IN_PROCESS_BYTES. MessageRefused also when the child ran out of memory or time or crashed;
    CheckEnded when the check was ended meanwhile."""
    if path.stat().st_size <= IN_PROCESS_BYTES:
        return unpack(path, folder, key, limits)
    request = json.dumps({"path": str(path), "folder": str(folder), "key": key,
                          "max_header_kb": limits.max_header_kb,
                          "max_multiparts": limits.max_multiparts}).encode()
    command = dms_command(UNPACK_COMMAND, str(child_memory_mb(max_message_mb)))
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             close_fds=True, start_new_session=True)
    run_behind(child.pid)
    answer = _answer(child, request, budget)
    if answer.get("refused"):
        raise MessageRefused(answer["refused"])
    origin = Origin(**answer["origin"])
    return Unpacked(origin, [(name, Path(saved)) for name, saved in answer["files"]],
                    answer["cut"])


def _answer(child: subprocess.Popen[bytes], request: bytes, budget: Budget) -> dict[str, Any]:
    limit = time.monotonic() + CHILD_SECONDS
    given: bytes | None = request
    try:
        while True:
            try:
                output, _ = child.communicate(given, timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                given = None  # written already: communicate() goes on from where it was
                if budget.expired or time.monotonic() > budget.deadline:
                    budget.expire()  # as its watchdog does: the check's failure says why
                    raise CheckEnded() from None
                if time.monotonic() > limit:
                    raise MessageRefused(f"it took longer than {CHILD_SECONDS:g} s to "
                                         "read") from None
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    if child.returncode < 0:  # an allocation failing in C under the cap ends it with a signal
        raise MessageRefused(MEMORY)
    if child.returncode != 0 or not output:  # a bug: its traceback is in the server's log
        raise MessageRefused(f"it could not be read (the reader ended with status "
                             f"{child.returncode}; see the server's log)")
    return cast(dict[str, Any], json.loads(output))


def main(argv: list[str]) -> int:
    """`dms _mail-unpack [MEMORY_MB]`: unpack the message the request on stdin names."""
    memory_mb = int(argv[0]) if argv else 0
    # The parent's stdout is ours only for the answer: anything printed by accident would break it.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import resource

    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
    # Its parent ends it after CHILD_SECONDS; a child whose parent was killed ends by this.
    cpu_seconds = int(CHILD_SECONDS) + 10
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    request = json.loads(sys.stdin.buffer.read())
    limits = MessageLimits(request["max_header_kb"], request["max_multiparts"])
    try:
        unpacked = unpack(Path(request["path"]), Path(request["folder"]), request["key"], limits)
    except MessageRefused as refused:
        answer: dict[str, Any] = {"refused": str(refused)}
    except MemoryError:  # the cap, met in Python: what it held is gone with the frames
        answer = {"refused": MEMORY}
    else:
        answer = {"origin": dataclasses.asdict(unpacked.origin), "cut": unpacked.cut,
                  "files": [(name, str(saved)) for name, saved in unpacked.files]}
    channel.write(json.dumps(answer).encode())
    channel.close()
    return 0
