"""GET /openapi.json: an OpenAPI 3.1 document built from the route table itself, so no route can
be added or removed without the document following. Each route's body and answers are described
in OPERATIONS, keyed by handler name; a test checks that every route has an entry."""

from __future__ import annotations

import re

from dms import __version__
from dms.db.models import OcrStatus
from dms.web.jsonapi import JSON, VND, Route

STRING, INTEGER, BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
DATETIME = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(properties: dict, required: list[str] | None = None, extra: bool = True) -> dict:
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not extra:
        schema["additionalProperties"] = False
    return schema


def data_of(schema: dict) -> dict:
    return obj({"data": schema}, ["data"])


def list_of(schema: dict) -> dict:
    link = NULLABLE_STRING
    return obj({
        "links": obj({"first": STRING, "last": STRING, "next": link, "prev": link}),
        "data": {"type": "array", "items": schema},
        "meta": obj({"pagination": obj({"page": INTEGER, "pages": INTEGER, "count": INTEGER})}),
    }, ["links", "data", "meta"])


FOLDER_REF = obj({"data": {"oneOf": [obj({"type": {"const": "folders"}, "id": UUID}),
                                      {"type": "null"}]}})
BREADCRUMB = {"type": "array", "items": {"type": "array", "items": STRING}}
NODE_TAG = obj({"name": STRING, "bg_color": STRING, "fg_color": STRING},
               ["name", "bg_color", "fg_color"])
NODE_ATTRIBUTES = {
    "title": STRING, "created_at": DATETIME, "updated_at": DATETIME, "breadcrumb": BREADCRUMB,
    "tags": {"type": "array", "items": NODE_TAG}, "lang": STRING, "ocr": BOOLEAN,
    "ocr_status": {"enum": list(OcrStatus.ALL)},
    "ocr_error": NULLABLE_STRING, "file_name": NULLABLE_STRING, "size": INTEGER,
    "page_count": INTEGER,
    "mail": {"oneOf": [obj({"subject": STRING, "from": STRING, "date": NULLABLE_STRING,
                            "message_id": STRING}, ["subject", "from", "date", "message_id"]),
                       {"type": "null"}]},
}
VERSION = obj({"id": UUID, "number": INTEGER, "file_name": STRING, "size": INTEGER,
               "page_count": INTEGER, "lang": STRING, "created_at": DATETIME,
               "download_url": STRING,
               "pages": {"type": "array", "items": obj({"type": {"const": "pages"}, "id": UUID})},
               "searchable_pdf": BOOLEAN, "searchable_pdf_size": {"type": ["integer", "null"]}})
LEGACY_DOCUMENT = obj({"id": UUID, "title": STRING, "file_name": NULLABLE_STRING, "size": INTEGER,
                       "page_count": INTEGER, "lang": STRING, "ocr_status": STRING,
                       "parent_id": UUID, "created_at": DATETIME, "updated_at": DATETIME,
                       "tags": {"type": "array", "items": NODE_TAG}})
TAG_ATTRIBUTES = {"name": STRING, "bg_color": STRING, "fg_color": STRING,
                  "description": STRING, "pinned": BOOLEAN}
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
        "relationships": obj({"inbox_folder": FOLDER_REF, "home_folder": FOLDER_REF})},
        ["type", "id", "attributes", "relationships"], extra=False),
    "UserInput": data_of(obj({"type": {"const": "users"}, "id": UUID, "attributes": obj({
        "username": STRING, "first_name": STRING, "last_name": STRING, "email": STRING,
        "is_active": BOOLEAN, "is_staff": BOOLEAN, "is_superuser": BOOLEAN})}, ["type"])),
    "Node": obj({
        "type": {"enum": ["folders", "documents"]}, "id": UUID,
        "attributes": obj({**NODE_ATTRIBUTES, "versions": {"type": "array", "items": VERSION}}),
        "relationships": obj({"parent": FOLDER_REF})},
        ["type", "id", "attributes", "relationships"], extra=False),
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
                                                  "ocr": BOOLEAN})},
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
    "Tag": obj({"type": {"const": "tags"}, "id": UUID, "attributes": obj(TAG_ATTRIBUTES)},
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
                         "user_id": {"type": "null"}}),
}

BINARY = {"type": "string", "format": "binary"}
FILE_TYPES = ["application/pdf", "image/png", "image/jpeg", "image/tiff", "text/plain"]
PAGE_QUERY = ["page[number]", "page[size]", "page", "page_size"]

# handler name -> (request: (media types, schema) or None, success status, success media ->
# schema, extra query parameters, extra error statuses, summary)
OPERATIONS = {
    "login": (([JSON, VND], obj({"username": STRING, "password": STRING},
                                ["username", "password"])),
              200, {JSON: obj({"token": STRING, "expiry": {"type": "null"}}, ["token", "expiry"])},
              [], [429], "Log in: a token for the username and password"),
    "logout": (None, 204, {}, [], [], "Revoke the calling token"),
    "logout_all": (None, 204, {}, [], [], "Revoke all of the caller's tokens"),
    "list_tokens": (None, 200, {VND: list_of(ref("Token"))}, PAGE_QUERY, [], "The caller's tokens"),
    "create_token": (([JSON, VND], ref("TokenInput")), 201, {VND: data_of(ref("Token"))}, [], [409],
                     "Create a token; its secret is shown this once"),
    "revoke_token": (None, 204, {}, [], [], "Revoke one of the caller's tokens"),
    "list_users": (None, 200, {VND: list_of(ref("User"))}, PAGE_QUERY, [403], "All users (admins)"),
    "create_user": (([VND], ref("UserInput")), 200, {VND: data_of(ref("User"))}, [], [403, 409],
                    "Create a user with .home and .inbox (admins)"),
    "me": (None, 200, {VND: data_of(ref("User"))}, [], [], "The caller"),
    "get_user": (None, 200, {VND: data_of(ref("User"))}, [], [403], "One user"),
    "update_user": (([VND], ref("UserInput")), 200, {VND: data_of(ref("User"))}, [], [403, 409],
                    "Change a user"),
    "delete_user": (None, 204, {}, [], [403], "Delete a user with their papers (admins)"),
    "change_password": (([JSON, VND], obj({"password": STRING}, ["password"])), 200,
                        {JSON: obj({"status": STRING})}, [], [403], "Set a user's password"),
    "list_top_level": (None, 200, {VND: list_of(ref("Node"))}, PAGE_QUERY, [],
                       "The caller's .home and .inbox"),
    "create_node": (([VND], ref("NodeInput")), 201, {VND: data_of(ref("Node"))}, [], [409],
                    "Create a folder or a document"),
    "move_nodes": (([JSON, VND], ref("Move")), 200,
                   {JSON: obj({"data": {"type": "array", "items": ref("Node")}})}, [], [403, 404],
                   "Move nodes into a folder, all or nothing"),
    "download_nodes": (None, 200, {"application/zip": BINARY, "application/gzip": BINARY,
                                   **{t: BINARY for t in FILE_TYPES}},
                       ["node_ids", "archive_type", "password", "searchable"], [400, 404],
                       "Download nodes"),
    "list_children": (None, 200, {VND: list_of(ref("Node"))},
                      PAGE_QUERY + ["sort", "tags", "tags_op"], [400], "A folder's children"),
    "inbox_count": (None, 200, {VND: data_of(obj({"count": INTEGER}, ["count"]))}, [], [],
                    "How many nodes are directly in the caller's .inbox"),
    "update_folder": (([VND], ref("NodeUpdate")), 200, {VND: data_of(ref("Node"))}, [],
                      [403, 409], "Rename a folder"),
    "delete_folder": (None, 204, {}, [], [403],
                      "Move a folder with everything below it to the trash"),
    "get_version": (None, 200, {VND: data_of(ref("VersionResource"))}, [], [],
                    "One version of a document"),
    "list_tags": (None, 200, {VND: list_of(ref("Tag"))}, PAGE_QUERY, [], "The caller's tags"),
    "create_tag": (([VND], ref("TagInput")), 201, {VND: data_of(ref("Tag"))}, [], [409],
                   "Create a tag"),
    "get_tag": (None, 200, {VND: data_of(ref("Tag"))}, [], [], "One tag"),
    "update_tag": (([VND], ref("TagInput")), 200, {VND: data_of(ref("Tag"))}, [], [409],
                   "Change a tag"),
    "delete_tag": (None, 204, {}, [], [], "Delete a tag (nodes lose it)"),
    "list_mail_accounts": (None, 200, {VND: list_of(ref("MailAccount"))}, PAGE_QUERY, [],
                           "The caller's mail accounts"),
    "create_mail_account": (([VND], ref("MailAccountInput")), 201,
                            {VND: data_of(ref("MailAccount"))}, [], [],
                            "Add a mail account whose attachments become documents"),
    "get_mail_account": (None, 200, {VND: data_of(ref("MailAccount"))}, [], [],
                         "One mail account (never its password)"),
    "update_mail_account": (([VND], ref("MailAccountInput")), 200,
                            {VND: data_of(ref("MailAccount"))}, [], [], "Change a mail account"),
    "delete_mail_account": (None, 204, {}, [], [],
                            "Delete a mail account (its documents stay)"),
    "check_mail_account": (None, 202, {VND: data_of(ref("MailAccount"))}, [], [429, 503],
                           "Queue a check of a mail account; the account as it is now (its "
                           "result shows once `checking` is false)"),
    "list_refusals": (None, 200, {VND: list_of(ref("IntakeRefusal"))}, PAGE_QUERY, [],
                      "What the consume folder and mail checks refused of the caller's, newest "
                      "first"),
    "replace_node_tags": (([JSON, VND], NAMES), 201, {JSON: NAMES}, [], [],
                          "Set a node's tags, creating missing ones"),
    "add_node_tags": (([JSON, VND], NAMES), 200, {JSON: NAMES}, [], [], "Add tags to a node"),
    "remove_node_tags": (([JSON, VND], NAMES), 204, {}, [], [], "Take tags off a node"),
    "list_preferences": (None, 200, {VND: list_of(ref("Preference"))}, PAGE_QUERY, [],
                         "The caller's preferences"),
    "get_preference": (None, 200, {VND: data_of(ref("Preference"))}, [], [], "One preference"),
    "update_preference": (([VND, JSON], data_of(obj({"type": {"const": "preferences"},
                                                     "attributes": obj({"value": STRING})}))),
                          200, {VND: data_of(ref("Preference"))}, [], [409],
                          "Change one preference"),
    "update_preferences": (([JSON, VND], obj({"ocr__language": STRING})), 200,
                           {JSON: obj({"data": {"type": "array", "items": ref("Preference")}})},
                           [], [], "Change several preferences ({identifier: value})"),
    "update_node": (([VND], ref("NodeUpdate")), 200, {VND: data_of(ref("Node"))}, [], [403, 409],
                    "Rename a node; a document's lang and ocr"),
    "delete_node": (None, 204, {}, [], [403], "Move a node with everything below it to the trash"),
    "list_folders": (None, 200, {VND: list_of(ref("Node"))}, PAGE_QUERY, [],
                     "All the caller's folders"),
    "create_folder": (([VND], ref("NodeInput")), 201, {VND: data_of(ref("Node"))}, [], [409],
                      "Create a folder"),
    "get_folder": (None, 200, {VND: data_of(ref("Node"))}, [], [], "One folder"),
    "list_documents": (None, 200, {VND: list_of(ref("Node"))}, PAGE_QUERY + ["tags", "tags_op"],
                       [400], "All the caller's documents"),
    "get_document": (None, 200, {VND: data_of(ref("Node"))}, [], [], "One document with versions"),
    "update_document": (([VND], ref("NodeUpdate")), 200, {VND: data_of(ref("Node"))}, [], [409],
                        "Rename a document; its lang and ocr"),
    "delete_document": (None, 204, {}, [], [], "Move a document to the trash"),
    "upload": (({t: BINARY for t in FILE_TYPES + ["application/octet-stream"]}, None), 201,
               {VND: data_of(ref("Node"))}, [], [], "Upload a new version of a document's file"),
    "restore_version": (None, 201, {VND: data_of(ref("Node"))}, [], [],
                        "Make an older version the latest again (a new version, no OCR)"),
    "list_trash": (None, 200, {VND: list_of(ref("TrashedNode"))}, PAGE_QUERY, [],
                   "What the caller deleted, newest first"),
    "restore_from_trash": (None, 200, {VND: data_of(ref("Node"))}, [], [],
                           "Put a deleted node back, whole"),
    "delete_from_trash": (None, 204, {}, [], [], "Delete a deleted node for good"),
    "empty_trash": (None, 204, {}, [], [], "Delete everything in the trash for good"),
    "node_history": (None, 200, {VND: list_of(ref("Event"))}, PAGE_QUERY, [],
                     "A node's history, newest first"),
    "download_latest": (None, 200, {t: BINARY for t in FILE_TYPES}, ["searchable"], [416],
                        "The latest version's file (or its searchable PDF)"),
    "download_version": (None, 200, {t: BINARY for t in FILE_TYPES}, ["searchable"], [416],
                         "One version's file (or its searchable PDF)"),
    "get_page": (None, 200, {VND: ref("Page"), "text/plain": STRING, "image/jpeg": BINARY}, [], [],
                 "A page as JSON:API, text or JPEG preview (by Accept)"),
    "ocr_text": (None, 200, {JSON: obj({"text": STRING})}, [], [], "A document's text"),
    "ocr_languages": (None, 200, {JSON: obj({"languages": {"type": "array", "items": STRING},
                                             "default": STRING})}, [], [],
                      "Installed OCR languages"),
    "rerun": (([JSON, VND], obj({"doc_id": UUID, "lang": STRING}, ["doc_id"])), 200,
              {JSON: obj({"status": STRING, "doc_id": UUID, "lang": STRING})}, [], [404],
              "Process a document again"),
    "search_nodes": (None, 200, {JSON: {"type": "array", "items": ref("SearchResult")}},
                     ["q", "limit", "tags", "tags_op"], [400, 503], "Search titles and text"),
    "version": (None, 200, {JSON: obj({"version": STRING})}, [], [], "The server's version"),
    "health": (None, 200, {JSON: obj({
        "status": STRING, "verify": {"type": ["object", "null"]}, "search": {"type": "object"},
        "queue": obj({"engine": STRING, "pending": {"type": ["integer", "null"]}}),
        "intake": obj({"refused_last_24_hours": obj({"consume": INTEGER, "mail": INTEGER})}),
        "workers": {"type": "array", "items": obj({
            "id": STRING, "host": STRING, "pid": INTEGER,
            "languages": {"type": "array", "items": STRING}, "concurrency": INTEGER,
            "started_at": STRING, "last_heartbeat": STRING, "live": BOOLEAN})}}, ["status"])},
               [], [503], "Health (503 with the reason when the database or the queue cannot "
                          "be reached); for admins the last verify, search, queue and workers"),
    "openapi": (None, 200, {JSON: {"type": "object"}}, [], [], "This document"),
    "list_documents_legacy": (None, 200, {JSON: {"type": "array", "items": ref("LegacyDocument")}},
                              [], [], "Legacy: all the caller's documents"),
    "get_document_legacy": (None, 200, {JSON: ref("LegacyDocument")}, [], [],
                            "Legacy: one document"),
    "upload_unnamed": (({t: BINARY for t in FILE_TYPES}, None), 201, {JSON: ref("LegacyDocument")},
                       [], [], "Legacy: upload into .inbox under a random name"),
    "upload_named": (({t: BINARY for t in FILE_TYPES}, None), 201, {JSON: ref("LegacyDocument")},
                     [], [], "Legacy: upload into .inbox"),
    "page": (None, 200, {"text/html": STRING}, [], [], "The token web page"),
    "page_under_ui": (None, 200, {"text/html": STRING}, [], [], "The token web page"),
    "static": (None, 200, {"text/javascript": STRING, "text/css": STRING, "image/svg+xml": STRING},
               [], [], "Files of the token web page"),
}


def operation_key(route: Route) -> str:
    """The OPERATIONS entry of a route (legacy handlers share names with JSON:API ones)."""
    name = route.handler.__name__
    return f"{name}_legacy" if route.prefixes == ("/api",) and name in (
        "list_documents", "get_document") else name


def error_response(status: int) -> dict:
    return {"description": f"Error {status}", "content": {
        VND: {"schema": ref("Error")}, JSON: {"schema": ref("Error")}}}


def build(routes: list[Route]) -> dict:
    paths: dict[str, dict] = {}
    for route in routes:
        request, status, media, query, errors, summary = OPERATIONS[operation_key(route)]
        path_params = re.findall(r"\{(\w+)\}", route.path)
        statuses = {500, *errors}
        if route.auth:
            statuses.add(401)
        if path_params or media.get(VND, {}).get("properties", {}).get("links"):
            statuses.add(404)
        if request is not None:
            statuses |= {400, 413, 415}
        if route.method != "GET":  # every write: busy (503) or a full disk (507)
            statuses |= {503, 507}
        for prefix in route.prefixes:
            operation = {
                "operationId": f"{operation_key(route)}{prefix.replace('/', '_')}",
                "summary": summary,
                "parameters": [{"name": p, "in": "path", "required": True, "schema": STRING}
                               for p in path_params]
                + [{"name": q, "in": "query", "required": False, "schema": STRING} for q in query],
                "responses": {str(status): {"description": "Success", **(
                    {"content": {m: {"schema": s} for m, s in media.items()}} if media else {})}},
            }
            operation["responses"].update({str(s): error_response(s) for s in sorted(statuses)})
            if route.auth:
                operation["security"] = [{"token": []}]
            if request is not None:
                types, schema = request
                content = types if isinstance(types, dict) else \
                    {t: {"schema": schema} for t in types}
                content = {t: (v if isinstance(v, dict) and "schema" in v else {"schema": v})
                           for t, v in content.items()}
                operation["requestBody"] = {"required": True, "content": content}
            paths.setdefault(prefix + route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "dms", "version": __version__,
                 "description": "A self-hosted document management appliance. Every path exists "
                                "bare and under /api; a missing trailing slash is tolerated."},
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"token": {
                "type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <secret>`, from POST /auth/login/ or POST /tokens/"}},
        },
    }
