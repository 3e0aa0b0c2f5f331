"""The OpenAPI document's schemas of the API as the seed and api.md describe it (users, tokens,
nodes, documents, tags, preferences, mail, intake, trash, history); page operations, rules,
webhooks and the event stream have modules of their own here. The routes describe themselves
(dms/web/api/) and name these by `$ref`."""

from __future__ import annotations

from dms.db.models import OcrStatus
from dms.domain.metadata.labels import MATCHING_ALGORITHMS
from dms.web.openapi.metadata import DOCUMENT_ATTRIBUTES
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

FOLDER_REF = obj({"data": {"oneOf": [obj({"type": {"const": "folders"}, "id": UUID}),
                                      {"type": "null"}]}})
BREADCRUMB = {"type": "array", "items": {"type": "array", "items": STRING}}
NODE_TAG = obj({"name": STRING, "bg_color": STRING, "fg_color": STRING},
               ["name", "bg_color", "fg_color"])
ACCESS = {"enum": ["owner", "editor", "viewer"]}  # the caller's role (api.md §21)
NODE_ATTRIBUTES = {
    "title": STRING, "created_at": DATETIME, "updated_at": DATETIME, "breadcrumb": BREADCRUMB,
    "access": ACCESS, "owner": STRING,
    "tags": {"type": "array", "items": NODE_TAG}, "lang": STRING, "ocr": BOOLEAN,
    "ocr_status": {"enum": list(OcrStatus.ALL)},
    "ocr_error": NULLABLE_STRING, "file_name": NULLABLE_STRING, "size": INTEGER,
    "page_count": INTEGER,
    "mail": {"oneOf": [obj({"subject": STRING, "from": STRING, "date": NULLABLE_STRING,
                            "message_id": STRING}, ["subject", "from", "date", "message_id"]),
                       {"type": "null"}]},
    **DOCUMENT_ATTRIBUTES,
}
VERSION = obj({"id": UUID, "number": INTEGER, "file_name": STRING, "size": INTEGER,
               "page_count": INTEGER, "lang": STRING, "created_at": DATETIME,
               "download_url": STRING,
               "pages": {"type": "array", "items": obj({"type": {"const": "pages"}, "id": UUID})},
               "searchable_pdf": BOOLEAN, "searchable_pdf_size": {"type": ["integer", "null"]},
               "short_description": STRING})
LEGACY_DOCUMENT = obj({"id": UUID, "title": STRING, "file_name": NULLABLE_STRING, "size": INTEGER,
                       "page_count": INTEGER, "lang": STRING, "ocr_status": STRING,
                       "parent_id": UUID, "created_at": DATETIME, "updated_at": DATETIME,
                       "tags": {"type": "array", "items": NODE_TAG}})
TAG_ATTRIBUTES = {"name": STRING, "bg_color": STRING, "fg_color": STRING,
                  "description": STRING, "pinned": BOOLEAN, "match": STRING,
                  "matching_algorithm": {"enum": list(MATCHING_ALGORITHMS)},
                  "is_insensitive": BOOLEAN, "is_inbox_tag": BOOLEAN,
                  "parent": {"type": ["string", "null"], "format": "uuid"}}
NAMES = obj({"tags": {"type": "array", "items": STRING}}, ["tags"])
MAIL_SETTINGS = {
    "host": STRING, "port": {"type": "integer", "minimum": 1, "maximum": 65535},
    "security": {"enum": ["ssl", "starttls", "none"]}, "username": STRING,
    "mailbox": STRING, "after_import": {"enum": ["mark_seen", "flag", "move"]},
    "move_to": NULLABLE_STRING, "folder_per_sender": BOOLEAN, "enabled": BOOLEAN}
MAIL_ACCOUNT_ATTRIBUTES = {**MAIL_SETTINGS, "last_checked_at": {"type": ["string", "null"]},
                           "last_error": NULLABLE_STRING, "imported_count": INTEGER,
                           "checking": BOOLEAN}

SCHEMAS = {
    "Error": obj({"errors": {"type": "array", "minItems": 1, "items": obj({
        "detail": STRING, "status": STRING, "code": STRING,
        "source": obj({"pointer": STRING})}, ["detail", "status", "code"])}}, ["errors"]),
    "User": obj({
        "type": {"const": "users"}, "id": UUID,
        "attributes": obj({"username": STRING, "first_name": STRING, "last_name": STRING,
                           "email": STRING, "is_active": BOOLEAN, "is_staff": BOOLEAN,
                           "is_superuser": BOOLEAN, "date_joined": DATETIME}),
        "relationships": obj({"inbox_folder": FOLDER_REF, "home_folder": FOLDER_REF,
                              "shared_folder": FOLDER_REF})},
        ["type", "id", "attributes", "relationships"], extra=False),
    "UserInput": data_of(obj({"type": {"const": "users"}, "id": UUID, "attributes": obj({
        "username": STRING, "first_name": STRING, "last_name": STRING, "email": STRING,
        "is_active": BOOLEAN, "is_staff": BOOLEAN, "is_superuser": BOOLEAN})}, ["type"])),
    "Node": obj({
        "type": {"enum": ["folders", "documents"]}, "id": UUID,
        "attributes": obj({**NODE_ATTRIBUTES, "versions": {"type": "array", "items": VERSION}}),
        # Left out only when a sparse fieldset (`fields[documents]=...`) leaves out `parent`.
        "relationships": obj({"parent": FOLDER_REF})},
        ["type", "id", "attributes"], extra=False),
    "TrashedNode": obj({
        "type": {"enum": ["folders", "documents"]}, "id": UUID,
        "attributes": obj({**NODE_ATTRIBUTES, "deleted_at": DATETIME, "purge_at": DATETIME,
                           "original_parent": {"oneOf": [obj({"id": UUID, "title": STRING}),
                                                         {"type": "null"}]}}),
        "relationships": obj({"parent": FOLDER_REF})},
        ["type", "id", "attributes", "relationships"], extra=False),
    "Event": obj({"type": {"const": "events"}, "id": STRING, "attributes": obj({
        "at": DATETIME, "action": STRING, "details": {"type": "object"},
        "actor": {"oneOf": [obj({"id": UUID, "username": STRING}), {"type": "null"}]}},
        extra=False)}, ["type", "id", "attributes"], extra=False),
    "NodeInput": data_of(obj({
        "type": {"enum": ["folders", "documents"]},
        "attributes": obj({"title": STRING, "lang": STRING, "ocr": BOOLEAN}),
        "relationships": obj({"parent": obj({"data": obj({"type": {"const": "folders"},
                                                         "id": UUID})})}),
        "parent": obj({"type": {"const": "folders"}, "id": UUID})}, ["type"])),
    "NodeUpdate": data_of(obj({"type": {"enum": ["folders", "documents"]}, "id": UUID,
                               "attributes": obj({"title": STRING, "lang": STRING,
                                                  "ocr": BOOLEAN, **DOCUMENT_ATTRIBUTES})},
                              ["type"])),
    "Move": obj({"nodes": {"type": "array", "items": obj({"id": UUID}, ["id"])},
                 "target_parent": obj({"id": UUID}, ["id"])}, ["nodes", "target_parent"]),
    "Token": obj({"type": {"const": "tokens"}, "id": STRING, "attributes": obj({
        "digest": STRING, "name": STRING, "created": DATETIME,
        "expiry": {"type": ["string", "null"], "format": "date-time"}, "token": STRING})},
        ["type", "id", "attributes"], extra=False),
    "TokenInput": {"oneOf": [
        data_of(obj({"type": {"const": "tokens"}, "attributes": obj({
            "expiry_hours": {"type": "integer", "minimum": 1, "maximum": 87600}, "name": STRING})},
            ["type"])),
        obj({"expiry_hours": {"type": "integer", "minimum": 1, "maximum": 87600},
             "name": STRING})]},
    "Page": data_of(obj({"type": {"const": "pages"}, "id": UUID,
                         "attributes": obj({"number": INTEGER, "text": STRING, "lang": STRING}),
                         "relationships": obj({"document_version": obj({"data": obj({
                             "type": {"const": "document_versions"}, "id": UUID})})})})),
    "LegacyDocument": LEGACY_DOCUMENT,
    "Tag": obj({"type": {"const": "tags"}, "id": UUID,
                "attributes": obj({**TAG_ATTRIBUTES, "document_count": INTEGER})},
               ["type", "id", "attributes"], extra=False),
    "TagInput": data_of(obj({"type": {"const": "tags"}, "id": UUID,
                             "attributes": obj(TAG_ATTRIBUTES)}, ["type"])),
    "MailAccount": obj({"type": {"const": "mail-accounts"}, "id": UUID,
                        "attributes": obj(MAIL_ACCOUNT_ATTRIBUTES, extra=False)},
                       ["type", "id", "attributes"], extra=False),
    "MailAccountInput": data_of(obj({"type": {"const": "mail-accounts"}, "id": UUID,
                                     "attributes": obj({**MAIL_SETTINGS, "password": STRING})},
                                    ["type"])),
    "IntakeRefusal": obj({"type": {"const": "intake-refusals"}, "id": UUID, "attributes": obj({
        "source": {"enum": ["consume", "mail"]}, "name": STRING, "origin": NULLABLE_STRING,
        "reason": STRING, "refused_at": DATETIME}, extra=False)},
        ["type", "id", "attributes"], extra=False),
    "Preference": obj({"type": {"const": "preferences"}, "id": STRING, "attributes": obj({
        "section": STRING, "name": STRING, "identifier": STRING, "default": STRING,
        "value": STRING, "help_text": NULLABLE_STRING,
        "additional_data": obj({"choices": {"type": "array", "items": {
            "type": "array", "items": STRING}}})})}, ["type", "id", "attributes"], extra=False),
    "VersionResource": obj({"type": {"const": "document_versions"}, "id": UUID,
                            "attributes": VERSION}, ["type", "id", "attributes"], extra=False),
    "SearchResult": obj({"id": UUID, "title": STRING, "node_type": {"enum": ["document", "folder"]},
                         "breadcrumb": {"type": "array", "items": STRING},
                         "tags": {"type": "array", "items": STRING},
                         "highlight": NULLABLE_STRING, "text": {"type": "null"},
                         "user_id": {"type": "null"}, "owner": STRING, "access": ACCESS}),
}

# The larger answers, named for the routes' Operations (dms/web/api/).
HEALTH = obj({
    "status": STRING, "verify": {"type": ["object", "null"]}, "search": {"type": "object"},
    "queue": obj({"engine": STRING, "pending": {"type": ["integer", "null"]}}),
    "intake": obj({"refused_last_24_hours": obj({"consume": INTEGER, "mail": INTEGER})}),
    "storage": obj({"kind": {"enum": ["local", "s3"]}, "bucket": STRING,
                    "reachable": BOOLEAN}, ["kind"]),
    "workers": {"type": "array", "items": obj({
        "id": STRING, "host": STRING, "pid": INTEGER,
        "languages": {"type": "array", "items": STRING}, "concurrency": INTEGER,
        "started_at": STRING, "last_heartbeat": STRING, "live": BOOLEAN})}}, ["status"])
