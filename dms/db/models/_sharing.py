"""Sharing between users (migration 0023): groups of users and their members."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import CompositeKey, ForeignKeyField, TextField

from dms.db.models._base import BaseModel, UTCDateTimeField, new_id, utcnow
from dms.db.models._papers import User


class Group(BaseModel):
    """A named group of users, managed by superusers; the name unique by `name_key`."""

    id = TextField(primary_key=True, default=new_id)
    name = TextField()
    name_key = TextField()
    created_at = UTCDateTimeField(default=utcnow)

    class Meta:
        table_name = "user_group"


class GroupMember(BaseModel):
    """One member of one group."""

    group = ForeignKeyField(Group, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")
    if TYPE_CHECKING:
        group_id = TextField()
        user_id = TextField()

    class Meta:
        table_name = "group_member"
        primary_key = CompositeKey("group", "user")
