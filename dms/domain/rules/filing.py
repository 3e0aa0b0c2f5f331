"""Rules at work (api.md, "How rules run"): what a user's rules do to a document, worked out outside
any write transaction, then applied in one.

New documents: the transaction that adds a document's first file (an upload, the legacy upload,
`dms import`, the consume folder, mail) marks it pending with its source (`mark_new`). Once its
text is known, the worker that read it calls `prepare` (dms.runtime hands it to the processor):
the owner's enabled rules for that source, in `order` then name, are matched against the
document's fields, each seeing the title the rules before it made; a rule with `stop` ends the
run. What `prepare` returns runs inside the transaction that marks the reading ended, so the
rules are applied exactly once: a crash before that commit leaves the reading unfinished, and
reconcile queues it again. Each rule that changed something writes one `rule_applied` event
naming the rule and what it did (never the document's text). Then, in the same transaction, what
the text tells of what is still unset: a correspondent, a document type, the date on the paper
(dms.domain.metadata.autofill).

What a person did wins: a document renamed by hand (a `renamed` event with an actor, at any
time before its rules ran) keeps its title; one moved by hand stays where it was put; tags are
added all the same (adding one undoes nothing a person chose). A document put in the trash stops
being read, so its rules wait until it is restored and read to the end. A rule whose folder is
gone is disabled with `last_error` and does nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from dms.config import Config
from dms.db import database, document_scope, events, owner_scope, write_transaction
from dms.db.models import Node, User, title_sort_key, update_rows, utcnow
from dms.domain import matching, tags, tree
from dms.domain.metadata import autofill
from dms.domain.rules import _metadata as rule_metadata
from dms.domain.rules import facts, templates
from dms.domain.rules.checks import RuleSpec, spec_of
from dms.domain.rules.store import disable, folder_gone
from dms.errors import DomainError, StorageFull, Unavailable

log = logging.getLogger("dms.rules")

HAND_ACTIONS = (events.RENAMED, events.MOVED)


@dataclass(frozen=True)
class Step:
    """What one matching rule does to one document."""
    rule_id: str
    rule_name: str
    match: matching.Match
    add_tags: tuple[str, ...]
    move_to: str | None
    title: str | None  # the title its template makes (None: it sets none)
    metadata: rule_metadata.MetadataStep = rule_metadata.MetadataStep()


def mark_new(document_id: str, source: str) -> None:
    """In the transaction that adds a document's first file: its rules are still to run."""
    database.execute_sql(
        "INSERT INTO rule_pending (document_id, source, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (document_id) DO NOTHING",
        (document_id, source, Node.created_at.db_value(utcnow())))


class RuleRow(NamedTuple):
    """A rule's columns as matching needs them (plain SQL: building 50 models and parsing their
    specs cost more than matching a page of text against them)."""
    id: str
    updated_at: str
    name: str
    enabled: bool
    position: int
    match_field: str
    match_algorithm: str
    match_pattern: str
    case_sensitive: bool
    sources: str
    add_tags: str
    move_to: str | None
    set_title: str | None
    stop: bool
    set_metadata: str


RULE_COLUMNS = ", ".join(RuleRow._fields)
SPEC_CACHE_SIZE = 10_000  # parsed rules kept per process, by id and version (updated_at)
_specs: dict[tuple[str, str], RuleSpec] = {}


def active_rules(owner_id: str, source: str | None = None) -> list[tuple[RuleRow, RuleSpec]]:
    """The owner's enabled rules (for documents from `source`), in the order they run."""
    rows = [RuleRow._make(row) for row in database.execute_sql(
        f"SELECT {RULE_COLUMNS} FROM rule WHERE owner_id = ? AND enabled = ? "
        "ORDER BY position, name_key, id", (owner_id, True))]
    if len(_specs) > SPEC_CACHE_SIZE:
        _specs.clear()
    rules = []
    for row in rows:
        key = (row.id, row.updated_at)
        if key not in _specs:
            try:
                _specs[key] = spec_of(row)
            except (DomainError, ValueError) as error:  # saved by a version with other rules
                log.warning("rule %s cannot be read and is left out: %s", row.id, error)
                continue
        rules.append((row, _specs[key]))
    return [(rule, spec) for rule, spec in rules if source is None or source in spec.sources]


def with_live_folders(owner_id: str, rules: list[tuple[RuleRow, RuleSpec]]
                      ) -> list[tuple[RuleRow, RuleSpec]]:
    """`rules` without those whose folder is gone, which are disabled on the way (the safety net
    behind dms.domain.trash, which disables them when the folder is deleted)."""
    wanted = {spec.actions.move_to for _, spec in rules if spec.actions.move_to}
    live = live_folders(owner_id, wanted)
    gone = [rule for rule, spec in rules
            if spec.actions.move_to and spec.actions.move_to not in live]
    if gone:
        with write_transaction(owner_scope(owner_id)):
            for rule in gone:
                disable(rule.id, folder_gone(title_of(rule.move_to)))
                log.warning("rule %s disabled: its folder %s is gone", rule.id, rule.move_to)
    gone_ids = {rule.id for rule in gone}
    return [(rule, spec) for rule, spec in rules if rule.id not in gone_ids]


def title_of(node_id: str | None) -> str:
    """A node's title, for the reason a rule was disabled (its folder may be gone for good)."""
    row = database.execute_sql("SELECT title FROM node WHERE id = ?", (node_id,)).fetchone()
    return row[0] if row else "(deleted for good)"


def live_folders(owner_id: str, folder_ids: set[str]) -> dict[str, str]:
    """{id: title} of those of `folder_ids` that are the owner's live folders."""
    if not folder_ids:
        return {}
    ids = sorted(folder_ids)
    return dict(database.execute_sql(
        f"SELECT id, title FROM node WHERE id IN ({','.join('?' * len(ids))}) AND owner_id = ? "
        "AND kind = ? AND trash_id IS NULL", (*ids, owner_id, Node.FOLDER)).fetchall())


class NamedRule(Protocol):
    """What `evaluate` reads of a rule besides its spec: a RuleRow or a Rule."""
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...


def evaluate(rules: Sequence[tuple[NamedRule, RuleSpec]], document: facts.Document, deadline: float,
             stop: bool = True) -> list[Step]:
    """The steps of the rules that match, in order, until one with `stop` (if `stop`) or the
    deadline (then the rest are skipped, logged). Changes nothing but `document.title`."""
    steps: list[Step] = []
    for rule, spec in rules:
        if time.monotonic() > deadline:
            log.warning("document %s: the rules took longer than DMS_RULES_MAX_SECONDS; "
                        "%d rule(s) were not tried", document.id, len(rules) - len(steps))
            break
        try:
            found = matching.find(spec.match, document.fields())
        except DomainError as error:  # a pattern this RE2 refuses (saved by another version)
            log.warning("rule %s could not be matched: %s", rule.id, error.message)
            continue
        if found is None:
            continue
        title = None
        if spec.template:
            title = templates.render(spec.template, template_values(document, found))
            if title is not None:
                document.retitled(title)
        steps.append(Step(rule.id, rule.name, found, spec.actions.add_tags,
                          spec.actions.move_to, title,
                          rule_metadata.planned(spec.actions, document.text, utcnow().date())))
        if stop and spec.actions.stop:
            break
    return steps


def template_values(document: facts.Document, found: matching.Match) -> dict[str, object]:
    return {"title": document.title, "file_name": document.file_name or "",
            "created": document.created_at, "mail_from": document.mail_from,
            "mail_subject": document.mail_subject, "match": found.text}


def prepare(config: Config, document_id: str) -> Callable[[], None] | None:
    """Called by the worker that read a document, outside any transaction, once its text is
    known: the rules of a new document worked out; returns what applies them, to run inside the
    transaction that ends the reading (None: it is not new). Raises only what the database
    raises (the reading then ends later, and this runs again)."""
    row = database.execute_sql(
        "SELECT p.source, n.owner_id FROM rule_pending AS p JOIN node AS n "
        "ON n.id = p.document_id WHERE p.document_id = ?", (document_id,)).fetchone()
    if row is None:
        return None
    source, owner_id = row
    steps: list[Step] = []
    suggestion = autofill.Suggestion()
    rules = with_live_folders(owner_id, active_rules(owner_id, source))
    started = time.monotonic()
    document = facts.load([document_id], config.rules_max_text_chars).get(document_id)
    if document is not None:
        deadline = started + config.rules_max_seconds
        if rules:
            steps = evaluate(rules, document, deadline)
        # What rules did not set, the text may tell: a correspondent, a type, the date.
        suggestion = autofill.suggest(owner_id, document.fields()["text"], utcnow().date(),
                                      deadline)

    def apply() -> None:
        """Inside the transaction that ends the reading (document and owner scopes)."""
        if database.execute_sql("DELETE FROM rule_pending WHERE document_id = ?",
                                (document_id,)).rowcount == 0:
            return  # another worker's reading of it ended first, with its rules
        try:
            with write_transaction(owner_scope(owner_id), document_scope(document_id)):
                apply_steps(owner_id, document_id, steps, config.max_tree_depth, by_hand=True)
                autofill.apply(owner_id, document_id, suggestion)
        except (StorageFull, Unavailable):
            raise
        except Exception:  # never keep a document's reading from ending
            log.exception("document %s: its rules could not be applied", document_id)
    return apply


def hand_changes(document_id: str) -> set[str]:
    """What a person changed of the document: `renamed` and `moved` events with an actor."""
    return {row[0] for row in database.execute_sql(
        f"SELECT DISTINCT action FROM event WHERE node_id = ? AND actor_id IS NOT NULL "
        f"AND action IN ({','.join('?' * len(HAND_ACTIONS))})", (document_id, *HAND_ACTIONS))}


def apply_steps(owner_id: str, document_id: str, steps: list[Step], max_depth: int,
                by_hand: bool) -> bool:
    """Apply the steps to the document (inside the caller's write transaction, owner scope):
    what is already so is left; `by_hand`: what a person changed stays. One `rule_applied`
    event per step that changed something; True if anything changed."""
    if not steps:
        return False
    node = next(iter(Node.raw(tree.OWNED_NODE, document_id, owner_id)), None)
    if node is None or not node.is_document:
        return False
    kept = hand_changes(document_id) if by_hand else set()
    kept_metadata = rule_metadata.hand_changed(document_id) if by_hand else set()
    folders = live_folders(owner_id, {step.move_to for step in steps if step.move_to})
    parent_title = title_of(node.parent_id)
    owner = User(id=owner_id)
    changed = False
    for step in steps:
        if step.move_to and step.move_to not in folders:  # deleted since it was matched
            disable(step.rule_id, folder_gone(title_of(step.move_to)))
            continue
        details: dict[str, Any] = {}
        if step.add_tags:
            added = _add_tags(owner, node.id, step.add_tags)
            if added:
                details["tags"] = added
        if (step.move_to and events.MOVED not in kept and step.move_to != node.parent_id
                and tree.depth(step.move_to) + 1 <= max_depth):
            update_rows(Node, [node.id], {"parent": step.move_to})
            details["moved"] = {"from": {"id": node.parent_id, "title": parent_title},
                                "to": {"id": step.move_to, "title": folders[step.move_to]}}
            node.parent_id, parent_title = step.move_to, folders[step.move_to]
        if step.title and events.RENAMED not in kept and step.title != node.title:
            Node.update(title=step.title, title_sort=title_sort_key(step.title)) \
                .where(Node.id == node.id).execute()
            details["renamed"] = {"from": node.title, "to": step.title}
            node.title = step.title
        details.update(rule_metadata.apply(owner_id, node.id, step.metadata, kept_metadata))
        if details:
            events.record(owner_id, node.id, events.RULE_APPLIED, None,
                          rule={"id": step.rule_id, "name": step.rule_name},
                          field=step.match.field, **details)
            changed = True
    if changed:
        update_rows(Node, [node.id], {"updated_at": utcnow()})
    return changed


def _add_tags(owner: User, node_id: str, names: tuple[str, ...]) -> list[str]:
    """Put the named tags on the node (creating missing tags); the names it did not have."""
    before = {tags.name_key(tag["name"]) for tag in tags.tags_of([node_id], owner.id)[node_id]}
    wanted = [name for name in names if tags.name_key(name) not in before]
    if not wanted:
        return []
    try:
        tag_ids = tags.ensure_tags(owner, wanted)
    except DomainError as error:  # the owner has the most tags one may have
        log.warning("rule tags for document %s not added: %s", node_id, error.message)
        return []
    tags.put_on(node_id, tag_ids)
    after = [tag["name"] for tag in tags.tags_of([node_id], owner.id)[node_id]]
    return [name for name in after if tags.name_key(name) not in before]
