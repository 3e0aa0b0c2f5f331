"""The building blocks of the OpenAPI document's schemas and of the routes' Operations."""

from __future__ import annotations

from dms.web.jsonapi import JSON, VND

STRING, INTEGER, BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
DATETIME = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}
BINARY = {"type": "string", "format": "binary"}
FILE_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/tiff", "text/plain")
FILES = {media: BINARY for media in FILE_TYPES}  # a stored file, answered as its own type
PAGE_QUERY = ("page[number]", "page[size]", "page", "page_size")
JSON_OR_VND = (JSON, VND)  # a plain JSON body, sent as either media type


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(properties: dict, required: list[str] | None = None, extra: bool = True) -> dict:
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not extra:
        schema["additionalProperties"] = False
    return schema


def data_of(schema: dict) -> dict:
    return obj({"data": schema}, ["data"])


def list_of(schema: dict) -> dict:
    link = NULLABLE_STRING
    return obj({
        "links": obj({"first": STRING, "last": STRING, "next": link, "prev": link}),
        "data": {"type": "array", "items": schema},
        "meta": obj({"pagination": obj({"page": INTEGER, "pages": INTEGER, "count": INTEGER})}),
    }, ["links", "data", "meta"])
