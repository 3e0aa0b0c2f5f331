"""A document's metadata (api.md §16): its correspondent, document type, date, archive serial
number and custom field values, read for many documents at once and changed by `PATCH
/documents/{id}/` (with its title, in dms.domain.tree's transaction).

`update_node` is PATCH of a node. A change is checked whole before anything is written: `check`
reads the request (types and encodings), `apply` runs in the caller's write transaction and
checks what only the database knows (the ids are the caller's, the serial number is free)
before its first write, so any refusal leaves the document exactly as it was. `custom_fields`
replaces the document's list.

Links of documentlink fields are kept both ways: A -> B also writes B -> A (B gets the field if
it had none). A link whose other end is in the trash stays stored but is never shown (a restore
brings it back); deleting a document for good deletes its links (cascade). Each change writes one
`metadata_changed` event with what changed (old -> new), on the document and on every document
whose links it changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dms.db import database, events
from dms.db.models import DOCUMENT_DATE, Node, User, update_rows
from dms.domain import tree
from dms.domain.metadata import fields as custom
from dms.domain.metadata.labels import CORRESPONDENTS, DOCUMENT_TYPES, Kind
from dms.errors import Invalid

MAX_ASN = 4_294_967_295  # Paperless-ngx's: an unsigned 32-bit number
IDS_PER_QUERY = 500
UNSET = object()
ATTRIBUTES = ("correspondent", "document_type", "document_date", "archive_serial_number",
              "custom_fields")


@dataclass
class MetadataChange:
    """What a PATCH asks, its forms checked; `UNSET` for what it does not name."""
    correspondent: Any = UNSET
    document_type: Any = UNSET
    document_date: Any = UNSET
    asn: Any = UNSET
    custom_fields: list[tuple[object, object]] | None = None  # (field id, raw value) in order

    def __bool__(self) -> bool:
        return any(value is not UNSET for value in (self.correspondent, self.document_type,
                                                     self.document_date, self.asn)) \
            or self.custom_fields is not None


def update_node(user: User, node_id: str, kind: str, attributes: dict[str, Any],
                route_kind: str | None = None) -> Node:
    """PATCH of a node (dms.domain.tree.update_node): a document's metadata is checked here
    first, then applied in the transaction that renames it, all or nothing. The labels, fields
    and serial numbers are the document owner's, also when an editor it is shared with changes
    them (api.md §21)."""
    change = check(attributes) if kind == Node.DOCUMENT else MetadataChange()
    return tree.update_node(user, node_id, kind, attributes, route_kind,
                            also=lambda node: apply(_owner(user, node), node, change))


def _owner(user: User, node: Node) -> User:
    return user if node.owner_id == user.id else User.get_by_id(node.owner_id)


def check(attributes: dict[str, Any]) -> MetadataChange:
    """The metadata attributes of a PATCH body, their shapes checked (ids are checked by
    `apply`, which sees the database)."""
    change = MetadataChange()
    for name, kind in (("correspondent", CORRESPONDENTS), ("document_type", DOCUMENT_TYPES)):
        if name in attributes:
            value = attributes[name]
            if value is not None and (not isinstance(value, str) or not value):
                raise Invalid(f"{name} is the id of one of your {kind.noun}s, or null.", name)
            setattr(change, name, value)
    if "document_date" in attributes:
        value = attributes["document_date"]
        change.document_date = None if value is None else custom.check_date(
            value, "document_date", "document_date")
    if "archive_serial_number" in attributes:
        value = attributes["archive_serial_number"]
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or not 0 <= value <= MAX_ASN):
            raise Invalid(f"archive_serial_number is a whole number from 0 to {MAX_ASN:,}, or "
                          "null.", "archive_serial_number")
        change.asn = value
    if "custom_fields" in attributes:
        change.custom_fields = _check_values_shape(attributes["custom_fields"])
    return change


def _check_values_shape(value: object) -> list[tuple[object, object]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("custom_fields is a list of {\"field\": id, \"value\": ...} objects.",
                      "custom_fields")
    if len(value) > custom.MAX_FIELDS_PER_USER:
        raise Invalid(f"A document carries at most {custom.MAX_FIELDS_PER_USER} custom fields.",
                      "custom_fields")
    pairs: list[tuple[object, object]] = []
    seen: set[object] = set()
    for index, item in enumerate(value):
        if not isinstance(item, dict) or "field" not in item:
            raise Invalid("Each custom field value is an object with `field` and `value`.",
                          f"custom_fields/{index}")
        field_id = item["field"]
        if not isinstance(field_id, str) or not field_id:
            raise Invalid("`field` is the id of one of your custom fields.",
                          f"custom_fields/{index}/field")
        if field_id in seen:
            raise Invalid("A document carries one value per field; this field is there twice.",
                          f"custom_fields/{index}/field")
        seen.add(field_id)
        pairs.append((field_id, item.get("value")))
    return pairs


@dataclass
class _Planned:
    columns: dict[str, Any] = field(default_factory=dict)
    changes: dict[str, Any] = field(default_factory=dict)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # field id -> columns
    links: dict[str, list[str]] = field(default_factory=dict)  # documentlink field -> targets


def apply(user: User, node: Node, change: MetadataChange) -> dict[str, Any]:
    """Inside the caller's write transaction (owner scope): check against the database, then
    write. The changes made, {attribute: {"from", "to"}} (empty: nothing changed); the event is
    the caller's to write with them."""
    if not change:
        return {}
    plan = _Planned()
    current = about([node.id])[node.id]
    for name, kind in (("correspondent", CORRESPONDENTS), ("document_type", DOCUMENT_TYPES)):
        wanted = getattr(change, name)
        if wanted is not UNSET and wanted != current[name]:
            if wanted is not None:
                _check_label(kind, user, wanted)
            plan.columns[kind.column] = wanted
            plan.changes[name] = {"from": _label_name(kind, current[name]),
                                  "to": _label_name(kind, wanted)}
    if change.document_date is not UNSET:
        was = current["document_date"]
        plan.columns["document_date"] = change.document_date
        now = change.document_date or _upload_date(node.id)
        if now != was:
            plan.changes["document_date"] = {"from": was, "to": now}
    if change.asn is not UNSET and change.asn != current["archive_serial_number"]:
        if change.asn is not None and _asn_taken(user, change.asn, node.id):
            raise Invalid(f"Archive serial number {change.asn} is already used by another of "
                          "your documents (the trash included).", "archive_serial_number")
        plan.columns["asn"] = change.asn
        plan.changes["archive_serial_number"] = {"from": current["archive_serial_number"],
                                                 "to": change.asn}
    if change.custom_fields is not None:
        _plan_values(user, node, change.custom_fields, plan)
    if plan.columns:
        update_rows(Node, [node.id], plan.columns)
    if change.custom_fields is not None:
        _write_values(user, node, current, plan)
    return plan.changes


def _check_label(kind: Kind, user: User, label_id: str) -> None:
    if not kind.model.select().where(kind.model.id == label_id,
                                     kind.model.owner == user.id).exists():
        raise Invalid(f"You have no {kind.noun} with this id.", kind.attribute)


def _label_name(kind: Kind, label_id: str | None) -> str | None:
    if label_id is None:
        return None
    row = database.execute_sql(f"SELECT name FROM {kind.table} WHERE id = ?",
                               (label_id,)).fetchone()
    return row[0] if row else None


def _upload_date(node_id: str) -> str:
    row = database.execute_sql("SELECT substr(created_at, 1, 10) FROM node WHERE id = ?",
                               (node_id,)).fetchone()
    return str(row[0])


def _asn_taken(user: User, asn: int, except_id: str) -> bool:
    return database.execute_sql("SELECT 1 FROM node WHERE owner_id = ? AND asn = ? AND id <> ?",
                                (user.id, asn, except_id)).fetchone() is not None


def _plan_values(user: User, node: Node, pairs: list[tuple[object, object]],
                 plan: _Planned) -> None:
    definitions = custom.definitions(user)
    for index, (field_id, value) in enumerate(pairs):
        definition = definitions.get(str(field_id))
        if definition is None:
            raise Invalid("You have no custom field with this id.", f"custom_fields/{index}/field")
        pointer = f"custom_fields/{index}/value"
        plan.values[definition.id] = custom.encode(definition, value, pointer)
        if definition.data_type == "documentlink":
            plan.links[definition.id] = _check_targets(user, node, value, pointer)


def _check_targets(user: User, node: Node, value: object, pointer: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > custom.MAX_LINKS:
        raise Invalid(f"A documentlink value is a list of at most {custom.MAX_LINKS} document "
                      "ids.", pointer)
    targets: list[str] = []
    for index, target in enumerate(value):
        if not isinstance(target, str) or not target:
            raise Invalid("A documentlink value lists document ids.", f"{pointer}/{index}")
        if target == node.id:
            raise Invalid("A document cannot link to itself.", f"{pointer}/{index}")
        if target not in targets:
            targets.append(target)
    if targets:
        marks = ",".join("?" * len(targets))
        live = {row[0] for row in database.execute_sql(
            f"SELECT id FROM node WHERE id IN ({marks}) AND owner_id = ? AND kind = ? "
            "AND trash_id IS NULL", (*targets, user.id, Node.DOCUMENT))}
        for index, target in enumerate(targets):
            if target not in live:
                raise Invalid("You have no document with this id.", f"{pointer}/{index}")
    return targets


def _write_values(user: User, node: Node, current: dict[str, Any], plan: _Planned) -> None:
    definitions = custom.definitions(user)
    before = {item["field"]: item["value"] for item in current["custom_fields"]}
    removed = [field_id for field_id in before if field_id not in plan.values]
    for field_id in removed:
        database.execute_sql("DELETE FROM custom_field_value WHERE document_id = ? AND "
                             "field_id = ?", (node.id, field_id))
    touched: dict[str, dict[str, Any]] = {}  # other documents whose links changed
    for field_id in removed:
        if definitions[field_id].data_type == "documentlink":
            _relink(node.id, field_id, [], touched)
    for field_id, columns in plan.values.items():
        custom.store_value(node.id, field_id, columns)
        if field_id in plan.links:
            _relink(node.id, field_id, plan.links[field_id], touched)
    after = {item["field"]: item["value"] for item in about([node.id])[node.id]["custom_fields"]}
    changed = {definitions[f].name: {"from": before.get(f), "to": after.get(f)}
               for f in dict.fromkeys([*before, *after]) if before.get(f) != after.get(f)}
    if changed:
        plan.changes["custom_fields"] = changed
    for other_id, field_names in touched.items():
        events.record(user.id, other_id, events.METADATA_CHANGED, user.id,
                      custom_fields={name: {"linked_from": node.id} for name in field_names})


def _relink(document_id: str, field_id: str, targets: list[str],
            touched: dict[str, dict[str, Any]]) -> None:
    """The document's links of one field become `targets` (in order), both ways."""
    old = [row[0] for row in database.execute_sql(
        "SELECT target_id FROM custom_field_link WHERE field_id = ? AND document_id = ? "
        "ORDER BY position", (field_id, document_id))]
    database.execute_sql("DELETE FROM custom_field_link WHERE field_id = ? AND document_id = ?",
                         (field_id, document_id))
    for position, target in enumerate(targets):
        database.execute_sql("INSERT INTO custom_field_link (field_id, document_id, target_id, "
                             "position) VALUES (?, ?, ?, ?)",
                             (field_id, document_id, target, position))
    field_name = database.execute_sql("SELECT name FROM custom_field WHERE id = ?",
                                      (field_id,)).fetchone()[0]
    for target in old:
        if target not in targets:
            database.execute_sql("DELETE FROM custom_field_link WHERE field_id = ? AND "
                                 "document_id = ? AND target_id = ?",
                                 (field_id, target, document_id))
            touched.setdefault(target, {})[field_name] = True
    for target in targets:
        if target in old:
            continue
        database.execute_sql("INSERT INTO custom_field_value (document_id, field_id) VALUES "
                             "(?, ?) ON CONFLICT (document_id, field_id) DO NOTHING",
                             (target, field_id))
        database.execute_sql(
            "INSERT INTO custom_field_link (field_id, document_id, target_id, position) "
            "SELECT ?, ?, ?, coalesce(max(position) + 1, 0) FROM custom_field_link "
            "WHERE field_id = ? AND document_id = ? ON CONFLICT DO NOTHING",
            (field_id, target, document_id, field_id, target))
        touched.setdefault(target, {})[field_name] = True


# -- reading ------------------------------------------------------------------------------------

# A document's own columns that `about` answers, in this order: id, correspondent, document type,
# date (DOCUMENT_DATE), archive serial number, number in the Paperless-ngx dialect.
Head = tuple[str, str | None, str | None, str | None, int | None, int | None]


def about(node_ids: list[str]) -> dict[str, dict[str, Any]]:
    """{document id: its metadata attributes as the API answers them} for many at once: at most
    four queries per IDS_PER_QUERY documents (a documentlink's targets only where one is set)."""
    result: dict[str, dict[str, Any]] = {}
    for start in range(0, len(node_ids), IDS_PER_QUERY):
        ids = node_ids[start:start + IDS_PER_QUERY]
        result.update(_about(database.execute_sql(
            f"SELECT id, correspondent_id, document_type_id, {DOCUMENT_DATE}, asn, seq FROM node "
            f"WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()))
    return result


def about_heads(heads: list[Head]) -> dict[str, dict[str, Any]]:
    """As `about`, of documents whose own columns were read already (a listing's rows): one
    query fewer."""
    result: dict[str, dict[str, Any]] = {}
    for start in range(0, len(heads), IDS_PER_QUERY):
        result.update(_about(heads[start:start + IDS_PER_QUERY]))
    return result


def _about(heads: list[Head]) -> dict[str, dict[str, Any]]:
    ids = [head[0] for head in heads]
    marks = ",".join("?" * len(ids))
    result: dict[str, dict[str, Any]] = {}
    for node_id, correspondent, document_type, date, asn, number in heads:
        # paperless_id: its number in the Paperless-ngx dialect (api.md §17).
        result[node_id] = {"correspondent": correspondent, "document_type": document_type,
                           "document_date": date, "archive_serial_number": asn,
                           "custom_fields": [], "notes_count": 0, "paperless_id": number}
    columns = ", ".join(f"v.{name}" for name in custom.VALUE_COLUMNS)
    values = database.execute_sql(
        f"SELECT v.document_id, f.id, f.name, f.data_type, f.extra_data, {columns} "
        f"FROM custom_field_value AS v JOIN custom_field AS f ON f.id = v.field_id "
        f"WHERE v.document_id IN ({marks}) ORDER BY v.document_id, f.name_key, f.id",
        ids).fetchall()
    links: dict[tuple[str, str], list[str]] = {}
    if any(row[3] == "documentlink" for row in values):  # else no query for them
        for document_id, field_id, target in database.execute_sql(
                f"SELECT l.document_id, l.field_id, l.target_id FROM custom_field_link AS l "
                f"JOIN node AS t ON t.id = l.target_id WHERE l.document_id IN ({marks}) "
                "AND t.trash_id IS NULL ORDER BY l.document_id, l.field_id, l.position", ids):
            links.setdefault((document_id, field_id), []).append(target)
    for row in values:
        document_id, field_id, name, data_type, extra = row[:5]
        definition = custom.FieldDef(field_id, name, data_type, {})
        value = custom.decode(definition, dict(zip(custom.VALUE_COLUMNS, row[5:], strict=True)),
                              links.get((document_id, field_id), []))
        if document_id in result:
            result[document_id]["custom_fields"].append({"field": field_id, "value": value})
    for document_id, count in database.execute_sql(
            f"SELECT document_id, count(*) FROM note WHERE document_id IN ({marks}) "
            "GROUP BY document_id", ids):
        if document_id in result:
            result[document_id]["notes_count"] = count
    return result
