"""The caller's own preferences (api.md, "Preferences"), in Papermerge's shape."""

from __future__ import annotations

from dms.domain import preferences
from dms.web.endpoints import Context
from dms.web.jsonapi import JSON, VND, RouteTable, attributes_of, resource_data
from dms.web.openapi import Operation
from dms.web.openapi.shapes import JSON_OR_VND, PAGE_QUERY, STRING, data_of, list_of, obj, ref

routes = RouteTable()


def preference_resource(item: preferences.Preference) -> dict:
    setting = item.setting
    return {"type": "preferences", "id": setting.identifier, "attributes": {
        "section": setting.section, "name": setting.name, "identifier": setting.identifier,
        "default": item.default, "value": item.value, "help_text": setting.help_text,
        "additional_data": {"choices": [[choice, choice] for choice in setting.choices()]}}}


@routes.get("/preferences/", Operation(
    "The caller's preferences", list_of(ref("Preference")), query=PAGE_QUERY))
def list_preferences(ctx: Context):
    items = preferences.preferences_of(ctx.user, ctx.config.ocr_lang)
    return ctx.paginate(_Listing(items), lambda rows: [preference_resource(i) for i in rows])


@routes.post("/preferences/bulk/", Operation(
    "Change several preferences ({identifier: value})",
    obj({"data": {"type": "array", "items": ref("Preference")}}),
    request=obj({"ocr__language": STRING}), accepts=JSON_OR_VND), media_type=JSON)
def update_preferences(ctx: Context):
    """papermerge-cli pref-update: plain JSON {"ocr__language": "deu", ...}."""
    preferences.set_values(ctx.user, ctx.json(), ctx.config.ocr_lang,
                           field_of=lambda identifier: f"/{identifier}")
    return {"data": [preference_resource(i)
                     for i in preferences.preferences_of(ctx.user, ctx.config.ocr_lang)]}


@routes.get("/preferences/{identifier}/", Operation("One preference", data_of(ref("Preference"))))
def get_preference(ctx: Context, identifier: str):
    return {"data": preference_resource(
        preferences.preference(ctx.user, identifier, ctx.config.ocr_lang))}


@routes.patch("/preferences/{identifier}/", Operation(
    "Change one preference", data_of(ref("Preference")),
    request=data_of(obj({"type": {"const": "preferences"}, "attributes": obj({"value": STRING})})),
    accepts=(VND, JSON), errors=(409,)))
def update_preference(ctx: Context, identifier: str):
    preferences.preference(ctx.user, identifier, ctx.config.ocr_lang)  # 404 before the body
    body = ctx.json(accept=("application/vnd.api+json", JSON))
    attributes = attributes_of(resource_data(body, "preferences")) if "data" in body else body
    preferences.set_values(ctx.user, {identifier: attributes.get("value")}, ctx.config.ocr_lang,
                           field_of=lambda _: "/data/attributes/value")
    return {"data": preference_resource(
        preferences.preference(ctx.user, identifier, ctx.config.ocr_lang))}


class _Listing:
    """A short list in memory as a listing for ctx.paginate."""

    def __init__(self, items: list):
        self.items = items

    def count(self) -> int:
        return len(self.items)

    def fetch(self, offset: int, limit: int) -> list:
        return self.items[offset:offset + limit]
