"""A node's history (api.md, "History"): its events, newest first."""

from __future__ import annotations

from dms.domain import history
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, format_datetime
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, list_of, ref

routes = RouteTable()


def event_resource(row: history.EventRow) -> dict:
    actor = {"id": row.actor_id, "username": row.actor_username} if row.actor_id else None
    return {"type": "events", "id": str(row.id), "attributes": {
        "at": format_datetime(row.at), "actor": actor, "action": row.action,
        "details": row.details}}


@routes.get("/nodes/{node_id}/history/", Operation(
    "A node's history, newest first", list_of(ref("Event")), query=PAGE_QUERY))
def node_history(ctx: Context, node_id: str):
    return ctx.paginate(history.history_of(ctx.user, node_id),
                        lambda rows: [event_resource(row) for row in rows])
