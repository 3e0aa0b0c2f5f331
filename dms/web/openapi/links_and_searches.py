"""The OpenAPI document's part for share links and saved searches (api.md, "Share links",
"Saved searches")."""

from __future__ import annotations

from dms.web.openapi.shapes import BOOLEAN, DATETIME, INTEGER, STRING, UUID, data_of, obj

NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}
FILE_VERSION = {"enum": ["original", "searchable"]}
NULLABLE_COUNT = {"type": ["integer", "null"], "minimum": 1}

SCHEMAS = {
    "ShareLink": obj({"type": {"const": "share-links"}, "id": UUID, "attributes": obj({
        "node": UUID, "expires_at": DATETIME, "has_password": BOOLEAN,
        "max_downloads": NULLABLE_COUNT, "file_version": FILE_VERSION, "downloads": INTEGER,
        "url": {"type": "string", "format": "uri"}, "created_at": DATETIME,
        "last_accessed_at": NULLABLE_DATETIME}, extra=False)},
        ["type", "id", "attributes"], extra=False),
    "ShareLinkInput": data_of(obj({"type": {"const": "share-links"}, "attributes": obj({
        "node": UUID, "expires_at": STRING, "password": {"type": ["string", "null"]},
        "max_downloads": NULLABLE_COUNT, "file_version": FILE_VERSION},
        ["node", "expires_at"])}, ["type", "attributes"])),
    "SavedSearch": obj({"type": {"const": "saved-searches"}, "id": UUID, "attributes": obj({
        "name": STRING, "query": STRING, "sort": STRING, "show_in_sidebar": BOOLEAN,
        "created_at": DATETIME}, extra=False)}, ["type", "id", "attributes"], extra=False),
    "SavedSearchInput": data_of(obj({"type": {"const": "saved-searches"}, "id": UUID,
                                     "attributes": obj({"name": STRING, "query": STRING,
                                                        "sort": STRING,
                                                        "show_in_sidebar": BOOLEAN})},
                                    ["type", "attributes"])),
}
