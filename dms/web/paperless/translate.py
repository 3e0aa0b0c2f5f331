"""What a Paperless-ngx client writes about a document, in dms's words (api.md §17): numbers
become ids, `created` the document date, and the field names stay Paperless-ngx's in the errors
(`{"correspondent": ["Invalid pk \\"9\\" - object does not exist."]}`). Whether a label is the
document owner's, whether a value fits its field, is the domain's to say (the same check as dms's
own PATCH); here only the shape and the numbers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dms.domain import numbers, tags
from dms.domain.rows import User
from dms.text import is_whole_number
from dms.web.paperless.protocol import invalid

# dms's attribute names in errors: the dialect's.
FIELDS = {"document_date": "created", "archive_serial_number": "archive_serial_number",
          "title": "title", "correspondent": "correspondent", "document_type": "document_type",
          "custom_fields": "custom_fields", "tags": "tags"}
MAX_TAGS = 1000


@dataclass
class DocumentChange:
    attributes: dict[str, Any] = field(default_factory=dict)  # dms's PATCH attributes
    tag_names: list[str] | None = None  # replaces the caller's tags on it
    grants: dict[tuple[str, str], str] | None = None  # its own grants become these


def pk(name: str, value: object) -> int:
    """A primary key (a number) a client sent, or DRF's 400 naming `name`."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) \
            or not is_whole_number(str(value)):
        raise invalid(name, f"Incorrect type. Expected pk value, received {type(value).__name__}.")
    return int(value)


def _id(kind: str, name: str, value: object) -> str:
    number = pk(name, value)
    found = numbers.id_of(kind, number)
    if found is None:
        raise invalid(name, f'Invalid pk "{number}" - object does not exist.')
    return found


def change_of(user: User, body: dict[str, Any]) -> DocumentChange:
    """A document's PUT/PATCH body (or post_document's fields) as dms's attributes."""
    change = DocumentChange()
    if "title" in body:
        if not isinstance(body["title"], str) or not body["title"].strip():
            raise invalid("title", "This field may not be blank.")
        change.attributes["title"] = body["title"]
    for name, kind in (("correspondent", "correspondent"), ("document_type", "document_type")):
        if name in body:
            change.attributes[name] = None if body[name] in (None, "") else \
                _id(kind, name, body[name])
    if "created" in body or "created_date" in body:
        given = body.get("created", body.get("created_date"))
        if given is not None and not isinstance(given, str):
            raise invalid("created", "Date has wrong format. Use one of these formats instead: "
                                     "YYYY-MM-DD.")
        change.attributes["document_date"] = given[:10] if given else None
    if "archive_serial_number" in body:
        given = body["archive_serial_number"]
        change.attributes["archive_serial_number"] = None if given in (None, "") else \
            pk("archive_serial_number", given)
    if "custom_fields" in body:
        change.attributes["custom_fields"] = _custom_fields(body["custom_fields"])
    if "tags" in body:
        change.tag_names = tag_names(user, body["tags"])
    return change


def tag_names(user: User, given: object) -> list[str]:
    """The names of the caller's tags these numbers are."""
    if not isinstance(given, list):
        raise invalid("tags", f'Expected a list of items but got type "{type(given).__name__}".')
    if len(given) > MAX_TAGS:
        raise invalid("tags", f"Ensure this field has no more than {MAX_TAGS} elements.")
    wanted = [pk("tags", value) for value in given]
    ids = numbers.ids_of("tag", wanted)
    mine = tags.names_of(user, list(ids.values()))
    for number in wanted:
        if ids.get(number) not in mine:
            raise invalid("tags", f'Invalid pk "{number}" - object does not exist.')
    return [mine[ids[number]] for number in wanted]


def _custom_fields(given: object) -> list[dict[str, Any]]:
    """[{"field": number, "value": ...}], {number: value} (post_document), or [numbers] (fields
    without values) as dms's [{"field": id, "value": ...}]; documents linked by number."""
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            raise invalid("custom_fields", "Value must be valid JSON.") from None
    if isinstance(given, dict):
        pairs = list(given.items())
    elif isinstance(given, list):
        pairs = [(item.get("field"), item.get("value")) if isinstance(item, dict) else (item, None)
                 for item in given]
    else:
        raise invalid("custom_fields", "Expected a list of items but got type "
                                       f'"{type(given).__name__}".')
    values = []
    for number, value in pairs:
        field_id = _id("custom_field", "custom_fields", number)
        if isinstance(value, list):  # a documentlink field's documents
            value = [_id("document", "custom_fields", target) for target in value]
        values.append({"field": field_id, "value": value})
    return values
