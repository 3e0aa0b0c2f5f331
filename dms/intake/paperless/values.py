"""A Paperless-ngx document's custom field values as dms's PATCH takes them (api.md §16, §18): one
column per type (`value_text`, `value_int`, ...), money as "12.50" (up to 2.5) or "EUR12.50", a
select's value as an index of its options (2.11-2.13) or an option id (2.14 on), document links
as Paperless-ngx's document numbers (set once every document has its dms id)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dms.db.models import User
from dms.domain.metadata import document as document_metadata
from dms.intake.paperless.labels import Labels
from dms.intake.paperless.manifest import parse_moment

COLUMNS = {"string": "value_text", "url": "value_url", "date": "value_date",
           "boolean": "value_bool", "integer": "value_int", "float": "value_float",
           "monetary": "value_monetary", "select": "value_select",
           "longtext": "value_long_text", "documentlink": "value_document_ids"}


def custom_fields(labels: Labels, owner: User, instances: list[dict[str, Any]],
                  problems: list[str], document_pk: Any) -> tuple[list[dict[str, Any]],
                                                                   list[tuple[str, Any]]]:
    """([{"field": dms field id, "value"}], [(dms field id, [linked document numbers])])."""
    found: list[dict[str, Any]] = []
    links: list[tuple[str, Any]] = []
    for instance in instances:
        field = labels.field(owner, instance.get("field"))
        if field is None:
            continue
        value = instance.get(COLUMNS.get(field.data_type, ""))
        if field.data_type == "documentlink":
            if isinstance(value, list):
                links.append((field.id, [target for target in value
                                         if isinstance(target, (int, str))]))
            continue
        if field.data_type == "select":
            value = _option(field, value)
        elif field.data_type == "monetary" and isinstance(value, str) and not value:
            value = None
        if value is None:
            continue
        found.append({"field": field.id, "value": value})
    return found, links


def _option(field: Any, value: object) -> str | None:
    """An option id of the dms field: the same id (2.14 on), or the option at that index (the
    options were made in the same order)."""
    import json

    options = json.loads(field.extra_data or "{}").get("select_options", [])
    ids = [option.get("id") for option in options]
    if isinstance(value, str) and value in ids:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(ids):
        return ids[value]
    return None


def moment(value: object, otherwise: dt.datetime) -> dt.datetime:
    return parse_moment(value) or otherwise


def current_values(node_id: str) -> list[dict[str, Any]]:
    """The document's custom field values now, as a PATCH would set them again."""
    return list(document_metadata.about([node_id])[node_id]["custom_fields"])
