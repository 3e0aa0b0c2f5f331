"""Saved searches (api.md, "Saved searches"): a user's named query of the query language, with a
sort, shown in the page's sidebar or not. Running one is dms.search's (dms.search.found); the
Paperless-ngx dialect's saved views are these rows, with what its apps keep beside them in
`dialect`.

- `name`: 1-128 characters without control characters, unique per owner regardless of case and
  width (`name_key`, as tags are) — 400 naming the field otherwise.
- `query`: at most MAX_QUERY_CHARS characters of the query language, read (and its custom fields
  looked up) when saved: one that cannot be read is refused as a search would refuse it; blank
  means every document.
- `sort`: "" (best match first; without words, the newest first) or a sort of the document
  list (`title`, `-created_at`, `document_date`, `cf_<field id>`, ...).
- At most MAX_PER_USER per user.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from peewee import ModelSelect

from dms.db import owner_scope, write_transaction
from dms.db.models import SavedSearch, User, new_id, utcnow
from dms.domain.listings import order_of
from dms.domain.ownership import owned
from dms.domain.searchquery import parse, resolve
from dms.domain.tagfilter import name_key
from dms.errors import Invalid
from dms.text import has_refused_characters, required_text

MAX_NAME_LENGTH = 128
MAX_QUERY_CHARS = 1000
MAX_PER_USER = 200
MAX_DIALECT_BYTES = 16 * 1024


def searches_of(user: User) -> ModelSelect[SavedSearch]:
    return (SavedSearch.select().where(SavedSearch.owner == user.id)
            .order_by(SavedSearch.name_key, SavedSearch.id))


def owned_search(user: User, search_id: object) -> SavedSearch:
    return owned(SavedSearch, user, search_id)


def check_name(value: object) -> str:
    name = required_text(value, "name", "saved search name", MAX_NAME_LENGTH)
    if has_refused_characters(name):
        raise Invalid("A saved search name may not contain control characters or invisible "
                      "formatting characters.", "name")
    return name


def check_query(value: object) -> str:
    query = "" if value is None else value
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS \
            or has_refused_characters(query):
        raise Invalid(f"query must be text of at most {MAX_QUERY_CHARS} characters without "
                      "control characters.", "query")
    return query.strip()


def check_attributes(user: User, attributes: dict[str, Any], partial: bool) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if "name" in attributes or not partial:
        name = check_name(attributes.get("name"))
        values.update(name=name, name_key=name_key(name))
    if "query" in attributes or not partial:
        values["query"] = check_query(attributes.get("query", ""))
        today = dt.datetime.now(dt.UTC).date()
        tree = parse(values["query"], today, "query")  # a query that cannot be read: a 400
        if tree is not None:
            resolve(user, tree, today, "query")  # nor one naming a custom field they lack
    if "sort" in attributes or not partial:
        sort = attributes.get("sort") or ""
        if not isinstance(sort, str):
            raise Invalid("sort must be text, such as -created_at.", "sort")
        try:
            if sort:
                order_of(sort, user)  # Invalid for a sort the lists do not have
            values["sort"] = sort
        except Invalid as error:
            raise Invalid(error.message, "sort") from None
    if "show_in_sidebar" in attributes or not partial:
        shown = attributes.get("show_in_sidebar", True)
        if not isinstance(shown, bool):
            raise Invalid("show_in_sidebar must be true or false.", "show_in_sidebar")
        values["show_in_sidebar"] = shown
    return values


def _check_dialect(dialect: dict[str, Any] | None) -> str | None:
    if dialect is None:
        return None
    text = json.dumps(dialect, separators=(",", ":"), sort_keys=True)
    if len(text.encode("utf-8")) > MAX_DIALECT_BYTES:
        raise Invalid("The saved view's settings are too large.")
    return text


def _taken(user: User, key: str, other_than: str | None = None) -> bool:
    query = SavedSearch.select().where(SavedSearch.owner == user.id, SavedSearch.name_key == key)
    if other_than is not None:
        query = query.where(SavedSearch.id != other_than)
    return query.exists()


DUPLICATE = "A saved search with this name already exists."


def create_search(user: User, attributes: dict[str, Any],
                  dialect: dict[str, Any] | None = None) -> SavedSearch:
    values = check_attributes(user, attributes, partial=False)
    extra = _check_dialect(dialect)
    with write_transaction(owner_scope(user.id)):
        if _taken(user, values["name_key"]):
            raise Invalid(DUPLICATE, "name")
        if SavedSearch.select().where(SavedSearch.owner == user.id).count() >= MAX_PER_USER:
            raise Invalid(f"One user may have at most {MAX_PER_USER} saved searches; delete "
                          "unused ones first.")
        search_id = new_id()
        SavedSearch.insert(id=search_id, owner=user.id, created_at=utcnow(), dialect=extra,
                           **values).execute()
    return SavedSearch.get_by_id(search_id)


def update_search(user: User, search_id: object, attributes: dict[str, Any],
                  dialect: dict[str, Any] | None = None) -> SavedSearch:
    """Changes only the attributes given (and the dialect's settings when given)."""
    values = check_attributes(user, attributes, partial=True)
    if dialect is not None:
        values["dialect"] = _check_dialect(dialect)
    with write_transaction(owner_scope(user.id)):
        row = owned_search(user, search_id)
        if "name_key" in values and _taken(user, values["name_key"], row.id):
            raise Invalid(DUPLICATE, "name")
        if values:
            SavedSearch.update(**values).where(SavedSearch.id == row.id).execute()
    return SavedSearch.get_by_id(row.id)


def delete_search(user: User, search_id: object) -> None:
    with write_transaction(owner_scope(user.id)):
        row = owned_search(user, search_id)
        SavedSearch.delete().where(SavedSearch.id == row.id).execute()


def dialect_of(search: SavedSearch) -> dict[str, Any]:
    """What the Paperless-ngx dialect keeps of a saved view beside the search ({} if nothing)."""
    if not search.dialect:
        return {}
    try:
        found = json.loads(search.dialect)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
