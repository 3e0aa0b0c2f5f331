"""Login and logout (api.md, "Login")."""

from __future__ import annotations

from dms.domain import accounts, credentials
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, RouteTable, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, STRING, obj

routes = RouteTable()


@routes.post("/auth/login/", Operation(
    "Log in: a token for the username and password",
    obj({"token": STRING, "expiry": {"type": "null"}}, ["token", "expiry"]),
    request=obj({"username": STRING, "password": STRING}, ["username", "password"]),
    accepts=JSON_OR_VND, errors=(429,)), auth=False, media_type=JSON)
def login(ctx: Context):
    body = ctx.json()
    secret = accounts.login(body.get("username"), body.get("password"), ctx.remote_addr,
                            ctx.services.throttle, ctx.config.max_tokens_per_user)
    return {"token": secret, "expiry": None}


@routes.post("/auth/logout/", Operation("Revoke the calling token", status=204), media_type=JSON)
def logout(ctx: Context):
    credentials.revoke(ctx.token)
    return no_content()


@routes.post("/auth/logoutall/", Operation(
    "Revoke all of the caller's tokens", status=204), media_type=JSON)
def logout_all(ctx: Context):
    credentials.revoke_all(ctx.user)
    return no_content()
