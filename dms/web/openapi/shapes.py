"""The building blocks of the OpenAPI document's schemas, shared by its parts."""

from __future__ import annotations

STRING, INTEGER, BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
DATETIME = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}


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
