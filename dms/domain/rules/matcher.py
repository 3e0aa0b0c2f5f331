"""One rule matched over many of its owner's documents: `match_here` in this process (a run's
batch, dms.domain.rules.runs), `match_documents` for a dry run (dms.domain.rules.preview), a few
in the request's thread, more in a child process of its own (`dms _rules-match`, hidden: only a
dry run starts it).

Why a child: matching is Python's own work — a fuzzy pattern over a text of 100,000 characters
takes 3-6 ms of the interpreter a document — and a dry run goes through up to
DMS_RULES_PREVIEW_DOCUMENTS of them for up to DMS_RULES_PREVIEW_SECONDS. In the server, every step
of it holds the interpreter that the other users' request threads share in slices, however
politely it waits between steps (`yield_to_requests`): round 4's dry runs raised another user's
p99 from 36 to 112 ms. A child runs behind the server's threads (ten steps nicer), so the cores
go to requests first, and the request thread that waits for it holds nothing. Starting one costs
~0.2 s, more than matching IN_PROCESS_DOCUMENTS documents.

The protocol: the parent writes one JSON object (the database — on stdin, as a PostgreSQL URL may
hold a password the command line would show to others —, the owner, the rule, the documents'
ids in the order to examine them, the limits) to the child's stdin; the child writes one JSON
object back: how many it examined and, for each match, the document, its folder and title before,
and the rule's step. Only reads: the child writes nothing to the database.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
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
from dms.files.fairness import run_behind, yield_to_requests

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
    """The owner's rule matched over `document_ids`, in order, for at most `seconds` (then the
    rest is not examined): in a child process when there are more than IN_PROCESS_DOCUMENTS.
    Unavailable if the child failed (its traceback is in the server's log)."""
    if len(document_ids) <= IN_PROCESS_DOCUMENTS:
        return match_here(owner_id, rule_id, document_ids, time.monotonic() + seconds,
                          config.rules_max_text_chars, config.rules_max_seconds)
    request = json.dumps({
        "database": config.database_url or str(config.db_path), "owner_id": owner_id,
        "rule_id": rule_id, "document_ids": document_ids,
        # The deadline on the wall clock, which both processes read: the child's start counts.
        "until": time.time() + seconds, "max_text_chars": config.rules_max_text_chars,
        "max_seconds": config.rules_max_seconds}).encode()
    wait = seconds + config.rules_max_seconds + GRACE_SECONDS
    engine = "postgresql" if config.database_url else "sqlite"
    command = dms_command(MATCH_COMMAND, str(int(wait) + 1), engine)
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             close_fds=True, start_new_session=True)
    run_behind(child.pid)
    try:
        output, _ = child.communicate(request, timeout=wait)
    except subprocess.TimeoutExpired:
        log.warning("a dry run's matching took longer than %.0f s and was stopped", wait)
        raise Unavailable(FAILED) from None
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    if child.returncode != 0 or not output:
        log.warning("a dry run's matching ended with status %s", child.returncode)
        raise Unavailable(FAILED)
    answer = json.loads(output)
    return Matches(answer["examined"], [(document_id, (before[0], before[1]), _step(raw))
                                        for document_id, before, raw in answer["matched"]])


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
        if time.monotonic() > deadline:
            break
        chunk = document_ids[start:start + BATCH]
        loaded = facts.load(chunk, max_text_chars)
        for document_id in chunk:
            if time.monotonic() > deadline:
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
    """`dms _rules-match CPU_SECONDS ENGINE`: match as the request on stdin says, answer on
    stdout (ENGINE, sqlite or postgresql, is dms.cli's)."""
    # The parent's stdout is ours only for the answer: anything printed by accident would break it.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import resource

    cpu_seconds = int(argv[0])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    request = json.loads(sys.stdin.buffer.read())
    deadline = time.monotonic() + (float(request["until"]) - time.time())
    target = request["database"]
    open_database(target if argv[1] == "postgresql" else Path(target), pool_size=1)
    try:
        found = match_here(request["owner_id"], request["rule_id"], request["document_ids"],
                           deadline, request["max_text_chars"], request["max_seconds"])
    finally:
        database.close()
    answer = {"examined": found.examined,
              "matched": [(document_id, before, dataclasses.asdict(step))
                          for document_id, before, step in found.matched]}
    channel.write(json.dumps(answer).encode())
    channel.close()
    return 0

