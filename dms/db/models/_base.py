"""What every model shares: ids, UTC times stored as text, raw rows read into models, the
OCR states, the base model bound to the database."""

from __future__ import annotations

import datetime as dt
import functools
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from peewee import CharField, Field, ForeignKeyField, Model, TextField

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


def columns_of(model: type[Model]) -> tuple[str, ...]:
    """The model's columns in table order, for raw SQL that `from_row` turns into models."""
    return tuple(field.column_name for field in model._meta.sorted_fields)


M = TypeVar("M", bound=Model)


def from_row(model: type[M], columns: Sequence[str], values: Iterable[Any]) -> M:
    """A model instance of a row read with raw SQL, each value turned as peewee would. On the
    paths every request takes: Model.raw() resolves its columns and builds its query on every call,
    which costs more than the query; and a text column's value is taken as it comes (see
    _converters)."""
    instance = model(__no_default__=True)
    instance.__data__ = {name: value if convert is None or value is None else convert(value)
                         for (name, convert), value in zip(
                             _converters(model, tuple(columns)), values, strict=True)}
    return instance


@functools.cache
def _converters(model: type[Model], columns: tuple[str, ...]
                ) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """(field name, what turns the column's value into the field's) for each column; None for a
    text column (or a key to one), whose value both engines already give as text: peewee's turn
    would only check that (a token's and its user's 21 columns were a sixth of GET /users/me/)."""
    fields = model._meta.columns
    return tuple((fields[name].name, None if _is_text(fields[name]) else fields[name].python_value)
                 for name in columns)


def _is_text(field: Field) -> bool:
    if isinstance(field, ForeignKeyField):
        return _is_text(field.rel_field)
    return type(field) in (TextField, CharField)


def insert_row(model: type[Model], values: Mapping[str, Any]) -> None:
    """As `model.insert(**values).execute()` (values by field or column name, the defaults where
    none is given, each value turned by its field), without building the statement again: on
    the paths that write under the write lock, peewee's building of the statement took longer
    than SQLite took to run it, and every other writer waits for that lock (a folder's create:
    ~40 % of the time the lock was held, bench/RESULTS.md, issue 47)."""
    meta = model._meta
    row = {meta.combined[name]: value for name, value in values.items()}  # names or columns
    for field, default in meta.defaults.items():
        if field not in row:
            row[field] = default() if callable(default) else default
    database.execute_sql(_inserting(meta.table_name, tuple(f.column_name for f in row)),
                         [field.db_value(value) for field, value in row.items()])


def update_rows(model: type[Model], ids: list[str], values: Mapping[str, Any]) -> int:
    """As `model.update(**values).where(model.id.in_(ids)).execute()`, without building the
    statement again (see insert_row): how many rows it changed."""
    if not ids:
        return 0
    row = {model._meta.combined[name]: value for name, value in values.items()}
    statement = _updating(model._meta.table_name, tuple(f.column_name for f in row))
    cursor = database.execute_sql(statement + ",".join("?" * len(ids)) + ")",
                                  [*(field.db_value(value) for field, value in row.items()), *ids])
    return int(cursor.rowcount)


@functools.lru_cache(maxsize=128)
def _inserting(table: str, columns: tuple[str, ...]) -> str:
    names = ", ".join(f'"{column}"' for column in columns)
    return f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'


@functools.lru_cache(maxsize=128)
def _updating(table: str, columns: tuple[str, ...]) -> str:
    """The statement up to its list of ids: `... WHERE "id" IN (`."""
    assignments = ", ".join(f'"{column}" = ?' for column in columns)
    return f'UPDATE "{table}" SET {assignments} WHERE "id" IN ('


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
