"""The OpenAPI document's part for webhooks and the event stream
(api.md, "Webhooks and the event stream"); SSE_EVENT is the stream's answer, for its route."""

from __future__ import annotations

from dms.db.events import EVENT_TYPES
from dms.web.openapi.shapes import BOOLEAN, INTEGER, NULLABLE_STRING, STRING, UUID, data_of, obj

EVENTS = {"type": "array", "items": {"enum": list(EVENT_TYPES)}, "minItems": 1}
NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}

SCHEMAS = {
    "Webhook": obj({"type": {"const": "webhooks"}, "id": UUID, "attributes": obj({
        "url": STRING, "events": EVENTS, "enabled": BOOLEAN,
        "created_at": {"type": "string", "format": "date-time"},
        "last_delivery_at": NULLABLE_DATETIME, "last_status": {"type": ["integer", "null"]},
        "last_error": NULLABLE_STRING, "failures_in_a_row": INTEGER}, extra=False)},
        ["type", "id", "attributes"], extra=False),
    "WebhookInput": data_of(obj({"type": {"const": "webhooks"}, "id": UUID, "attributes": obj({
        "url": STRING, "events": EVENTS, "secret": STRING, "enabled": BOOLEAN})}, ["type"])),
    "WebhookDelivery": obj({"type": {"const": "webhook-deliveries"}, "id": UUID,
                            "attributes": obj({"event": {"const": "ping"}, "ok": BOOLEAN,
                                               "status": {"type": ["integer", "null"]},
                                               "error": NULLABLE_STRING,
                                               "duration_ms": INTEGER}, extra=False)},
                           ["type", "id", "attributes"], extra=False),
}

# Each event of the stream, as an event-stream parser reads it (the schema applies to every event:
# OpenAPI 3.2's itemSchema, which validators also take from `schema`); `data` is the event's JSON.
SSE_EVENT = {"type": "object", "required": ["data"], "properties": {
    "id": STRING, "event": STRING, "retry": INTEGER,
    "data": {"type": "string", "contentMediaType": "application/json"}}}
