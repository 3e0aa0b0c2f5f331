"""What the intake refused: the caller's own refusals of the consume folder and of mail checks,
newest first, and dismissing those seen (docs/api.md, "Refused intake")."""

from __future__ import annotations

from dms.db.models import IntakeRefusal
from dms.domain import refusals
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, list_of, ref

routes = RouteTable()


def refusal_resource(refusal: IntakeRefusal) -> dict:
    return {"type": "intake-refusals", "id": refusal.id, "attributes": {
        "source": refusal.source, "name": refusal.name, "origin": refusal.origin,
        "reason": refusal.reason, "refused_at": format_datetime(refusal.refused_at)}}


@routes.get("/intake/refusals/", Operation(
    "What the consume folder and mail checks refused of the caller's, newest first",
    list_of(ref("IntakeRefusal")), query=PAGE_QUERY))
def list_refusals(ctx: Context):
    return ctx.paginate(refusals.refusals_of(ctx.user),
                        lambda rows: [refusal_resource(row) for row in rows])


@routes.delete("/intake/refusals/{refusal_id}/", Operation(
    "Dismiss one of the caller's refusals (seen)", status=204, errors=(404,)))
def dismiss_refusal(ctx: Context, refusal_id: str):
    refusals.dismiss(ctx.user, refusal_id)
    return no_content()


@routes.delete("/intake/refusals/", Operation(
    "Dismiss every one of the caller's refusals", status=204))
def dismiss_refusals(ctx: Context):
    refusals.dismiss_all(ctx.user)
    return no_content()
