"""The fields of a folder or document resource one by one (docs/api.md, "Fewer fields"): what
`fields[folders]` and `fields[documents]` may name, and a resource made of only those
(dms.web.api.nodes.node_resource makes all of them at once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dms.db.models import Node
from dms.domain.access.sight import Shown
from dms.domain.listings import NodeRow
from dms.web.jsonapi import format_datetime

# Each type's fields, as node_resource makes them: what `fields[folders]` and
# `fields[documents]` may name (dms.web.fieldsets).
METADATA_FIELDS = ("correspondent", "document_type", "document_date", "archive_serial_number",
                   "custom_fields", "notes_count", "paperless_id")
FOLDER_FIELDS = ("title", "created_at", "updated_at", "breadcrumb", "tags", "access", "owner",
                 "parent")
DOCUMENT_FIELDS = ("title", "lang", "ocr", "ocr_status", "ocr_error", "file_name", "size",
                   "page_count", "mail", *METADATA_FIELDS, "created_at", "updated_at",
                   "breadcrumb", "tags", "access", "owner", "parent")
NODE_FIELDS = {"folders": FOLDER_FIELDS, "documents": DOCUMENT_FIELDS}
FIELDS_QUERY = ("fields[folders]", "fields[documents]")


def _metadata_field(name: str) -> Callable[..., Any]:
    return lambda node, shown, labels, mail, about: about[name]


# Each field by itself, for a sparse fieldset's resources (node_resource makes all at once).
FIELD_VALUES: dict[str, Callable[..., Any]] = {
    "title": lambda node, shown, labels, mail, about: node.title,
    "lang": lambda node, shown, labels, mail, about: node.lang,
    "ocr": lambda node, shown, labels, mail, about: bool(node.ocr),
    "ocr_status": lambda node, shown, labels, mail, about: node.ocr_status,
    "ocr_error": lambda node, shown, labels, mail, about: node.ocr_error,
    "file_name": lambda node, shown, labels, mail, about: node.file_name,
    "size": lambda node, shown, labels, mail, about: node.size,
    "page_count": lambda node, shown, labels, mail, about: node.page_count,
    "mail": lambda node, shown, labels, mail, about: mail,
    **{name: _metadata_field(name) for name in METADATA_FIELDS},
    "created_at": lambda node, shown, labels, mail, about: format_datetime(node.created_at),
    "updated_at": lambda node, shown, labels, mail, about: format_datetime(node.updated_at),
    "breadcrumb": lambda node, shown, labels, mail, about: shown.breadcrumb,
    "tags": lambda node, shown, labels, mail, about: labels,
    "access": lambda node, shown, labels, mail, about: shown.access,
    "owner": lambda node, shown, labels, mail, about: shown.owner,
}


def chosen_resource(resource_type: str, node: Node | NodeRow, shown: Shown, labels: list[dict],
                    mail: dict | None, about: dict | None, names: tuple[str, ...]) -> dict:
    """dms.web.api.nodes.node_resource with only the fields `names` (in the type's order):
    `parent` is the relationship, kept only if named; the attributes object stays, empty if
    nothing else is."""
    resource: dict[str, Any] = {"type": resource_type, "id": node.id, "attributes": {
        name: FIELD_VALUES[name](node, shown, labels, mail, about)
        for name in names if name != "parent"}}
    if "parent" in names:
        parent = {"type": "folders", "id": shown.parent_id} if shown.parent_id else None
        resource["relationships"] = {"parent": {"data": parent}}
    return resource
