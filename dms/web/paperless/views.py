"""The dialect's saved views (api.md §17) are dms's saved searches (§10a): the same rows, by
number. dms keeps the name, whether the sidebar shows it, the sort and the query; what Paperless-
ngx's apps keep beside them (their filter rules, `show_on_dashboard`, page size, display mode and
fields, a sort dms has no name for) is kept whole in the row's dialect settings and given back as
it was written.

- The query of a view written here: the values of its full-text rules (`rule_type` 20, "fulltext
  query", and 19, "title & content"), read as dms's query language (api.md §20). Its other rules are
  kept for the apps, which apply a view's rules themselves when they list documents.
- A view changed on dms's side (its query) shows its query as one full-text rule, as a view made
  there does.
- Version 10 drops `show_on_dashboard` and `show_in_sidebar` from the shapes (Paperless-ngx 3 moved
  them into the UI settings); they are still taken and kept.
"""

from __future__ import annotations

from typing import Any

from dms.domain import numbers, savedsearches
from dms.domain.rows import User
from dms.errors import NotFound
from dms.web.paperless.documents import ORDERINGS
from dms.web.paperless.protocol import Call, Reply, Routes, invalid, not_found, number

routes = Routes()

TEXT_RULES = (20, 19)  # fulltext query, title & content
MAX_RULES = 100
MAX_RULE_VALUE = 1000
KEPT = ("show_on_dashboard", "sort_field", "sort_reverse", "filter_rules", "page_size",
        "display_mode", "display_fields")
SORTS = {sort: field for field, sort in ORDERINGS.items()}  # dms's sort: Paperless-ngx's field
FIELDS = {"show_in_sidebar": "show_in_sidebar", "name": "name", "query": "filter_rules"}


def _rules(given: object) -> list[dict[str, Any]]:
    if not isinstance(given, list):  # Django REST framework's sentences
        raise invalid("filter_rules", f'Expected a list of items but got type '
                                      f'"{type(given).__name__}".')
    if len(given) > MAX_RULES:
        raise invalid("filter_rules", f"Ensure this field has no more than {MAX_RULES} elements.")
    rules = []
    for item in given:
        if not isinstance(item, dict) or isinstance(item.get("rule_type"), bool) \
                or not isinstance(item.get("rule_type"), int) \
                or not 0 <= item["rule_type"] <= 1000:
            raise invalid("filter_rules", "Each rule needs a rule_type, a whole number.")
        value = item.get("value")
        if value is not None and (not isinstance(value, str) or len(value) > MAX_RULE_VALUE):
            raise invalid("filter_rules", f"A rule's value is text of at most {MAX_RULE_VALUE} "
                                          "characters, or null.")
        rules.append({"rule_type": item["rule_type"], "value": value})
    return rules


def _query_of(rules: list[dict[str, Any]]) -> str:
    return " ".join(rule["value"].strip() for rule in rules
                    if rule["rule_type"] in TEXT_RULES and rule["value"])[
        :savedsearches.MAX_QUERY_CHARS]


def _sort_of(field: object, reverse: object) -> str:
    sort = ORDERINGS.get(field) if isinstance(field, str) else None
    return "" if sort is None else ("-" if reverse is True else "") + sort


def _written(body: dict[str, Any], before: dict[str, Any] | None) -> tuple[dict, dict]:
    """A view's body as dms's attributes and the dialect's settings to keep."""
    kept = dict(before or {})
    attributes = {key: body[key] for key in ("name", "show_in_sidebar") if key in body}
    for key in KEPT:
        if key in body:
            kept[key] = _rules(body[key]) if key == "filter_rules" else body[key]
    if "filter_rules" in body:
        attributes["query"] = _query_of(kept["filter_rules"])
    if "sort_field" in body or "sort_reverse" in body:
        attributes["sort"] = _sort_of(kept.get("sort_field"), kept.get("sort_reverse"))
    if "query" in attributes:
        kept["query"] = attributes["query"]  # the query these rules meant
    return attributes, kept


def _shape(call: Call, search: Any, view_number: int, owner: int) -> dict[str, Any]:
    kept = savedsearches.dialect_of(search)
    rules = kept.get("filter_rules")
    if rules is None or kept.get("query") != search.query:  # made or changed on dms's side
        rules = [{"rule_type": 20, "value": search.query}] if search.query else []
    sort_field, reverse = kept.get("sort_field"), kept.get("sort_reverse")
    if sort_field is None or _sort_of(sort_field, reverse) != search.sort:
        sort_field = SORTS.get(search.sort.lstrip("-")) if search.sort else None
        reverse = search.sort.startswith("-")
    shown: dict[str, Any] = {"id": view_number, "name": search.name}
    if call.version < 10:
        shown["show_on_dashboard"] = bool(kept.get("show_on_dashboard", False))
        shown["show_in_sidebar"] = bool(search.show_in_sidebar)
    return {**shown, "sort_field": sort_field, "sort_reverse": bool(reverse),
            "filter_rules": rules, "page_size": kept.get("page_size"),
            "display_mode": kept.get("display_mode"),
            "display_fields": kept.get("display_fields"), "owner": owner,
            "user_can_change": True}


def shaped(call: Call, rows: list[Any]) -> list[dict[str, Any]]:
    found = numbers.numbers_of("saved_search", [row.id for row in rows])
    owner = numbers.numbers_of("user", [call.user.id])[call.user.id]
    return [_shape(call, row, found[row.id], owner) for row in rows]


def _found(user: User, raw: str) -> Any:
    search_id = numbers.id_of("saved_search", number(raw))
    try:
        return savedsearches.owned_search(user, search_id)
    except NotFound:  # another user's, or none
        raise not_found("Saved View") from None


@routes.add("GET", "/api/saved_views/")
def list_views(call: Call) -> dict[str, Any]:
    rows = list(savedsearches.searches_of(call.user))
    found = numbers.numbers_of("saved_search", [row.id for row in rows])
    return call.page(len(rows), lambda offset, limit: shaped(call, rows[offset:offset + limit]),
                     lambda: [found[row.id] for row in rows])


@routes.add("POST", "/api/saved_views/", fields=FIELDS)
def create_view(call: Call) -> Reply:
    body = call.body()
    if body.get("name") in (None, ""):
        raise invalid("name", "This field is required." if body.get("name") is None
                      else "This field may not be blank.")
    attributes, kept = _written(body, None)
    attributes.setdefault("query", "")
    kept.setdefault("query", attributes["query"])
    made = savedsearches.create_search(call.user, attributes, kept)
    return Reply(shaped(call, [made])[0], 201)


@routes.add("GET", "/api/saved_views/{view_id}/")
def get_view(call: Call, view_id: str) -> dict[str, Any]:
    return shaped(call, [_found(call.user, view_id)])[0]


def _change(call: Call, view_id: str) -> dict[str, Any]:
    row = _found(call.user, view_id)
    attributes, kept = _written(call.body(), savedsearches.dialect_of(row))
    changed = savedsearches.update_search(call.user, row.id, attributes, kept)
    return shaped(call, [changed])[0]


routes.add("PUT", "/api/saved_views/{view_id}/", fields=FIELDS)(_change)
routes.add("PATCH", "/api/saved_views/{view_id}/", fields=FIELDS)(_change)


@routes.add("DELETE", "/api/saved_views/{view_id}/")
def delete_view(call: Call, view_id: str) -> Reply:
    savedsearches.delete_search(call.user, _found(call.user, view_id).id)
    return Reply(None, 204)
