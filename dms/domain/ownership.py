"""Rows that belong to one user (tags, mail accounts, rules, their runs, webhooks): the caller's
row with that id, or NotFound — another user's row is as unknown as one that does not exist."""

from __future__ import annotations

from typing import TypeVar

from dms.db.models import BaseModel, User
from dms.errors import NotFound

Row = TypeVar("Row", bound=BaseModel)


def owned(model: type[Row], user: User, row_id: object) -> Row:
    row = model.get_or_none(model.id == row_id, model.owner == user.id)
    if row is None:
        raise NotFound()
    return row
