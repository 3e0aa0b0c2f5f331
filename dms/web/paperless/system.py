"""The dialect's routes about the caller and the server (api.md §17): the API's root, tokens, the
apps' settings and the caller's profile, statistics, the server's status and version, users,
groups and storage paths (which dms does not have: an empty list)."""

from __future__ import annotations

import shutil
from typing import Any

from dms import __version__
from dms.domain import accounts, numbers, statistics, uisettings
from dms.domain.access import groups as dms_groups
from dms.domain.credentials import MAX_TOKEN_NAME_LENGTH
from dms.domain.rows import Group, User
from dms.errors import Forbidden, Invalid, NotFound
from dms.web.paperless import translate
from dms.web.paperless.protocol import (
    FOLLOWED_RELEASE,
    NO_PERMISSION,
    Call,
    Reply,
    Routes,
    detail,
    invalid,
    not_found,
    number,
)

routes = Routes()

HIDDEN_PASSWORD = "*" * 16
# What Paperless-ngx's root lists (DRF's router): each name's address below /api/.
ROOT_NAMES = ("correspondents", "document_types", "documents", "tags", "saved_views",
              "storage_paths", "tasks", "users", "groups", "custom_fields", "share_links",
              "ui_settings", "profile", "statistics", "status", "search", "trash")


@routes.add("GET", "/api/")
def root(call: Call) -> dict[str, str]:
    base = call.absolute_url([]).rstrip("/")
    return {name: f"{base}/{name}/" for name in ROOT_NAMES}


# -- tokens -------------------------------------------------------------------------------------
@routes.add("POST", "/api/token/", auth=False)
def token(call: Call) -> dict[str, str]:
    """A new dms token for the username and password, named after the app (its User-Agent),
    listed and revocable with the caller's others; the same throttling as a login."""
    body = call.body()
    given = body.get("fields")
    fields: dict[str, Any] = given if isinstance(given, dict) else body
    for name in ("username", "password"):
        if fields.get(name) in (None, ""):
            raise invalid(name, "This field is required.")
    agent = (call.header("User-Agent") or "an app").strip()
    name = f"Paperless-ngx API: {agent}"[:MAX_TOKEN_NAME_LENGTH]
    try:
        secret = accounts.login(fields.get("username"), fields.get("password"), call.remote_addr,
                                call.services.throttle, call.config.max_tokens_per_user,
                                token_name=name)
    except Invalid as error:
        if error.code == "authentication_failed":
            raise invalid("non_field_errors",
                          "Unable to log in with provided credentials.") from None
        raise
    return {"token": secret}


# -- the caller -----------------------------------------------------------------------------------
def permissions(user: User) -> list[str]:
    """The Django permission codenames Paperless-ngx's apps look at: everything on one's own
    papers; users and groups for superusers."""
    kinds = ["document", "tag", "correspondent", "documenttype", "customfield", "note",
             "savedview", "sharelink", "paperlesstask", "uisettings"]
    if user.is_superuser:
        kinds += ["user", "group"]
    return [f"{action}_{kind}" for kind in kinds
            for action in ("view", "add", "change", "delete")] + ["view_storagepath"]


@routes.add("GET", "/api/ui_settings/")
def ui_settings(call: Call) -> dict[str, Any]:
    user = call.user
    numbered = _numbered_groups([user])
    shown = {"id": numbers.numbers_of("user", [user.id])[user.id], "username": user.username,
             "is_staff": user.is_staff, "is_superuser": user.is_superuser,
             "groups": numbered.get(user.id, [])}
    if user.first_name or user.last_name:
        shown.update(first_name=user.first_name, last_name=user.last_name)
    settings = {**uisettings.settings_of(user),
                "update_checking": {"backend_setting": False}, "trash_delay": 30,
                "version": FOLLOWED_RELEASE, "app_title": None, "app_logo": None,
                "auditlog_enabled": True, "email_enabled": False, "ai_enabled": False}
    return {"user": shown, "settings": settings, "permissions": permissions(user)}


@routes.add("POST", "/api/ui_settings/", fields={"settings": "settings"})
def save_ui_settings(call: Call) -> dict[str, bool]:
    body = call.body()
    if "settings" not in body:
        raise invalid("settings", "This field is required.")
    uisettings.save_settings(call.user, body["settings"])
    return {"success": True}


@routes.add("GET", "/api/profile/")
def profile(call: Call) -> dict[str, Any]:
    user = call.user
    secret = ""
    if call.token is not None:  # the token this request came with: the caller has it already
        secret = call.environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")[2].strip()
    return {"email": user.email, "password": HIDDEN_PASSWORD, "first_name": user.first_name,
            "last_name": user.last_name, "auth_token": secret, "social_accounts": [],
            "has_usable_password": user.password_hash is not None, "is_mfa_enabled": False}


@routes.add("GET", "/api/statistics/")
def library_statistics(call: Call) -> dict[str, Any]:
    library = statistics.library_of(call.user)
    # dms's inbox is the .inbox folder, unless the caller has inbox tags (Paperless-ngx's).
    inbox = numbers.numbers_of("tag", library.inbox_tags)
    inbox_numbers = [inbox[tag_id] for tag_id in library.inbox_tags]
    return {"documents_total": library.documents,
            "documents_inbox": library.with_inbox_tag if inbox_numbers else library.in_inbox,
            "inbox_tag": inbox_numbers[0] if inbox_numbers else None,
            "inbox_tags": inbox_numbers or None,
            "document_file_type_counts": [{"mime_type": mime, "mime_type_count": count}
                                          for mime, count in library.file_types],
            "character_count": library.characters, "tag_count": library.tags,
            "correspondent_count": library.correspondents,
            "document_type_count": library.document_types, "storage_path_count": 0,
            "current_asn": library.highest_asn or 0}


@routes.add("GET", "/api/remote_version/")
def remote_version(call: Call) -> dict[str, Any]:
    return {"version": FOLLOWED_RELEASE, "update_available": False}


@routes.add("GET", "/api/status/")
def status(call: Call) -> dict[str, Any]:
    """For superusers, as Paperless-ngx: what runs the server (dms's own words)."""
    if not call.user.is_superuser:
        raise detail(403, NO_PERMISSION)
    engine = "postgresql" if call.config.database_url else "sqlite"
    disk = shutil.disk_usage(call.config.files_path)
    return {"pngx_version": FOLLOWED_RELEASE, "dms_version": __version__,
            "server_os": "dms", "install_type": "dms",
            "storage": {"total": disk.total, "available": disk.free},
            "database": {"type": engine, "status": "OK", "error": None,
                         "migration_status": {"latest_migration": "", "unapplied_migrations": []}},
            "tasks": {"redis_status": "OK", "redis_error": None, "celery_status": "OK",
                      "celery_error": None, "index_status": "OK", "index_error": None,
                      "classifier_status": "OK", "classifier_error": None,
                      "sanity_check_status": "OK", "sanity_check_error": None}}


# -- users and groups -----------------------------------------------------------------------------
def _numbered_groups(users: list[User]) -> dict[str, list[int]]:
    """{user id: the numbers of their groups}."""
    memberships = dms_groups.memberships([user.id for user in users])
    group_numbers = numbers.numbers_of(
        "group", list({group for groups in memberships.values() for group in groups}))
    return {user_id: sorted(group_numbers[group] for group in groups)
            for user_id, groups in memberships.items()}


def _user_json(users: list[User], caller: User) -> list[dict[str, Any]]:
    user_numbers = numbers.numbers_of("user", [user.id for user in users])
    groups = _numbered_groups(users)
    return [{"id": user_numbers[user.id], "username": user.username, "email": user.email,
             "password": HIDDEN_PASSWORD, "first_name": user.first_name,
             "last_name": user.last_name,
             "date_joined": user.date_joined.isoformat().replace("+00:00", "Z"),
             "is_staff": user.is_staff, "is_active": user.is_active,
             "is_superuser": user.is_superuser, "groups": groups.get(user.id, []),
             "user_permissions": [], "inherited_permissions": [
                 f"documents.{name}" for name in permissions(user)],
             "is_mfa_enabled": False} for user in users]


@routes.add("GET", "/api/users/")
def list_users(call: Call) -> dict[str, Any]:
    return _paged(call, accounts.visible_users(call.user), "user",
                  lambda users: _user_json(users, call.user))


def _paged(call: Call, query: Any, kind: str, shape: Any) -> dict[str, Any]:
    """A page of the users or groups of `query`, in its order, as `shape` writes them; `all`:
    their numbers in the same order."""
    def numbered() -> list[int]:
        ids = [row.id for row in query]
        by_id = numbers.numbers_of(kind, ids)
        return [by_id[row_id] for row_id in ids]
    return call.page(query.count(),
                     lambda offset, limit: shape(list(query.offset(offset).limit(limit))),
                     numbered)


@routes.add("GET", "/api/users/{user_id}/")
def get_user(call: Call, user_id: str) -> dict[str, Any]:
    found = numbers.id_of("user", number(user_id))
    try:
        user = accounts.visible_user(call.user, found or "")
    except (Forbidden, NotFound):  # another user's, to one who is not an admin: unknown
        raise not_found("User") from None
    return _user_json([user], call.user)[0]


USER_FIELDS = ("username", "first_name", "last_name", "email", "is_active", "is_staff",
               "is_superuser")


@routes.add("POST", "/api/users/", fields={"password": "password", "groups": "groups"})
def create_user(call: Call) -> Reply:
    """An administrator adds an account, with its password and groups (Paperless-ngx's
    `user_permissions` are not dms's: its rights are the account's flags and what is shared)."""
    body = call.body()
    group_ids = _group_ids(body.get("groups", []))
    user = accounts.create_user_by(call.user, {name: body[name] for name in USER_FIELDS
                                               if name in body}, body.get("password"))
    if group_ids:
        dms_groups.join(call.user, user.id, group_ids)
    return Reply(_user_json([user], call.user)[0], 201)


def _group_ids(given: object) -> list[str]:
    if not isinstance(given, list) or len(given) > dms_groups.MAX_GROUPS:
        raise invalid("groups", "Expected a list of items but got type "
                                f'"{type(given).__name__}".')
    wanted = [translate.pk("groups", value) for value in given]
    ids = numbers.ids_of("group", wanted)
    for number_ in wanted:
        if number_ not in ids:
            raise invalid("groups", f'Invalid pk "{number_}" - object does not exist.')
    return [ids[number_] for number_ in wanted]


@routes.add("POST", "/api/groups/")
def create_group(call: Call) -> Reply:
    """A superuser adds a group (its Django `permissions` are not dms's: what a group may do is
    what is shared with it)."""
    group = dms_groups.create(call.user, {"name": call.body().get("name")})
    return Reply(_group_json([group])[0], 201)


def _group_json(groups: list[Group]) -> list[dict[str, Any]]:
    group_numbers = numbers.numbers_of("group", [group.id for group in groups])
    return [{"id": group_numbers[group.id], "name": group.name, "permissions": []}
            for group in groups]


@routes.add("GET", "/api/groups/")
def list_groups(call: Call) -> dict[str, Any]:
    return _paged(call, dms_groups.visible(call.user), "group", _group_json)


@routes.add("GET", "/api/groups/{group_id}/")
def get_group(call: Call, group_id: str) -> dict[str, Any]:
    found = numbers.id_of("group", number(group_id))
    try:
        group = dms_groups.visible_group(call.user, found)
    except NotFound:
        raise not_found("Group") from None
    return _group_json([group])[0]


# -- what dms does not have (storage paths) ------------------------------------------------------
# An empty list, so that the apps that read it when they start work; a new one is refused.
NOT_HERE = {"storage_paths": "dms files documents in folders; it has no storage paths."}


def _none_listed(call: Call) -> dict[str, Any]:
    call.user  # noqa: B018 — a login is needed, as for every list
    return call.page(0, lambda offset, limit: [], lambda: [])


def _refused(sentence: str) -> Any:
    def refuse(call: Call) -> dict[str, Any]:
        call.user  # noqa: B018
        raise detail(403, sentence)
    return refuse


for _path, _sentence in NOT_HERE.items():
    routes.add("GET", f"/api/{_path}/")(_none_listed)
    routes.add("POST", f"/api/{_path}/")(_refused(_sentence))
