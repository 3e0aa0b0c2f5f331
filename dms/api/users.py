"""Users (api.md §3, §4). Admins (staff or superuser) manage accounts; only a superuser grants or
touches admin rights or another superuser; nobody deletes or deactivates themselves, and the last
active superuser always stays."""

from __future__ import annotations

from dms import accounts
from dms.accounts import AccountError
from dms.db import database
from dms.jsonapi import (JSON, VND, ApiError, RouteTable, attributes_of, format_datetime, invalid,
                         no_content, not_found, permission_denied, resource_data)
from dms.models import User
from dms.web import Context

routes = RouteTable()

TEXT_ATTRIBUTES = {"first_name": 150, "last_name": 150, "email": 254}
FLAG_ATTRIBUTES = ("is_active", "is_staff", "is_superuser")
ADMIN_FLAGS = ("is_staff", "is_superuser")
ATTRIBUTES_POINTER = "/data/attributes/"


def user_resource(user: User, folders: dict[str, str]) -> dict:
    return {
        "type": "users",
        "id": user.id,
        "attributes": {
            "username": user.username,
            "first_name": user.first_name,
            "last_name": user.last_name,
            "email": user.email,
            "is_active": user.is_active,
            "is_staff": user.is_staff,
            "is_superuser": user.is_superuser,
            "date_joined": format_datetime(user.date_joined),
        },
        "relationships": {
            "inbox_folder": {"data": {"type": "folders", "id": folders["inbox"]}},
            "home_folder": {"data": {"type": "folders", "id": folders["home"]}},
        },
    }


def single(user: User) -> dict:
    return {"data": user_resource(user, accounts.special_folder_ids([user.id])[user.id])}


def require_admin(ctx: Context) -> None:
    if not ctx.user.is_admin:
        raise permission_denied()


def visible_user(ctx: Context, user_id: str) -> User:
    """The user at `user_id` if the caller may see it: themselves, or anyone for an admin."""
    if user_id != ctx.user.id:
        require_admin(ctx)
    user = User.get_or_none(User.id == user_id)
    if user is None:
        raise not_found()
    return user


def require_may_manage(ctx: Context, target: User) -> None:
    """Changing someone else's account: admins only, and a superuser's account: superusers only."""
    if target.id != ctx.user.id:
        require_admin(ctx)
        if target.is_superuser and not ctx.user.is_superuser:
            raise permission_denied("Only a superuser may change or delete a superuser.")


def clean_attributes(attributes: dict, partial: bool) -> dict:
    """Validated user attributes from a request; read-only ones (date_joined, password) ignored."""
    values = {}
    if "username" in attributes or not partial:
        try:
            values["username"] = accounts.check_username(attributes.get("username"))
        except AccountError as error:
            code = "required" if attributes.get("username") is None else "invalid"
            raise invalid(str(error), ATTRIBUTES_POINTER + "username", code) from None
    for name, max_length in TEXT_ATTRIBUTES.items():
        if name in attributes:
            value = attributes[name] if attributes[name] is not None else ""
            if not isinstance(value, str) or len(value) > max_length:
                raise invalid(f"{name} must be text of at most {max_length} characters.",
                              ATTRIBUTES_POINTER + name)
            if name == "email" and value and not _looks_like_email(value):
                raise invalid("email must be an e-mail address such as name@example.org.",
                              ATTRIBUTES_POINTER + name)
            values[name] = value.strip()
    for name in FLAG_ATTRIBUTES:
        if name in attributes:
            if not isinstance(attributes[name], bool):
                raise invalid(f"{name} must be true or false.", ATTRIBUTES_POINTER + name)
            values[name] = attributes[name]
    return values


def _looks_like_email(value: str) -> bool:
    local, at, domain = value.rpartition("@")
    return bool(at and local and domain and " " not in value and "." in domain.strip("."))


def check_flag_changes(ctx: Context, target: User | None, values: dict) -> None:
    """Who may change which flag; `target` None means a new user (all flags start false/active)."""
    current = {name: getattr(target, name) if target else name == "is_active"
               for name in FLAG_ATTRIBUTES}
    changed = {name for name in FLAG_ATTRIBUTES if name in values and values[name] != current[name]}
    if changed & set(ADMIN_FLAGS) and not ctx.user.is_superuser:
        raise permission_denied("Only a superuser may grant or remove admin rights.")
    if "is_active" in changed:
        if target is not None and target.id == ctx.user.id:
            raise invalid("You cannot deactivate your own account.",
                          ATTRIBUTES_POINTER + "is_active")
        require_admin(ctx)
    if target is not None and target.is_superuser and target.is_active:
        stays = values.get("is_superuser", True) and values.get("is_active", True)
        if not stays and accounts.active_superusers(except_id=target.id) == 0:
            raise invalid("The last active superuser must stay an active superuser.",
                          ATTRIBUTES_POINTER + ("is_superuser" if "is_superuser" in changed
                                                else "is_active"))


@routes.get("/users/")
def list_users(ctx: Context):
    require_admin(ctx)
    def serialize(users: list[User]) -> list[dict]:
        folders = accounts.special_folder_ids([user.id for user in users])
        return [user_resource(user, folders[user.id]) for user in users]

    return ctx.paginate(User.select().order_by(User.username), serialize)


@routes.post("/users/")
def create_user(ctx: Context):
    require_admin(ctx)
    data = resource_data(ctx.json(accept=(VND,)), "users")
    values = clean_attributes(attributes_of(data), partial=False)
    check_flag_changes(ctx, None, values)
    try:
        user = accounts.create_user(**values)
    except AccountError as error:
        raise invalid(str(error), ATTRIBUTES_POINTER + (error.field or "username")) from None
    return single(user)  # 200, as the spec says (not 201)


@routes.get("/users/me/")
def me(ctx: Context):
    return single(ctx.user)


@routes.get("/users/{user_id}/")
def get_user(ctx: Context, user_id: str):
    return single(visible_user(ctx, user_id))


@routes.patch("/users/{user_id}/")
def update_user(ctx: Context, user_id: str):
    target = visible_user(ctx, user_id)
    body = ctx.json(accept=(VND,))
    # The spec's example wraps the resource in `data`; its reference shows the bare resource.
    data = resource_data(body if "data" in body else {"data": body}, "users")
    if "id" in data and data["id"] != target.id:
        raise ApiError(409, "conflict", "The id in the body does not match the id in the URL.",
                       "/data/id")
    require_may_manage(ctx, target)
    values = clean_attributes(attributes_of(data), partial=True)
    check_relationships(data, target)
    with database.atomic("IMMEDIATE"):
        check_flag_changes(ctx, target, values)
        if "username" in values and accounts.username_taken(values["username"], target.id):
            raise invalid("A user with that username already exists.",
                          ATTRIBUTES_POINTER + "username")
        if values:
            User.update(**values).where(User.id == target.id).execute()
    return single(User.get_by_id(target.id))


def check_relationships(data: dict, target: User) -> None:
    """A PATCH may send the folder relationships back as they are, but never change them."""
    relationships = data.get("relationships") or {}
    if not isinstance(relationships, dict):
        raise invalid("`relationships` must be an object.", "/data/relationships")
    folders = accounts.special_folder_ids([target.id])[target.id]
    for name, special in (("home_folder", "home"), ("inbox_folder", "inbox")):
        if name not in relationships:
            continue
        given = relationships[name]
        given_id = (given.get("data") or {}).get("id") if isinstance(given, dict) else None
        if given_id != folders[special]:
            raise invalid(f"{name} cannot be changed.", f"/data/relationships/{name}")


@routes.delete("/users/{user_id}/")
def delete_user(ctx: Context, user_id: str):
    require_admin(ctx)
    target = visible_user(ctx, user_id)
    if target.id == ctx.user.id:
        raise invalid("You cannot delete your own account.")
    require_may_manage(ctx, target)
    try:
        version_ids = accounts.delete_user(target)
    except AccountError as error:
        raise invalid(str(error)) from None
    ctx.state.store.remove(version_ids)
    return no_content()


@routes.post("/users/{user_id}/change-password/", media_type=JSON)
def change_password(ctx: Context, user_id: str):
    target = visible_user(ctx, user_id)
    require_may_manage(ctx, target)
    body = ctx.json()
    try:
        accounts.set_password(target, body.get("password"))
    except AccountError as error:
        code = "required" if body.get("password") is None else "invalid"
        raise invalid(str(error), "/password", code) from None
    return {"status": "password set"}
