"""What a rule sets of a document's metadata (api.md §16, "Rules"): a correspondent, a document
type, one custom field's value, the date read from the text — worked out with the rule's other
steps (`planned`), applied in their transaction (`apply`) and shown by the dry run (`preview`).

A name or field deleted since the rule was saved, or a select option taken away, is skipped (the
rest of the rule still applies). On new documents what a person changed by hand (a
`metadata_changed` event with an actor naming it) stays, as a hand-made title or place does."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass
from typing import Any

from dms.db import database, events
from dms.domain.metadata import document as metadata
from dms.domain.metadata import fields, labels
from dms.domain.metadata.dates import read_document_date
from dms.domain.rules.checks import Actions
from dms.errors import Invalid

log = logging.getLogger("dms.rules")
LABELS = (("set_correspondent", labels.CORRESPONDENTS),
          ("set_document_type", labels.DOCUMENT_TYPES))


@dataclass(frozen=True)
class MetadataStep:
    correspondent: str | None = None
    document_type: str | None = None
    custom_field: tuple[str, Any] | None = None
    document_date: str | None = None  # read from the text, when the rule asks for it

    def __bool__(self) -> bool:
        return any((self.correspondent, self.document_type, self.custom_field,
                    self.document_date))


def planned(actions: Actions, text: str, today: dt.date) -> MetadataStep:
    date = read_document_date(text, today) if actions.set_document_date_from_text else None
    return MetadataStep(actions.set_correspondent, actions.set_document_type,
                        actions.set_custom_field, date.isoformat() if date else None)


def hand_changed(document_id: str) -> set[str]:
    """The metadata attributes a person changed: `metadata_changed` events with an actor."""
    kept: set[str] = set()
    for (details,) in database.execute_sql(
            "SELECT details FROM event WHERE node_id = ? AND action = ? AND actor_id IS NOT NULL",
            (document_id, events.METADATA_CHANGED)):
        kept.update(json.loads(details).get("changes", {}))
    return kept


def apply(owner_id: str, document_id: str, step: MetadataStep, kept: set[str]) -> dict[str, Any]:
    """Inside the rule's transaction: the changes made, as the rule_applied event names them."""
    if not step:
        return {}
    details: dict[str, Any] = {}
    now = metadata.about([document_id])[document_id]
    for (_, kind), wanted in zip(LABELS, (step.correspondent, step.document_type), strict=True):
        if wanted is None or kind.attribute in kept or now[kind.attribute] == wanted:
            continue
        name = _name(kind, owner_id, wanted)
        if name is None:
            continue
        database.execute_sql(f"UPDATE node SET {kind.column} = ? WHERE id = ?",
                             (wanted, document_id))
        details[kind.attribute] = {"from": _name(kind, owner_id, now[kind.attribute]),
                                   "to": name}
    if step.document_date and "document_date" not in kept \
            and step.document_date != now["document_date"]:
        database.execute_sql("UPDATE node SET document_date = ? WHERE id = ?",
                             (step.document_date, document_id))
        details["document_date"] = {"from": now["document_date"], "to": step.document_date}
    if step.custom_field and "custom_fields" not in kept:
        changed = _set_field(owner_id, document_id, step.custom_field, now["custom_fields"])
        if changed:
            details["custom_fields"] = changed
    return details


def _name(kind: labels.Kind, owner_id: str, label_id: str | None) -> str | None:
    if label_id is None:
        return None
    row = database.execute_sql(f"SELECT name FROM {kind.table} WHERE id = ? AND owner_id = ?",
                               (label_id, owner_id)).fetchone()
    return row[0] if row else None


def _set_field(owner_id: str, document_id: str, wanted: tuple[str, Any],
               values: list[dict[str, Any]]) -> dict[str, Any]:
    field_id, value = wanted
    row = database.execute_sql("SELECT id, name, data_type, extra_data FROM custom_field "
                               "WHERE id = ? AND owner_id = ?", (field_id, owner_id)).fetchone()
    if row is None or row[2] == "documentlink":
        return {}
    field = fields.FieldDef(row[0], row[1], row[2], json.loads(row[3]))
    try:
        columns = fields.encode(field, value, "value")
    except Invalid as error:  # an option taken away since the rule was saved
        log.warning("rule value for field %s not set: %s", field_id, error.message)
        return {}
    before = next((item["value"] for item in values if item["field"] == field_id), None)
    after = fields.decode(field, columns, [])
    if any(item["field"] == field_id for item in values) and before == after:
        return {}
    fields.store_value(document_id, field_id, columns)
    return {field.name: {"from": before, "to": after}}


def preview(owner_id: str, document_id: str, step: MetadataStep) -> dict[str, Any]:
    """What the dry run shows this step would change: names, the field's new value, the date."""
    now = metadata.about([document_id])[document_id]
    shown: dict[str, Any] = {"set_correspondent": None, "set_document_type": None,
                             "set_custom_field": None, "set_document_date": None}
    for (key, kind), wanted in zip(LABELS, (step.correspondent, step.document_type),
                                   strict=True):
        if wanted is not None and now[kind.attribute] != wanted:
            shown[key] = _name(kind, owner_id, wanted)
    if step.custom_field is not None:
        row = database.execute_sql("SELECT name FROM custom_field WHERE id = ? AND owner_id = ?",
                                   (step.custom_field[0], owner_id)).fetchone()
        if row is not None:
            shown["set_custom_field"] = {"field": row[0], "value": step.custom_field[1]}
    if step.document_date and step.document_date != now["document_date"]:
        shown["set_document_date"] = step.document_date
    return shown
