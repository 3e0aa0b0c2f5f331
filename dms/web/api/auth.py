"""Login and logout (api.md, "Login"; sessions: §22)."""

from __future__ import annotations

from dms.domain import accounts, credentials, sessions
from dms.errors import Invalid
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, RouteTable, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import BOOLEAN, INTEGER, JSON_OR_VND, STRING, obj

routes = RouteTable()

KIND = {"type": "string", "enum": [credentials.API, credentials.SESSION]}


@routes.post("/auth/login/", Operation(
    "Log in: a token for the username and password (a session if asked for)",
    obj({"token": STRING, "expiry": {"type": "null"}, "kind": KIND},
        ["token", "expiry", "kind"]),
    request=obj({"username": STRING, "password": STRING, "session": BOOLEAN},
                ["username", "password"]),
    accepts=JSON_OR_VND, errors=(429,)), auth=False, media_type=JSON)
def login(ctx: Context):
    body = ctx.json()
    session = body.get("session", False)
    if not isinstance(session, bool):
        raise Invalid("session must be true or false.", "session")
    if session:
        secret = sessions.start(body.get("username"), body.get("password"), ctx.remote_addr,
                                ctx.services.throttle, ctx.config.max_tokens_per_user,
                                sessions.idle_limit(ctx.config))
    else:
        secret = accounts.login(body.get("username"), body.get("password"), ctx.remote_addr,
                                ctx.services.throttle, ctx.config.max_tokens_per_user)
    kind = credentials.SESSION if session else credentials.API
    return {"token": secret, "expiry": None, "kind": kind}


@routes.post("/auth/logout/", Operation("Revoke the calling token", status=204), media_type=JSON)
def logout(ctx: Context):
    credentials.revoke(ctx.token)
    return no_content()


@routes.post("/auth/logoutall/", Operation(
    "Revoke all of the caller's tokens", status=204), media_type=JSON)
def logout_all(ctx: Context):
    credentials.revoke_all(ctx.user)
    return no_content()


@routes.get("/auth/sessions/", Operation(
    "How many browsers the caller is signed in on (live sessions)",
    obj({"count": INTEGER}, ["count"])), media_type=JSON)
def session_count(ctx: Context):
    return {"count": sessions.session_count(ctx.user, sessions.idle_limit(ctx.config))}


@routes.delete("/auth/sessions/", Operation(
    "Sign out everywhere: end all of the caller's sessions (API tokens stay)", status=204),
    media_type=JSON)
def end_sessions(ctx: Context):
    sessions.end_sessions(ctx.user)
    return no_content()
