"""Finding documents by what they are about (api.md §16): the filters of `GET /documents/`,
`GET /nodes/{folder}/` and `GET /search/` — `correspondent`, `document_type` (an id, or `none`),
`asn`, `document_date_after` / `_before` (inclusive) and `custom_field_query` (fieldquery) — and
the sorts by document date, serial number, correspondent, type or a custom field (`cf_<id>`).

Each filter is one SQL condition on the node row with its parameters, ANDed into the listing's
WHERE (hand-written SQL: the conditions come from this module, request values travel only as
parameters). Any of them keeps documents only: folders carry no metadata. A correspondent, type
or field that is not the caller's is refused as unknown (400), never matched."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dms.db import database
from dms.db.models import DOCUMENT_DATE, User
from dms.domain.metadata import fields as custom
from dms.domain.metadata.document import MAX_ASN
from dms.domain.metadata.fieldquery import PARAMETER, QueryField, compile_expr, parse_field_query
from dms.domain.metadata.labels import CORRESPONDENTS, DOCUMENT_TYPES, Kind
from dms.domain.metadata.orderedquery import OrderedMatches, ordered_matches
from dms.errors import Invalid
from dms.text import is_whole_number

NONE = "none"
PARAMETERS = ("correspondent", "document_type", "asn", "document_date_after",
              "document_date_before", PARAMETER)
# sort= names of this module, each ORDER BY expressions (empty values last on both engines).
SORTS = {
    "document_date": (DOCUMENT_DATE,),
    "asn": ("(asn IS NULL)", "asn"),
    "correspondent": ("(correspondent_id IS NULL)",
                      "(SELECT name_key FROM correspondent WHERE id = node.correspondent_id)"),
    "document_type": ("(document_type_id IS NULL)",
                      "(SELECT name_key FROM document_type WHERE id = node.document_type_id)"),
}
FIELD_SORT = "cf_"
ORDERED_SORT_TYPES = ("integer", "float", "date", "monetary")  # see field_sort
# The column a custom field's values sort by.
SORT_COLUMN = {**{kind: "value_key" for kind in custom.TEXT_TYPES}, "select": "value_text",
               "date": "value_date", "boolean": "value_bool", "integer": "value_int",
               "float": "value_float", "monetary": "value_cents"}


@dataclass(frozen=True)
class MetadataFilter:
    """The documents matching every metadata filter of a request; `ordered` the same documents
    read from the custom field values in title order, when a custom field query is the only
    filter and takes that way (dms.domain.metadata.orderedquery)."""
    conditions: tuple[str, ...]
    params: tuple[Any, ...]
    ordered: OrderedMatches | None = None

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        return "(" + " AND ".join(self.conditions) + ")", self.params


def metadata_filter(user: User, query: Mapping[str, str]) -> MetadataFilter | None:
    """The filter the request's parameters ask for; None when it names none of them."""
    if not any(name in query for name in PARAMETERS):
        return None
    conditions: list[str] = ["kind = 'document'"]
    params: list[Any] = []
    for name, kind in (("correspondent", CORRESPONDENTS), ("document_type", DOCUMENT_TYPES)):
        if name in query:
            value = query[name]
            if value != NONE:
                _check_owned(kind, user, value, name)
            # The expression the label's listing indexes lead with (migration 0022), '' for none.
            conditions.append(f"coalesce({kind.column}, '') = ?")
            params.append("" if value == NONE else value)
    if "asn" in query:
        conditions.append("asn = ?")
        params.append(_asn(query["asn"]))
    for name, operator in (("document_date_after", ">="), ("document_date_before", "<=")):
        if name in query:
            conditions.append(f"{DOCUMENT_DATE} {operator} ?")
            params.append(custom.check_date(query[name], name, name))
    ordered = None
    if PARAMETER in query:
        expr = parse_field_query(query[PARAMETER], query_fields(user))
        condition, extra = compile_expr(expr)
        conditions.append(condition)
        params.extend(extra)
        if len(conditions) == 2:  # kind = 'document' and this one
            ordered = ordered_matches(expr)
    return MetadataFilter(tuple(conditions), tuple(params), ordered)


def query_fields(user: User) -> list[QueryField]:
    return [QueryField(field.id, field.name, field.data_type,
                       tuple((option["id"], option["label"])
                             for option in field.extra.get("select_options", [])))
            for field in custom.definitions(user).values()]


def sort_order(user: User, sort: str) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
    """(ORDER BY expressions, their parameters) of a metadata sort name (without its `-`);
    None when `sort` is not one of them."""
    if sort in SORTS:
        return SORTS[sort], ()
    if not sort.startswith(FIELD_SORT):
        return None
    field = custom.definitions(user).get(sort[len(FIELD_SORT):])
    if field is None or field.data_type == "documentlink":
        raise Invalid(f"Cannot sort by {sort!r}: cf_ is followed by the id of one of your custom "
                      "fields (not a documentlink field).", "sort")
    value = (f"(SELECT {SORT_COLUMN[field.data_type]} FROM custom_field_value "
             "WHERE document_id = node.id AND field_id = ?)")
    return (f"({value} IS NULL)", value), (field.id, field.id)


def field_sort(user: User, sort: str) -> tuple[str, str] | None:
    """(field id, value column) of a `cf_<id>` sort name (without its `-`) whose values the
    value-order indexes of migration 0025 hold (numbers, dates, amounts); None for any other."""
    if not sort.startswith(FIELD_SORT):
        return None
    field = custom.definitions(user).get(sort[len(FIELD_SORT):])
    if field is None or field.data_type not in ORDERED_SORT_TYPES:
        return None
    return field.id, SORT_COLUMN[field.data_type]


def _check_owned(kind: Kind, user: User, value: str, name: str) -> None:
    # An id with a null character names nothing (PostgreSQL cannot even compare one).
    found = database.execute_sql(f"SELECT 1 FROM {kind.table} WHERE id = ? AND owner_id = ?",
                                 (value, user.id)).fetchone() if "\x00" not in value else None
    if found is None:
        raise Invalid(f"{name} is the id of one of your {kind.noun}s, or none; you have no "
                      f"{kind.noun} with the id {value[:60]!r}.", name)


def _asn(value: str) -> int:
    if not is_whole_number(value, 10) or int(value) > MAX_ASN:
        raise Invalid(f"asn is a whole number from 0 to {MAX_ASN:,}.", "asn")
    return int(value)
