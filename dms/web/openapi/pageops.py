"""The OpenAPI document's page operations (api.md §11): Papermerge 2.1's bodies, answered 204; a
split answers 201 with the new documents, or 202 with its run, which has routes of its own."""

from __future__ import annotations

from dms.domain.splits import KINDS
from dms.domain.turnpool import FAILED, QUEUED, RUNNING, SUCCEEDED
from dms.web.jsonapi import JSON, VND
from dms.web.openapi.core import PAGE_QUERY
from dms.web.openapi.shapes import (BOOLEAN, DATETIME, INTEGER, NULLABLE_STRING, STRING, UUID,
                                    data_of, list_of, obj, ref)

IDS = {"type": "array", "items": UUID, "minItems": 1}
BODY = [JSON, VND]

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

OPERATIONS = {
    "delete_page": (None, 204, {}, [], [404, 409], "Delete a page: a new version without it"),
    "delete_pages": ((BODY, ref("PageIds")), 204, {}, [], [404, 409],
                     "Delete pages of one document: a new version without them"),
    "reorder_pages": ((BODY, ref("PageReorder")), 204, {}, [], [404, 409],
                      "Put pages in a new order: a new version"),
    "rotate_pages": ((BODY, ref("PageRotate")), 204, {}, [], [404, 409],
                     "Turn pages by multiples of 90 degrees: a new version"),
    "move_to_document": ((BODY, ref("PagesToDocument")), 204, {}, [], [404, 409],
                         "Move pages into another document (a new version of each)"),
    "move_to_folder": ((BODY, ref("PagesToFolder")), 204, {}, [], [404, 409],
                       "Make pages a new document (or one per page) in a folder"),
    "merge_documents": ((BODY, ref("Merge")), 204, {}, [], [404, 409],
                        "Append a document's pages to another; the first goes to the trash"),
    "split_document": ((BODY, ref("Split")), 201,
                       {VND: obj({"data": {"type": "array", "items": ref("Node")}}, ["data"])},
                       [], [404, 409, 429, 503],
                       "Split a document after pages or at separator sheets (a large split: 202 "
                       "with its run)", {202: {VND: data_of(ref("SplitRun"))}}),
    "get_split_run": (None, 200, {VND: data_of(ref("SplitRun"))}, [], [],
                      "A split in the background: how far it got"),
    "split_run_documents": (None, 200, {VND: list_of(ref("Node"))}, PAGE_QUERY, [],
                            "The documents a split's run made so far, by part number"),
}

