"""The caller's own API tokens (api.md §2): list, create (secret shown once), revoke."""

from __future__ import annotations

from dms.auth import DEFAULT_TOKEN_HOURS, MAX_TOKEN_HOURS, issue_token
from dms.jsonapi import (RouteTable, attributes_of, created, format_datetime, invalid,
                         no_content, not_found, resource_data)
from dms.models import Token
from dms.web import Context

routes = RouteTable()

MAX_NAME_LENGTH = 100


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
    query = (Token.select().where(Token.user == ctx.user.id)
             .order_by(Token.created.desc(), Token.token_key))
    return ctx.paginate(query, lambda tokens: [token_resource(t) for t in tokens])


@routes.post("/tokens/")
def create_token(ctx: Context):
    body = ctx.json()
    # JSON:API form {"data": {"type": "tokens", "attributes": {...}}}, or plain {"expiry_hours": ...}.
    if "data" in body:
        attributes, pointer = attributes_of(resource_data(body, "tokens")), "/data/attributes/"
    else:
        attributes, pointer = body, "/"
    hours = attributes.get("expiry_hours", DEFAULT_TOKEN_HOURS)
    if isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= MAX_TOKEN_HOURS:
        raise invalid(f"expiry_hours must be a whole number of hours from 1 to {MAX_TOKEN_HOURS}.",
                      pointer + "expiry_hours")
    name = attributes.get("name") or ""
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH:
        raise invalid(f"name must be text of at most {MAX_NAME_LENGTH} characters.", pointer + "name")
    token, secret = issue_token(ctx.user, expiry_hours=hours, name=name.strip())
    resource = token_resource(token)
    resource["attributes"]["token"] = secret  # the one time the secret is ever shown
    return created({"data": resource})


@routes.delete("/tokens/{token_id}/")
def revoke_token(ctx: Context, token_id: str):
    deleted = (Token.delete()
               .where(Token.token_key == token_id, Token.user == ctx.user.id).execute())
    if not deleted:
        raise not_found()
    return no_content()
