"""Rows that belong to one user (tags, mail accounts, rules, their runs, webhooks): the caller's
row with that id, or NotFound — another user's row is as unknown as one that does not exist."""

from __future__ import annotations

from typing import Protocol, TypeVar, cast

from peewee import ColumnBase

from dms.db.models import BaseModel, User
from dms.errors import NotFound

Row = TypeVar("Row", bound=BaseModel)


class OwnedTable(Protocol):
    """What `owned` needs of a model besides BaseModel's: its `id` and `owner` columns."""
    id: ColumnBase
    owner: ColumnBase


def owned(model: type[Row], user: User, row_id: object) -> Row:
    table = cast(OwnedTable, model)
    row = model.get_or_none(table.id == row_id, table.owner == user.id)
    if row is None:
        raise NotFound()
    return row
