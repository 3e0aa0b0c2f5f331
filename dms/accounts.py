"""User accounts: creation with their two special folders, deletion, passwords, the first superuser."""

from __future__ import annotations

import logging
import re
import secrets

from dms.auth import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hash_password
from dms.db import database
from dms.models import Node, User, utcnow

log = logging.getLogger("dms.accounts")

USERNAME_PATTERN = re.compile(r"[\w.@+-]+\Z")
MAX_USERNAME_LENGTH = 150


class AccountError(ValueError):
    """A rule about accounts was broken; `field` names the attribute at fault, if one is."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def check_username(username: object) -> str:
    if not isinstance(username, str) or not username.strip():
        raise AccountError("A username is required.", "username")
    if len(username) > MAX_USERNAME_LENGTH:
        raise AccountError(f"A username has at most {MAX_USERNAME_LENGTH} characters.", "username")
    if not USERNAME_PATTERN.match(username):
        raise AccountError("A username may contain only letters, digits and @ . + - _ characters.",
                           "username")
    return username


def check_password(password: object) -> str:
    if not isinstance(password, str) or not password:
        raise AccountError("A password is required.", "password")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.", "password")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise AccountError(f"A password has at most {MAX_PASSWORD_LENGTH} characters.", "password")
    return password


def username_taken(username: str, except_id: str | None = None) -> bool:
    query = User.select().where(User.username == username)
    if except_id is not None:
        query = query.where(User.id != except_id)
    return query.exists()


def create_user(username: str, password: str | None = None, **attributes) -> User:
    """Create a user and their .home and .inbox folders in one transaction (spec: "created together")."""
    check_username(username)
    if password is not None:
        check_password(password)
    with database.atomic("IMMEDIATE"):
        if username_taken(username):
            raise AccountError("A user with that username already exists.", "username")
        user = User.create(username=username,
                           password_hash=hash_password(password) if password is not None else None,
                           **attributes)
        now = utcnow()
        for special, title in Node.SPECIAL_TITLES.items():
            Node.create(owner=user, parent=None, kind=Node.FOLDER, special=special, title=title,
                        created_at=now, updated_at=now)
    return user


def set_password(user: User, password: str) -> None:
    check_password(password)
    User.update(password_hash=hash_password(password)).where(User.id == user.id).execute()
    user.password_hash = None  # the caller's copy is stale; nothing should read it


def special_folder_ids(user_ids: list[str]) -> dict[str, dict[str, str]]:
    """{user id: {"home": folder id, "inbox": folder id}} for several users in one query."""
    result: dict[str, dict[str, str]] = {uid: {} for uid in user_ids}
    if not user_ids:
        return result
    # Raw SQL: GET /users/me/ runs this on every call, and building it with peewee costs more.
    rows = database.execute_sql(
        f"SELECT owner_id, special, id FROM node WHERE owner_id IN ({','.join('?' * len(user_ids))}) "
        "AND special IS NOT NULL", user_ids)
    for owner_id, special, folder_id in rows:
        result[owner_id][special] = folder_id
    return result


def active_superusers(except_id: str | None = None) -> int:
    query = User.select().where(User.is_superuser == True, User.is_active == True)  # noqa: E712
    if except_id is not None:
        query = query.where(User.id != except_id)
    return query.count()


def delete_user(user: User) -> list[str]:
    """Delete a user with their tokens, nodes and versions (foreign keys cascade), in one
    transaction; returns the version ids whose files the caller removes after the commit.

    The check for the last active superuser runs inside the same write transaction, so two
    superusers deleting each other at once cannot both succeed."""
    with database.atomic("IMMEDIATE"):
        current = User.get_or_none(User.id == user.id)
        if current is None:
            return []
        if current.is_superuser and current.is_active and active_superusers(current.id) == 0:
            raise AccountError("The last active superuser cannot be deleted.")
        version_ids = [row[0] for row in database.execute_sql(
            "SELECT v.id FROM document_version AS v JOIN node AS n ON v.document_id = n.id "
            "WHERE n.owner_id = ?", (user.id,))]
        User.delete().where(User.id == user.id).execute()
    return version_ids


def ensure_first_superuser(username: str, password: str | None) -> str | None:
    """On a data dir without users, create the first superuser.

    Returns the generated password when none was configured (the caller prints it once), else None.
    Does nothing once any user exists, so a configured password never overrides a changed one."""
    with database.atomic("IMMEDIATE"):
        if User.select().exists():
            return None
        generated = None
        if password is None:
            generated = password = secrets.token_urlsafe(18)
        create_user(username, password, is_superuser=True, is_staff=True)
    log.info("created the first superuser %r", username)
    return generated
