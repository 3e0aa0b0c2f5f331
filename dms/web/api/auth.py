"""Login and logout (api.md §2)."""

from __future__ import annotations

from dms.domain import accounts, credentials
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, RouteTable, no_content

routes = RouteTable()


@routes.post("/auth/login/", auth=False, media_type=JSON)
def login(ctx: Context):
    body = ctx.json()
    secret = accounts.login(body.get("username"), body.get("password"), ctx.remote_addr,
                            ctx.services.throttle, ctx.config.max_tokens_per_user)
    return {"token": secret, "expiry": None}


@routes.post("/auth/logout/", media_type=JSON)
def logout(ctx: Context):
    credentials.revoke(ctx.token)
    return no_content()


@routes.post("/auth/logoutall/", media_type=JSON)
def logout_all(ctx: Context):
    credentials.revoke_all(ctx.user)
    return no_content()
