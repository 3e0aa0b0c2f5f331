"""The dry run, `GET /rules/{id}/matches/` (api.md, "The dry run"): which of the caller's existing
documents a rule would match and what it would change in each, changing nothing.

Bounded per request: the most recently changed documents whose reading has ended are examined,
at most `rules_preview_documents` of them and for at most `rules_preview_seconds`; the answer
says how many were examined of how many there are (`complete` false when it stopped early).
More than a few documents are matched in a process of its own, behind the server's threads
(dms.domain.rules.matcher).
Bounded per user and process: a user's dry runs run one at a time, and a process runs a few at once
(dms.domain.services.DRY_RUNS_AT_ONCE); past either, 429 at once. As `POST /rules/{id}/apply/` does,
the dry run ignores `enabled`, `sources` and `stop` (they are about new documents) and what a person
changed by hand (applying is a person's choice)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dms.config import Config
from dms.db import database
from dms.db.models import Node, OcrStatus, Rule, User
from dms.domain import tags
from dms.domain.rules import _metadata as rule_metadata
from dms.domain.rules import matcher
from dms.domain.rules.filing import live_folders
from dms.domain.rules.store import owned_rule

if TYPE_CHECKING:
    from dms.domain.services import Services

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
    params = (user.id, Node.DOCUMENT, *ENDED)
    documents = database.execute_sql(f"SELECT count(*) {CANDIDATES}", params).fetchone()[0]
    ids = [row[0] for row in database.execute_sql(
        f"SELECT id {CANDIDATES} ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*params, config.rules_preview_documents))]
    found = matcher.match_documents(config, user.id, rule.id, ids, config.rules_preview_seconds)
    return Preview(_hits(user, found.matched), found.examined, documents,
                   found.examined == documents)


def hit_documents(user: User, hits: list[Hit]) -> dict[str, Node]:
    """The caller's documents of these hits (a page of them), by id; one deleted for good since
    the dry run is left out."""
    ids = [hit.document_id for hit in hits]
    return {node.id: node for node in Node.select().where(Node.id.in_(ids),
                                                          Node.owner == user.id)}


def _hits(user: User, matched: list[matcher.Matched]) -> list[Hit]:
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
