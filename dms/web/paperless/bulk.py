"""The dialect's work on many documents at once (api.md §17): `bulk_edit` (tags, correspondent,
type, custom fields, sharing, deletion, reading again, and the page operations rotate, merge,
split and delete_pages), `selection_data`, and the trash. Each document goes through the same
domain function as a change of one in dms's own API, in the order given; every document and every
number is checked before the first change (an unknown one is a 400 naming it, as in
Paperless-ngx, and nothing changes)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dms.domain import documents as dms_documents
from dms.domain import numbers, tags, trash
from dms.domain.access import grants
from dms.domain.access.rule import role_of
from dms.domain.documents import facts as documentfacts
from dms.domain.metadata import document as document_metadata
from dms.domain.pages import numbered
from dms.domain.rows import DOCUMENT
from dms.web.paperless import sharing, translate
from dms.web.paperless.documents import shapes
from dms.web.paperless.protocol import NON_FIELD, Call, Reply, Routes, invalid

routes = Routes()

MAX_DOCUMENTS = 1000  # documents one bulk request changes
MAX_PAGES_TEXT = 10_000  # characters of split's pages, numbers of delete_pages' and one range
PAGE_METHODS = ("rotate", "merge", "split", "delete_pages")
MAX_TRASH = 10_000  # deletions of the caller's the trash routes read
METHODS = ("add_tag", "remove_tag", "modify_tags", "set_correspondent", "set_document_type",
           "modify_custom_fields", "delete", "reprocess", "set_storage_path", "set_permissions",
           "rotate", "merge", "split", "delete_pages")
ONE_DOCUMENT = {"split": "Split method only supports one document",
                "delete_pages": "Delete pages method only supports one document"}


def _documents(call: Call, given: object) -> list[str]:
    """The ids of the documents these numbers name, each one the caller reaches."""
    if not isinstance(given, list) or not given:
        raise invalid("documents", "This field is required." if not given else
                      f'Expected a list of items but got type "{type(given).__name__}".')
    if len(given) > MAX_DOCUMENTS:
        raise invalid("documents", f"Ensure this field has no more than {MAX_DOCUMENTS} "
                                   "elements.")
    wanted = [translate.pk("documents", value) for value in given]
    ids = numbers.ids_of("document", wanted)
    for number in wanted:
        reached = role_of(call.user, ids[number]) if number in ids else None
        if reached is None or reached.node.kind != DOCUMENT:
            raise invalid("documents", "Some documents in documents don't exist or were "
                                   "specified twice.")
    return [ids[number] for number in dict.fromkeys(wanted)]


def _tag_names(call: Call, parameters: dict[str, Any], name: str) -> list[str]:
    given = parameters.get(name)
    return translate.tag_names(call.user, given if isinstance(given, list) else [given])


@routes.add("POST", "/api/documents/bulk_edit/")
def bulk_edit(call: Call) -> dict[str, str]:
    body = call.body()
    method, parameters = body.get("method"), body.get("parameters", {})
    if method not in METHODS:
        raise invalid("method", f'"{method}" is not a valid choice.')
    if not isinstance(parameters, dict):
        raise invalid("parameters", "Expected a dictionary of items.")
    ids = _documents(call, body.get("documents"))
    if method in ONE_DOCUMENT and len(ids) > 1:
        raise invalid(NON_FIELD, ONE_DOCUMENT[method])
    user, services = call.user, call.services
    if method in PAGE_METHODS:
        _page_method(call, method, ids, parameters)
    elif method == "set_permissions":
        _set_permissions(call, ids, parameters)
    elif method in ("add_tag", "remove_tag", "modify_tags"):
        add = _tag_names(call, parameters, "tag") if method == "add_tag" else \
            _tag_names(call, parameters, "add_tags") if method == "modify_tags" else []
        remove = _tag_names(call, parameters, "tag") if method == "remove_tag" else \
            _tag_names(call, parameters, "remove_tags") if method == "modify_tags" else []
        for document_id in ids:
            if remove:
                tags.change_node_tags(user, document_id, remove, "remove")
            if add:
                tags.change_node_tags(user, document_id, add, "append")
    elif method in ("set_correspondent", "set_document_type"):
        name = method.removeprefix("set_")
        if name not in parameters:
            raise invalid(NON_FIELD, f"{name} not specified")
        change = translate.change_of(user, {name: parameters[name]})
        for document_id in ids:
            document_metadata.update_node(user, document_id, DOCUMENT, change.attributes)
    elif method == "modify_custom_fields":
        _modify_fields(call, ids, parameters)
    elif method == "delete":
        for document_id in ids:
            trash.delete(services, user, document_id, DOCUMENT)
    elif method == "reprocess":
        for document_id in ids:
            dms_documents.reprocess(services, user, document_id, None)
    # set_storage_path: dms has no storage paths; nothing to do.
    return {"result": "OK"}


def _set_permissions(call: Call, ids: list[str], parameters: dict[str, Any]) -> None:
    """Each document's own grants become (or, with `merge`, gain) those named; only its owner
    (or a superuser) may, checked for every document first."""
    if "set_permissions" not in parameters:
        raise invalid(NON_FIELD, "set_permissions not specified")
    wanted = sharing.wanted_grants(parameters["set_permissions"])
    merge = parameters.get("merge", False)
    if not isinstance(merge, bool):
        raise invalid(NON_FIELD, "merge must be a boolean")
    for document_id in ids:
        sharing.check_may_share(call, document_id)
        if parameters.get("owner") is not None:
            sharing.owner_unchanged(document_id, parameters["owner"])
    for document_id in ids:
        grants.set_grants(call.user, document_id, wanted, merge)


def _flag(parameters: dict[str, Any], name: str) -> bool:
    value = parameters.get(name, False)
    if not isinstance(value, bool):
        raise invalid(NON_FIELD, f"{name} must be a boolean")
    return value


def _page_groups(given: object) -> list[list[int]]:
    """split's `pages`: "1,2-3,4" as [[1], [2, 3], [4]]."""
    if not isinstance(given, str) or len(given) > MAX_PAGES_TEXT:
        raise invalid(NON_FIELD, "invalid pages specified")
    groups = []
    try:
        for part in given.split(","):
            first, _, last = part.strip().partition("-")
            low, high = int(first), int(last or first)
            if high - low > MAX_PAGES_TEXT:
                raise ValueError
            groups.append(list(range(low, high + 1)))
    except ValueError:
        raise invalid(NON_FIELD, "invalid pages specified") from None
    return groups


def _page_method(call: Call, method: str, ids: list[str], parameters: dict[str, Any]) -> None:
    """rotate, merge, split and delete_pages: dms's page operations (dms.domain.pages.numbered),
    done at once (Paperless-ngx queues them; its answer is the same "OK")."""
    user, services = call.user, call.services
    if method == "rotate":
        degrees = parameters.get("degrees")
        if isinstance(degrees, bool) or not isinstance(degrees, (int, float)) \
                or not float(degrees).is_integer():
            raise invalid(NON_FIELD, "invalid rotation degrees")
        numbered.rotate_documents(services, user, ids, int(degrees))
    elif method == "delete_pages":
        pages = parameters.get("pages")
        if "pages" not in parameters:
            raise invalid(NON_FIELD, "pages not specified")
        if not isinstance(pages, list) or len(pages) > MAX_PAGES_TEXT or not all(
                isinstance(page, int) and not isinstance(page, bool) for page in pages):
            raise invalid(NON_FIELD, "pages must be a list of integers")
        numbered.delete_page_numbers(services, user, ids[0], pages)
    elif method == "split":
        if "pages" not in parameters:
            raise invalid(NON_FIELD, "pages not specified")
        numbered.split_into(services, user, ids[0], _page_groups(parameters["pages"]),
                            _flag(parameters, "delete_originals"))
    else:
        metadata = parameters.get("metadata_document_id")
        metadata_id = None if metadata is None else \
            numbers.id_of("document", translate.pk("metadata_document_id", metadata))
        if metadata is not None and metadata_id not in ids:
            raise invalid(NON_FIELD, "metadata_document_id is one of the documents merged")
        numbered.merge_into_new(services, user, ids, metadata_id,
                                _flag(parameters, "delete_originals"))


def _modify_fields(call: Call, ids: list[str], parameters: dict[str, Any]) -> None:
    """`add_custom_fields` ([numbers], or {number: value}) and `remove_custom_fields` ([numbers])
    on each document, its other values kept."""
    added = parameters.get("add_custom_fields", [])
    removed = parameters.get("remove_custom_fields", [])
    adding = translate.change_of(call.user, {"custom_fields": added}).attributes["custom_fields"]
    if not isinstance(removed, list):
        raise invalid("remove_custom_fields", "Expected a list of items.")
    removing = {numbers.id_of("custom_field", translate.pk("remove_custom_fields", value))
                for value in removed}
    for document_id in ids:
        current = document_metadata.about([document_id])[document_id]["custom_fields"]
        values = {value["field"]: value["value"] for value in current
                  if value["field"] not in removing}
        for value in adding:  # a field added without a value keeps the value it has
            if value["value"] is not None or value["field"] not in values:
                values[value["field"]] = value["value"]
        document_metadata.update_node(call.user, document_id, DOCUMENT, {"custom_fields": [
            {"field": field, "value": value} for field, value in values.items()]})


@routes.add("POST", "/api/documents/selection_data/")
def selection_data(call: Call) -> dict[str, Any]:
    """How many of the chosen documents carry each of the caller's labels."""
    ids = _documents(call, call.body().get("documents"))
    counted: dict[str, Counter[str]] = {kind: Counter() for kind in (
        "tag", "correspondent", "document_type", "custom_field")}
    for fact in documentfacts.facts(ids, call.user.id, with_text=False).values():
        counted["tag"].update(fact.tag_ids)
        for kind in ("correspondent", "document_type"):
            if fact.about.get(kind):
                counted[kind][fact.about[kind]] += 1
        counted["custom_field"].update(value["field"]
                                       for value in fact.about.get("custom_fields", []))

    def listed(kind: str) -> list[dict[str, int]]:
        by_number = numbers.numbers_of(kind, list(counted[kind]))
        return sorted(({"id": by_number[label_id], "document_count": count}
                       for label_id, count in counted[kind].items() if label_id in by_number),
                      key=lambda item: item["id"])
    return {"selected_correspondents": listed("correspondent"),
            "selected_tags": listed("tag"), "selected_document_types": listed("document_type"),
            "selected_storage_paths": [], "selected_custom_fields": listed("custom_field")}


# -- the trash ------------------------------------------------------------------------------------
@routes.add("GET", "/api/trash/")
def list_trash(call: Call) -> dict[str, Any]:
    """The caller's deleted documents, newest deletion first (folders deleted with what they
    held are dms's own: its trash shows them)."""
    rows = [(row, entry) for row, entry in trash.trashed(call.user).fetch(0, MAX_TRASH)
            if row.kind == DOCUMENT]

    def page(offset: int, limit: int) -> list[dict[str, Any]]:
        chosen = rows[offset:offset + limit]
        shown = shapes(call, [row.id for row, _ in chosen])
        for document, (_, entry) in zip(shown, chosen, strict=True):
            document["deleted_at"] = str(entry[0]).replace(" ", "T", 1) + "Z"
        return shown

    by_id = numbers.numbers_of("document", [row.id for row, _ in rows])
    return call.page(len(rows), page, lambda: [by_id[row.id] for row, _ in rows])


@routes.add("POST", "/api/trash/")
def change_trash(call: Call) -> Reply:
    body = call.body()
    action = body.get("action")
    if action not in ("restore", "empty"):
        raise invalid("action", f'"{action}" is not a valid choice.')
    trashed = {row.id for row, _ in trash.trashed(call.user).fetch(0, MAX_TRASH)
               if row.kind == DOCUMENT}
    given = body.get("documents")
    if given is None and action == "empty":
        chosen = sorted(trashed)
    else:
        if not isinstance(given, list) or len(given) > MAX_DOCUMENTS:
            raise invalid("documents", "Expected a list of items.")
        wanted = [translate.pk("documents", value) for value in given]
        ids = numbers.ids_of("document", wanted)
        if any(ids.get(number) not in trashed for number in wanted):
            raise invalid("documents", "Some documents in the list have not yet been deleted.")
        chosen = [ids[number] for number in wanted]
    by_id = numbers.numbers_of("document", chosen)
    for document_id in chosen:
        if action == "restore":
            trash.restore(call.services, call.user, document_id)
        else:
            trash.purge(call.services, call.user, document_id)
    return Reply({"result": "OK", "doc_ids": [by_id[document_id] for document_id in chosen]})
