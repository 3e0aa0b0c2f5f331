"""Rows that belong to one user (tags, mail accounts, rules, their runs, webhooks): the caller's
row with that id, or NotFound — another user's row is as unknown as one that does not exist."""

from __future__ import annotations

import functools
from typing import Protocol, TypeVar, cast

from peewee import Field

from dms.db import database
from dms.db.models import BaseModel, User, columns_of, from_row
from dms.errors import NotFound

Row = TypeVar("Row", bound=BaseModel)


class OwnedTable(Protocol):
    """What `owned` needs of a model besides BaseModel's: its `id` and `owner` columns."""
    id: Field
    owner: Field


def owned(model: type[Row], user: User, row_id: object) -> Row:
    table = cast(OwnedTable, model)
    statement, columns = _statement(model)
    # The id as peewee would compare it (any value made text): a number or an object a client
    # sent is looked up, and found nowhere, as before.
    row = database.execute_sql(statement, (table.id.db_value(row_id), user.id)).fetchone()
    if row is None:
        raise NotFound()
    return from_row(model, columns, row)


@functools.cache
def _statement(model: type[BaseModel]) -> tuple[str, tuple[str, ...]]:
    """The model's SELECT of one owned row, built once: peewee's `get_or_none` built it again on
    every call (~0.35 ms for a rule's 21 columns: most of a dry run's 429, which a client may ask
    for hundreds of times a second)."""
    table = cast(OwnedTable, model)
    columns = columns_of(model)
    return (f"SELECT {', '.join(columns)} FROM \"{model._meta.table_name}\" "
            f"WHERE {table.id.column_name} = ? AND {table.owner.column_name} = ?", columns)
