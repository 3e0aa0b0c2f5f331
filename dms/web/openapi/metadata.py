"""The OpenAPI document's part for what a document is about (api.md §16): correspondents,
document types, custom fields and notes."""

from __future__ import annotations

from dms.domain.metadata.fields import DATA_TYPES
from dms.domain.metadata.labels import MATCHING_ALGORITHMS
from dms.web.openapi.shapes import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    NULLABLE_STRING,
    STRING,
    UUID,
    data_of,
    obj,
)

MATCHING = {"name": {"type": "string", "minLength": 1, "maxLength": 128},
            "match": {"type": "string", "maxLength": 256},
            "matching_algorithm": {"enum": list(MATCHING_ALGORITHMS)},
            "is_insensitive": BOOLEAN}
OPTION = obj({"id": STRING, "label": STRING}, ["label"])
EXTRA_DATA = obj({"default_currency": NULLABLE_STRING,
                  "select_options": {"type": "array", "items": OPTION, "maxItems": 200}})
FIELD_SETTINGS = {"name": {"type": "string", "minLength": 1, "maxLength": 128},
                  "data_type": {"enum": list(DATA_TYPES)}, "extra_data": EXTRA_DATA}


def _resource(kind: str, attributes: dict) -> dict:
    return obj({"type": {"const": kind}, "id": UUID, "attributes": obj(attributes, extra=False)},
               ["type", "id", "attributes"], extra=False)


def _input(kind: str, attributes: dict) -> dict:
    return data_of(obj({"type": {"const": kind}, "id": UUID, "attributes": obj(attributes)},
                       ["type"]))


SCHEMAS = {
    "Correspondent": _resource("correspondents", {
        **MATCHING, "document_count": INTEGER, "last_correspondence": NULLABLE_STRING}),
    "CorrespondentInput": _input("correspondents", MATCHING),
    "DocumentType": _resource("document-types", {**MATCHING, "document_count": INTEGER}),
    "DocumentTypeInput": _input("document-types", MATCHING),
    "CustomField": _resource("custom-fields", {**FIELD_SETTINGS, "document_count": INTEGER}),
    "CustomFieldInput": _input("custom-fields", FIELD_SETTINGS),
    "Note": _resource("notes", {"note": STRING, "created_at": DATETIME,
                                "user": NULLABLE_STRING}),
    "NoteInput": _input("notes", {"note": {"type": "string", "maxLength": 65536}}),
}
# A document's metadata attributes (core.NODE_ATTRIBUTES has them for documents).
CUSTOM_VALUE = obj({"field": UUID, "value": {}}, ["field", "value"])
DOCUMENT_ATTRIBUTES = {
    "correspondent": {"oneOf": [UUID, {"type": "null"}]},
    "document_type": {"oneOf": [UUID, {"type": "null"}]},
    "document_date": {"type": "string", "format": "date"},
    "archive_serial_number": {"type": ["integer", "null"], "minimum": 0,
                              "maximum": 4294967295},
    "custom_fields": {"type": "array", "items": CUSTOM_VALUE},
    "notes_count": INTEGER,
    "paperless_id": {**INTEGER, "description": "its number in the Paperless-ngx dialect"},
}
