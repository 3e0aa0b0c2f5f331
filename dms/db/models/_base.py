"""What every model shares: ids, UTC times stored as text, raw rows read into models, the
OCR states, the base model bound to the database."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any, TypeVar

from peewee import Model, TextField

from dms.db import database

STORED_DATETIME = "%Y-%m-%d %H:%M:%S.%f"

# FOREIGN KEY IDS: peewee gives every ForeignKeyField `x` an accessor `x_id`, the key's value
# without loading the row (on the class, the column for queries). The type checker cannot see
# them, so each model declares its own under `if TYPE_CHECKING:`, as the field type of the key's
# column (every key is text); at run time the block does not run and peewee sees no new fields.


def utcnow() -> dt.datetime:
    """Now in UTC, naive: every datetime in the database is UTC."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def new_id() -> str:
    return str(uuid.uuid4())


def title_sort_key(title: str) -> str:
    """What listings sort titles by: casefolded (SQLite's NOCASE folds only ASCII)."""
    return title.casefold()


def columns_of(model: type[Model]) -> list[str]:
    """The model's columns in table order, for raw SQL that `from_row` turns into models."""
    return [field.column_name for field in model._meta.sorted_fields]


M = TypeVar("M", bound=Model)


def from_row(model: type[M], columns: list[str], values: Iterable[Any]) -> M:
    """A model instance of a row read with raw SQL, each value turned as peewee would. On the
    paths every request takes: Model.raw() resolves its columns and builds its query on every call,
    which costs more than the query."""
    instance = model(__no_default__=True)
    fields = model._meta.columns
    instance.__data__.update((fields[name].name, fields[name].python_value(value))
                             for name, value in zip(columns, values, strict=True))
    return instance


class UTCDateTimeField(TextField):
    """A naive UTC datetime stored as fixed-width text, so text order is time order."""

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        return value.strftime(STORED_DATETIME)

    def python_value(self, value: Any) -> dt.datetime | None:
        if value is None or isinstance(value, dt.datetime):
            return value
        return dt.datetime.fromisoformat(value)  # C speed; strptime dominated listing time


class OcrStatus:
    """A document's `ocr_status` (api.md, "OCR status"): the only four values, named once.

    received (waiting) -> started (a worker reads it) -> succeeded | failed; a new upload or a
    re-run starts over at received."""
    RECEIVED = "received"
    STARTED = "started"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ALL = (RECEIVED, STARTED, SUCCEEDED, FAILED)
    PENDING = (RECEIVED, STARTED)  # work left to do: reconcile() queues these


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False
