"""A backup's metadata checked before a restore writes anything (api.md §16; dms.ops.backup
._rowchecks checks the other tables): correspondents, document types, custom fields and their
values and links, notes, and a document's own metadata columns — each value as the API would take
it, each reference within its owner's papers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dms.db.models import Node
from dms.domain.matching import check_pattern
from dms.domain.metadata import document as metadata
from dms.domain.metadata import fields as custom
from dms.domain.metadata.labels import CORRESPONDENTS, DOCUMENT_TYPES, NONE, Kind, check_attributes
from dms.domain.metadata.notes import check_note
from dms.domain.tagfilter import name_key
from dms.errors import DomainError
from dms.ops.backup._rowrules import api, moment, refuse, rows, rule


def metadata_values(execute: Callable[..., Any]) -> None:
    for kind in (CORRESPONDENTS, DOCUMENT_TYPES):
        _labels(execute, kind)
    _custom_fields(execute)
    _documents_metadata(execute)
    _field_values(execute)
    _field_links(execute)
    _notes(execute)


def _labels(execute: Callable[..., Any], kind: Kind) -> None:
    """Correspondents or document types as the API would create them: a name, an algorithm the
    matcher knows with a pattern it can use, true or false for is_insensitive; the name's key."""
    table = kind.table
    for label_id, name, key, match, algorithm, insensitive, created in rows(
            execute, f"SELECT id, name, name_key, match, matching_algorithm, is_insensitive, "
                     f"created_at FROM {table}"):
        if insensitive not in (0, 1):
            raise refuse(table, label_id, f"has an is_insensitive that is neither true nor false "
                                           f"({insensitive!r:.40})")
        api(table, label_id, f"is a {kind.noun}", _check_label, kind,
             {"name": name, "match": match, "matching_algorithm": algorithm,
              "is_insensitive": bool(insensitive)})
        if key != name_key(name):
            raise refuse(table, label_id, "has a name_key that does not match its name")
        moment(table, label_id, "created_at", created)


def _check_label(kind: Kind, attributes: dict[str, Any]) -> None:
    values = check_attributes(kind, attributes, partial=False)
    if values["matching_algorithm"] != NONE and values["match"]:
        check_pattern(values["matching_algorithm"], values["match"],
                      not values["is_insensitive"], "match")


def _custom_fields(execute: Callable[..., Any]) -> None:
    """Custom fields as the API would create them (the domain's own checks of a name and of
    extra_data): a name and its key, a known data_type, extra_data the JSON object dms keeps for
    that type."""
    for field_id, name, key, data_type, extra, created in rows(
            execute, "SELECT id, name, name_key, data_type, extra_data, created_at "
                     "FROM custom_field"):
        rule("custom_field", field_id, "name", name, custom.check_name)
        if key != name_key(name):
            raise refuse("custom_field", field_id, "has a name_key that does not match its name")
        if data_type not in custom.DATA_TYPES:
            raise refuse("custom_field", field_id, f"has an unknown data_type ({data_type!r:.40})")
        problem = _extra_problem(data_type, extra)
        if problem:
            raise refuse("custom_field", field_id, problem)
        moment("custom_field", field_id, "created_at", created)


def _extra_problem(data_type: str, text: object) -> str | None:
    """What is wrong with a field's extra_data, or None: a JSON object the API takes for the
    type, holding only what dms keeps (a select's options with their ids, a monetary field's
    default currency)."""
    try:
        extra = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        extra = None
    if not isinstance(extra, dict):
        return "has extra_data that is not a JSON object"
    try:
        kept = custom.check_extra(data_type, extra, {})
    except DomainError as error:
        return f"has extra_data the API would refuse ({error.message.rstrip('.')})"
    if not set(extra) <= set(kept) \
            or extra.get("select_options", []) != kept.get("select_options", []):
        return f"has extra_data that is not what dms keeps for a {data_type} field"
    return None


def _documents_metadata(execute: Callable[..., Any]) -> None:
    """A document's date and serial number as the API takes them, its correspondent and document
    type its owner's; a folder has none of them."""
    for (node_id, kind, owner, date, asn, correspondent, correspondent_owner, document_type,
         type_owner) in rows(execute, """
            SELECT n.id, n.kind, n.owner_id, n.document_date, n.asn, n.correspondent_id,
                   c.owner_id, n.document_type_id, t.owner_id
            FROM node AS n LEFT JOIN correspondent AS c ON c.id = n.correspondent_id
            LEFT JOIN document_type AS t ON t.id = n.document_type_id
            WHERE n.correspondent_id IS NOT NULL OR n.document_type_id IS NOT NULL
               OR n.document_date IS NOT NULL OR n.asn IS NOT NULL"""):
        if kind != Node.DOCUMENT:
            raise refuse("node", node_id, "is a folder with a correspondent, document type, "
                                           "document_date or asn")
        api("node", node_id, "has a document_date", metadata.check, {"document_date": date})
        api("node", node_id, "has an asn", metadata.check, {"archive_serial_number": asn})
        for label, label_owner, label_kind in ((correspondent, correspondent_owner, CORRESPONDENTS),
                                               (document_type, type_owner, DOCUMENT_TYPES)):
            if label is not None and label_owner != owner:
                raise refuse("node", node_id, f"has the {label_kind.noun} {label}, which belongs "
                                               "to another user")


# What each column of custom_field_value may hold (besides null).
VALUE_TYPES: dict[str, type | tuple[type, ...]] = {
    "value_text": str, "value_key": str, "value_int": int, "value_float": (int, float),
    "value_date": str, "value_bool": int, "value_cents": int, "value_currency": str}
# The column a value of each type is kept in (text and monetary values also fill value_key,
# monetary ones value_currency); a documentlink's values are its links (custom_field_link).
VALUE_HOME = {**dict.fromkeys((*custom.TEXT_TYPES, "select"), "value_text"),
              "date": "value_date", "boolean": "value_bool", "integer": "value_int",
              "float": "value_float", "monetary": "value_cents"}
VALUES = """
    SELECT v.document_id, v.field_id, f.owner_id, f.name, f.data_type, f.extra_data, n.owner_id,
           n.kind, {columns}
    FROM custom_field_value AS v JOIN custom_field AS f ON f.id = v.field_id
    JOIN node AS n ON n.id = v.document_id
    ORDER BY v.field_id"""  # the order of an index of migration 0021 (field_id, ...): no sort


def _field_values(execute: Callable[..., Any]) -> None:
    """Each value on a document of its field's owner, in the columns of its field's type
    (`_value_problem`). By field, so that one field's definition is held at a time."""
    field: custom.FieldDef | None = None
    columns = ", ".join(f"v.{column}" for column in custom.VALUE_COLUMNS)
    for (document_id, field_id, field_owner, name, data_type, extra, owner, kind,
         *values) in rows(execute, VALUES.format(columns=columns)):
        row_id = f"({document_id}, {field_id})"
        if kind != Node.DOCUMENT:
            raise refuse("custom_field_value", row_id, "is on a folder, not a document")
        if owner != field_owner:
            raise refuse("custom_field_value", row_id, "is on a document of another user than "
                                                        "its field's owner")
        if field is None or field.id != field_id:
            # Without its default currency: a bare amount stays bare (set before it had one).
            options = json.loads(extra).get("select_options", [])  # checked by _custom_fields
            field = custom.FieldDef(field_id, name, data_type, {"select_options": options})
        problem = _value_problem(field, dict(zip(custom.VALUE_COLUMNS, values, strict=True)))
        if problem:
            raise refuse("custom_field_value", row_id, problem)


def _value_problem(field: custom.FieldDef, stored: dict[str, Any]) -> str | None:
    """What is wrong with a value's columns, or None: they hold one value the API takes for the
    field (its own check, in its words), in exactly the columns `encode` writes for it."""
    for column, value in stored.items():
        if value is not None and (not isinstance(value, VALUE_TYPES[column])
                                  or column == "value_bool" and value not in (0, 1)):
            return f"has a {column} of the wrong type ({value!r:.40})"
    currency = stored["value_currency"]
    if currency not in (None, "") and not custom.CURRENCY.match(currency):
        return f"has a value_currency that is not three capital letters or '' ({currency!r:.40})"
    try:
        value = custom.decode(field, stored, [])
        written = custom.encode(field, value, "value")
    except DomainError as error:
        return f"has a value the API would refuse ({error.message.rstrip('.')})"
    for column in custom.VALUE_COLUMNS:
        if stored[column] == written[column]:
            continue
        if written[column] is not None:
            return f"has a {column} that does not match its value ({stored[column]!r:.40})"
        home = VALUE_HOME.get(field.data_type)
        if home is None:
            return f"has {column} set, but a documentlink field's values are its links"
        return f"has {column} set beside its value in {home}" if value is not None \
            else f"has {column} set, but no value in {home}"
    return None


def _field_links(execute: Callable[..., Any]) -> None:
    """Links only through documentlink fields, between two documents of the field's owner (a
    document never links to itself)."""
    for (document_id, target_id, field_id, data_type, field_owner, owner, kind, target_owner,
         target_kind) in rows(execute, """
            SELECT l.document_id, l.target_id, l.field_id, f.data_type, f.owner_id, d.owner_id,
                   d.kind, t.owner_id, t.kind
            FROM custom_field_link AS l JOIN custom_field AS f ON f.id = l.field_id
            JOIN node AS d ON d.id = l.document_id JOIN node AS t ON t.id = l.target_id"""):
        row_id = f"{document_id} -> {target_id}"
        if data_type != "documentlink":
            raise refuse("custom_field_link", row_id, f"links through the field {field_id}, a "
                                                       f"{data_type} field, not a documentlink "
                                                       "field")
        if owner != field_owner or target_owner != field_owner:
            raise refuse("custom_field_link", row_id, "links a document of another user than "
                                                       f"the owner of its field {field_id}")
        if kind != Node.DOCUMENT or target_kind != Node.DOCUMENT:
            raise refuse("custom_field_link", row_id, "links a folder")
        if document_id == target_id:
            raise refuse("custom_field_link", row_id, "links a document to itself")


def _notes(execute: Callable[..., Any]) -> None:
    for note_id, text, created in rows(execute, "SELECT id, note, created_at FROM note"):
        rule("note", note_id, "note", text, check_note)
        moment("note", note_id, "created_at", created)
