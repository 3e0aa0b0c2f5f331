"""The OpenAPI document's part for rules (api.md, "Rules"): the rules, their dry run, runs; and the
dry run's answer, MATCHES, for its route."""

from __future__ import annotations

from dms.domain.matching import ALGORITHMS, FIELDS
from dms.domain.rules.checks import SOURCES
from dms.web.openapi.core import FOLDER_REF, NODE_ATTRIBUTES
from dms.web.openapi.shapes import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    NULLABLE_STRING,
    STRING,
    UUID,
    data_of,
    list_of,
    obj,
    ref,
)

MATCH = obj({"field": {"enum": list(FIELDS)}, "algorithm": {"enum": list(ALGORITHMS)},
             "pattern": {"type": "string", "maxLength": 1000}, "case_sensitive": BOOLEAN},
            extra=False)
NULLABLE_ID = {"oneOf": [UUID, {"type": "null"}]}
ACTIONS = obj({"add_tags": {"type": "array", "items": STRING, "maxItems": 20},
               "move_to": NULLABLE_ID, "set_title": NULLABLE_STRING, "stop": BOOLEAN,
               "set_correspondent": NULLABLE_ID, "set_document_type": NULLABLE_ID,
               "set_custom_field": {"oneOf": [obj({"field": UUID, "value": {}}, ["field"]),
                                              {"type": "null"}]},
               "set_document_date_from_text": BOOLEAN}, extra=False)
RULE_SETTINGS = {
    "name": {"type": "string", "minLength": 1, "maxLength": 100}, "enabled": BOOLEAN,
    "order": INTEGER, "match": MATCH,
    "sources": {"type": "array", "items": {"enum": list(SOURCES)}, "minItems": 1},
    "actions": ACTIONS}
RUN_STATES = ["queued", "running", "succeeded", "failed"]
NAMED_FOLDER = {"oneOf": [obj({"id": UUID, "title": STRING}, ["id", "title"]),
                          {"type": "null"}]}

SCHEMAS = {
    "Rule": obj({"type": {"const": "rules"}, "id": UUID, "attributes": obj({
        **RULE_SETTINGS, "last_error": NULLABLE_STRING, "created_at": DATETIME,
        "updated_at": DATETIME}, extra=False)}, ["type", "id", "attributes"], extra=False),
    "RuleInput": data_of(obj({"type": {"const": "rules"}, "id": UUID,
                              "attributes": obj(RULE_SETTINGS)}, ["type"])),
    "RuleMatch": obj({
        "type": {"const": "documents"}, "id": UUID,
        "attributes": obj({**NODE_ATTRIBUTES, "rule_match": obj({
            "field": {"enum": [f for f in FIELDS if f != "any"]}, "text": STRING,
            "changes": obj({"add_tags": {"type": "array", "items": STRING},
                            "move_to": NAMED_FOLDER, "set_title": NULLABLE_STRING,
                            "set_correspondent": NULLABLE_STRING,
                            "set_document_type": NULLABLE_STRING,
                            "set_custom_field": {"type": ["object", "null"]},
                            "set_document_date": NULLABLE_STRING})})}),
        "relationships": obj({"parent": FOLDER_REF})},
        ["type", "id", "attributes", "relationships"], extra=False),
    "RuleRun": obj({"type": {"const": "rule-runs"}, "id": UUID, "attributes": obj({
        "state": {"enum": RUN_STATES}, "matched": INTEGER, "changed": INTEGER,
        "examined": INTEGER, "rule_name": STRING, "error": NULLABLE_STRING,
        "created_at": DATETIME, "started_at": {"type": ["string", "null"]},
        "finished_at": {"type": ["string", "null"]}}, extra=False),
        "relationships": obj({"rule": obj({"data": obj({"type": {"const": "rules"},
                                                        "id": UUID})})})},
        ["type", "id", "attributes"], extra=False),
}

# The dry run's answer (GET /rules/{id}/matches/): a page of matches, and how far it looked.
MATCHES = list_of(ref("RuleMatch"))
MATCHES["properties"]["meta"]["properties"].update(
    examined=INTEGER, documents=INTEGER, complete=BOOLEAN)
