"""Custom fields (api.md §16): each user's typed fields, and the one place that turns a value a
client sends into the columns of its type and back (Paperless-ngx's encodings).

A value is checked once, here, and stored in the column of its type (migration 0021), so a value
of the wrong type can never be stored and comparisons run in SQL. `data_type` is fixed once the
field exists. A select field's options carry ids (made here when a client sends none); taking an
option away clears the values that chose it. Monetary amounts are kept in cents with their
currency ('' for a bare amount, as Paperless-ngx keeps it): `"EUR12.3"` is answered `"EUR12.30"`,
a bare `"12.30"` takes the field's default currency if it has one.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import secrets
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from peewee import ModelSelect

from dms.db import database, owner_scope, write_transaction
from dms.db.models import CustomField, User, new_id, utcnow
from dms.domain.ownership import owned
from dms.domain.tagfilter import name_key
from dms.errors import Invalid
from dms.text import has_refused_characters, required_text

DATA_TYPES = ("string", "longtext", "url", "date", "boolean", "integer", "float", "monetary",
              "documentlink", "select")
TEXT_TYPES = ("string", "longtext", "url")
MAX_NAME_LENGTH = 128
MAX_FIELDS_PER_USER = 100
MAX_STRING = 128
MAX_LONGTEXT = 65_536
MAX_URL = 2048
MAX_OPTIONS = 200
MAX_OPTION_LABEL = 128
MAX_OPTION_ID = 64
MAX_LINKS = 100  # documents one documentlink value names
INT32 = (-(2 ** 31), 2 ** 31 - 1)
MAX_AMOUNT_DIGITS = 15  # whole digits of a monetary amount: its cents fit 64 bits with room
MONETARY = re.compile(r"([A-Z]{3})?(-?)(\d{1,15})(?:\.(\d{1,2}))?\Z")  # 15: MAX_AMOUNT_DIGITS
CURRENCY = re.compile(r"[A-Z]{3}\Z")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
INTEGER_TEXT = re.compile(r"-?\d{1,12}\Z")
DUPLICATE = "A custom field with this name already exists."


class FieldDef(NamedTuple):
    """A field as values need it: its id, name, type and extra data (parsed)."""
    id: str
    name: str
    data_type: str
    extra: dict[str, Any]

    @property
    def option_ids(self) -> list[str]:
        return [option["id"] for option in self.extra.get("select_options", [])]

    @property
    def default_currency(self) -> str | None:
        currency = self.extra.get("default_currency")
        return currency if isinstance(currency, str) and currency else None


def definition(row: CustomField) -> FieldDef:
    return FieldDef(row.id, row.name, row.data_type, json.loads(row.extra_data or "{}"))


# -- the fields ---------------------------------------------------------------------------------

def fields_of_user(user: User) -> ModelSelect[CustomField]:
    return CustomField.select().where(CustomField.owner == user.id) \
        .order_by(CustomField.name_key, CustomField.id)


def definitions(user: User) -> dict[str, FieldDef]:
    """The caller's fields by id."""
    return {row.id: definition(row) for row in fields_of_user(user)}


def owned_field(user: User, field_id: object) -> CustomField:
    return owned(CustomField, user, field_id)


def check_name(value: object) -> str:
    name = required_text(value, "name", "custom field name", MAX_NAME_LENGTH)
    if has_refused_characters(name):
        raise Invalid("A custom field name may not contain control characters or invisible "
                      "formatting characters.", "name")
    return name


def check_extra(data_type: str, value: object, current: dict[str, Any]) -> dict[str, Any]:
    """extra_data as stored: a select's options with ids, a monetary field's default currency;
    nothing else is kept."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise Invalid("extra_data must be an object.", "extra_data")
    extra: dict[str, Any] = {}
    if data_type == "monetary":
        currency = value.get("default_currency", current.get("default_currency"))
        if currency not in (None, "") and (not isinstance(currency, str)
                                           or not CURRENCY.match(currency)):
            raise Invalid("extra_data.default_currency must be a currency code of three capital "
                          "letters, such as EUR.", "extra_data/default_currency")
        extra["default_currency"] = currency or None
    if data_type == "select":
        options = value.get("select_options", current.get("select_options", []))
        extra["select_options"] = _check_options(options)
    return extra


def _check_options(options: object) -> list[dict[str, str]]:
    pointer = "extra_data/select_options"
    if not isinstance(options, list):
        raise Invalid("extra_data.select_options must be a list of {\"id\", \"label\"} objects.",
                      pointer)
    if len(options) > MAX_OPTIONS:
        raise Invalid(f"A select field has at most {MAX_OPTIONS} options.", pointer)
    checked: list[dict[str, str]] = []
    labels: set[str] = set()
    ids: set[str] = set()
    for index, option in enumerate(options):
        at = f"{pointer}/{index}"
        if isinstance(option, str):  # Paperless-ngx before 2.15 sent bare labels
            option = {"label": option}
        if not isinstance(option, dict):
            raise Invalid("Each select option is an object with a label.", at)
        label = required_text(option.get("label"), f"{at}/label", "select option label",
                              MAX_OPTION_LABEL)
        if has_refused_characters(label):
            raise Invalid("A select option label may not contain control characters.",
                          f"{at}/label")
        if name_key(label) in labels:
            raise Invalid(f"The select option label {label!r} is there twice.", f"{at}/label")
        option_id = option.get("id") or secrets.token_urlsafe(12)
        if not isinstance(option_id, str) or len(option_id) > MAX_OPTION_ID \
                or has_refused_characters(option_id) or option_id in ids:
            raise Invalid(f"A select option id is text of at most {MAX_OPTION_ID} characters, "
                          "different for each option.", f"{at}/id")
        labels.add(name_key(label))
        ids.add(option_id)
        checked.append({"id": option_id, "label": label})
    return checked


def create_field(user: User, attributes: dict[str, Any]) -> CustomField:
    name = check_name(attributes.get("name"))
    data_type = attributes.get("data_type")
    if data_type not in DATA_TYPES:
        raise Invalid(f"data_type must be one of {', '.join(DATA_TYPES)}.", "data_type",
                      code="required" if data_type is None else "invalid")
    extra = check_extra(data_type, attributes.get("extra_data"), {})
    with write_transaction(owner_scope(user.id)):
        if _name_taken(user, name_key(name)):
            raise Invalid(DUPLICATE, "name")
        if CustomField.select().where(CustomField.owner == user.id).count() \
                >= MAX_FIELDS_PER_USER:
            raise Invalid(f"One user may have at most {MAX_FIELDS_PER_USER} custom fields; "
                          "delete unused ones first.")
        field_id = new_id()
        CustomField.insert(id=field_id, owner=user.id, name=name, name_key=name_key(name),
                           data_type=data_type, extra_data=_json(extra),
                           created_at=utcnow()).execute()
    return CustomField.get_by_id(field_id)


def update_field(user: User, field_id: str, attributes: dict[str, Any]) -> CustomField:
    """A new name or extra data; the type stays (a change is refused: values would lose their
    meaning). Options taken away clear the values that chose them."""
    name = check_name(attributes["name"]) if "name" in attributes else None
    with write_transaction(owner_scope(user.id)):
        row = owned_field(user, field_id)
        if "data_type" in attributes and attributes["data_type"] != row.data_type:
            raise Invalid("A custom field's data_type cannot change; create a new field.",
                          "data_type")
        columns: dict[str, Any] = {}
        if name is not None:
            if _name_taken(user, name_key(name), row.id):
                raise Invalid(DUPLICATE, "name")
            columns.update(name=name, name_key=name_key(name))
        if "extra_data" in attributes:
            current = definition(row)
            extra = check_extra(row.data_type, attributes["extra_data"], current.extra)
            columns["extra_data"] = _json(extra)
            gone = set(current.option_ids) - {o["id"] for o in extra.get("select_options", [])}
            for option_id in sorted(gone):
                database.execute_sql(
                    "UPDATE custom_field_value SET value_text = NULL WHERE field_id = ? "
                    "AND value_text = ?", (row.id, option_id))
        if columns:
            CustomField.update(**columns).where(CustomField.id == row.id).execute()
    return CustomField.get_by_id(field_id)


def delete_field(user: User, field_id: str) -> None:
    """The field goes, with its values and links (cascades)."""
    with write_transaction(owner_scope(user.id)):
        row = owned_field(user, field_id)
        CustomField.delete().where(CustomField.id == row.id).execute()


def document_counts(field_ids: list[str]) -> dict[str, int]:
    """{field id: live documents carrying it}."""
    if not field_ids:
        return {}
    rows = database.execute_sql(
        f"SELECT v.field_id, count(*) FROM custom_field_value AS v JOIN node AS n "
        f"ON n.id = v.document_id WHERE v.field_id IN ({','.join('?' * len(field_ids))}) "
        "AND n.trash_id IS NULL GROUP BY v.field_id", field_ids)
    return dict(rows.fetchall())


def _name_taken(user: User, key: str, except_id: str | None = None) -> bool:
    query = CustomField.select().where(CustomField.owner == user.id, CustomField.name_key == key)
    if except_id is not None:
        query = query.where(CustomField.id != except_id)
    return bool(query.exists())


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# -- values -------------------------------------------------------------------------------------

VALUE_COLUMNS = ("value_text", "value_key", "value_int", "value_float", "value_date",
                 "value_bool", "value_cents", "value_currency")


def encode(field: FieldDef, value: object, pointer: str) -> dict[str, Any]:
    """The columns of custom_field_value holding `value` (all None for null). Invalid, at
    `pointer`, for a value the field's type refuses. A documentlink's targets are checked and
    kept by the caller (they are rows of their own)."""
    columns: dict[str, Any] = dict.fromkeys(VALUE_COLUMNS)
    if value is None or field.data_type == "documentlink":
        return columns
    kind = field.data_type
    if kind in TEXT_TYPES:
        text = _text(field, value, pointer)
        columns.update(value_text=text, value_key=text.casefold())
    elif kind == "select":
        if not isinstance(value, str) or value not in field.option_ids:
            raise Invalid(f"{value!r:.60} is not an option of the select field {field.name!r}.",
                          pointer)
        columns["value_text"] = value
    elif kind == "date":
        columns["value_date"] = check_date(value, pointer,
                                           f"A value of the date field {field.name!r}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise Invalid(f"A value of the boolean field {field.name!r} is true or false.",
                          pointer)
        columns["value_bool"] = value
    elif kind == "integer":
        columns["value_int"] = _integer(field, value, pointer)
    elif kind == "float":
        columns["value_float"] = _float(field, value, pointer)
    elif kind == "monetary":
        currency, cents = _monetary(field, value, pointer)
        columns.update(value_cents=cents, value_currency=currency,
                       value_key=monetary_text(currency, cents).casefold())
    return columns


def decode(field: FieldDef, row: dict[str, Any], links: list[str]) -> Any:
    """The value as the API answers it, from its columns (and a documentlink's live targets)."""
    kind = field.data_type
    if kind == "documentlink":
        return links or None
    if kind in TEXT_TYPES or kind == "select":
        return row["value_text"]
    if kind == "date":
        return row["value_date"]
    if kind == "boolean":
        return None if row["value_bool"] is None else bool(row["value_bool"])
    if kind == "integer":
        return row["value_int"]
    if kind == "float":
        return row["value_float"]
    if row["value_cents"] is None:  # monetary
        return None
    return monetary_text(row["value_currency"] or "", row["value_cents"])


def store_value(document_id: str, field_id: str, columns: dict[str, Any]) -> None:
    """The document's value of the field becomes `columns` (encode's), inserted or replaced,
    inside the caller's write transaction."""
    names = ", ".join(columns)
    database.execute_sql(
        f"INSERT INTO custom_field_value (document_id, field_id, {names}) VALUES "
        f"(?, ?, {', '.join('?' * len(columns))}) ON CONFLICT (document_id, field_id) DO "
        f"UPDATE SET {', '.join(f'{name} = excluded.{name}' for name in columns)}",
        (document_id, field_id, *columns.values()))


def monetary_text(currency: str, cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{currency}{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def check_date(value: object, pointer: str, what: str) -> str:
    """`YYYY-MM-DD` of a real day, as text."""
    if isinstance(value, str) and ISO_DATE.match(value):
        try:
            dt.date.fromisoformat(value)
            return value
        except ValueError:
            pass
    raise Invalid(f"{what} must be a real date written YYYY-MM-DD; {value!r:.40} is not.", pointer)


def _text(field: FieldDef, value: object, pointer: str) -> str:
    limit = {"string": MAX_STRING, "longtext": MAX_LONGTEXT, "url": MAX_URL}[field.data_type]
    if not isinstance(value, str) or len(value) > limit:
        raise Invalid(f"A value of the {field.data_type} field {field.name!r} is text of at most "
                      f"{limit:,} characters.", pointer)
    allowed = value.replace("\n", "").replace("\t", "") if field.data_type == "longtext" \
        else value
    if has_refused_characters(allowed):
        raise Invalid(f"A value of the field {field.name!r} may not contain control characters "
                      "or invisible formatting characters.", pointer)
    if field.data_type == "url" and not _is_web_address(value):
        raise Invalid(f"A value of the url field {field.name!r} must be an absolute http or "
                      "https address, such as https://example.org/contract.", pointer)
    return value


def _is_web_address(value: str) -> bool:
    if any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def _integer(field: FieldDef, value: object, pointer: str) -> int:
    if isinstance(value, str) and INTEGER_TEXT.match(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) \
            or not INT32[0] <= value <= INT32[1]:
        raise Invalid(f"A value of the integer field {field.name!r} is a whole number from "
                      f"{INT32[0]:,} to {INT32[1]:,}.", pointer)
    return value


def _float(field: FieldDef, value: object, pointer: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip()) if len(value) <= 64 else value
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(float(value)):
        raise Invalid(f"A value of the float field {field.name!r} is a finite number.", pointer)
    return float(value)


def _monetary(field: FieldDef, value: object, pointer: str) -> tuple[str, int]:
    """(currency or '', cents)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        value = f"{value:.2f}" if isinstance(value, float) else str(value)
    found = MONETARY.match(value) if isinstance(value, str) else None
    if found is None:
        raise Invalid(f"A value of the monetary field {field.name!r} is an amount with at most "
                      "two decimals, after an optional currency code: EUR12.30, -5.00 or 7.5.",
                      pointer)
    currency, sign, whole, decimals = found.groups()
    cents = int(whole) * 100 + int((decimals or "").ljust(2, "0"))
    return currency or field.default_currency or "", -cents if sign else cents


def new_option_id() -> str:
    return secrets.token_urlsafe(12)
