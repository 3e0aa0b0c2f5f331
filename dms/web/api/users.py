"""Users (api.md, "Permissions", "Users"): parsing and serialising; the rules of who may do what
live in dms.domain.accounts."""

from __future__ import annotations

from dms.db.models import User
from dms.domain import accounts, specialfolders
from dms.domain.access.sight import shared_folder_id
from dms.web.endpoints import ATTRIBUTES, Context
from dms.web.jsonapi import (
    JSON,
    VND,
    ApiError,
    RouteTable,
    attributes_of,
    format_datetime,
    no_content,
    resource_data,
)
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, PAGE_QUERY, STRING, data_of, list_of, obj, ref

routes = RouteTable()


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
            "shared_folder": {"data": {"type": "folders", "id": shared_folder_id(user.id)}},
        },
    }


def single(user: User) -> dict:
    return {"data": user_resource(user, specialfolders.special_folder_ids([user.id])[user.id])}


@routes.get("/users/", Operation(
    "All users (admins)", list_of(ref("User")), query=PAGE_QUERY, errors=(403,)))
def list_users(ctx: Context):
    accounts.require_admin(ctx.user)

    def serialize(users: list[User]) -> list[dict]:
        folders = specialfolders.special_folder_ids([user.id for user in users])
        return [user_resource(user, folders[user.id]) for user in users]

    return ctx.paginate(accounts.all_users(), serialize)


@routes.post("/users/", Operation(
    "Create a user with .home and .inbox (admins)", data_of(ref("User")), request=ref("UserInput"),
    errors=(403, 409)))
def create_user(ctx: Context):
    accounts.require_admin(ctx.user)  # before reading the body: a non-admin learns nothing more
    _, attributes = ctx.resource("users")
    return single(accounts.create_user_by(ctx.user, attributes))  # 200, as the spec says (not 201)


@routes.get("/users/me/", Operation("The caller", data_of(ref("User"))))
def me(ctx: Context):
    return single(ctx.user)


@routes.get("/users/{user_id}/", Operation("One user", data_of(ref("User")), errors=(403,)))
def get_user(ctx: Context, user_id: str):
    return single(accounts.visible_user(ctx.user, user_id))


@routes.patch("/users/{user_id}/", Operation(
    "Change a user", data_of(ref("User")), request=ref("UserInput"), errors=(403, 409)))
def update_user(ctx: Context, user_id: str):
    accounts.visible_user(ctx.user, user_id)  # 403/404 before the body is looked at
    body = ctx.json(accept=(VND,))
    # The spec's example wraps the resource in `data`; its reference shows the bare resource.
    data = resource_data(body if "data" in body else {"data": body}, "users")
    attributes = attributes_of(data)
    ctx.field_base = ATTRIBUTES
    if "id" in data and data["id"] != user_id:
        raise ApiError(409, "conflict", "The id in the body does not match the id in the URL.",
                       "/data/id")
    return single(accounts.update_user_by(ctx.user, user_id, attributes,
                                          data.get("relationships")))


@routes.delete("/users/{user_id}/", Operation(
    "Delete a user with their papers (admins)", status=204, errors=(403,)))
def delete_user(ctx: Context, user_id: str):
    accounts.delete_user_by(ctx.services, ctx.user, user_id)
    return no_content()


@routes.post("/users/{user_id}/change-password/", Operation(
    "Set a user's password", obj({"status": STRING}),
    request=obj({"password": STRING}, ["password"]), accepts=JSON_OR_VND,
    errors=(403,)), media_type=JSON)
def change_password(ctx: Context, user_id: str):
    accounts.visible_user(ctx.user, user_id)
    body = ctx.json()
    accounts.change_password_by(ctx.user, user_id, body.get("password"))
    return {"status": "password set"}
