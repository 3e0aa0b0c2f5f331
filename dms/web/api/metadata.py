"""What a document is about (api.md §16): the caller's correspondents, document types and custom
fields, and the notes of their documents. A document's own metadata is read and changed with the
document (dms.web.api.documents)."""

from __future__ import annotations

import json
from typing import Any

from dms.db.models import CustomField, Note
from dms.domain.metadata import fields, labels, notes
from dms.domain.metadata.labels import CORRESPONDENTS, DOCUMENT_TYPES, Kind
from dms.web.endpoints import Context
from dms.web.jsonapi import RouteTable, created, format_datetime, no_content
from dms.web.openapi import Operation
from dms.web.openapi.shapes import PAGE_QUERY, data_of, list_of, ref

routes = RouteTable()

def label_resources(kind: Kind, resource_type: str, rows: list[Any]) -> list[dict]:
    counted = labels.counts(kind, [row.id for row in rows])
    resources = []
    for row in rows:
        count, latest = counted.get(row.id, (0, None))
        attributes = {"name": row.name, "match": row.match,
                      "matching_algorithm": row.matching_algorithm,
                      "is_insensitive": bool(row.is_insensitive), "document_count": count}
        if kind is CORRESPONDENTS:
            attributes["last_correspondence"] = latest
        resources.append({"type": resource_type, "id": row.id, "attributes": attributes})
    return resources


RESOURCE_TYPE = {CORRESPONDENTS: "correspondents", DOCUMENT_TYPES: "document-types"}


def one(kind: Kind, row: Any) -> dict:
    return {"data": label_resources(kind, RESOURCE_TYPE[kind], [row])[0]}


def page_of(kind: Kind) -> Any:
    return lambda rows: label_resources(kind, RESOURCE_TYPE[kind], rows)


@routes.get("/correspondents/", Operation(
    "The caller's correspondents", list_of(ref("Correspondent")), query=PAGE_QUERY))
def list_correspondents(ctx: Context):
    return ctx.paginate(labels.of_user(CORRESPONDENTS, ctx.user), page_of(CORRESPONDENTS))


@routes.post("/correspondents/", Operation(
    "Create a correspondent", data_of(ref("Correspondent")), 201,
    request=ref("CorrespondentInput")))
def create_correspondent(ctx: Context):
    _, attributes = ctx.resource("correspondents")
    return created(one(CORRESPONDENTS, labels.create(CORRESPONDENTS, ctx.user, attributes)))


@routes.get("/correspondents/{label_id}/", Operation(
    "One correspondent", data_of(ref("Correspondent"))))
def get_correspondent(ctx: Context, label_id: str):
    return one(CORRESPONDENTS, labels.owned_label(CORRESPONDENTS, ctx.user, label_id))


@routes.patch("/correspondents/{label_id}/", Operation(
    "Change a correspondent", data_of(ref("Correspondent")), request=ref("CorrespondentInput")))
def update_correspondent(ctx: Context, label_id: str):
    _, attributes = ctx.resource("correspondents")
    return one(CORRESPONDENTS, labels.update(CORRESPONDENTS, ctx.user, label_id, attributes))


@routes.delete("/correspondents/{label_id}/", Operation(
    "Delete a correspondent (its documents stay, without it)", status=204))
def delete_correspondent(ctx: Context, label_id: str):
    labels.delete(CORRESPONDENTS, ctx.user, label_id)
    return no_content()


@routes.get("/document-types/", Operation(
    "The caller's document types", list_of(ref("DocumentType")), query=PAGE_QUERY))
def list_document_types(ctx: Context):
    return ctx.paginate(labels.of_user(DOCUMENT_TYPES, ctx.user), page_of(DOCUMENT_TYPES))


@routes.post("/document-types/", Operation(
    "Create a document type", data_of(ref("DocumentType")), 201, request=ref("DocumentTypeInput")))
def create_document_type(ctx: Context):
    _, attributes = ctx.resource("document-types")
    return created(one(DOCUMENT_TYPES, labels.create(DOCUMENT_TYPES, ctx.user, attributes)))


@routes.get("/document-types/{label_id}/", Operation(
    "One document type", data_of(ref("DocumentType"))))
def get_document_type(ctx: Context, label_id: str):
    return one(DOCUMENT_TYPES, labels.owned_label(DOCUMENT_TYPES, ctx.user, label_id))


@routes.patch("/document-types/{label_id}/", Operation(
    "Change a document type", data_of(ref("DocumentType")), request=ref("DocumentTypeInput")))
def update_document_type(ctx: Context, label_id: str):
    _, attributes = ctx.resource("document-types")
    return one(DOCUMENT_TYPES, labels.update(DOCUMENT_TYPES, ctx.user, label_id, attributes))


@routes.delete("/document-types/{label_id}/", Operation(
    "Delete a document type (its documents stay, without it)", status=204))
def delete_document_type(ctx: Context, label_id: str):
    labels.delete(DOCUMENT_TYPES, ctx.user, label_id)
    return no_content()


# -- custom fields ------------------------------------------------------------------------------

def field_resources(rows: list[CustomField]) -> list[dict]:
    counted = fields.document_counts([row.id for row in rows])
    return [{"type": "custom-fields", "id": row.id, "attributes": {
        "name": row.name, "data_type": row.data_type, "extra_data": json.loads(row.extra_data),
        "document_count": counted.get(row.id, 0)}} for row in rows]


@routes.get("/custom-fields/", Operation("The caller's custom fields",
                                         list_of(ref("CustomField")), query=PAGE_QUERY))
def list_fields(ctx: Context):
    return ctx.paginate(fields.fields_of_user(ctx.user), field_resources)


@routes.post("/custom-fields/", Operation("Create a custom field", data_of(ref("CustomField")),
                                          201, request=ref("CustomFieldInput")))
def create_field(ctx: Context):
    _, attributes = ctx.resource("custom-fields")
    return created({"data": field_resources([fields.create_field(ctx.user, attributes)])[0]})


@routes.get("/custom-fields/{field_id}/", Operation("One custom field",
                                                    data_of(ref("CustomField"))))
def get_field(ctx: Context, field_id: str):
    return {"data": field_resources([fields.owned_field(ctx.user, field_id)])[0]}


@routes.patch("/custom-fields/{field_id}/", Operation(
    "Rename a custom field or change its options (its type stays)",
    data_of(ref("CustomField")), request=ref("CustomFieldInput")))
def update_field(ctx: Context, field_id: str):
    _, attributes = ctx.resource("custom-fields")
    return {"data": field_resources([fields.update_field(ctx.user, field_id, attributes)])[0]}


@routes.delete("/custom-fields/{field_id}/", Operation(
    "Delete a custom field with its values", status=204))
def delete_field(ctx: Context, field_id: str):
    fields.delete_field(ctx.user, field_id)
    return no_content()


# -- notes --------------------------------------------------------------------------------------

def note_resources(rows: list[Note]) -> list[dict]:
    return [{"type": "notes", "id": row.id, "attributes": {
        "note": row.note, "created_at": format_datetime(row.created_at),
        "user": row.username}} for row in rows]  # type: ignore[attr-defined]


@routes.get("/documents/{document_id}/notes/", Operation(
    "A document's notes, newest first", list_of(ref("Note")), query=PAGE_QUERY))
def list_notes(ctx: Context, document_id: str):
    return ctx.paginate(notes.notes_of(ctx.user, document_id), note_resources)


@routes.post("/documents/{document_id}/notes/", Operation(
    "Add a note to a document", data_of(ref("Note")), 201, request=ref("NoteInput")))
def add_note(ctx: Context, document_id: str):
    _, attributes = ctx.resource("notes", type_optional=True)
    return created({"data": note_resources([notes.add_note(ctx.user, document_id,
                                                           attributes.get("note"))])[0]})


@routes.delete("/notes/{note_id}/", Operation("Delete a note", status=204))
def delete_note(ctx: Context, note_id: str):
    notes.delete_note(ctx.user, note_id)
    return no_content()
