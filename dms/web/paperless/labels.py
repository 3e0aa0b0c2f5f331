"""The dialect's tags, correspondents, document types and custom fields (api.md §17): the
caller's own (§8a, §16) in Paperless-ngx's JSON, by number, with its name filters, ordering and
pages, and created, changed and deleted through the same domain functions as dms's own API.

Each kind is a `Kind`: how to read the caller's rows, count their documents, write them, and
turn them into Paperless-ngx's JSON. A user has at most a few thousand of each (the domain's
limits), so a list's filters and order apply to the caller's rows as read."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dms.domain import numbers, tags, tagtree
from dms.domain.metadata import fields, labels
from dms.domain.rows import User
from dms.web.paperless import translate
from dms.web.paperless.protocol import Call, Reply, Routes, invalid, not_found, number

routes = Routes()

# Paperless-ngx's matching algorithms by number (6: its learned matching, kept, never matched).
ALGORITHM_NUMBERS = {"none": 0, "any": 1, "all": 2, "exact": 3, "regex": 4, "fuzzy": 5,
                     "auto": 6}
ALGORITHM_NAMES = {value: key for key, value in ALGORITHM_NUMBERS.items()}
NAME_FILTERS = {"name__icontains": lambda name, value: value in name,
                "name__istartswith": lambda name, value: name.startswith(value),
                "name__iendswith": lambda name, value: name.endswith(value),
                "name__iexact": lambda name, value: name == value}
MAX_IDS = numbers.MAX_AT_ONCE


def slug(name: str) -> str:
    """Django's slugify: ASCII letters, digits, `_` and `-`, lower case, spaces as hyphens."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text.lower())
    return re.sub(r"[-\s]+", "-", text).strip("-_")


@dataclass(frozen=True)
class Kind:
    path: str  # "tags"
    number_kind: str  # dms.domain.numbers' word
    noun: str  # "Tag", in DRF's 404
    rows: Callable[[User], list[Any]]
    counts: Callable[[list[str]], dict[str, tuple[int, str | None]]]  # documents, latest date
    create: Callable[[User, dict[str, Any]], Any]
    update: Callable[[User, str, dict[str, Any]], Any]
    delete: Callable[[User, str], None]
    shape: Callable[[Any, int, tuple[int, str | None], int, bool], dict[str, Any]]
    attributes: Callable[[dict[str, Any]], dict[str, Any]]  # Paperless-ngx's body: dms's
    fields: dict[str, str]  # dms's attribute names: Paperless-ngx's, for errors


def _matching(body: dict[str, Any]) -> dict[str, Any]:
    """A correspondent's or document type's body as dms's attributes."""
    attributes = {key: body[key] for key in ("name", "match", "is_insensitive") if key in body}
    if "matching_algorithm" in body:
        given = body["matching_algorithm"]
        if isinstance(given, bool) or not isinstance(given, int) or given not in ALGORITHM_NAMES:
            raise invalid("matching_algorithm", f'"{given}" is not a valid choice.')
        attributes["matching_algorithm"] = ALGORITHM_NAMES[given]
    return attributes


def _label_shape(row: Any, number_: int, counted: tuple[int, str | None], owner: int,
                 detail: bool) -> dict[str, Any]:
    shown = {"id": number_, "slug": slug(row.name), "name": row.name, "match": row.match,
             "matching_algorithm": ALGORITHM_NUMBERS.get(row.matching_algorithm, 0),
             "is_insensitive": row.is_insensitive, "document_count": counted[0]}
    if detail and isinstance(row, labels.CORRESPONDENTS.model):
        shown["last_correspondence"] = counted[1]
    return {**shown, "owner": owner, "user_can_change": True}


def _label_kind(path: str, number_kind: str, noun: str, kind: labels.Kind) -> Kind:
    return Kind(path, number_kind, noun, lambda user: list(labels.of_user(kind, user)),
                lambda ids: labels.counts(kind, ids),
                lambda user, attributes: labels.create(kind, user, attributes),
                lambda user, label_id, attributes: labels.update(kind, user, label_id,
                                                                 attributes),
                lambda user, label_id: labels.delete(kind, user, label_id),
                _label_shape, _matching, {})


def _tag_attributes(body: dict[str, Any]) -> dict[str, Any]:
    attributes = {**_matching(body), **{key: body[key] for key in ("is_inbox_tag",)
                                        if body.get(key) is not None}}
    if "parent" in body:  # a number; one that names no tag of the caller's: the domain's 400
        parent = None if body["parent"] in (None, "") else translate.pk("parent", body["parent"])
        attributes["parent"] = None if parent is None else \
            numbers.id_of("tag", parent) or f"#{parent}"
    for given, ours in (("color", "bg_color"), ("text_color", "fg_color")):
        if body.get(given) is not None:  # null: left as it is (clients send the read-only
            attributes[ours] = body[given]  # text_color back as null)
    return attributes


def _counted(count_of: Callable[[list[str]], dict[str, int]]) -> Callable:
    return lambda ids: {key: (count, None) for key, count in count_of(ids).items()}


def _tag_shape(row: Any, number_: int, counted: tuple[int, str | None], owner: int,
               detail: bool) -> dict[str, Any]:
    return {"id": number_, "slug": slug(row.name), "name": row.name, "color": row.bg_color,
            "text_color": row.fg_color, "match": row.match,
            "matching_algorithm": ALGORITHM_NUMBERS.get(row.matching_algorithm, 0),
            "is_insensitive": bool(row.is_insensitive),
            "is_inbox_tag": bool(row.is_inbox_tag), "document_count": counted[0],
            "owner": owner, "user_can_change": True, "parent": row.parent_id, "children": []}


def _field_attributes(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in ("name", "data_type", "extra_data") if key in body}


def _field_shape(row: Any, number_: int, counted: tuple[int, str | None], owner: int,
                 detail: bool) -> dict[str, Any]:
    extra = fields.definition(row).extra
    return {"id": number_, "name": row.name, "data_type": row.data_type,
            "extra_data": extra or None, "document_count": counted[0]}


KINDS = [
    Kind("tags", "tag", "Tag", lambda user: list(tags.tags_of_user(user)),
         _counted(tags.document_counts),
         tags.create_tag, tags.update_tag, tags.delete_tag, _tag_shape, _tag_attributes,
         {"bg_color": "color", "fg_color": "text_color", "data": "name", "parent": "parent"}),
    _label_kind("correspondents", "correspondent", "Correspondent", labels.CORRESPONDENTS),
    _label_kind("document_types", "document_type", "Document Type", labels.DOCUMENT_TYPES),
    Kind("custom_fields", "custom_field", "Custom Field",
         lambda user: list(fields.fields_of_user(user)), _counted(fields.document_counts),
         fields.create_field, fields.update_field, fields.delete_field, _field_shape,
         _field_attributes, {}),
]


# -- the routes, the same for every kind --------------------------------------------------------
def shaped(call: Call, kind: Kind, rows: list[Any], detail: bool = False) -> list[dict]:
    """The caller's `rows` of `kind` as Paperless-ngx's JSON."""
    ids = [row.id for row in rows]
    row_numbers = numbers.numbers_of(kind.number_kind, ids)
    counts = kind.counts(ids)
    owner = numbers.numbers_of("user", [call.user.id])[call.user.id]
    shown = [kind.shape(row, row_numbers[row.id], counts.get(row.id, (0, None)), owner, detail)
             for row in rows]
    return _as_tree(call, kind, shown, owner) if kind.path == "tags" else shown


def _as_tree(call: Call, kind: Kind, shown: list[dict[str, Any]],
             owner: int) -> list[dict[str, Any]]:
    """Tags with their parent's number and their children nested (Paperless-ngx's tag tree):
    the caller's tags read once, the tree at most tagtree.MAX_DEPTH deep."""
    every = kind.rows(call.user)
    every_numbers = numbers.numbers_of("tag", [row.id for row in every])
    counts = kind.counts([row.id for row in every])
    children: dict[str, list[Any]] = {}
    for row in every:
        if row.parent_id:
            children.setdefault(row.parent_id, []).append(row)
    by_number: dict[int, str] = {number_: row_id for row_id, number_ in every_numbers.items()}

    def below(tag_id: str, depth: int) -> list[dict[str, Any]]:
        if depth >= tagtree.MAX_DEPTH:
            return []
        return [{**kind.shape(child, every_numbers[child.id], counts.get(child.id, (0, None)),
                              owner, False),
                 "parent": every_numbers.get(tag_id),
                 "children": below(child.id, depth + 1)} for child in children.get(tag_id, [])]

    for shape in shown:
        parent_id: str | None = shape["parent"]
        shape["parent"] = every_numbers.get(parent_id) if parent_id else None
        shape["children"] = below(by_number[shape["id"]], 1)
    return shown


def _ids_param(call: Call, name: str) -> list[int] | None:
    raw = call.arg(name)
    if raw is None:
        return None
    parts = [part for part in raw.split(",") if part.strip()]
    if len(parts) > MAX_IDS or not all(part.strip().isascii() and part.strip().isdigit()
                                       and len(part.strip()) <= 18 for part in parts):
        raise invalid(name, "Enter a whole number.")
    return [int(part) for part in parts]


def _listed(call: Call, kind: Kind) -> tuple[list[Any], dict[str, int]]:
    """The caller's rows of `kind` the query keeps, in the order it asks; with their numbers."""
    rows = kind.rows(call.user)
    row_numbers = numbers.numbers_of(kind.number_kind, [row.id for row in rows])
    for name, test in NAME_FILTERS.items():
        value = call.arg(name)
        if value is not None:
            wanted = value.casefold()
            rows = [row for row in rows if test(row.name.casefold(), wanted)]
    wanted_numbers = _ids_param(call, "id__in")
    single = call.arg("id")
    if single is not None:
        wanted_numbers = (wanted_numbers or []) + (_ids_param(call, "id") or [])
    if wanted_numbers is not None:
        keep = set(wanted_numbers)
        rows = [row for row in rows if row_numbers[row.id] in keep]
    ordering = (call.arg("ordering") or "").strip()
    key = ordering.lstrip("-")
    if key in ("name", "id"):
        rows.sort(key=(lambda row: row.name.casefold()) if key == "name"
                  else (lambda row: row_numbers[row.id]), reverse=ordering.startswith("-"))
    return rows, row_numbers


def _list(kind: Kind) -> Callable:
    def list_all(call: Call) -> dict[str, Any]:
        rows, row_numbers = _listed(call, kind)
        body = call.page(len(rows),
                         lambda offset, limit: shaped(call, kind, rows[offset:offset + limit]),
                         lambda: [row_numbers[row.id] for row in rows])
        if kind.path == "tags" and call.version >= 10:
            body["display_count"] = len(rows)  # with their children: no tag has any here
        return body
    list_all.__name__ = f"list_{kind.path}"
    return list_all


def _found(call: Call, kind: Kind, raw: str) -> Any:
    found = numbers.id_of(kind.number_kind, number(raw))
    row = next((row for row in kind.rows(call.user) if row.id == found), None) \
        if found else None
    if row is None:
        raise not_found(kind.noun)
    return row


def _get(kind: Kind) -> Callable:
    def get_one(call: Call, item_id: str) -> dict[str, Any]:
        return shaped(call, kind, [_found(call, kind, item_id)], detail=True)[0]
    get_one.__name__ = f"get_{kind.path}"
    return get_one


def _create(kind: Kind) -> Callable:
    def create(call: Call) -> Reply:
        body = call.body()
        if body.get("name") in (None, ""):
            raise invalid("name", "This field is required." if body.get("name") is None
                          else "This field may not be blank.")
        made = kind.create(call.user, kind.attributes(body))
        return Reply(shaped(call, kind, [made])[0], 201)
    create.__name__ = f"create_{kind.path}"
    return create


def _update(kind: Kind) -> Callable:
    def update(call: Call, item_id: str) -> dict[str, Any]:
        row = _found(call, kind, item_id)
        changed = kind.update(call.user, row.id, kind.attributes(call.body()))
        return shaped(call, kind, [changed], detail=True)[0]
    update.__name__ = f"update_{kind.path}"
    return update


def _delete(kind: Kind) -> Callable:
    def delete(call: Call, item_id: str) -> Reply:
        kind.delete(call.user, _found(call, kind, item_id).id)
        return Reply(None, 204)
    delete.__name__ = f"delete_{kind.path}"
    return delete


for _kind in KINDS:
    routes.add("GET", f"/api/{_kind.path}/")(_list(_kind))
    routes.add("POST", f"/api/{_kind.path}/", fields=_kind.fields)(_create(_kind))
    routes.add("GET", f"/api/{_kind.path}/{{item_id}}/")(_get(_kind))
    for _method in ("PUT", "PATCH"):
        routes.add(_method, f"/api/{_kind.path}/{{item_id}}/", fields=_kind.fields)(
            _update(_kind))
    routes.add("DELETE", f"/api/{_kind.path}/{{item_id}}/")(_delete(_kind))
