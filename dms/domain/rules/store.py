"""A user's rules kept (api.md, "Rules"): create, read, change, delete, and disabling the rules
whose folder is gone. Another user's rule is, as everything of theirs, "not found".

Each write runs in the owner's write scope and re-checks there what it depends on: the name
unique for the owner (also by the unique index), at most MAX_RULES_PER_USER rules, the folder of
`move_to` one of the owner's live folders (unknown, another user's and trashed folders read
alike: 400 `does_not_exist`, as a new node's parent, api.md, "Creating a folder or document")."""

from __future__ import annotations

from typing import Any

from peewee import ModelSelect

from dms.db import database, owner_scope, write_transaction
from dms.db.models import Node, Rule, User, new_id, utcnow
from dms.domain import tags, tree
from dms.domain.metadata import fields, labels
from dms.domain.ownership import owned
from dms.domain.rules.checks import MAX_RULES_PER_USER, RuleSpec, check, spec_of
from dms.errors import Invalid

DUPLICATE = "You already have a rule with this name."
MOVE_TO = "actions/move_to"


def rules_of(user: User) -> ModelSelect[Rule]:
    """The caller's rules in the order they run: by `order`, then by name."""
    return (Rule.select().where(Rule.owner == user.id)
            .order_by(Rule.position, Rule.name_key, Rule.id))


def owned_rule(user: User, rule_id: str) -> Rule:
    return owned(Rule, user, rule_id)


def create_rule(user: User, attributes: dict[str, Any]) -> Rule:
    spec = check(attributes, None)
    rule_id = new_id()
    with write_transaction(owner_scope(user.id)):
        _check_name_free(user, spec)
        if Rule.select().where(Rule.owner == user.id).count() >= MAX_RULES_PER_USER:
            raise Invalid(f"One user may have at most {MAX_RULES_PER_USER} rules; delete one "
                          "you no longer need first.")
        _check_folder(user, spec)
        check_metadata(user, spec)
        now = utcnow()
        Rule.insert(id=rule_id, owner=user.id, created_at=now, updated_at=now,
                    **spec.columns()).execute()
    return Rule.get_by_id(rule_id)


def update_rule(user: User, rule_id: str, attributes: dict[str, Any]) -> Rule:
    with write_transaction(owner_scope(user.id)):
        rule = owned_rule(user, rule_id)
        spec = check(attributes, spec_of(rule))
        if spec.name != rule.name:
            _check_name_free(user, spec, rule.id)
        check_metadata(user, spec)
        columns = spec.columns()
        if spec.actions.move_to != rule.move_to or (spec.enabled and not rule.enabled):
            _check_folder(user, spec)
            columns["last_error"] = None  # what disabled it was dealt with, or is checked again
        Rule.update(updated_at=utcnow(), **columns).where(Rule.id == rule.id).execute()
    return Rule.get_by_id(rule_id)


def delete_rule(user: User, rule_id: str) -> None:
    """Its runs under way stop at their next batch (dms.domain.rules.runs)."""
    with write_transaction(owner_scope(user.id)):
        rule = owned_rule(user, rule_id)
        Rule.delete().where(Rule.id == rule.id).execute()


def _check_name_free(user: User, spec: RuleSpec, except_id: str | None = None) -> None:
    query = Rule.select().where(Rule.owner == user.id,
                                Rule.name_key == tags.name_key(spec.name))
    if except_id is not None:
        query = query.where(Rule.id != except_id)
    if query.exists():
        raise Invalid(DUPLICATE, "name")


def _check_folder(user: User, spec: RuleSpec) -> None:
    """`move_to` is one of the caller's live folders (inside the caller's transaction)."""
    folder_id = spec.actions.move_to
    if folder_id is None:
        return
    folder = next(iter(Node.raw(tree.OWNED_NODE, folder_id, user.id)), None)
    if folder is None:
        raise Invalid(f"Invalid folder {folder_id[:60]!r}: the folder does not exist.", MOVE_TO,
                      code="does_not_exist")
    if not folder.is_folder:
        raise Invalid("A rule can only move documents into a folder; this is a document.",
                      MOVE_TO)


def check_metadata(user: User, spec: RuleSpec) -> None:
    """The names and the field a rule sets are the caller's, and the value fits the field
    (inside the caller's transaction)."""
    actions = spec.actions
    for key, kind in (("set_correspondent", labels.CORRESPONDENTS),
                      ("set_document_type", labels.DOCUMENT_TYPES)):
        label_id = getattr(actions, key)
        if label_id is not None and not kind.model.select().where(
                kind.model.id == label_id, kind.model.owner == user.id).exists():
            raise Invalid(f"You have no {kind.noun} with this id.", f"actions/{key}")
    if actions.set_custom_field is not None:
        field_id, value = actions.set_custom_field
        field = fields.definitions(user).get(field_id)
        if field is None:
            raise Invalid("You have no custom field with this id.",
                          "actions/set_custom_field/field")
        if field.data_type == "documentlink":
            raise Invalid("A rule cannot set a documentlink field: links name documents.",
                          "actions/set_custom_field/field")
        fields.encode(field, value, "actions/set_custom_field/value")


def folder_gone(folder_title: str) -> str:
    """The `last_error` of a rule disabled because its folder was deleted."""
    return (f"Disabled: the folder {folder_title!r} this rule moved documents to was deleted. "
            "Choose another folder (or restore it) and enable the rule again.")


def disable_for_deleted(owner_id: str, deleted_ids_sql: str, params: tuple[Any, ...]) -> int:
    """In the transaction that deletes folders (dms.domain.trash): disable the owner's rules that
    move into one of them (`deleted_ids_sql` selects their ids), with the reason."""
    rows = database.execute_sql(
        f"SELECT r.id, n.title FROM rule AS r JOIN node AS n ON n.id = r.move_to "
        f"WHERE r.owner_id = ? AND r.move_to IS NOT NULL AND r.move_to IN ({deleted_ids_sql})",
        (owner_id, *params)).fetchall()
    for rule_id, title in rows:
        disable(rule_id, folder_gone(title))
    return len(rows)


def disable(rule_id: str, reason: str) -> None:
    """Disable a rule dms cannot run any more, saying why (inside a write transaction)."""
    Rule.update(enabled=False, last_error=reason, updated_at=utcnow()) \
        .where(Rule.id == rule_id).execute()
