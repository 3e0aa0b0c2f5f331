"""A Paperless-ngx saved view as a dms saved search (api.md §18, §20): its filter rules written
in dms's query language, ANDed, labels by their names in the owner's dms account. A rule the
language has no words for (storage paths, owners, "more like this", a custom field query, ...)
leaves the view out of the import, named in the report — a saved search that found more than the
view did would be worse than none."""

from __future__ import annotations

from typing import Any

from dms.db.models import User
from dms.domain.searchquery import QueryError, parse
from dms.intake.paperless.labels import Labels
from dms.intake.paperless.manifest import Library
from dms.text import is_whole_number

WORDS = {19: "", 49: "", 20: "", 0: "title:", 48: "title:", 1: "text:"}
DATES = {8: ("created", "<"), 9: ("created", ">"), 43: ("created", "<="), 44: ("created", ">="),
         13: ("added", "<"), 14: ("added", ">"), 45: ("added", "<="), 46: ("added", ">=")}
NUMBERS = {2: ":", 23: ":>", 24: ":<"}
LABELS = {3: "correspondents", 26: "correspondents", 27: "correspondents",
          4: "document_types", 28: "document_types", 29: "document_types"}
NEGATED = (27, 29, 17)
SORTS = {"created": "document_date", "added": "created_at", "modified": "updated_at",
         "title": "title", "archive_serial_number": "asn"}


def _quoted(text: str) -> str:
    return '"' + text.replace('"', " ") + '"'


def saved_search_of(view: dict[str, Any], rules: list[tuple[int, str | None]],
                    library: Library, owner: User, labels: Labels) -> tuple[dict[str, Any], str]:
    """(the saved search's attributes, "" ) or ({}, what could not be translated)."""
    terms: list[str] = []
    any_of: dict[int, list[str]] = {}
    for rule_type, value in rules:
        text = value.strip() if isinstance(value, str) else ""
        if rule_type in WORDS and text:
            prefix = WORDS[rule_type]
            terms.append(text if not prefix else " ".join(
                f"{prefix}{_quoted(word)}" for word in text.split()))
        elif rule_type in DATES and text:
            field, operator = DATES[rule_type]
            terms.append(f"{field}:{operator}{text[:10]}")
        elif rule_type in NUMBERS and is_whole_number(text):
            terms.append(f"asn{NUMBERS[rule_type]}{text}")
        elif rule_type in LABELS:
            kind = LABELS[rule_type]
            exported = library.objects[kind].get(_number(text))
            if exported is None or not isinstance(exported.get("name"), str):
                return {}, f"filter rule {rule_type} names something the export does not hold"
            field = "correspondent" if kind == "correspondents" else "type"
            term = f"{field}:{_quoted(exported['name'])}"
            if rule_type in NEGATED:
                terms.append("-" + term)
            elif rule_type in (26, 28):
                any_of.setdefault(rule_type, []).append(term)
            else:
                terms.append(term)
        elif rule_type in (6, 17, 22):
            name = labels.tag_name(owner, _number(text))
            if name is None:
                return {}, f"filter rule {rule_type} names a tag the export does not hold"
            term = f"tag:{_quoted(name)}"
            if rule_type == 22:
                any_of.setdefault(22, []).append(term)
            else:
                terms.append(("-" if rule_type == 17 else "") + term)
        elif rule_type == 47 and text:
            terms.append(f"mime:{text}")
        else:
            return {}, f"filter rule {rule_type} has no equivalent in dms's query language"
    terms += [f"({' OR '.join(alternatives)})" for alternatives in any_of.values()]
    query = " ".join(terms)
    try:
        parse(query, _today(), "query")
    except QueryError as error:
        return {}, f"its query cannot be read by dms ({error.message})"
    sort = SORTS.get(view.get("sort_field") or "", "")
    if sort and view.get("sort_reverse"):
        sort = "-" + sort
    name = view["name"] if isinstance(view.get("name"), str) else "Saved view"
    return {"name": name[:128], "query": query[:1000], "sort": sort,
            "show_in_sidebar": view.get("show_in_sidebar") is not False}, ""


def _number(text: str) -> Any:
    return int(text) if is_whole_number(text) else text


def _today():
    import datetime as dt

    return dt.datetime.now(dt.UTC).date()
