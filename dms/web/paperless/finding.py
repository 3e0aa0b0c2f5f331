"""The document list's filters as Paperless-ngx's clients send them (api.md §17), read into dms's
conditions (dms.domain.docfilters) and its custom field query: numbers become ids; a number that
names nothing of the caller's matches nothing (as a filter by an unknown id does in
Paperless-ngx); a value that is not a number or a date is a 400 naming the parameter."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from dms.domain import docfilters, numbers
from dms.domain.rows import User
from dms.text import is_whole_number
from dms.web.paperless.protocol import Call, invalid

NOTHING = docfilters.Condition("1 = 0")
TITLES = {"title__icontains": "contains", "title__istartswith": "starts",
          "title__iendswith": "ends", "title__iexact": "exact"}
DATES = {"created__date__gt": "gt", "created__date__gte": "gte", "created__date__lt": "lt",
         "created__date__lte": "lte", "created__gt": "gt", "created__gte": "gte",
         "created__lt": "lt", "created__lte": "lte"}
ADDED = {"added__date__gt": "gt", "added__date__gte": "gte", "added__date__lt": "lt",
         "added__date__lte": "lte", "added__gt": "gt", "added__gte": "gte", "added__lt": "lt",
         "added__lte": "lte"}
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def _numbers(call: Call, name: str) -> list[int] | None:
    raw = call.arg(name)
    if raw is None or raw == "":
        return None
    parts = [part.strip() for part in raw.split(",") if part.strip()]
    if len(parts) > docfilters.MAX_VALUES or not all(
            is_whole_number(part) for part in parts):
        raise invalid(name, "Enter a whole number." if "," not in raw else
                      "Enter a comma-separated list of whole numbers.")
    return [int(part) for part in parts]


def _flag(call: Call, name: str) -> bool | None:
    raw = call.arg(name)
    if raw is None or raw == "":
        return None
    if raw.lower() not in TRUE + FALSE:
        raise invalid(name, "Must be a valid boolean.")
    return raw.lower() in TRUE


def _day(call: Call, name: str) -> str | None:
    raw = call.arg(name)
    if raw is None or raw == "":
        return None
    try:
        return dt.date.fromisoformat(raw[:10]).isoformat()
    except ValueError:
        raise invalid(name, "Enter a valid date.") from None


def _ids(kind: str, wanted: list[int]) -> list[str]:
    return list(numbers.ids_of(kind, wanted).values())


def conditions(call: Call) -> list[docfilters.Condition]:
    """Every filter of the request as dms's conditions."""
    user, found = call.user, []
    for name, how in TITLES.items():
        if call.arg(name):
            found.append(docfilters.title(how, call.arg(name) or ""))
    found.extend(_tags(call, user))
    found.extend(_labels(call))
    for name, how in DATES.items():
        day = _day(call, name)
        if day is not None:
            found.append(docfilters.paper_date(how, day))
    for name, how in ADDED.items():
        day = _day(call, name)
        if day is not None:
            found.append(docfilters.added_date(how, day))
    year = _numbers(call, "created__year")
    if year:
        found.append(docfilters.paper_year(year[0]))
    asn = _numbers(call, "archive_serial_number")
    if asn:
        found.append(docfilters.serial_number(asn[0]))
    for name, make in (("mime_type", docfilters.mime_type),
                       ("checksum__iexact", docfilters.checksum),
                       ("original_filename__iexact", docfilters.file_name)):
        if call.arg(name):
            found.append(make(call.arg(name) or ""))
    for how in ("all", "in", "none"):
        wanted = _numbers(call, f"custom_fields__id__{how}")
        if wanted is not None:
            ids = _ids("custom_field", wanted)
            found.append(NOTHING if how == "all" and len(ids) < len(set(wanted)) else
                         docfilters.fields(ids, "any" if how == "in" else how))
    has_fields = _flag(call, "has_custom_fields")
    if has_fields is not None:
        found.append(docfilters.has_fields(has_fields))
    inbox = _flag(call, "is_in_inbox")
    if inbox is not None:
        found.append(docfilters.in_inbox(user, inbox))
    found.extend(_owners(call))
    wanted = _numbers(call, "id__in") or _numbers(call, "id")
    if wanted is not None:
        found.append(docfilters.among(_ids("document", wanted)))
    return found


def _tags(call: Call, user: User) -> list[docfilters.Condition]:
    found = []
    for name, how in (("tags__id__all", "all"), ("tags__id__in", "any"),
                      ("tags__id__none", "none"), ("tags__id", "all")):
        wanted = _numbers(call, name)
        if wanted is None:
            continue
        ids = _ids("tag", wanted)
        if how == "all" and len(ids) < len(set(wanted)):
            found.append(NOTHING)
        else:
            found.append(docfilters.tags(user, ids, how))
    tagged = _flag(call, "is_tagged")
    if tagged is not None:
        found.append(docfilters.tagged(user, tagged))
    return found


def _owners(call: Call) -> list[docfilters.Condition]:
    """Whose documents (§21): `owner__id`, `owner__id__in`, `owner__id__none`, `owner__isnull`
    (every dms document has an owner) and `shared_by__id` (the owner's, shared by them)."""
    found = []
    for suffix, how in (("__id", "in"), ("__id__in", "in"), ("__id__none", "none")):
        wanted = _numbers(call, "owner" + suffix)
        if wanted is not None:
            found.append(docfilters.owners(_ids("user", wanted), how))
    if _flag(call, "owner__isnull"):
        found.append(NOTHING)
    wanted = _numbers(call, "shared_by__id")
    if wanted is not None:
        found.append(docfilters.shared_by(_ids("user", wanted)))
    return found


def _labels(call: Call) -> list[docfilters.Condition]:
    found = []
    for name in ("correspondent", "document_type"):
        for suffix, how in (("__id", "in"), ("__id__in", "in"), ("__id__none", "none")):
            wanted = _numbers(call, name + suffix)
            if wanted is not None:
                found.append(docfilters.label(name, _ids(name, wanted), how))
        missing = _flag(call, f"{name}__isnull")
        if missing is not None:
            found.append(docfilters.label_missing(name, missing))
    return found


def field_query(call: Call) -> str | None:
    """`custom_field_query` with the fields and linked documents named by dms's ids."""
    raw = call.arg("custom_field_query")
    if raw is None or raw == "":
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        raise invalid("custom_field_query", "Value must be valid JSON.") from None
    return json.dumps(_with_ids(parsed, 0))


def _with_ids(node: Any, depth: int) -> Any:
    """Numbers of fields (an atom's first item) as ids; the rest as given (the domain checks)."""
    if depth > 20 or not isinstance(node, list):
        return node
    if len(node) == 3 and isinstance(node[0], int) and not isinstance(node[0], bool):
        field = numbers.id_of("custom_field", node[0])
        return [field or f"#{node[0]}", node[1], node[2]]
    return [_with_ids(item, depth + 1) for item in node]
