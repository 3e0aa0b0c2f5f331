"""Mail accounts (api.md, "Mail accounts"): each user's IMAP accounts whose attachments dms imports
(dms.intake.mail._check reads them), and what a document keeps of the message it came by. Another
user's account is, as everything of theirs, "not found".

The password is sealed with the data dir's key (dms.files.sealing) before it is stored and is never
returned. `security: none` (plain IMAP, the password readable on the wire) is accepted only for a
loopback host: a mail server on the same machine. The host is under the outbound rule
(dms.files.outbound, api.md, "Outbound connections"): for a user who is not a superuser, a host
written as an internal address (loopback included) is refused here unless DMS_OUTBOUND_ALLOW lists
it, and a name is checked on the addresses it resolves to at each check
(dms.intake.mail._client)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from peewee import ModelSelect

from dms.config import Config
from dms.db import database, owner_scope, write_transaction
from dms.db.models import MailAccount, User, new_id, utcnow
from dms.domain.accounts import outbound_policy
from dms.domain.ownership import owned
from dms.domain.tags import IDS_PER_QUERY
from dms.errors import Invalid
from dms.files import sealing
from dms.files.outbound import Policy, Refused
from dms.text import has_refused_characters

SECURITIES = ("ssl", "starttls", "none")
AFTER_IMPORT = ("mark_seen", "flag", "move")
DEFAULT_PORTS = {"ssl": 993, "starttls": 143, "none": 143}
MAX_ACCOUNTS_PER_USER = 20
MAX_TEXT_LENGTH = 255  # username, mailbox names
MAX_PASSWORD_LENGTH = 1000
HOST = re.compile(r"[A-Za-z0-9._:\[\]-]{1,253}\Z")  # names, IPv4 and IPv6 literals
WRITABLE = ("host", "port", "security", "username", "password", "mailbox", "after_import",
            "move_to", "folder_per_sender", "enabled")


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _text(attributes: dict[str, Any], field: str, limit: int = MAX_TEXT_LENGTH) -> str:
    value = attributes.get(field)
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{field} is required.", field,
                      code="required" if value is None else "invalid")
    value = value.strip()
    if len(value) > limit or has_refused_characters(value):
        raise Invalid(f"{field} must be at most {limit} characters without control characters.",
                      field)
    return value


def _boolean(attributes: dict[str, Any], field: str) -> bool:
    value = attributes[field]
    if not isinstance(value, bool):
        raise Invalid(f"{field} must be true or false.", field)
    return value


def check_attributes(attributes: dict[str, Any], current: MailAccount | None,
                     policy: Policy) -> dict[str, Any]:
    """The columns a POST (current None) or PATCH sets, checked alone and together, the host
    against the owner's outbound `policy`. Unknown and read-only attributes are ignored (api.md,
    "Resources and unknown input")."""
    values: dict[str, Any] = {}
    for field in ("host", "username", "mailbox"):
        if field in attributes or (current is None and field != "mailbox"):
            values[field] = _text(attributes, field)
    if "host" in values and not HOST.match(values["host"]):
        raise Invalid("host must be a host name or an IP address, such as imap.example.org.",
                      "host")
    if "host" in values:
        try:
            policy.check_literal(values["host"])
        except Refused as refused:
            raise Invalid(f"host: {refused}", "host") from None
    if "password" in attributes or current is None:
        password = attributes.get("password")
        if not isinstance(password, str) or not password:
            raise Invalid("password is required.", "password",
                          code="required" if password is None else "invalid")
        if len(password) > MAX_PASSWORD_LENGTH:
            raise Invalid(f"password has at most {MAX_PASSWORD_LENGTH} characters.", "password")
        values["password"] = password
    for field, allowed in (("security", SECURITIES), ("after_import", AFTER_IMPORT)):
        if field in attributes and attributes[field] not in allowed:
            raise Invalid(f"{field} must be one of {', '.join(allowed)}.", field)
        if field in attributes:
            values[field] = attributes[field]
    if "port" in attributes:
        port = attributes["port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise Invalid("port must be a number from 1 to 65535.", "port")
        values["port"] = port
    if "move_to" in attributes:
        values["move_to"] = (None if attributes["move_to"] in (None, "")
                             else _text(attributes, "move_to"))
    for field in ("folder_per_sender", "enabled"):
        if field in attributes:
            values[field] = _boolean(attributes, field)
    if current is None:
        values.setdefault("security", "ssl")
        values.setdefault("port", DEFAULT_PORTS[values["security"]])
        values.setdefault("mailbox", "INBOX")
        values.setdefault("after_import", "mark_seen")
    _check_together({**_columns(current), **values})
    return values


def _columns(account: MailAccount | None) -> dict[str, Any]:
    return {} if account is None else {field: getattr(account, field) for field in WRITABLE}


def _check_together(account: dict[str, Any]) -> None:
    if account["security"] == "none" and not is_loopback(account["host"]):
        raise Invalid("security none sends the password unencrypted: it is only allowed for a "
                      "mail server on this machine (localhost, 127.0.0.1, ::1). Use ssl or "
                      "starttls.", "security")
    if account["after_import"] == "move" and not account.get("move_to"):
        raise Invalid("move_to (the mailbox to move imported messages to) is required with "
                      "after_import move.", "move_to", code="required")
    if account["after_import"] == "move" and account["move_to"] == account["mailbox"]:
        raise Invalid("move_to must be another mailbox than mailbox.", "move_to")


def mail_of(document_ids: list[str]) -> dict[str, dict[str, Any]]:
    """{document id: attributes.mail} of those documents that came by mail."""
    result = {}
    for start in range(0, len(document_ids), IDS_PER_QUERY):
        chunk = document_ids[start:start + IDS_PER_QUERY]
        rows = database.execute_sql(
            "SELECT document_id, subject, sender, sent_at, message_id FROM document_mail "
            f"WHERE document_id IN ({','.join('?' * len(chunk))})", chunk)
        for document_id, subject, sender, sent_at, message_id in rows:
            result[document_id] = {"subject": subject, "from": sender, "date": sent_at,
                                   "message_id": message_id}
    return result


def accounts_of(user: User) -> ModelSelect[MailAccount]:
    return (MailAccount.select().where(MailAccount.owner == user.id)
            .order_by(MailAccount.created_at, MailAccount.id))


def owned_account(user: User, account_id: str) -> MailAccount:
    return owned(MailAccount, user, account_id)


def create_account(user: User, attributes: dict[str, Any], config: Config) -> MailAccount:
    values = check_attributes(attributes, None, outbound_policy(config, user))
    account_id = new_id()
    values["password"] = sealing.seal(sealing.load_key(config.data_dir), values["password"],
                                      account_id)
    with write_transaction(owner_scope(user.id)):
        if accounts_of(user).count() >= MAX_ACCOUNTS_PER_USER:
            raise Invalid(f"One user may have at most {MAX_ACCOUNTS_PER_USER} mail accounts.")
        MailAccount.insert(id=account_id, owner=user.id, created_at=utcnow(), **values).execute()
    return MailAccount.get_by_id(account_id)


def update_account(user: User, account_id: str, attributes: dict[str, Any],
                   config: Config) -> MailAccount:
    with write_transaction(owner_scope(user.id)):
        account = owned_account(user, account_id)
        values = check_attributes(attributes, account, outbound_policy(config, user))
        if "password" in values:
            values["password"] = sealing.seal(sealing.load_key(config.data_dir),
                                              values["password"], account.id)
        if {"host", "port", "security", "username", "password", "mailbox"} & set(values):
            values["last_error"] = None  # the next check says whether the change helped
        if values:
            MailAccount.update(**values).where(MailAccount.id == account.id).execute()
    return MailAccount.get_by_id(account_id)


def delete_account(user: User, account_id: str) -> None:
    """What it imported stays (documents, and what was taken from which message)."""
    with write_transaction(owner_scope(user.id)):
        account = owned_account(user, account_id)
        MailAccount.delete().where(MailAccount.id == account.id).execute()
