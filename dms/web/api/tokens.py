"""The caller's own API tokens (api.md, "Tokens"): list, create (secret shown once), revoke."""

from __future__ import annotations

from dms.db.models import Token
from dms.domain import credentials
from dms.web.endpoints import ATTRIBUTES, Context
from dms.web.jsonapi import (
    RouteTable,
    attributes_of,
    created,
    format_datetime,
    no_content,
    resource_data,
)
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, PAGE_QUERY, data_of, list_of, ref

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


@routes.get("/tokens/", Operation("The caller's tokens", list_of(ref("Token")), query=PAGE_QUERY))
def list_tokens(ctx: Context):
    return ctx.paginate(credentials.tokens_of(ctx.user),
                        lambda tokens: [token_resource(t) for t in tokens])


@routes.post("/tokens/", Operation(
    "Create a token; its secret is shown this once", data_of(ref("Token")), 201,
    request=ref("TokenInput"), accepts=JSON_OR_VND, errors=(409,)))
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


@routes.delete("/tokens/{token_id}/", Operation("Revoke one of the caller's tokens", status=204))
def revoke_token(ctx: Context, token_id: str):
    credentials.revoke_by_key(ctx.user, token_id)
    return no_content()
