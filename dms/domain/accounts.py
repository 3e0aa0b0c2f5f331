"""User accounts (api.md, "Permissions", "Users"): creation with their two special folders, changes,
deletion, passwords, the first superuser, and who may do which of these.

Admins (staff or superuser) manage accounts; only a superuser grants or removes admin rights or
touches another superuser's account; nobody deletes or deactivates themselves, and the last
active superuser always stays one. Usernames are unique regardless of case (`username_key`).
Every check-then-write (unique username, last superuser) runs inside one write transaction.
"""

from __future__ import annotations

import logging
import re
import secrets
import unicodedata
from typing import TYPE_CHECKING, Any

from peewee import ModelSelect

from dms.db import USERS, database, with_space_reserve, write_transaction
from dms.db.models import Node, User, new_id, utcnow
from dms.domain import trash
from dms.domain.access.sight import shared_folder_id
from dms.domain.credentials import (
    ADDRESS,
    ADDRESS_AND_USER,
    DEFAULT_MAX_TOKENS,
    LOGIN_FAILED,
    LOGIN_TOKEN_NAME,
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    USER,
    LoginThrottle,
    address_key,
    hash_password,
    issue_token,
    outdated,
    verify_password,
)
from dms.domain.specialfolders import special_folder_ids
from dms.errors import Forbidden, Invalid, NotFound, Throttled
from dms.files.outbound import Policy
from dms.files.storage import Blob, version_blobs
from dms.text import required_text, username_key

if TYPE_CHECKING:
    from dms.config import Config
    from dms.domain.services import Services

log = logging.getLogger("dms.accounts")

USERNAME_PATTERN = re.compile(r"[\w.@+-]+\Z")
MAX_USERNAME_LENGTH = 150
TEXT_ATTRIBUTES = {"first_name": 150, "last_name": 150, "email": 254}
FLAG_ATTRIBUTES = ("is_active", "is_staff", "is_superuser")
ADMIN_FLAGS = ("is_staff", "is_superuser")
USERNAME_TAKEN = "A user with that username already exists."


def outbound_policy(config: Config, user: User) -> Policy:
    """Where dms may connect for this user (webhooks, mail accounts; dms.files.outbound): a
    superuser anywhere, anyone else to public addresses and what DMS_OUTBOUND_ALLOW lists."""
    return Policy(config.outbound_allowed).for_user(bool(user.is_superuser))


def check_username(username: object, field: str = "username") -> str:
    username = required_text(username, field, "username", MAX_USERNAME_LENGTH, strip=False)
    if not USERNAME_PATTERN.match(username):
        raise Invalid("A username may contain only letters, digits and @ . + - _ characters.",
                      field)
    if len(scripts_of(username)) > 1:
        raise Invalid("A username may not mix letters of different scripts (such as Latin and "
                      "Cyrillic, whose letters can look alike).", field)
    return username


# Scripts that one name mixes by nature count as one (Japanese: kanji with kana; Korean: hangul
# with hanja); unicodedata names each letter after its script ("CYRILLIC SMALL LETTER A").
SCRIPT_FAMILIES = {"CJK": "CJK", "HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK",
                   "FULLWIDTH": "LATIN", "HALFWIDTH": "CJK"}


def scripts_of(text: str) -> set[str]:
    """The scripts of the letters in `text` (digits and punctuation belong to every script): a
    username of more than one can impersonate another, `аdmin` with a Cyrillic а."""
    scripts = set()
    for character in text:
        if unicodedata.category(character).startswith("L"):
            word = unicodedata.name(character, "UNKNOWN").split()[0]
            scripts.add(SCRIPT_FAMILIES.get(word, word))
    return scripts


def check_password(password: object, field: str = "password") -> str:
    if password is None:
        raise Invalid("A password is required.", field, code="required")
    if not isinstance(password, str) or not password:
        raise Invalid("A password is required.", field)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise Invalid(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.", field)
    if len(password) > MAX_PASSWORD_LENGTH:
        raise Invalid(f"A password has at most {MAX_PASSWORD_LENGTH} characters.", field)
    return password


def login(username: object, password: object, address: str, throttle: LoginThrottle,
          max_tokens: int = DEFAULT_MAX_TOKENS, token_name: str = LOGIN_TOKEN_NAME) -> str:
    """POST /auth/login/: a new token's secret for correct credentials of an active user
    (`authenticate`), named `token_name`."""
    user = authenticate(username, password, address, throttle)
    _, secret = with_space_reserve(lambda: issue_token(
        user, expiry_hours=None, name=token_name, max_tokens=max_tokens, make_room=True))
    return secret


def authenticate(username: object, password: object, address: str,
                 throttle: LoginThrottle) -> User:
    """The active user these credentials are of (a login, HTTP Basic). Failures count per
    address and username together, per address and per username (see LoginThrottle), the address
    by its address_key (IPv6 by /64). From an address the user logged in from before, the
    username's count does not refuse the login: a guesser on many addresses cannot lock the owner
    out there, and is still stopped everywhere else."""
    username = required_text(username, "username", "username", strip=False)
    password = required_text(password, "password", "password", strip=False)
    user_key, where = username_key(username), address_key(address)
    keys = [(ADDRESS_AND_USER, where, user_key), (ADDRESS, where), (USER, user_key)]
    user = User.get_or_none(User.username == username)  # exact, as in Papermerge
    known = user is not None and throttle.is_known(user.id, where)
    wait = throttle.retry_after(keys[:2] if known else keys)
    if wait is not None:
        raise Throttled(f"Too many failed logins. Try again in {wait} seconds.", wait)
    password_ok = verify_password(password, user.password_hash if user else None)
    if user is None or not password_ok or not user.is_active:
        throttle.record_failure(keys)
        raise Invalid(LOGIN_FAILED, code="authentication_failed")
    # Only this address's failures for this user are cleared: the username's count is others'
    # failures (clearing it at each of the owner's logins would give a guesser a new allowance),
    # the address's count other usernames'.
    throttle.reset([keys[0]])
    throttle.remember(user.id, where)
    if outdated(user.password_hash):  # an imported Django hash: from now on dms's own
        _rehash(user, password)
    return user


def _rehash(user: User, password: str) -> None:
    """The user's password hashed again with dms's scheme, unless it changed meanwhile."""
    old, new = user.password_hash, hash_password(password)
    with write_transaction(USERS):
        User.update(password_hash=new).where(User.id == user.id,
                                             User.password_hash == old).execute()
    user.password_hash = new


def check_profile(attributes: dict[str, Any], partial: bool) -> dict[str, Any]:
    """Validated user attributes from a request; read-only ones (date_joined, password) ignored."""
    values = {}
    if "username" in attributes or not partial:
        values["username"] = check_username(attributes.get("username"))
    for name, max_length in TEXT_ATTRIBUTES.items():
        if name in attributes:
            value = attributes[name] if attributes[name] is not None else ""
            if not isinstance(value, str) or len(value) > max_length:
                raise Invalid(f"{name} must be text of at most {max_length} characters.", name)
            if name == "email" and value and not _looks_like_email(value):
                raise Invalid("email must be an e-mail address such as name@example.org.", name)
            values[name] = value.strip()
    for name in FLAG_ATTRIBUTES:
        if name in attributes:
            if not isinstance(attributes[name], bool):
                raise Invalid(f"{name} must be true or false.", name)
            values[name] = attributes[name]
    return values


def _looks_like_email(value: str) -> bool:
    local, at, domain = value.rpartition("@")
    return bool(at and local and domain and " " not in value and "." in domain.strip("."))


def username_taken(username: str, except_id: str | None = None) -> bool:
    query = User.select().where(User.username_key == username_key(username))
    if except_id is not None:
        query = query.where(User.id != except_id)
    return query.exists()


# -- who may do what ---------------------------------------------------------------------------

def require_admin(actor: User) -> None:
    if not actor.is_admin:
        raise Forbidden()


def visible_user(actor: User, user_id: str) -> User:
    """The user at `user_id` if `actor` may see it: themselves, or anyone for an admin."""
    if user_id != actor.id:
        require_admin(actor)
    user = User.get_or_none(User.id == user_id)
    if user is None:
        raise NotFound()
    return user


def require_may_manage(actor: User, target: User) -> None:
    """Changing someone else's account: admins only, and a superuser's account: superusers only."""
    if target.id != actor.id:
        require_admin(actor)
        if target.is_superuser and not actor.is_superuser:
            raise Forbidden("Only a superuser may change or delete a superuser.")


def check_flag_changes(actor: User, target: User | None, values: dict[str, Any]) -> None:
    """Who may change which flag; `target` None means a new user (all flags start false/active)."""
    current = {name: getattr(target, name) if target else name == "is_active"
               for name in FLAG_ATTRIBUTES}
    changed = {name for name in FLAG_ATTRIBUTES if name in values and values[name] != current[name]}
    if changed & set(ADMIN_FLAGS) and not actor.is_superuser:
        raise Forbidden("Only a superuser may grant or remove admin rights.")
    if "is_active" in changed:
        if target is not None and target.id == actor.id:
            raise Invalid("You cannot deactivate your own account.", "is_active")
        require_admin(actor)
    if target is not None and target.is_superuser and target.is_active:
        stays = values.get("is_superuser", True) and values.get("is_active", True)
        if not stays and active_superusers(except_id=target.id) == 0:
            raise Invalid("The last active superuser must stay an active superuser.",
                          "is_superuser" if "is_superuser" in changed else "is_active")


# -- changes ----------------------------------------------------------------------------------

def create_user(username: str, password: str | None = None, **attributes: Any) -> User:
    """Create a user and their .home and .inbox folders in one transaction (spec: "created
    together")."""
    check_username(username)
    if password is not None:
        check_password(password)
    password_hash = hash_password(password) if password is not None else None  # outside the lock
    with write_transaction(USERS):
        if username_taken(username):
            raise Invalid(USERNAME_TAKEN, "username")
        user_id = new_id()
        User.insert(id=user_id, username=username, username_key=username_key(username),
                    password_hash=password_hash, date_joined=utcnow(), **attributes).execute()
        now = utcnow()
        for special, title in Node.SPECIAL_TITLES.items():
            Node.insert(id=new_id(), owner=user_id, parent=None, kind=Node.FOLDER, special=special,
                        title=title, title_sort=title, created_at=now, updated_at=now).execute()
    return User.get_by_id(user_id)


def create_user_by(actor: User, attributes: dict[str, Any], password: object = None) -> User:
    """POST /users/: an admin creates an account (without a password, none until
    change-password; the Paperless-ngx dialect gives one)."""
    require_admin(actor)
    values = check_profile(attributes, partial=False)
    check_flag_changes(actor, None, values)
    return create_user(**values, password=None if password is None else
                       check_password(password))


def update_user_by(actor: User, user_id: str, attributes: dict[str, Any],
                   relationships: object) -> User:
    """PATCH /users/{id}/: profile fields, and flags as the rules above allow."""
    target = visible_user(actor, user_id)
    require_may_manage(actor, target)
    values = check_profile(attributes, partial=True)
    check_relationships(relationships, target)
    with write_transaction(USERS):
        target = visible_user(actor, user_id)  # as it is now, inside the transaction
        check_flag_changes(actor, target, values)
        if "username" in values:
            if username_taken(values["username"], target.id):
                raise Invalid(USERNAME_TAKEN, "username")
            values["username_key"] = username_key(values["username"])
        if values:
            User.update(**values).where(User.id == target.id).execute()
    return User.get_by_id(target.id)


def check_relationships(relationships: object, target: User) -> None:
    """A PATCH may send the folder relationships back as they are, but never change them."""
    relationships = relationships or {}
    if not isinstance(relationships, dict):
        raise Invalid("`relationships` must be an object.", "/data/relationships")
    folders = {**special_folder_ids([target.id])[target.id], "shared": shared_folder_id(target.id)}
    for name, special in (("home_folder", "home"), ("inbox_folder", "inbox"),
                          ("shared_folder", "shared")):
        if name not in relationships:
            continue
        given = relationships[name]
        given_id = (given.get("data") or {}).get("id") if isinstance(given, dict) else None
        if given_id != folders[special]:
            raise Invalid(f"{name} cannot be changed.", f"/data/relationships/{name}")


def set_password(user: User, password: object) -> None:
    password = check_password(password)
    password_hash = hash_password(password)  # slow on purpose: outside the write lock
    with write_transaction():
        User.update(password_hash=password_hash).where(User.id == user.id).execute()


def change_password_by(actor: User, user_id: str, password: object) -> None:
    target = visible_user(actor, user_id)
    require_may_manage(actor, target)
    set_password(target, password)


def delete_user_by(services: Services, actor: User, user_id: str) -> None:
    """DELETE /users/{id}/: the account with its tokens, nodes and files."""
    require_admin(actor)
    target = visible_user(actor, user_id)
    if target.id == actor.id:
        raise Invalid("You cannot delete your own account.")
    require_may_manage(actor, target)
    trash.remove_files(services, with_space_reserve(lambda: delete_user(target)))


def delete_user(user: User) -> list[Blob]:
    """Delete a user with their tokens, nodes and versions (foreign keys cascade), in one
    transaction; returns the files of the versions, which the caller removes after the commit.

    The check for the last active superuser runs inside the same write transaction, so two
    superusers deleting each other at once cannot both succeed."""
    with write_transaction(USERS):
        current = User.get_or_none(User.id == user.id)
        if current is None:
            return []
        if current.is_superuser and current.is_active and active_superusers(current.id) == 0:
            raise Invalid("The last active superuser cannot be deleted.")
        files = [blob for row in database.execute_sql(
            "SELECT v.id, v.sha256, v.searchable_sha256 FROM document_version AS v "
            "JOIN node AS n ON v.document_id = n.id WHERE n.owner_id = ?", (user.id,))
            for blob in version_blobs(*row)]
        User.delete().where(User.id == user.id).execute()
    return files


def set_active(username: str, active: bool) -> User:
    """`dms activate` / `dms deactivate`, by the operator of the machine: any account but the last
    active superuser. An inactive user cannot log in and their tokens are refused (not revoked:
    activating the account again brings them back)."""
    with write_transaction(USERS):
        user = User.get_or_none(User.username == username)
        if user is None:
            raise NotFound(f"There is no user {username!r}.")
        if not active and user.is_superuser and user.is_active \
                and active_superusers(except_id=user.id) == 0:
            raise Invalid("The last active superuser must stay an active superuser.",
                          "is_active")
        User.update(is_active=active).where(User.id == user.id).execute()
    return User.get_by_id(user.id)


def active_superusers(except_id: str | None = None) -> int:
    query = User.select().where(User.is_superuser == True, User.is_active == True)  # noqa: E712
    if except_id is not None:
        query = query.where(User.id != except_id)
    return query.count()


def all_users() -> ModelSelect[User]:
    return User.select().order_by(User.username)


def visible_users(actor: User) -> ModelSelect[User]:
    """The users `actor` may see, by username: everyone for an admin, else only themselves."""
    return all_users() if actor.is_admin else all_users().where(User.id == actor.id)


def ensure_first_superuser(username: str, password: str | None) -> str | None:
    """On a data dir without users, create the first superuser.

    Returns the generated password when none was configured (the caller prints it once), else None.
    Does nothing once any user exists, so a configured password never overrides a changed one."""
    with write_transaction(USERS):
        if User.select().exists():
            return None
        generated = None
        if password is None:
            generated = password = secrets.token_urlsafe(18)
        create_user(username, password, is_superuser=True, is_staff=True)
    log.info("created the first superuser %r", username)
    return generated
