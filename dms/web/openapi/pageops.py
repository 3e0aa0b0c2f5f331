"""The OpenAPI document's schemas of the page operations (api.md, "Page operations"): Papermerge
2.1's bodies, answered 204; a split answers 201 with the new documents, or 202 with its run, which
has routes of its own."""

from __future__ import annotations

from dms.domain.splits import KINDS
from dms.domain.turnpool import FAILED, QUEUED, RUNNING, SUCCEEDED
from dms.web.openapi.shapes import BOOLEAN, DATETIME, INTEGER, NULLABLE_STRING, STRING, UUID, obj

IDS = {"type": "array", "items": UUID, "minItems": 1}

SCHEMAS = {
    "PageIds": obj({"pages": IDS}, ["pages"]),
    "PageReorder": obj({"pages": {"type": "array", "minItems": 1, "items": obj(
        {"id": UUID, "old_number": INTEGER, "new_number": INTEGER},
        ["id", "old_number", "new_number"])}}, ["pages"]),
    "PageRotate": obj({"pages": {"type": "array", "minItems": 1, "items": obj(
        {"id": UUID, "angle": {"type": "integer", "multipleOf": 90}}, ["id", "angle"])}},
        ["pages"]),
    "PagesToDocument": obj({"pages": IDS, "dst": UUID, "position": INTEGER, "merge": BOOLEAN},
                           ["pages", "dst"]),
    "PagesToFolder": obj({"pages": IDS, "dst": UUID, "single_page": BOOLEAN,
                          "title_format": {"type": "string", "maxLength": 32}}, ["pages", "dst"]),
    "Merge": obj({"src": UUID, "dst": UUID}, ["src", "dst"]),
    "Split": {"oneOf": [
        obj({"after_pages": {"type": "array", "minItems": 1, "items": INTEGER}},
            ["after_pages"]),
        obj({"separator": {"enum": ["barcode", "blank"]}}, ["separator"])]},
    "SplitRun": obj({"type": {"const": "split-runs"}, "id": UUID, "attributes": obj({
        "state": {"enum": [QUEUED, RUNNING, SUCCEEDED, FAILED]}, "kind": {"enum": list(KINDS)},
        "parts": {"type": ["integer", "null"]}, "parts_made": INTEGER, "error": NULLABLE_STRING,
        "created_at": DATETIME, "started_at": {"type": ["string", "null"]},
        "finished_at": {"type": ["string", "null"]}}, extra=False),
        "relationships": obj({
            "document": obj({"data": obj({"type": {"const": "documents"}, "id": UUID})}),
            "documents": obj({"links": obj({"related": STRING})})})},
        ["type", "id", "attributes", "relationships"], extra=False),
}
