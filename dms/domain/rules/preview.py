"""The dry run, `GET /rules/{id}/matches/` (api.md, "The dry run"): which of the caller's existing
documents a rule would match and what it would change in each, changing nothing.

Bounded per request: the most recently changed documents whose reading has ended are examined,
at most `rules_preview_documents` of them and for at most `rules_preview_seconds`; the answer
says how many were examined of how many there are (`complete` false when it stopped early).
Bounded per user and process: a user's dry runs run one at a time, and a process runs a few at once
(dms.domain.services.DRY_RUNS_AT_ONCE); past either, 429 at once. As `POST /rules/{id}/apply/` does,
the dry run ignores `enabled`, `sources` and `stop` (they are about new documents) and what a person
changed by hand (applying is a person's choice)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dms.config import Config
from dms.db import database
from dms.db.models import Node, OcrStatus, Rule, User
from dms.domain import tags
from dms.domain.rules import _metadata as rule_metadata
from dms.domain.rules import facts
from dms.domain.rules.checks import spec_of
from dms.domain.rules.filing import Step, evaluate, live_folders
from dms.domain.rules.store import owned_rule
from dms.files.fairness import yield_to_requests

if TYPE_CHECKING:
    from dms.domain.services import Services

BATCH = 50  # documents read at once
ENDED = (OcrStatus.SUCCEEDED, OcrStatus.FAILED)
CANDIDATES = ("FROM node WHERE owner_id = ? AND kind = ? AND trash_id IS NULL "
              "AND ocr_status IN (?, ?)")


@dataclass(frozen=True)
class Hit:
    """A document the rule matches: where, what it matched, and what it would change."""
    document_id: str
    field: str
    text: str
    changes: dict[str, Any]


@dataclass(frozen=True)
class Preview:
    hits: list[Hit]
    examined: int
    documents: int
    complete: bool


def preview(services: Services, user: User, rule_id: str) -> Preview:
    """One at a time per user and a few at once per process (services.dry_runs)."""
    rule = owned_rule(user, rule_id)
    with services.dry_runs.slot(0, user.id):
        return _preview(services.config, user, rule)


def _preview(config: Config, user: User, rule: Rule) -> Preview:
    rules = [(rule, spec_of(rule))]
    params = (user.id, Node.DOCUMENT, *ENDED)
    documents = database.execute_sql(f"SELECT count(*) {CANDIDATES}", params).fetchone()[0]
    ids = [row[0] for row in database.execute_sql(
        f"SELECT id {CANDIDATES} ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*params, config.rules_preview_documents))]
    deadline = time.monotonic() + config.rules_preview_seconds
    matched: list[tuple[str, tuple[str, str], Step]] = []
    examined = 0
    for start in range(0, len(ids), BATCH):
        if time.monotonic() > deadline:
            break
        chunk = ids[start:start + BATCH]
        loaded = facts.load(chunk, config.rules_max_text_chars)
        for document_id in chunk:
            if time.monotonic() > deadline:
                break
            examined += 1
            yield_to_requests()  # other users' requests first
            # Let each document go once matched: its words and the fuzzy algorithm's runs of
            # them are megabytes for a long text (a batch's 50 held 444 MiB).
            document = loaded.pop(document_id, None)
            if document is None:
                continue
            before = (document.parent_id, document.title)
            steps = evaluate(rules, document, time.monotonic() + config.rules_max_seconds,
                             stop=False)
            if steps:
                matched.append((document_id, before, steps[0]))
    return Preview(_hits(user, matched), examined, documents, examined == documents)


def hit_documents(user: User, hits: list[Hit]) -> dict[str, Node]:
    """The caller's documents of these hits (a page of them), by id; one deleted for good since
    the dry run is left out."""
    ids = [hit.document_id for hit in hits]
    return {node.id: node for node in Node.select().where(Node.id.in_(ids),
                                                          Node.owner == user.id)}


def _hits(user: User, matched: list[tuple[str, tuple[str, str], Step]]) -> list[Hit]:
    """What the rule would change in each matched document (their tags and the rule's folder
    read once for all)."""
    labels = tags.tags_of([document_id for document_id, _, _ in matched], user.id)
    folders = live_folders(user.id, {step.move_to for _, _, step in matched if step.move_to})
    hits = []
    for document_id, (parent_id, title), step in matched:
        present = {tags.name_key(tag["name"]) for tag in labels[document_id]}
        changes: dict[str, Any] = {"add_tags": [name for name in step.add_tags
                                      if tags.name_key(name) not in present],
                         "move_to": None, "set_title": None}
        if step.move_to in folders and step.move_to != parent_id:
            changes["move_to"] = {"id": step.move_to, "title": folders[step.move_to]}
        if step.title and step.title != title:
            changes["set_title"] = step.title
        changes.update(rule_metadata.preview(user.id, document_id, step.metadata))
        hits.append(Hit(document_id, step.match.field, step.match.text, changes))
    return hits
