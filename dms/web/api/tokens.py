"""The caller's own API tokens (api.md §2): list, create (secret shown once), revoke."""

from __future__ import annotations

from dms.db.models import Token
from dms.domain import credentials
from dms.web.endpoints import ATTRIBUTES, Context
from dms.web.jsonapi import (RouteTable, attributes_of, created, format_datetime, no_content,
                             resource_data)

routes = RouteTable()


def token_resource(token: Token) -> dict:
    return {
        "type": "tokens",
        "id": token.token_key,
        "attributes": {
            "digest": token.token_key,
            "name": token.name,
            "created": format_datetime(token.created),
            "expiry": format_datetime(token.expiry),
        },
    }


@routes.get("/tokens/")
def list_tokens(ctx: Context):
    return ctx.paginate(credentials.tokens_of(ctx.user),
                        lambda tokens: [token_resource(t) for t in tokens])


@routes.post("/tokens/")
def create_token(ctx: Context):
    body = ctx.json()
    # JSON:API form {"data": {"type": "tokens", "attributes": {...}}}, or plain {"expiry_hours":
    # ...}.
    if "data" in body:
        attributes = attributes_of(resource_data(body, "tokens"))
        ctx.field_base = ATTRIBUTES
    else:
        attributes = body
    token, secret = credentials.create_token(ctx.user, attributes.get("expiry_hours"),
                                      attributes.get("name"), ctx.config.max_tokens_per_user)
    resource = token_resource(token)
    resource["attributes"]["token"] = secret  # the one time the secret is ever shown
    return created({"data": resource})


@routes.delete("/tokens/{token_id}/")
def revoke_token(ctx: Context, token_id: str):
    credentials.revoke_by_key(ctx.user, token_id)
    return no_content()
