"""Login and logout (api.md §2)."""

from __future__ import annotations

from dms.auth import LOGIN_TOKEN_NAME, issue_token, verify_password
from dms.jsonapi import JSON, ApiError, RouteTable, no_content
from dms.models import Token, User
from dms.web import Context

routes = RouteTable()

LOGIN_FAILED = "Unable to log in with provided credentials."


@routes.post("/auth/login/", auth=False, media_type=JSON)
def login(ctx: Context):
    body = ctx.json()
    credentials = {}
    for name in ("username", "password"):
        value = body.get(name)
        if value is None:
            raise ApiError(400, "required", f"The {name} is required.", f"/{name}")
        if not isinstance(value, str) or not value:
            raise ApiError(400, "blank", f"The {name} may not be blank.", f"/{name}")
        credentials[name] = value

    keys = [("addr", ctx.remote_addr), ("user", credentials["username"].casefold())]
    wait = ctx.state.throttle.retry_after(keys)
    if wait is not None:
        raise ApiError(429, "throttled",
                       f"Too many failed logins. Try again in {wait} seconds.",
                       headers={"Retry-After": str(wait)})

    user = User.get_or_none(User.username == credentials["username"])
    password_ok = verify_password(credentials["password"], user.password_hash if user else None)
    if user is None or not password_ok or not user.is_active:
        ctx.state.throttle.record_failure(keys)
        raise ApiError(400, "authentication_failed", LOGIN_FAILED)
    ctx.state.throttle.reset(keys)
    _, secret = issue_token(user, expiry_hours=None, name=LOGIN_TOKEN_NAME)
    return {"token": secret, "expiry": None}


@routes.post("/auth/logout/", media_type=JSON)
def logout(ctx: Context):
    Token.delete().where(Token.digest == ctx.token.digest).execute()
    return no_content()


@routes.post("/auth/logoutall/", media_type=JSON)
def logout_all(ctx: Context):
    Token.delete().where(Token.user == ctx.user.id).execute()
    return no_content()
