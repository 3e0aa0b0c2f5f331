"""Sharing between users: groups of users and their members (migration 0023), grants of folders
and documents to users and groups (0024); from when each can show a user events (0026). Sharing
with people without an account: share links (0031)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import BigIntegerField, CompositeKey, ForeignKeyField, IntegerField, TextField

from dms.db.models._base import BaseModel, UTCDateTimeField, new_id, utcnow
from dms.db.models._papers import Node, User


class Group(BaseModel):
    """A named group of users, managed by superusers; the name unique by `name_key`."""

    id = TextField(primary_key=True, default=new_id)
    name = TextField()
    name_key = TextField()
    created_at = UTCDateTimeField(default=utcnow)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect (migration 0027)

    class Meta:
        table_name = "user_group"


class GroupMember(BaseModel):
    """One member of one group."""

    group = ForeignKeyField(Group, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")
    since = BigIntegerField(default=0)  # the newest event id of anyone when it began
    if TYPE_CHECKING:
        group_id = TextField()
        user_id = TextField()

    class Meta:
        table_name = "group_member"
        primary_key = CompositeKey("group", "user")


class NodeGrant(BaseModel):
    """A node shared with one user or one group, as a viewer or an editor; a folder's grant
    covers everything below it."""

    id = TextField(primary_key=True, default=new_id)
    node = ForeignKeyField(Node, on_delete="CASCADE")
    user = ForeignKeyField(User, null=True, on_delete="CASCADE")
    group = ForeignKeyField(Group, null=True, on_delete="CASCADE")
    role = TextField()
    granted_by = ForeignKeyField(User, null=True, on_delete="SET NULL", backref="+",
                                 column_name="granted_by")
    created_at = UTCDateTimeField(default=utcnow)
    since = BigIntegerField(default=0)  # its owner's newest event id just before it
    if TYPE_CHECKING:
        node_id = TextField()
        user_id = TextField()
        group_id = TextField()

    class Meta:
        table_name = "node_grant"


class ShareLink(BaseModel):
    """A document or folder handed to someone without an account (migration 0031,
    dms.domain.sharelinks): its public URL's slug is looked up by digest and kept sealed."""

    ORIGINAL, SEARCHABLE = "original", "searchable"

    id = TextField(primary_key=True, default=new_id)
    seq = BigIntegerField(null=True)  # its number in the Paperless-ngx dialect
    node = ForeignKeyField(Node, backref="+", on_delete="CASCADE")
    owner = ForeignKeyField(User, backref="+", on_delete="CASCADE")
    if TYPE_CHECKING:
        node_id = TextField()
        owner_id = TextField()
    slug_digest = TextField(unique=True)
    slug_sealed = TextField()
    password_hash = TextField(null=True)
    file_version = TextField()
    expires_at = UTCDateTimeField()
    max_downloads = IntegerField(null=True)
    downloads = IntegerField(default=0)
    created_at = UTCDateTimeField(default=utcnow)
    last_accessed_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "share_link"
