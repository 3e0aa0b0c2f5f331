"""Webhooks (api.md, "Webhooks"): the caller's own URLs that their events are POSTed to; the secret
is write-only. Delivery runs in the background (dms.notify.deliverer); POST .../test/ sends a
`ping` now."""

from __future__ import annotations

from dms.db.models import Webhook
from dms.domain import webhooks
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()


def webhook_resource(webhook: Webhook) -> dict:
    return {"type": "webhooks", "id": webhook.id, "attributes": {
        "url": webhook.url, "events": webhooks.events_of(webhook),
        "enabled": bool(webhook.enabled), "created_at": format_datetime(webhook.created_at),
        "last_delivery_at": format_datetime(webhook.last_delivery_at),
        "last_status": webhook.last_status, "last_error": webhook.last_error,
        "failures_in_a_row": webhook.failures_in_a_row}}


@routes.get("/webhooks/", Operation(
    "The caller's webhooks", list_of(ref("Webhook")), query=PAGE_QUERY))
def list_webhooks(ctx: Context):
    return ctx.paginate(webhooks.webhooks_of(ctx.user),
                        lambda rows: [webhook_resource(w) for w in rows])


@routes.post("/webhooks/", Operation(
    "Add a webhook: a URL the caller's events are POSTed to, signed with its secret",
    data_of(ref("Webhook")), 201, request=ref("WebhookInput"), errors=(409,)))
def create_webhook(ctx: Context):
    _, attributes = ctx.resource("webhooks")
    webhook = webhooks.create_webhook(ctx.user, attributes, ctx.config)
    return created({"data": webhook_resource(webhook)})


@routes.get("/webhooks/{webhook_id}/", Operation(
    "One webhook (never its secret)", data_of(ref("Webhook"))))
def get_webhook(ctx: Context, webhook_id: str):
    return {"data": webhook_resource(webhooks.owned_webhook(ctx.user, webhook_id))}


@routes.patch("/webhooks/{webhook_id}/", Operation(
    "Change a webhook; enabling a disabled one starts afresh", data_of(ref("Webhook")),
    request=ref("WebhookInput"), errors=(409,)))
def update_webhook(ctx: Context, webhook_id: str):
    _, attributes = ctx.resource("webhooks")
    webhook = webhooks.update_webhook(ctx.user, webhook_id, attributes, ctx.config)
    return {"data": webhook_resource(webhook)}


@routes.delete("/webhooks/{webhook_id}/", Operation("Delete a webhook", status=204))
def delete_webhook(ctx: Context, webhook_id: str):
    webhooks.delete_webhook(ctx.user, webhook_id)
    return no_content()


@routes.post("/webhooks/{webhook_id}/test/", Operation(
    "Send a ping to a webhook now; what the receiver answered", data_of(ref("WebhookDelivery")),
    errors=(429,)))
def test_webhook(ctx: Context, webhook_id: str):
    """A `ping` sent now, answered within DMS_WEBHOOK_TIMEOUT_SECONDS with what the receiver
    answered (the webhook itself is not changed)."""
    delivery, answer = ctx.runtime.webhooks.test(ctx.user, webhook_id)
    return {"data": {"type": "webhook-deliveries", "id": delivery, "attributes": {
        "event": "ping", "ok": answer.ok, "status": answer.status, "error": answer.error,
        "duration_ms": round(answer.seconds * 1000)}}}
