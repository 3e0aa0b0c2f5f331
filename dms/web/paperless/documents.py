"""The dialect's documents (api.md §17): every document the caller may read, whatever its folder
(their own and what is shared with them, §21), in Paperless-ngx's JSON by number — version 9's
shape (Paperless-ngx 2.20) or 10's (3.0: `versions`, `root_document`, `duplicate_documents`).
The list and the detail read the same facts of a page of documents at once
(dms.domain.documentfacts)."""

from __future__ import annotations

from typing import Any

from dms.db.models import Node
from dms.domain import documentfacts, listings, numbers
from dms.domain.access.rule import EDITOR, RANK, role_of
from dms.web.paperless.protocol import Call, Routes, not_found, number

routes = Routes()

# ordering= name: dms's sort (api.md §16); Paperless-ngx's default is the newest paper first.
ORDERINGS = {"created": "document_date", "added": "created_at", "modified": "updated_at",
             "title": "title", "archive_serial_number": "asn",
             "correspondent__name": "correspondent", "document_type__name": "document_type"}
DEFAULT_ORDERING = "-created"


def _time(stored: str) -> str:
    """A stored UTC time as Django REST framework writes one."""
    return stored.replace(" ", "T", 1) + "Z"


def shapes(call: Call, ids: list[str]) -> list[dict[str, Any]]:
    """The documents `ids`, in that order, as Paperless-ngx's JSON for the caller."""
    user = call.user
    found = documentfacts.facts(ids, user.id)
    label_ids: dict[str, set[str]] = {"tag": set(), "correspondent": set(),
                                      "document_type": set(), "custom_field": set(),
                                      "user": {user.id}}
    for fact in found.values():
        label_ids["tag"].update(fact.tag_ids)
        label_ids["user"].add(fact.owner_id)
        label_ids["user"].update(note.user_id for note in fact.notes if note.user_id)
        for name in ("correspondent", "document_type"):
            if fact.about.get(name):
                label_ids[name].add(fact.about[name])
        label_ids["custom_field"].update(value["field"] for value in
                                         fact.about.get("custom_fields", []))
    numbered = {kind: numbers.numbers_of(kind, list(values)) for kind, values in label_ids.items()}
    linked = {target for fact in found.values() for value in fact.about.get("custom_fields", [])
              if isinstance(value["value"], list) for target in value["value"]}
    numbered["document"] = numbers.numbers_of("document", list(linked))
    return [_shape(call, found[node_id], numbered) for node_id in ids if node_id in found]


def _shape(call: Call, fact: documentfacts.DocumentFacts,
           numbered: dict[str, dict[str, int]]) -> dict[str, Any]:
    about, latest = fact.about, fact.latest
    mine = fact.owner_id == call.user.id
    if not mine:
        reached = role_of(call.user, fact.id)
        can_change = reached is not None and RANK[reached.role] >= RANK[EDITOR]
    else:
        can_change = True
    created = about.get("document_date") or fact.created_at[:10]
    shown: dict[str, Any] = {
        "id": fact.number,
        "correspondent": numbered["correspondent"].get(about.get("correspondent") or ""),
        "document_type": numbered["document_type"].get(about.get("document_type") or ""),
        "storage_path": None, "title": fact.title, "content": fact.text,
        "tags": [numbered["tag"][tag_id] for tag_id in fact.tag_ids],
        "created": created, "created_date": created, "modified": _time(fact.updated_at),
        "added": _time(fact.created_at), "deleted_at": None,
        "archive_serial_number": about.get("archive_serial_number"),
        "original_file_name": latest.file_name if latest else None,
        "archived_file_name": None,
        "owner": numbered["user"][fact.owner_id], "user_can_change": can_change,
        "is_shared_by_requester": False,
        "notes": [{"id": note.number, "note": note.note, "created": _time(note.created_at),
                   "user": {"id": numbered["user"].get(note.user_id or ""),
                            "username": note.username, "first_name": "", "last_name": ""}
                   if note.user_id else None} for note in fact.notes],
        "custom_fields": [{"value": _field_value(value["value"], numbered),
                           "field": numbered["custom_field"][value["field"]]}
                          for value in about.get("custom_fields", [])],
        "page_count": fact.page_count or None,
        "mime_type": latest.mime_type if latest else None,
    }
    if latest is not None and latest.searchable:
        shown["archived_file_name"] = f"{fact.title}.pdf"
    if call.version >= 10:
        shown["duplicate_documents"] = []
        shown["root_document"] = None
        shown["versions"] = [] if latest is None else [{
            "id": fact.number, "added": _time(fact.created_at), "version_label": None,
            "checksum": latest.sha256, "is_root": True}]
    shown["dms_id"] = fact.id
    return shown


def _field_value(value: Any, numbered: dict[str, dict[str, int]]) -> Any:
    """A custom field's value as Paperless-ngx writes it: documents linked by their numbers."""
    if isinstance(value, list):
        return [numbered["document"][target] for target in value
                if target in numbered["document"]]
    return value


def _ordering(call: Call) -> str:
    given = (call.arg("ordering") or DEFAULT_ORDERING).strip()
    name = given.lstrip("-")
    sort = ORDERINGS.get(name)
    if sort is None:  # Paperless-ngx ignores what it does not know
        given, sort = DEFAULT_ORDERING, ORDERINGS["created"]
    return ("-" if given.startswith("-") else "") + sort


@routes.add("GET", "/api/documents/")
def list_documents(call: Call) -> dict[str, Any]:
    listing = listings.of_kind(call.user, Node.DOCUMENT, about={"sort": _ordering(call)})
    total = listing.count()

    def page(offset: int, limit: int) -> list[dict[str, Any]]:
        return shapes(call, [row.id for row in listing.fetch(offset, limit)])

    def every_number() -> list[int]:
        ids = [row.id for row in listing.fetch(0, total)]
        by_id = numbers.numbers_of("document", ids)
        return [by_id[node_id] for node_id in ids]

    return call.page(total, page, every_number)


@routes.add("GET", "/api/documents/{document_id}/")
def get_document(call: Call, document_id: str) -> dict[str, Any]:
    found = numbers.id_of("document", number(document_id))
    if found is None or role_of(call.user, found) is None:
        raise not_found("Document")
    return shapes(call, [found])[0]
