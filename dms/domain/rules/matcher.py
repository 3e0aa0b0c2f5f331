"""One rule matched over many of its owner's documents: `match_here` in this process, `Child` in a
child process of its own (`dms _rules-match`, hidden), which answers request after request: a
dry run's (`match_documents`, dms.domain.rules.preview: a few documents in the request's thread,
more in a child) and a rule run's batches (dms.domain.rules.runs: one child per slice).

Why a child: matching is Python's own work — a fuzzy pattern over a text of 100,000 characters
takes 3-6 ms of the interpreter a document — and a dry run goes through up to
DMS_RULES_PREVIEW_DOCUMENTS of them for up to DMS_RULES_PREVIEW_SECONDS. In the server, every step
of it holds the interpreter that the other users' request threads share in slices, however
politely it waits between steps (`yield_to_requests`): round 4's dry runs raised another user's
p99 from 36 to 112 ms. A child runs behind the server's threads (ten steps nicer), so the cores
go to requests first, and the request thread that waits for it holds nothing. Starting one costs
~0.2 s, more than matching IN_PROCESS_DOCUMENTS documents.

The protocol, a line each way per request: the parent writes one JSON object (the database — on
stdin, as a PostgreSQL URL may hold a password the command line would show to others —, the
owner, the rule, the documents' ids in the order to examine them, the limits) to the child's
stdin; the child writes one JSON object back: how many it examined and, for each match, the
document, its folder and title before, and the rule's step. It ends when its stdin does. Only
reads: the child writes nothing to the database.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dms.config import Config
from dms.db import database, open_database
from dms.domain import matching
from dms.domain.rules import _metadata as rule_metadata
from dms.domain.rules import facts
from dms.domain.rules.checks import spec_of
from dms.domain.rules.filing import RULE_COLUMNS, RuleRow, Step, evaluate
from dms.errors import Unavailable
from dms.files.children import dms_command
from dms.files.fairness import BEHIND_NICENESS, run_behind, yield_to_requests

log = logging.getLogger("dms.rules")

MATCH_COMMAND = "_rules-match"  # spelled out in dms.cli, which dispatches it before anything else
IN_PROCESS_DOCUMENTS = 20  # a dry run of at most this many documents matches in its own thread
BATCH = 50  # documents read at once
# Beyond its own deadline, the parent waits this long for the child's answer (its start, a last
# document's DMS_RULES_MAX_SECONDS) before it kills it; the child's CPU time is capped beyond
# that, in case its parent was killed and cannot.
GRACE_SECONDS = 30.0
FAILED = "The dry run could not be finished; try again in a moment."

# A match: the document, (its folder, its title) before the rule, what the rule does to it.
Matched = tuple[str, tuple[str, str], Step]


@dataclasses.dataclass(frozen=True)
class Matches:
    examined: int
    matched: list[Matched]


def match_documents(config: Config, owner_id: str, rule_id: str, document_ids: list[str],
                    seconds: float) -> Matches:
    """A dry run's matching: the owner's rule over `document_ids`, in order, for at most
    `seconds` (then the rest is not examined; the first document always is), in a child process
    when there are more than IN_PROCESS_DOCUMENTS. Unavailable if the child failed (its
    traceback is in the server's log)."""
    if len(document_ids) <= IN_PROCESS_DOCUMENTS:
        return match_here(owner_id, rule_id, document_ids, time.monotonic() + seconds,
                          config.rules_max_text_chars, config.rules_max_seconds)
    with Child(config, seconds) as child:
        return child.match(owner_id, rule_id, document_ids, seconds)


class Child:
    """A `dms _rules-match` child process that answers request after request — a dry run's one,
    or the batches of a rule run's slice (dms.domain.rules.runs: one start, ~0.2 s of CPU, for a
    slice's many batches) — for about `seconds` of matching in all, `behind` steps nicer than
    the server. Killed when closed if it has not ended by then."""

    def __init__(self, config: Config, seconds: float, behind: int = BEHIND_NICENESS):
        self.config = config
        engine = "postgresql" if config.database_url else "sqlite"
        cpu_seconds = seconds + config.rules_max_seconds + GRACE_SECONDS
        self.process = subprocess.Popen(
            dms_command(MATCH_COMMAND, str(int(cpu_seconds) + 1), engine),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True, start_new_session=True)
        run_behind(self.process.pid, behind)
        self._read = b""

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def match(self, owner_id: str, rule_id: str, document_ids: list[str],
              seconds: float) -> Matches:
        """As match_here over `document_ids` for `seconds` from now, in the child. Unavailable
        if it failed or has not answered DMS_RULES_MAX_SECONDS + GRACE_SECONDS after that (it
        is then killed: closed)."""
        assert self.process.stdin is not None
        request = json.dumps({
            "database": self.config.database_url or str(self.config.db_path),
            "owner_id": owner_id, "rule_id": rule_id, "document_ids": document_ids,
            # The deadline on the wall clock, which both processes read: a start counts.
            "until": time.time() + seconds, "max_text_chars": self.config.rules_max_text_chars,
            "max_seconds": self.config.rules_max_seconds}).encode() + b"\n"
        wait = seconds + self.config.rules_max_seconds + GRACE_SECONDS
        try:
            self.process.stdin.write(request)
            self.process.stdin.flush()
            line = self._line(time.monotonic() + wait)
        except OSError:  # the child is gone (a broken pipe)
            line = None
        if line is None:
            self.close(at_once=True)  # its status is known once it has ended
            log.warning("a rule's matching in a child process failed or took longer than "
                        "%.0f s (status %s)", wait, self.process.returncode)
            raise Unavailable(FAILED)
        answer = json.loads(line)
        return Matches(answer["examined"], [(document_id, (before[0], before[1]), _step(raw))
                                            for document_id, before, raw in answer["matched"]])

    def _line(self, deadline: float) -> bytes | None:
        """The child's next line of answer, or None at its end or past `deadline`."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._read:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([descriptor], [], [], left)[0]:
                return None
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return None
            self._read += chunk
        line, _, self._read = self._read.partition(b"\n")
        return line

    def close(self, at_once: bool = False) -> None:
        """End the child: its stdin closed, it ends on its own; killed if it has not within a
        second (it may be matching a long text), or `at_once` (it failed or overran)."""
        if not at_once and self.process.poll() is None:
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
                self.process.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def match_here(owner_id: str, rule_id: str, document_ids: list[str], deadline: float,
               max_text_chars: int, max_seconds: float) -> Matches:
    """The matching itself, in this process, until `deadline` (time.monotonic()); a rule
    deleted meanwhile matches nothing."""
    row = database.execute_sql(f"SELECT {RULE_COLUMNS} FROM rule WHERE id = ? AND owner_id = ?",
                               (rule_id, owner_id)).fetchone()
    if row is None:
        return Matches(0, [])
    rule = RuleRow._make(row)
    rules = [(rule, spec_of(rule))]
    matched: list[Matched] = []
    examined = 0
    for start in range(0, len(document_ids), BATCH):
        if examined and time.monotonic() > deadline:
            break
        chunk = document_ids[start:start + BATCH]
        loaded = facts.load(chunk, max_text_chars)
        for document_id in chunk:
            # The first document is always examined: a batch whose deadline a child's start
            # used up still moves its run on.
            if examined and time.monotonic() > deadline:
                break
            examined += 1
            yield_to_requests()  # other users' requests first (in the server's own thread)
            # Let each document go once matched: its words and the fuzzy algorithm's runs of
            # them are megabytes for a long text (a batch's 50 held 444 MiB).
            document = loaded.pop(document_id, None)
            if document is None:
                continue
            before = (document.parent_id, document.title)
            steps = evaluate(rules, document, time.monotonic() + max_seconds, stop=False)
            if steps:
                matched.append((document_id, before, steps[0]))
    return Matches(examined, matched)


def _step(raw: dict[str, Any]) -> Step:
    """A Step from its JSON (dataclasses.asdict's, through JSON: tuples came back as lists)."""
    metadata = raw["metadata"]
    custom = metadata["custom_field"]
    return Step(raw["rule_id"], raw["rule_name"], matching.Match(**raw["match"]),
                tuple(raw["add_tags"]), raw["move_to"], raw["title"],
                rule_metadata.MetadataStep(metadata["correspondent"], metadata["document_type"],
                                           (custom[0], custom[1]) if custom else None,
                                           metadata["document_date"]))


def main(argv: list[str]) -> int:
    """`dms _rules-match CPU_SECONDS ENGINE`: match as each line of stdin asks, one line of
    answer on stdout for each, until stdin ends (ENGINE, sqlite or postgresql, is dms.cli's)."""
    # The parent's stdout is ours only for the answers: anything printed by accident would break
    # them.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import resource

    cpu_seconds = int(argv[0])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    try:
        for line in sys.stdin.buffer:
            request = json.loads(line)
            deadline = time.monotonic() + (float(request["until"]) - time.time())
            if database.obj is None:
                target = request["database"]
                open_database(target if argv[1] == "postgresql" else Path(target), pool_size=1)
            found = match_here(request["owner_id"], request["rule_id"], request["document_ids"],
                               deadline, request["max_text_chars"], request["max_seconds"])
            answer = {"examined": found.examined,
                      "matched": [(document_id, before, dataclasses.asdict(step))
                                  for document_id, before, step in found.matched]}
            channel.write(json.dumps(answer).encode() + b"\n")
            channel.flush()
    except BrokenPipeError:  # the parent stopped waiting (it was stopped, or gave up on us)
        return 1
    finally:
        if database.obj is not None:
            database.close()
    return 0
