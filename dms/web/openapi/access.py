"""The OpenAPI document's part for sharing between users (api.md §21): groups, and who a node is
shared with."""

from __future__ import annotations

from dms.domain.access.groups import MAX_MEMBERS, MAX_NAME_LENGTH
from dms.domain.access.rule import ROLES
from dms.web.openapi.shapes import DATETIME, NULLABLE_STRING, STRING, UUID, data_of, obj

NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH}
MEMBERS = {"type": "array", "items": UUID, "maxItems": MAX_MEMBERS}
ROLE = {"enum": list(ROLES)}
GRANT = obj({"id": UUID, "node": UUID,
             "user": {"oneOf": [obj({"id": UUID, "username": STRING}), {"type": "null"}]},
             "group": {"oneOf": [obj({"id": UUID, "name": STRING}), {"type": "null"}]},
             "role": ROLE, "granted_by": NULLABLE_STRING, "created_at": DATETIME},
            ["id", "node", "user", "group", "role"], extra=False)

SCHEMAS = {
    "Group": obj({"type": {"const": "groups"}, "id": UUID,
                  "attributes": obj({"name": NAME, "members": MEMBERS, "created_at": DATETIME},
                                    extra=False)},
                 ["type", "id", "attributes"], extra=False),
    "GroupInput": data_of(obj({"type": {"const": "groups"}, "id": UUID,
                               "attributes": obj({"name": NAME, "members": MEMBERS})},
                              ["type"])),
    "Grant": GRANT,
    "GrantInput": obj({"user": UUID, "username": STRING, "group": UUID, "role": ROLE}, ["role"]),
    "Access": obj({"type": {"const": "access"}, "id": UUID, "attributes": obj({
        "owner": obj({"id": UUID, "username": STRING}),
        "grants": {"type": "array", "items": GRANT}}, extra=False)},
        ["type", "id", "attributes"], extra=False),
}
