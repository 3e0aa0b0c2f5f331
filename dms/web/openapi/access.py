"""The OpenAPI document's part for sharing between users (api.md §21): groups."""

from __future__ import annotations

from dms.domain.access.groups import MAX_MEMBERS, MAX_NAME_LENGTH
from dms.web.openapi.shapes import DATETIME, UUID, data_of, obj

NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH}
MEMBERS = {"type": "array", "items": UUID, "maxItems": MAX_MEMBERS}

SCHEMAS = {
    "Group": obj({"type": {"const": "groups"}, "id": UUID,
                  "attributes": obj({"name": NAME, "members": MEMBERS, "created_at": DATETIME},
                                    extra=False)},
                 ["type", "id", "attributes"], extra=False),
    "GroupInput": data_of(obj({"type": {"const": "groups"}, "id": UUID,
                               "attributes": obj({"name": NAME, "members": MEMBERS})},
                              ["type"])),
}
