"""The values of a custom field query's atoms (dms.domain.metadata.fieldquery), read as
Paperless-ngx reads them: text (numbers written as text too), document ids, true/false (also
"true", "0", 1), whole and decimal numbers (numeric text too; never a bool), amounts in cents with
a leading currency code dropped, dates `YYYY-MM-DD`. Each reader raises TypeError or ValueError
for a value it cannot read; the parser turns that into a sentence naming the value."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

MAX_NUMBER_TEXT = 64  # characters of a number written as text
MAX_AMOUNT = Decimal(10) ** 15  # whole digits of an amount, as monetary values keep them
INT64 = (-(2 ** 63), 2 ** 63 - 1)
BOOLEANS = {"true": True, "false": False, "1": True, "0": False}


def text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    raise TypeError


def document_id(value: object) -> str:
    written = text(value)
    if not isinstance(value, str | int) or not written:
        raise TypeError
    return written


def boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str | int) and str(value).casefold() in BOOLEANS:
        return BOOLEANS[str(value).casefold()]
    raise TypeError


def number_text(value: object) -> str:
    if isinstance(value, str) and len(value) <= MAX_NUMBER_TEXT:
        return value.strip()
    raise TypeError


def integer(value: object) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str):
        value = int(number_text(value))
    if isinstance(value, bool) or not isinstance(value, int) or not INT64[0] <= value <= INT64[1]:
        raise TypeError
    return value


def floating(value: object) -> float:
    if isinstance(value, str):
        value = float(number_text(value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError
    if not math.isfinite(number := float(value)):
        raise ValueError
    return number


def cents(value: object) -> Decimal:
    """An amount in cents (maybe with a fraction left); a leading currency code is dropped."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TypeError
    written = number_text(value if isinstance(value, str) else str(value))
    if written and not written[0].isdigit() and written[0] != "-":
        written = written[3:]
    amount = Decimal(written)
    if not amount.is_finite() or abs(amount) >= MAX_AMOUNT:
        raise ValueError
    return amount * 100


def date(value: object) -> str:
    if not isinstance(value, str) or len(value) > len("YYYY-MM-DD"):
        raise TypeError
    return dt.datetime.strptime(value, "%Y-%m-%d").date().isoformat()


CONVERTERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "string": ("text", text), "longtext": ("text", text), "url": ("text", text),
    "date": ("a date written YYYY-MM-DD", date), "boolean": ("true or false", boolean),
    "integer": ("a whole number", integer), "float": ("a number", floating),
    "monetary": ("an amount, such as 12.30 or EUR12.30", cents)}
